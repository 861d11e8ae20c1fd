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
#define DLARRAY_EXT_CURRENT_DEVICE "dlarray.current_device.v1"

/*! \brief The table get_extension returns (static: valid until the process exits). */
typedef struct DLArrayCurrentDeviceExt {
  uint64_t struct_size; /*!< sizeof(DLArrayCurrentDeviceExt) of the plugin */
  /*!
   * \brief Makes device_id current on the calling thread (cheap when it already is). Returns NULL,
   *        or a static string naming the failure (e.g. "cudaErrorInvalidDevice").
   */
  const char* (*make_current)(int32_t device_id);
} DLArrayCurrentDeviceExt;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLARRAY_EXT_CURRENT_DEVICE_H_
