/*!
 * \file elementwise.cuh
 * \brief The one launcher of the elementwise ops, for every dtype:
 *        out[i] = Store<TO>(f(Load(in_0[i]), ..., Load(in_{N-1}[i]))), f a functor on compute
 *        values (float for the half types, see dtype.cuh).
 *
 * When every operand is aligned to its pack, each thread reads kCount elements of every input at
 * once, kCount = 16 bytes / the widest input's size: 16-byte vectors of the widest input (4 floats,
 * 8 halves, 16 int8 ...), narrower packs of the others (where's 4 bools beside 4 floats), and
 * writes kCount outputs as one pack no wider than 16 bytes (a vector of the same type, or
 * compare's 4 bools from 4 floats), so these run at the memory bandwidth; the scalar tail (fewer
 * than kCount elements) is done by the first threads. Otherwise (an output wider than the widest
 * input as in astype to float64, 16-byte elements, or misaligned views) a grid-stride loop over
 * single elements on a grid that covers the GPU once. In place is fine: each element is read and
 * written by the same thread.
 */
#ifndef DLARRAY_BACKENDS_CUDA_ELEMENTWISE_CUH_
#define DLARRAY_BACKENDS_CUDA_ELEMENTWISE_CUH_

#include <cstdint>
#include <type_traits>
#include <utility>

#include "dtype.cuh"
#include "kernel_util.cuh"

namespace dlarray {
namespace cuda {
namespace detail {

constexpr int kScalarThreads = 256;
// Vectorized kernel: blocks of 128 threads, 2 vectors per thread and input (PyTorch's shape). On
// an H200 at 8192x8192 float32 it moved 4.26 TB/s, against 3.94 for a grid-stride loop over one
// wave of 256-thread blocks, 4.25 for 256 threads with 4 vectors each, and 4.20 with streaming
// (evict-first) cache hints.
constexpr int kVecThreads = 128;
constexpr int kVecPerThread = 2;

template <typename TO, typename F, typename... TI>
__global__ void __launch_bounds__(kScalarThreads)
    MapScalarKernel(TO* out, int64_t n, F f, const TI*... in) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = Store<TO>(f(Load(in[i])...));
  }
}

// kCount elements of T read or written as one access (a 16-byte vector at most; bool beside
// float32: 4 bytes at a time).
template <typename T, int kCount>
struct alignas(sizeof(T) * kCount) Pack {
  T v[kCount];
};

// How many elements a vector access moves: 16 bytes of the widest input (of the output when there
// are none).
template <typename TO, typename... TI>
constexpr int VecCount() {
  size_t widest = sizeof...(TI) == 0 ? sizeof(TO) : 0;
  ((widest = sizeof(TI) > widest ? sizeof(TI) : widest), ...);
  return static_cast<int>(16 / widest);
}

// A pack of kCount elements of each input type, loaded together.
template <int kCount, typename... TI>
struct Packs {  // no inputs left
  __device__ __forceinline__ void load(int64_t /*i*/) {}
  // f(values...): the values of element c of every pack, in the inputs' order.
  template <typename F, typename... V>
  __device__ __forceinline__ auto apply(const F& f, int /*c*/, V... values) const {
    return f(values...);
  }
};
template <int kCount, typename T0, typename... TI>
struct Packs<kCount, T0, TI...> {
  Pack<T0, kCount> head;
  Packs<kCount, TI...> tail;
  __device__ __forceinline__ void load(int64_t i, const T0* in0, const TI*... in) {
    head = reinterpret_cast<const Pack<T0, kCount>*>(in0)[i];
    tail.load(i, in...);
  }
  template <typename F, typename... V>
  __device__ __forceinline__ auto apply(const F& f, int c, V... values) const {
    return tail.apply(f, c, values..., Load(head.v[c]));
  }
};

// Each block handles kVecThreads * kVecPerThread consecutive packs of kCount elements: that many
// loads per input in flight per thread, each step a contiguous kVecThreads packs (no grid-stride
// loop), the results stored as packs of as many TO. The tail (n % kCount elements) goes to the
// first threads of each block's range past the packs.
template <typename TO, int kCount, typename F, typename... TI>
__global__ void __launch_bounds__(kVecThreads)
    MapVecKernel(TO* out, int64_t n, F f, const TI*... in) {
  constexpr int U = kVecPerThread;
  using OutPack = Pack<TO, kCount>;
  const int64_t nv = n / kCount;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * kVecThreads * U + threadIdx.x;
  Packs<kCount, TI...> loaded[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int64_t i = base + u * kVecThreads;
    if (i < nv) loaded[u].load(i, in...);
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int64_t i = base + u * kVecThreads;
    if (i < nv) {
      OutPack r;
#pragma unroll
      for (int c = 0; c < kCount; ++c) r.v[c] = Store<TO>(loaded[u].apply(f, c));
      reinterpret_cast<OutPack*>(out)[i] = r;
    }
  }
  const int64_t t = nv * kCount + static_cast<int64_t>(blockIdx.x) * kVecThreads + threadIdx.x;
  if (t < n) out[t] = Store<TO>(f(Load(in[t])...));
}

}  // namespace detail

/*! \brief Queues out[i] = Store<TO>(f(Load(in[i])...)) for i < n on env's stream. */
template <typename TO, typename F, typename... TI>
void LaunchMap(const LaunchEnv& env, TO* out, int64_t n, F f, const TI*... in) {
  // Packs when a vector of the widest input is at least two elements and as many outputs fit 16
  // bytes (the same width, or narrower as compare's bool), every pointer aligned to its pack.
  constexpr int kCount = detail::VecCount<TO, TI...>();
  if constexpr (kCount >= 2 && sizeof(TO) * kCount <= 16) {
    bool aligned = reinterpret_cast<uintptr_t>(out) % alignof(detail::Pack<TO, kCount>) == 0;
    ((aligned =
          aligned && reinterpret_cast<uintptr_t>(in) % alignof(detail::Pack<TI, kCount>) == 0),
     ...);
    if (aligned) {
      constexpr int kT = detail::kVecThreads;
      const int64_t packs = CeilDiv(n, kCount);
      const int64_t blocks = std::max<int64_t>(1, CeilDiv(packs, kT * detail::kVecPerThread));
      detail::MapVecKernel<TO, kCount, F, TI...>
          <<<static_cast<unsigned>(blocks), kT, 0, env.stream>>>(out, n, f, in...);
      CHECK_LAUNCH("MapVecKernel");
      return;
    }
  }
  constexpr int kThreads = detail::kScalarThreads;
  const int blocks = GridSize(n, kThreads, FullWaveBlocks(env, kThreads));
  detail::MapScalarKernel<TO, F, TI...><<<blocks, kThreads, 0, env.stream>>>(out, n, f, in...);
  CHECK_LAUNCH("MapScalarKernel");
}

namespace detail {

template <typename T, typename MakeOp, int... I>
void LaunchSameTypeImpl(const KernelContext& ctx, MakeOp make_op,
                        std::integer_sequence<int, I...> /*inputs*/) {
  const LaunchEnv env = Prepare(ctx);
  LaunchMap(env, Data<T>(ctx.outputs[0]), NumElements(ctx.outputs[0]), make_op(TypeTag<T>{}),
            Data<const T>(ctx.inputs[I])...);
}

}  // namespace detail

/*!
 * \brief An elementwise kernel whose kNumInputs inputs and output share one dtype of kSet:
 *        dispatches on the output's dtype T and launches make_op(TypeTag<T>{}), a device functor
 *        on compute values (`template <typename C> __device__ C operator()(C x, ...) const`).
 */
template <int kSet, int kNumInputs, typename MakeOp>
void LaunchSameType(const KernelContext& ctx, MakeOp make_op) {
  Dispatch<kSet>(ctx.outputs[0]->dtype, ctx.op_name, [&](auto tag) {
    detail::LaunchSameTypeImpl<typename decltype(tag)::type>(
        ctx, make_op, std::make_integer_sequence<int, kNumInputs>{});
  });
}

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_ELEMENTWISE_CUH_
