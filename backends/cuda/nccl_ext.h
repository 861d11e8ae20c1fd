/*!
 * \file nccl_ext.h
 * \brief The CUDA plugin's "dlarray.nccl.v1" extension (dlarray/ext/nccl.h).
 */
#ifndef DLARRAY_BACKENDS_CUDA_NCCL_EXT_H_
#define DLARRAY_BACKENDS_CUDA_NCCL_EXT_H_

#include "dlarray/ext/nccl.h"
#include "dlarray/plugin_api.h"

namespace dlarray {
namespace cuda {

class CudaDevice;

/*!
 * \brief The extension's table (one per process). Collectives run on device's streams; failures
 *        are reported through core->set_error. NCCL itself is opened at the first call that needs
 *        it, not here.
 */
const DLArrayNcclExtV1* NcclExtension(CudaDevice* device, const DLArrayCoreApi* core);

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_NCCL_EXT_H_
