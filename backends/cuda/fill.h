// The device's fill (DLArrayDeviceApi.fill), from fill.cu.
#ifndef DLARRAY_BACKENDS_CUDA_FILL_H_
#define DLARRAY_BACKENDS_CUDA_FILL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace dlarray {
namespace cuda {

/*! \brief Queues on stream the pattern (pattern_size: 1, 2, 4 or 8 bytes) repeated over the
 *         nbytes at dst (aligned to pattern_size), on the current device. */
void FillPattern(void* dst, const void* pattern, uint32_t pattern_size, uint64_t nbytes,
                 cudaStream_t stream);

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_FILL_H_
