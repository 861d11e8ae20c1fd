/*!
 * \file elementwise.cuh
 * \brief The one launcher of the elementwise ops, for every dtype:
 *        out[i] = Store<TO>(f(Load(in_0[i]), ..., Load(in_{N-1}[i]))), f a functor on compute
 *        values (float for the half types, see dtype.cuh).
 *
 * When the inputs share one type and are 16-byte aligned, each thread reads 16-byte vectors
 * (4 floats, 8 halves, 16 int8 ...) and writes as many outputs at once (a vector of the same type,
 * or a narrower pack: compare's 4 bools from 4 floats), so these run at the memory bandwidth; the
 * scalar tail (fewer than one vector) is done by the first threads. Otherwise (mixed input types
 * as in where, a wider output as in astype to float64, or misaligned views) a grid-stride loop
 * over single elements on a grid that covers the GPU once. In place is fine: each element is read
 * and written by the same thread.
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

// f(Load(v[0].v[c]), Load(v[1].v[c]), ...) over the inputs' vectors.
template <typename F, typename T, size_t N, size_t... I>
__device__ __forceinline__ auto ApplyVec(const F& f, const Vec16<T> (&v)[N], int c,
                                         std::index_sequence<I...>) {
  (void)v;  // unused when the op has no inputs (array_set)
  (void)c;
  return f(Load(v[I].v[c])...);
}

// kCount elements of T stored as one (vector) write: the output side of a kernel whose inputs
// are read in 16-byte vectors of kCount elements (bool from float32: 4 bytes at a time).
template <typename T, int kCount>
struct alignas(sizeof(T) * kCount) Pack {
  T v[kCount];
};

// Each block handles kVecThreads * kVecPerThread consecutive vectors of the inputs' type TV:
// that many loads per input in flight per thread, each step a contiguous kVecThreads * 16 bytes
// (no grid-stride loop), the results stored as packs of as many TO. The tail (n % kCount
// elements) goes to the first threads of each block's range past the vectors.
template <typename TO, typename TV, typename F, typename... TI>
__global__ void __launch_bounds__(kVecThreads)
    MapVecKernel(TO* out, int64_t n, F f, const TI*... in) {
  constexpr int kCount = Vec16<TV>::kCount;
  constexpr int U = kVecPerThread;
  using OutPack = Pack<TO, kCount>;
  const int64_t nv = n / kCount;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * kVecThreads * U + threadIdx.x;
  Vec16<TV> loaded[U][sizeof...(TI) > 0 ? sizeof...(TI) : 1];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int64_t i = base + u * kVecThreads;
    if (i < nv) {
      [[maybe_unused]] int k = 0;
      ((loaded[u][k++] = reinterpret_cast<const Vec16<TV>*>(in)[i]), ...);
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int64_t i = base + u * kVecThreads;
    if (i < nv) {
      OutPack r;
#pragma unroll
      for (int c = 0; c < kCount; ++c) {
        r.v[c] = Store<TO>(ApplyVec(f, loaded[u], c, std::index_sequence_for<TI...>{}));
      }
      reinterpret_cast<OutPack*>(out)[i] = r;
    }
  }
  const int64_t t = nv * kCount + static_cast<int64_t>(blockIdx.x) * kVecThreads + threadIdx.x;
  if (t < n) out[t] = Store<TO>(f(Load(in[t])...));
}

// The inputs' common type (the output's when there are none), or void when they differ.
template <typename TO, typename... TI>
struct VecType {
  using type = TO;
};
template <typename TO, typename T0, typename... TI>
struct VecType<TO, T0, TI...> {
  using type = std::conditional_t<(std::is_same_v<T0, TI> && ...), T0, void>;
};
}  // namespace detail

/*! \brief Queues out[i] = Store<TO>(f(Load(in[i])...)) for i < n on env's stream. */
template <typename TO, typename F, typename... TI>
void LaunchMap(const LaunchEnv& env, TO* out, int64_t n, F f, const TI*... in) {
  // Vectors when the inputs share a type TV of at most 8 bytes and a vector's worth of outputs
  // fits 16 bytes (same type, or narrower as compare's bool), every pointer aligned to its width.
  using TV = typename detail::VecType<TO, TI...>::type;
  if constexpr (!std::is_void_v<TV>) {
    if constexpr (sizeof(TV) <= 8 && sizeof(TO) * Vec16<TV>::kCount <= 16) {
      using OutPack = detail::Pack<TO, Vec16<TV>::kCount>;
      bool aligned = reinterpret_cast<uintptr_t>(out) % alignof(OutPack) == 0;
      ((aligned = aligned && Aligned16(in)), ...);
      if (aligned) {
        constexpr int kT = detail::kVecThreads;
        const int64_t vectors = CeilDiv(n, Vec16<TV>::kCount);
        const int64_t blocks = std::max<int64_t>(1, CeilDiv(vectors, kT * detail::kVecPerThread));
        detail::MapVecKernel<TO, TV, F, TI...>
            <<<static_cast<unsigned>(blocks), kT, 0, env.stream>>>(out, n, f, in...);
        CHECK_LAUNCH("MapVecKernel");
        return;
      }
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
