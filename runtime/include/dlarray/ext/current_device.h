/*!
 * \file dlarray/ext/current_device.h
 * \brief Extension "dlarray.current_device.v1": makes a device current on the calling thread, for
 *        code outside the plugin that launches work on the device's stream (AOT custom op
 *        libraries, dlarray.custom). Offered by device plugins whose devices have a per-thread
 *        current device (the CUDA plugin); reached with DLArrayDeviceApi::get_extension.
 */
#ifndef DLARRAY_EXT_CURRENT_DEVICE_H_
#define DLARRAY_EXT_CURRENT_DEVICE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief The extension's name (get_extension). A new layout gets a new name (".v2"). */
#define DLARRAY_EXT_CURRENT_DEVICE_V1 "dlarray.current_device.v1"

/*! \brief The table get_extension returns (static: valid until the process exits). */
typedef struct DLArrayCurrentDeviceExtV1 {
  uint64_t struct_size; /*!< sizeof(DLArrayCurrentDeviceExtV1) of the plugin */
  /*!
   * \brief Makes device_id current on the calling thread (cheap when it already is). Returns NULL,
   *        or a static string naming the failure (e.g. "cudaErrorInvalidDevice").
   */
  const char* (*make_current)(int32_t device_id);
} DLArrayCurrentDeviceExtV1;

/* Deprecated names from before the extension naming rule (docs/architecture.md), kept for
 * out-of-tree plugins and callers; define DLARRAY_NO_DEPRECATED_EXT_NAMES to hide them. */
#ifndef DLARRAY_NO_DEPRECATED_EXT_NAMES
#define DLARRAY_EXT_CURRENT_DEVICE DLARRAY_EXT_CURRENT_DEVICE_V1
typedef DLArrayCurrentDeviceExtV1 DLArrayCurrentDeviceExt;
#endif

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLARRAY_EXT_CURRENT_DEVICE_H_
