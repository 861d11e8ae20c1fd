// The device's fill (DLArrayDeviceApi.fill): a repeated 2-, 4- or 8-byte pattern, for the
// elements whose bytes differ (a pattern of one repeated byte is a cudaMemsetAsync instead).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "cuda_check.h"
#include "fill.h"
#include "kernel_util.cuh"

namespace dlarray {
namespace cuda {
namespace {

template <typename T>
__global__ void FillKernel(T* y, T v, uint64_t n) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    y[i] = v;
  }
}

template <typename T>
void Launch(void* dst, const void* pattern, uint64_t nbytes, cudaStream_t stream) {
  T v;
  std::memcpy(&v, pattern, sizeof v);
  const uint64_t n = nbytes / sizeof(T);
  constexpr int kThreads = 256;
  // A grid-stride loop: a bounded grid (enough blocks to fill every SM many times over).
  const int blocks = GridSize(static_cast<int64_t>(n), kThreads, int64_t{1} << 16);
  FillKernel<T><<<blocks, kThreads, 0, stream>>>(static_cast<T*>(dst), v, n);
  CheckLaunch("fill", __FILE__, __LINE__);
}

}  // namespace

void FillPattern(void* dst, const void* pattern, uint32_t pattern_size, uint64_t nbytes,
                 cudaStream_t stream) {
  const auto* p = static_cast<const unsigned char*>(pattern);
  bool one_byte = true;
  for (uint32_t i = 1; i < pattern_size; ++i) one_byte = one_byte && p[i] == p[0];
  if (one_byte) {
    CUDA_CALL(cudaMemsetAsync(dst, p[0], nbytes, stream));
    return;
  }
  switch (pattern_size) {
    case 2:
      return Launch<uint16_t>(dst, pattern, nbytes, stream);
    case 4:
      return Launch<uint32_t>(dst, pattern, nbytes, stream);
    case 8:
      return Launch<uint64_t>(dst, pattern, nbytes, stream);
    default:
      throw Error(ErrorKind::kValue,
                  "fill: pattern size " + std::to_string(pattern_size) + " is not 1, 2, 4 or 8");
  }
}

}  // namespace cuda
}  // namespace dlarray
