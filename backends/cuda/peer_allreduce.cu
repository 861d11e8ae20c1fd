// The peer all-reduce's kernel (peer_allreduce.h says how the ranks meet): copy in, barrier,
// reduce in rank order. Work goes by 16-byte units of each array, unit u to thread u of the grid
// (grid-stride): the split depends only on the element counts, so block b copies in exactly what
// the peers' blocks b read after the barrier.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "cuda_check.h"
#include "dlarray/ext/nccl.h"
#include "dtype.cuh"
#include "peer_allreduce.h"

namespace dlarray {
namespace cuda {
namespace peer {
namespace {

// a op b in T's compute type (float for the 16-bit floats: rounded once, at the end); integers
// wrap as NCCL's do (AddOf, MulOf: no signed overflow).
template <typename A>
__device__ A Combine(int32_t op, A a, A b) {
  if (op == kDLArrayNcclMax) return a < b ? b : a;
  if (op == kDLArrayNcclMin) return b < a ? b : a;
  return op == kDLArrayNcclProd ? MulOf(a, b) : AddOf(a, b);
}

__device__ uint64_t GlobalNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Block-level barrier with the peers' blocks of the same index (see peer_allreduce.h). Thread p
// (< world) signals rank p and waits for rank p. Returns false when a peer did not come (timeout
// or abort), after writing the error word.
__device__ bool Barrier(const KernelArgs& a) {
  __shared__ int failed;
  if (threadIdx.x == 0) failed = 0;
  __syncthreads();  // the block's copies are done (and `failed` is set)
  const int p = static_cast<int>(threadIdx.x);
  if (p < a.world) {
    __threadfence_system();  // the copies are visible to the peers before the flag
    volatile uint32_t* theirs = a.flags[p] + blockIdx.x * kMaxRanks + a.rank;
    *theirs = a.seq;
    volatile uint32_t* mine = a.flags[a.rank] + blockIdx.x * kMaxRanks + p;
    const uint64_t start = GlobalNs();
    for (uint32_t spins = 1; static_cast<int32_t>(*mine - a.seq) < 0; ++spins) {
      if ((spins & 1023u) != 0) continue;
      int32_t why = 0;
      if (a.words[kAbortWord] != 0) {
        why = kErrAborted;
      } else if (GlobalNs() - start > a.timeout_ns) {
        why = kErrTimeout;
      }
      if (why != 0) {
        a.words[kErrorWord] = why * 256 + p;
        __threadfence_system();
        failed = 1;
        break;
      }
    }
    __threadfence_system();  // the peers' copies are read after their flags
  }
  __syncthreads();
  return failed == 0;
}

template <typename T>
__device__ void CopyIn(const KernelArgs& a, char* mine) {
  constexpr int kUnit = kAlign / sizeof(T);
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (int s = 0; s < a.num_segments; ++s) {
    const Segment& seg = a.segments[s];
    const T* in = static_cast<const T*>(seg.in);
    T* buf = reinterpret_cast<T*>(mine + seg.offset);
    const uint64_t units = (seg.count + kUnit - 1) / kUnit;
    const bool aligned = reinterpret_cast<uintptr_t>(in) % kAlign == 0;
    for (uint64_t u = blockIdx.x * blockDim.x + threadIdx.x; u < units; u += stride) {
      const uint64_t first = u * kUnit;
      if (aligned && first + kUnit <= seg.count) {
        reinterpret_cast<uint4*>(buf)[u] = reinterpret_cast<const uint4*>(in)[u];
      } else {
        for (uint64_t i = first; i < first + kUnit && i < seg.count; ++i) buf[i] = in[i];
      }
    }
  }
}

template <typename T>
__device__ void Reduce(const KernelArgs& a) {
  constexpr int kUnit = kAlign / sizeof(T);
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (int s = 0; s < a.num_segments; ++s) {
    const Segment& seg = a.segments[s];
    T* out = static_cast<T*>(seg.out);
    const uint64_t units = (seg.count + kUnit - 1) / kUnit;
    const bool aligned = reinterpret_cast<uintptr_t>(out) % kAlign == 0;
    for (uint64_t u = blockIdx.x * blockDim.x + threadIdx.x; u < units; u += stride) {
      // Every rank's unit first (the loads overlap), then the sum in rank order 0, 1, ...: the
      // same order on every rank, so every rank gets the same bits. The last unit of an array
      // may read padding past its end, which is never written out. __ldcg: not from L1.
      uint4 raw[kMaxRanks];
#pragma unroll
      for (int p = 0; p < kMaxRanks; ++p) {
        if (p < a.world)
          raw[p] = __ldcg(reinterpret_cast<const uint4*>(a.buffers[p] + seg.offset) + u);
      }
      Compute<T> acc[kUnit];
      const T* first = reinterpret_cast<const T*>(&raw[0]);
#pragma unroll
      for (int e = 0; e < kUnit; ++e) acc[e] = Load(first[e]);
#pragma unroll
      for (int p = 1; p < kMaxRanks; ++p) {
        if (p >= a.world) break;
        const T* v = reinterpret_cast<const T*>(&raw[p]);
#pragma unroll
        for (int e = 0; e < kUnit; ++e) acc[e] = Combine(a.op, acc[e], Load(v[e]));
      }
      uint4 packed;
      T* result = reinterpret_cast<T*>(&packed);
#pragma unroll
      for (int e = 0; e < kUnit; ++e) {
        Compute<T> v = acc[e];
        if constexpr (!std::is_integral<Compute<T>>::value) {
          if (a.op == kDLArrayNcclAvg) v = v / static_cast<Compute<T>>(a.world);
        }
        result[e] = Store<T>(v);
      }
      const uint64_t base = u * kUnit;
      if (aligned && base + kUnit <= seg.count) {
        reinterpret_cast<uint4*>(out)[u] = packed;
      } else {
        for (int e = 0; e < kUnit && base + e < seg.count; ++e) out[base + e] = result[e];
      }
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) PeerAllReduceKernel(const KernelArgs a) {
  CopyIn<T>(a, a.buffers[a.rank]);
  if (!Barrier(a)) return;
  Reduce<T>(a);
}

template <typename T>
void LaunchAs(const KernelArgs& args, int blocks, cudaStream_t stream) {
  PeerAllReduceKernel<T><<<blocks, kThreads, 0, stream>>>(args);
  CheckLaunch("PeerAllReduceKernel", __FILE__, __LINE__);
}

}  // namespace

bool Supports(DLArrayDType t, int32_t op) {
  if (t.lanes != 1) return false;
  const bool is_float =
      (t.code == kDLArrayFloat && (t.bits == 16 || t.bits == 32 || t.bits == 64)) ||
      (t.code == kDLArrayBfloat && t.bits == 16);
  const bool is_int = (t.code == kDLArrayInt || t.code == kDLArrayUInt) &&
                      (t.bits == 8 || t.bits == 32 || t.bits == 64);
  if (op == kDLArrayNcclAvg) return is_float;  // NCCL's integer mean is left to NCCL
  return (is_float || is_int) && op >= kDLArrayNcclSum && op <= kDLArrayNcclMin;
}

void Launch(const KernelArgs& args, DLArrayDType t, int blocks, cudaStream_t stream) {
  if (t.code == kDLArrayBfloat) return LaunchAs<__nv_bfloat16>(args, blocks, stream);
  if (t.code == kDLArrayFloat) {
    if (t.bits == 16) return LaunchAs<__half>(args, blocks, stream);
    if (t.bits == 32) return LaunchAs<float>(args, blocks, stream);
    return LaunchAs<double>(args, blocks, stream);
  }
  const bool is_signed = t.code == kDLArrayInt;
  if (t.bits == 8) {
    return is_signed ? LaunchAs<int8_t>(args, blocks, stream)
                     : LaunchAs<uint8_t>(args, blocks, stream);
  }
  if (t.bits == 32) {
    return is_signed ? LaunchAs<int32_t>(args, blocks, stream)
                     : LaunchAs<uint32_t>(args, blocks, stream);
  }
  return is_signed ? LaunchAs<int64_t>(args, blocks, stream)
                   : LaunchAs<uint64_t>(args, blocks, stream);
}

}  // namespace peer
}  // namespace cuda
}  // namespace dlarray
