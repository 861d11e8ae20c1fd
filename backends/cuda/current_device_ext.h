/*!
 * \file current_device_ext.h
 * \brief The CUDA plugin's "dlarray.current_device.v1" table (dlarray/ext/current_device.h).
 */
#ifndef DLARRAY_BACKENDS_CUDA_CURRENT_DEVICE_EXT_H_
#define DLARRAY_BACKENDS_CUDA_CURRENT_DEVICE_EXT_H_

namespace dlarray {
namespace cuda {

/*! \brief The DLArrayCurrentDeviceExtV1 table of the CUDA plugin. */
const void* CurrentDeviceExtension();

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_CURRENT_DEVICE_EXT_H_
