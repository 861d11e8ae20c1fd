// The indexing primitives gather, scatter and nonzero (canonical shapes: the core's
// index_ops.cc). gather and scatter take one thread per moved element, elements moved as
// unsigned integers of their size. An index outside [-n, n) is neither read nor written
// through: the thread records it in two device words that the host reads back after the kernel,
// and the call fails naming it. nonzero is CUB's one-pass stream compaction (DeviceSelect::Flagged
// over the positions 0, 1, ..., the mask as the flags), which writes the count too: coalesced
// reads of the mask, where a thread per 256-byte chunk read 32 cache lines per warp load.
#include <thrust/iterator/counting_iterator.h>

#include <cub/device/device_select.cuh>
#include <string>

#include "dlarray/dtype_dispatch.h"
#include "kernel_util.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

constexpr int kThreads = 256;

// Element t of the picked array (outer, m, inner) and its offset in the indexed one (outer, n,
// inner); false, with the index recorded in bad, when the index is out of bounds.
__device__ __forceinline__ bool Locate(const int64_t* idx, int64_t t, int64_t n, int64_t m,
                                       int64_t inner, long long* bad, int64_t* indexed) {
  const int64_t i = t % inner;
  const int64_t r = t / inner;
  const int64_t raw = idx[r % m];
  const int64_t k = raw < 0 ? raw + n : raw;
  if (k < 0 || k >= n) {
    bad[0] = raw;
    bad[1] = 1;
    return false;
  }
  *indexed = ((r / m) * n + k) * inner + i;
  return true;
}

template <typename U, bool kScatter>
__global__ void __launch_bounds__(kThreads)
    TakeKernel(const U* src, const int64_t* idx, U* dst, int64_t total, int64_t n, int64_t m,
               int64_t inner, long long* bad) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += stride) {
    int64_t k;
    if (!Locate(idx, t, n, m, inner, bad, &k)) continue;
    if (kScatter) {
      dst[k] = src[t];
    } else {
      dst[t] = src[k];
    }
  }
}

template <bool kScatter>
void Take(const KernelContext& ctx) {
  const DLArray* data = kScatter ? ctx.outputs[0] : ctx.inputs[0];
  const DLArray* picked = kScatter ? ctx.inputs[0] : ctx.outputs[0];
  const int64_t n = data->shape[1], m = ctx.inputs[1]->shape[0];
  const int64_t total = NumElements(picked);
  if (total == 0) return;
  const LaunchEnv env = Prepare(ctx);
  long long* bad = static_cast<long long*>(env.device->allocate(env.id, 2 * sizeof(long long)));
  long long found[2] = {0, 0};
  cudaError_t err = cudaMemsetAsync(bad, 0, sizeof found, env.stream);
  if (err == cudaSuccess) {
    const int blocks = GridSize(total, kThreads, FullWaveBlocks(env, kThreads) * 4);
    const int64_t* idx = Data<const int64_t>(ctx.inputs[1]);
    const char* src = Data<const char>(ctx.inputs[0]);
    char* dst = Data<char>(ctx.outputs[0]);
    VisitElementSize(data->dtype, [&](auto tag) {
      using U = typename decltype(tag)::type;
      TakeKernel<U, kScatter><<<blocks, kThreads, 0, env.stream>>>(
          reinterpret_cast<const U*>(src), idx, reinterpret_cast<U*>(dst), total, n, m,
          data->shape[2], bad);
    });
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) {
    err = cudaMemcpyAsync(found, bad, sizeof found, cudaMemcpyDeviceToHost, env.stream);
  }
  if (err == cudaSuccess) err = cudaStreamSynchronize(env.stream);
  env.device->free(env.id, bad, 2 * sizeof(long long));
  if (err != cudaSuccess) ThrowCudaError(err, ctx.op_name, __FILE__, __LINE__);
  if (found[1] != 0) {
    throw Error(ErrorKind::kValue, std::string(ctx.op_name) + ": index " +
                                       std::to_string(found[0]) + " is out of bounds for size " +
                                       std::to_string(n));
  }
}

}  // namespace

void GatherKernel(const KernelContext& ctx) { Take<false>(ctx); }

void ScatterKernel(const KernelContext& ctx) { Take<true>(ctx); }

void NonzeroKernel(const KernelContext& ctx) {
  const int64_t n = NumElements(ctx.inputs[0]);
  const LaunchEnv env = Prepare(ctx);
  int64_t* out = Data<int64_t>(ctx.outputs[0]);  // out[0]: the count, then the positions
  if (n == 0) {
    const cudaError_t err = cudaMemsetAsync(out, 0, sizeof(int64_t), env.stream);
    if (err != cudaSuccess) ThrowCudaError(err, "nonzero", __FILE__, __LINE__);
    return;
  }
  const uint8_t* mask = Data<const uint8_t>(ctx.inputs[0]);
  const thrust::counting_iterator<int64_t> positions(0);
  size_t temp_bytes = 0;
  cudaError_t err =
      cub::DeviceSelect::Flagged(nullptr, temp_bytes, positions, mask, out + 1, out, n, env.stream);
  void* temp = nullptr;
  if (err == cudaSuccess) {
    temp = env.device->allocate(env.id, temp_bytes == 0 ? 1 : temp_bytes);
    err =
        cub::DeviceSelect::Flagged(temp, temp_bytes, positions, mask, out + 1, out, n, env.stream);
  }
  // Stream-ordered: the block goes back to the cache after the kernels queued before.
  if (temp != nullptr) env.device->free(env.id, temp, temp_bytes == 0 ? 1 : temp_bytes);
  if (err != cudaSuccess) ThrowCudaError(err, "nonzero", __FILE__, __LINE__);
}

}  // namespace cuda
}  // namespace dlarray
