// The peer all-reduce's kernel (peer_allreduce.h says how the ranks meet): push to the peers,
// barrier, reduce in rank order. Work goes by 16-byte units of each array, unit u to thread u of
// the grid (grid-stride): the split depends only on the element counts, so block b pushes
// exactly what the peers' blocks b read after the barrier.
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

// A flag store that makes the block's earlier writes (ordered before it by __syncthreads)
// visible to every GPU first, and the load that pairs with it: cheaper than a full system fence
// on each side.
__device__ void StoreRelease(uint32_t* flag, uint32_t value) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(flag), "r"(value) : "memory");
}

__device__ uint32_t LoadAcquire(const uint32_t* flag) {
  uint32_t value;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(value) : "l"(flag) : "memory");
  return value;
}

// Block-level barrier with the peers' blocks of the same index (see peer_allreduce.h). Thread p
// (< world) signals rank p and waits for rank p. Returns false when a peer did not come (timeout
// or abort), after writing the error word.
__device__ bool Barrier(const KernelArgs& a, uint32_t seq) {
  __shared__ int failed;
  if (threadIdx.x == 0) failed = 0;
  __syncthreads();  // the block's pushes are done (and `failed` is set)
  const int p = static_cast<int>(threadIdx.x);
  if (p < a.world) {
    StoreRelease(a.flags[p] + blockIdx.x * kMaxRanks + a.rank, seq);  // after the pushes
    const uint32_t* mine = a.flags[a.rank] + blockIdx.x * kMaxRanks + p;
    const uint64_t start = GlobalNs();
    // acquire: rank p's pushes are read after its flag
    for (uint32_t spins = 1; static_cast<int32_t>(LoadAcquire(mine) - seq) < 0; ++spins) {
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
  }
  __syncthreads();
  return failed == 0;
}

// Unit u (16 bytes) of an array of count T's at `in`: one load when aligned and whole; else
// element by element, the rest of the unit left zero (padding, never written out).
template <typename T>
__device__ uint4 LoadUnit(const T* in, uint64_t count, uint64_t u, bool aligned) {
  constexpr int kUnit = kAlign / sizeof(T);
  const uint64_t first = u * kUnit;
  if (aligned && first + kUnit <= count) return __ldcg(reinterpret_cast<const uint4*>(in) + u);
  uint4 raw = make_uint4(0, 0, 0, 0);
  T* v = reinterpret_cast<T*>(&raw);
  for (uint64_t i = first; i < first + kUnit && i < count; ++i) v[i - first] = in[i];
  return raw;
}

// Writes this rank's arrays into its slot of every peer's buffer half (NVLink stores: posted,
// so a rank does not wait for a round trip per unit as a read would).
template <typename T>
__device__ void Push(const KernelArgs& a, uint64_t half) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  const uint64_t slot = half + static_cast<uint64_t>(a.rank) * a.slot_bytes;
  for (int s = 0; s < a.num_segments; ++s) {
    const Segment& seg = a.segments[s];
    const T* in = static_cast<const T*>(seg.in);
    const uint64_t units = (seg.count + kAlign / sizeof(T) - 1) / (kAlign / sizeof(T));
    const bool aligned = reinterpret_cast<uintptr_t>(in) % kAlign == 0;
    for (uint64_t u = blockIdx.x * blockDim.x + threadIdx.x; u < units; u += stride) {
      const uint4 raw = LoadUnit(in, seg.count, u, aligned);
      for (int p = 0; p < a.world; ++p) {
        if (p != a.rank) reinterpret_cast<uint4*>(a.buffers[p] + slot + seg.offset)[u] = raw;
      }
    }
  }
}

// The SGD step on unit u of a parameter: p + g * scale, the product and the sum each rounded
// (what multiply_by_const then add give, bit for bit: no fused multiply-add).
__device__ float StepOf(float p, float g, double scale) {
  return __fadd_rn(p, __fmul_rn(g, static_cast<float>(scale)));
}
__device__ double StepOf(double p, double g, double scale) {
  return __dadd_rn(p, __dmul_rn(g, scale));
}

template <typename T>
__device__ void Step(T* param, uint64_t count, uint64_t u, const T* grad, double scale) {
  constexpr int kUnit = kAlign / sizeof(T);
  const uint64_t base = u * kUnit;
  if (reinterpret_cast<uintptr_t>(param) % kAlign == 0 && base + kUnit <= count) {
    uint4 raw = reinterpret_cast<const uint4*>(param)[u];
    T* p = reinterpret_cast<T*>(&raw);
#pragma unroll
    for (int e = 0; e < kUnit; ++e) p[e] = StepOf(p[e], grad[e], scale);
    reinterpret_cast<uint4*>(param)[u] = raw;
  } else {
    for (int e = 0; e < kUnit && base + e < count; ++e)
      param[base + e] = StepOf(param[base + e], grad[e], scale);
  }
}

// Every rank's unit (this rank's from its input, the peers' from their slots of this rank's own
// buffer half), summed in rank order 0, 1, ...: the same order on every rank, so every rank gets
// the same bits. A unit may be read and written by the same thread (in == out).
template <typename T>
__device__ void Reduce(const KernelArgs& a, uint64_t half) {
  constexpr int kUnit = kAlign / sizeof(T);
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  const char* mine = a.buffers[a.rank] + half;
  for (int s = 0; s < a.num_segments; ++s) {
    const Segment& seg = a.segments[s];
    const T* in = static_cast<const T*>(seg.in);
    T* out = static_cast<T*>(seg.out);
    const uint64_t units = (seg.count + kUnit - 1) / kUnit;
    const bool in_aligned = reinterpret_cast<uintptr_t>(in) % kAlign == 0;
    const bool aligned = reinterpret_cast<uintptr_t>(out) % kAlign == 0;
    for (uint64_t u = blockIdx.x * blockDim.x + threadIdx.x; u < units; u += stride) {
      uint4 raw[kMaxRanks];
#pragma unroll
      for (int p = 0; p < kMaxRanks; ++p) {
        if (p >= a.world) break;
        raw[p] =
            p == a.rank
                ? LoadUnit(in, seg.count, u, in_aligned)
                : __ldcg(reinterpret_cast<const uint4*>(mine + p * a.slot_bytes + seg.offset) + u);
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
      if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
        if (seg.param != nullptr) Step(static_cast<T*>(seg.param), seg.count, u, result, a.scale);
      }
    }
  }
}

// The call's sequence number: one more than the last call's (peer_allreduce.h). Every block
// reads it before any block can end, since the last block to end stores the next one.
__device__ uint32_t ReadSeq(const KernelArgs& a) {
  __shared__ uint32_t seq;
  if (threadIdx.x == 0) seq = *reinterpret_cast<volatile uint32_t*>(a.control + kLastSeq) + 1;
  __syncthreads();
  return seq;
}

// The block has ended its part; the grid's last block stores seq as the last call's number.
__device__ void EndBlock(const KernelArgs& a, uint32_t seq) {
  __syncthreads();
  if (threadIdx.x != 0) return;
  __threadfence();
  if (atomicAdd(a.control + kBlocksDone, 1u) == gridDim.x - 1) {
    a.control[kBlocksDone] = 0;
    *reinterpret_cast<volatile uint32_t*>(a.control + kLastSeq) = seq;
    __threadfence();
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) PeerAllReduceKernel(const KernelArgs a) {
  const uint32_t seq = ReadSeq(a);
  const uint64_t half = (seq & 1u) * a.half_bytes;
  Push<T>(a, half);
  if (Barrier(a, seq)) Reduce<T>(a, half);
  EndBlock(a, seq);
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
