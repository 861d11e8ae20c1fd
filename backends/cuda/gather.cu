// The indexing primitives gather, gather_along, scatter and nonzero (canonical shapes: the core's
// index_ops.cc). gather and scatter move elements as unsigned integers of their size, four per
// thread. An index outside [-n, n) is neither read nor written through: the thread records it in
// two words (pinned host memory) that the host reads after the kernel, and the call fails naming
// it. nonzero is CUB's one-pass stream compaction (DeviceSelect::Flagged over the positions 0, 1,
// ..., the mask as the flags), which writes the count too: coalesced reads of the mask, where a
// thread per 256-byte chunk read 32 cache lines per warp load. compress (x[mask]) is the same
// compaction over x's elements.
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
// inner); false, with the index recorded in bad, when the index is out of bounds. The divisions
// run in I: 32 bits whenever the picked array has fewer than 2^32 elements (a 64-bit division is
// a long software sequence on the GPU), and none at all for inner == 1 or outer == 1. kAlong
// (gather_along): element t has an index of its own, idx[t].
// Loads and stores of data read or written once (the indices of one outer row, the picked
// elements) are marked evict-first, so they pass through L2 without pushing out the indexed
// array: random reads of an array of 40 MB then mostly hit an H100's or H200's 50 MB of L2.
template <typename U>
__device__ __forceinline__ U LoadOnce(const U* p) {
  if constexpr (sizeof(U) == 8) {
    return static_cast<U>(__ldcs(reinterpret_cast<const unsigned long long*>(p)));
  } else if constexpr (sizeof(U) <= 4) {
    return __ldcs(p);
  } else {
    return *p;  // (Bytes16: 8-byte aligned, no 16-byte streaming load)
  }
}

template <typename U>
__device__ __forceinline__ void StoreOnce(U* p, U v) {
  if constexpr (sizeof(U) == 8) {
    __stcs(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else if constexpr (sizeof(U) <= 4) {
    __stcs(p, v);
  } else {
    *p = v;
  }
}

template <typename I, bool kAlong>
__device__ __forceinline__ bool Locate(const int64_t* idx, I t, int64_t n, I m, I inner,
                                       long long* bad, int64_t* indexed, bool idx_once) {
  const I i = inner == 1 ? 0 : t % inner;
  const I r = inner == 1 ? t : t / inner;
  const I o = r < m ? 0 : r / m;  // the outer index
  const int64_t* at = idx + (kAlong ? t : r - o * m);
  const int64_t raw = idx_once ? LoadOnce(at) : *at;
  const int64_t k = raw < 0 ? raw + n : raw;
  if (k < 0 || k >= n) {
    bad[0] = raw;
    bad[1] = 1;
    return false;
  }
  *indexed = (static_cast<int64_t>(o) * n + k) * static_cast<int64_t>(inner) + i;
  return true;
}

// Each thread moves kUnroll elements kThreads apart (coalesced), their index loads issued before
// the moves so that several dependent reads are in flight per thread.
constexpr int kUnroll = 4;

template <typename U, typename I, bool kScatter, bool kAlong>
__global__ void __launch_bounds__(kThreads)
    TakeKernel(const U* src, const int64_t* idx, U* dst, I total, int64_t n, I m, I inner,
               long long* bad, bool idx_once) {
  const I base = static_cast<I>(blockIdx.x) * (kThreads * kUnroll) + threadIdx.x;
  int64_t at[kUnroll];
  bool ok[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const I t = base + u * kThreads;
    ok[u] = t < total && Locate<I, kAlong>(idx, t, n, m, inner, bad, &at[u], idx_once);
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const I t = base + u * kThreads;
    if (!ok[u]) continue;
    if (kScatter) {
      dst[at[u]] = LoadOnce(src + t);
    } else {
      StoreOnce(dst + t, src[at[u]]);
    }
  }
}

// The pair of words where the kernels report a bad index, pinned and mapped, one pair per host
// thread (a call waits for its kernel before it returns, so a thread has one in use at a time).
// The kernel writes it across the bus: no memset and no copy back are queued, each a stream
// operation of its own before the synchronization. nullptr where pinned memory is refused.
long long* PinnedReport() {
  thread_local long long* report = nullptr;
  thread_local bool tried = false;
  if (!tried) {
    tried = true;
    if (cudaHostAlloc(reinterpret_cast<void**>(&report), 2 * sizeof(long long),
                      cudaHostAllocPortable | cudaHostAllocMapped) != cudaSuccess) {
      (void)cudaGetLastError();
      report = nullptr;
    }
  }
  return report;
}

template <bool kScatter, bool kAlong = false>
void Take(const KernelContext& ctx) {
  const DLArray* data = kScatter ? ctx.outputs[0] : ctx.inputs[0];
  const DLArray* picked = kScatter ? ctx.inputs[0] : ctx.outputs[0];
  const int64_t n = data->shape[1], m = picked->shape[1];
  const int64_t total = NumElements(picked);
  if (total == 0) return;
  const LaunchEnv env = Prepare(ctx);
  volatile long long* pinned = PinnedReport();
  long long* bad = nullptr;
  long long found[2] = {0, 0};
  cudaError_t err = cudaSuccess;
  if (pinned != nullptr) {
    pinned[0] = pinned[1] = 0;
    err =
        cudaHostGetDevicePointer(reinterpret_cast<void**>(&bad), const_cast<long long*>(pinned), 0);
  } else {
    bad = static_cast<long long*>(env.device->allocate(env.id, sizeof found));
    err = cudaMemsetAsync(bad, 0, sizeof found, env.stream);
  }
  if (err == cudaSuccess) {
    const int blocks = RowGrid(CeilDiv(total, kThreads * kUnroll), ctx.op_name);
    const int64_t* idx = Data<const int64_t>(ctx.inputs[1]);
    const char* src = Data<const char>(ctx.inputs[0]);
    char* dst = Data<char>(ctx.outputs[0]);
    const int64_t inner = data->shape[2];
    // each index read once: gather_along's, or take's of one outer row
    const bool idx_once = kAlong || data->shape[0] == 1;
    VisitElementSize(data->dtype, [&](auto tag) {
      using U = typename decltype(tag)::type;
      const U* s = reinterpret_cast<const U*>(src);
      U* d = reinterpret_cast<U*>(dst);
      // The last block's threads reach total + kThreads * kUnroll - 1 (< 2^32 here).
      if (total + kThreads * kUnroll <= int64_t{0xffffffff}) {
        TakeKernel<U, uint32_t, kScatter, kAlong><<<blocks, kThreads, 0, env.stream>>>(
            s, idx, d, static_cast<uint32_t>(total), n, static_cast<uint32_t>(m),
            static_cast<uint32_t>(inner), bad, idx_once);
      } else {
        TakeKernel<U, uint64_t, kScatter, kAlong><<<blocks, kThreads, 0, env.stream>>>(
            s, idx, d, static_cast<uint64_t>(total), n, static_cast<uint64_t>(m),
            static_cast<uint64_t>(inner), bad, idx_once);
      }
    });
    err = cudaGetLastError();
  }
  if (err == cudaSuccess && pinned == nullptr) {
    err = cudaMemcpyAsync(found, bad, sizeof found, cudaMemcpyDeviceToHost, env.stream);
  }
  if (err == cudaSuccess) err = cudaStreamSynchronize(env.stream);
  if (pinned != nullptr) {
    found[0] = pinned[0];
    found[1] = pinned[1];
  } else if (bad != nullptr) {
    env.device->free(env.id, bad, sizeof found);
  }
  if (err != cudaSuccess) ThrowCudaError(err, ctx.op_name, __FILE__, __LINE__);
  if (found[1] != 0) {
    throw Error(ErrorKind::kValue, std::string(ctx.op_name) + ": index " +
                                       std::to_string(found[0]) + " is out of bounds for size " +
                                       std::to_string(n));
  }
}

// CUB's one-pass stream compaction: the items of `in` whose flag in mask is set, to out, their
// number to *count (device memory), with its scratch from the device's cache.
template <typename InputIt, typename T>
void SelectFlagged(const KernelContext& ctx, const LaunchEnv& env, InputIt in, T* out,
                   int64_t* count, int64_t n) {
  const uint8_t* mask = Data<const uint8_t>(ctx.inputs[ctx.num_inputs - 1]);
  size_t temp_bytes = 0;
  cudaError_t err =
      cub::DeviceSelect::Flagged(nullptr, temp_bytes, in, mask, out, count, n, env.stream);
  void* temp = nullptr;
  if (err == cudaSuccess) {
    temp = env.device->allocate(env.id, temp_bytes == 0 ? 1 : temp_bytes);
    err = cub::DeviceSelect::Flagged(temp, temp_bytes, in, mask, out, count, n, env.stream);
  }
  // Stream-ordered: the block goes back to the cache after the kernels queued before.
  if (temp != nullptr) env.device->free(env.id, temp, temp_bytes == 0 ? 1 : temp_bytes);
  if (err != cudaSuccess) ThrowCudaError(err, ctx.op_name, __FILE__, __LINE__);
}

}  // namespace

void GatherKernel(const KernelContext& ctx) { Take<false>(ctx); }

void GatherAlongKernel(const KernelContext& ctx) { Take<false, true>(ctx); }

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
  SelectFlagged(ctx, env, thrust::counting_iterator<int64_t>(0), out + 1, out, n);
}

// x[mask] without positions: the mask and x read once, the picked elements written once (nonzero
// and gather write and read 8-byte positions, and the gather's bounds check waits for its kernel).
void CompressKernel(const KernelContext& ctx) {
  const int64_t n = NumElements(ctx.inputs[0]);  // > 0: the core fills empty calls' count
  const LaunchEnv env = Prepare(ctx);
  int64_t* count = Data<int64_t>(ctx.outputs[1]);
  VisitElementSize(ctx.inputs[0]->dtype, [&](auto tag) {
    using U = typename decltype(tag)::type;
    SelectFlagged(ctx, env, Data<const U>(ctx.inputs[0]), Data<U>(ctx.outputs[0]), count, n);
  });
}

}  // namespace cuda
}  // namespace dlarray
