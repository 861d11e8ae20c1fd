/*!
 * \file kernel_util.cuh
 * \brief What every kernel entry of the CUDA plugin needs: device, stream, grid sizes (typed data
 *        pointers and element counts are dlarray::Data and dlarray::NumElements).
 */
#ifndef DLARRAY_BACKENDS_CUDA_KERNEL_UTIL_CUH_
#define DLARRAY_BACKENDS_CUDA_KERNEL_UTIL_CUH_

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "cuda_check.h"
#include "cuda_device.h"
#include "dlarray/errors.h"
#include "dlarray/kernel.h"

namespace dlarray {
namespace cuda {

/*! \brief Where a kernel runs: the plugin's device object, the GPU id and its stream. */
struct LaunchEnv {
  CudaDevice* device;
  int id;
  cudaStream_t stream;
};

/*! \brief Makes the operands' GPU current (when it is not) and returns where to launch. */
inline LaunchEnv Prepare(const KernelContext& ctx) {
  SetDevice(ctx.device_id);
  return {static_cast<CudaDevice*>(ctx.device), ctx.device_id,
          static_cast<cudaStream_t>(ctx.stream)};
}

/*! \brief Whether p may be read and written as float4. */
inline bool Aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

/*! \brief 16 bytes of T, loaded and stored as one vector (float4's width) where Aligned16. */
template <typename T>
struct alignas(16) Vec16 {
  static constexpr int kCount = 16 / sizeof(T);
  T v[kCount];
};

/*! \brief ceil(a / b) for positive values. */
inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/*! \brief Blocks for work_items items: enough to cover them, at most max_blocks, at least 1. */
inline int GridSize(int64_t work_items, int threads, int64_t max_blocks) {
  return static_cast<int>(std::max<int64_t>(1, std::min(CeilDiv(work_items, threads), max_blocks)));
}

/*! \brief A one-dimensional grid of n blocks (one per row, ...); throws beyond CUDA's limit. */
inline int RowGrid(int64_t n, const char* op) {
  if (n > 0x7fffffff) {
    throw BackendError(std::string(op) + " on cuda: " + std::to_string(n) +
                       " rows exceed the grid limit of 2^31 - 1 blocks");
  }
  return static_cast<int>(n);
}

/*! \brief Blocks of `threads` that fill every multiprocessor of the GPU (2048 threads each). */
inline int64_t FullWaveBlocks(LaunchEnv env, int threads) {
  return static_cast<int64_t>(env.device->sm_count(env.id)) * (2048 / threads);
}

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_KERNEL_UTIL_CUH_
