/*!
 * \file dlarray/ext/mem_info.h
 * \brief Device extension "dlarray.mem_info.v1": free and total memory of a device
 *        (dlarray.mem_info). Reached with DLArrayDeviceApi::get_extension.
 */
#ifndef DLARRAY_EXT_MEM_INFO_H_
#define DLARRAY_EXT_MEM_INFO_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief The extension's name (a new layout gets a new name). */
#define DLARRAY_EXT_MEM_INFO_V1 "dlarray.mem_info.v1"

/*! \brief The table the plugin returns (valid until exit). Functions return 0, or -1 after
 *         core->set_error. */
typedef struct DLArrayMemInfoExtV1 {
  uint64_t struct_size; /*!< sizeof(DLArrayMemInfoExtV1) of the plugin */
  void* self;           /*!< handed back to every function */
  /*! \brief Bytes available to new allocations and the device's total, for device_id. */
  int (*mem_info)(void* self, int32_t device_id, uint64_t* free_bytes, uint64_t* total_bytes);
} DLArrayMemInfoExtV1;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLARRAY_EXT_MEM_INFO_H_
