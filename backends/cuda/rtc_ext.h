/*!
 * \file rtc_ext.h
 * \brief The CUDA plugin's "dlarray.rtc.v1" table (dlarray/ext/rtc.h): NVRTC compiles, the driver
 *        loads modules and launches kernels on the device's stream.
 */
#ifndef DLARRAY_BACKENDS_CUDA_RTC_EXT_H_
#define DLARRAY_BACKENDS_CUDA_RTC_EXT_H_

#include "dlarray/plugin_api.h"

namespace dlarray {
namespace cuda {

class CudaDevice;

/*! \brief The DLArrayRtcExtV1 table, serving the GPUs of device. */
const void* RtcExtension(CudaDevice* device);

/*! \brief The core's table, through which the extension reports errors (set by create_device). */
void SetRtcCoreApi(const DLArrayCoreApi* core);

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_RTC_EXT_H_
