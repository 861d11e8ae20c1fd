// The indexing primitives gather, scatter and nonzero (canonical shapes: the core's
// index_ops.cc). gather and scatter take one thread per moved element, elements moved as
// unsigned integers of their size. An index outside [-n, n) is neither read nor written
// through: the thread records it in two device words that the host reads back after the kernel,
// and the call fails naming it. nonzero counts per chunk, scans the chunk counts (CUB's
// exclusive sum) and writes each chunk's positions in order.
#include <cub/device/device_scan.cuh>
#include <string>

#include "dlarray/dtype_dispatch.h"
#include "kernel_util.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kChunk = 256;  // mask elements per nonzero thread

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

__global__ void __launch_bounds__(kThreads)
    NonzeroCount(const uint8_t* mask, int64_t n, int64_t chunks, int64_t* count) {
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= chunks) return;
  const int64_t end = min(n, (c + 1) * kChunk);
  int64_t k = 0;
  for (int64_t i = c * kChunk; i < end; ++i) k += mask[i] != 0;
  count[c] = k;
}

// out[0] = the total: the last chunk's start plus its count.
__global__ void NonzeroTotal(const int64_t* start, const int64_t* count, int64_t chunks,
                             int64_t* out) {
  out[0] = start[chunks - 1] + count[chunks - 1];
}

__global__ void __launch_bounds__(kThreads)
    NonzeroWrite(const uint8_t* mask, int64_t n, int64_t chunks, const int64_t* count,
                 int64_t* out) {
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= chunks) return;
  const int64_t end = min(n, (c + 1) * kChunk);
  int64_t* w = out + 1 + count[c];
  for (int64_t i = c * kChunk; i < end; ++i) {
    if (mask[i] != 0) *w++ = i;
  }
}

}  // namespace

void GatherKernel(const KernelContext& ctx) { Take<false>(ctx); }

void ScatterKernel(const KernelContext& ctx) { Take<true>(ctx); }

void NonzeroKernel(const KernelContext& ctx) {
  const int64_t n = NumElements(ctx.inputs[0]);
  const int64_t chunks = n == 0 ? 1 : CeilDiv(n, kChunk);
  const LaunchEnv env = Prepare(ctx);
  const size_t count_bytes = static_cast<size_t>(chunks) * sizeof(int64_t);
  int64_t* count = static_cast<int64_t*>(env.device->allocate(env.id, 2 * count_bytes));
  int64_t* start = count + chunks;
  const uint8_t* mask = Data<const uint8_t>(ctx.inputs[0]);
  int64_t* out = Data<int64_t>(ctx.outputs[0]);
  const int blocks = RowGrid(CeilDiv(chunks, kThreads), ctx.op_name);
  NonzeroCount<<<blocks, kThreads, 0, env.stream>>>(mask, n, chunks, count);
  size_t temp_bytes = 0;
  cudaError_t err =
      cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, count, start, chunks, env.stream);
  void* temp = nullptr;
  if (err == cudaSuccess) {
    temp = env.device->allocate(env.id, temp_bytes == 0 ? 1 : temp_bytes);
    err = cub::DeviceScan::ExclusiveSum(temp, temp_bytes, count, start, chunks, env.stream);
  }
  if (err == cudaSuccess) {
    NonzeroTotal<<<1, 1, 0, env.stream>>>(start, count, chunks, out);
    NonzeroWrite<<<blocks, kThreads, 0, env.stream>>>(mask, n, chunks, start, out);
    err = cudaGetLastError();
  }
  // Stream-ordered: the blocks go back to the cache after the kernels queued before.
  if (temp != nullptr) env.device->free(env.id, temp, temp_bytes == 0 ? 1 : temp_bytes);
  env.device->free(env.id, count, 2 * count_bytes);
  if (err != cudaSuccess) ThrowCudaError(err, "nonzero", __FILE__, __LINE__);
}

}  // namespace cuda
}  // namespace dlarray
