/*!
 * \file elementwise_typed.cuh
 * \brief Elementwise kernels for every dtype but float32 (which keeps elementwise.cuh):
 *        out[i] = Store<TO>(f(Load(in_k[i])...)), f a functor on compute values (float for the
 *        half types). When every operand has the output's type and is 16-byte aligned, each thread
 *        moves 16-byte vectors (8 halves, 16 int8 ...): the half-precision ops run at the memory
 *        bandwidth like the float32 ones. Otherwise a grid-stride loop over single elements.
 */
#ifndef DLARRAY_BACKENDS_CUDA_ELEMENTWISE_TYPED_CUH_
#define DLARRAY_BACKENDS_CUDA_ELEMENTWISE_TYPED_CUH_

#include <cstdint>
#include <type_traits>
#include <utility>

#include "dtype.cuh"
#include "kernel_util.cuh"

namespace dlarray {
namespace cuda {
namespace detail {

constexpr int kTypedThreads = 256;

template <typename TO, typename F, typename... TI>
__global__ void __launch_bounds__(kTypedThreads)
    MapScalarKernel(TO* out, int64_t n, F f, const TI*... in) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = Store<TO>(f(Load(in[i])...));
  }
}

// Vectors of 16 bytes of T; one per thread and step; the tail (< kVec elements) by thread 0..
template <typename T>
struct alignas(16) Vec16 {
  static constexpr int kCount = 16 / sizeof(T);
  T v[kCount];
};

// f(Load(v[0].v[c]), Load(v[1].v[c]), ...) over the inputs' vectors.
template <typename F, typename T, size_t N, size_t... I>
__device__ __forceinline__ auto ApplyVec(const F& f, const Vec16<T> (&v)[N], int c,
                                         std::index_sequence<I...>) {
  (void)v;  // unused when the op has no inputs (array_set)
  (void)c;
  return f(Load(v[I].v[c])...);
}

// The float32 kernels' shape (elementwise.cuh): blocks of 128 threads, each thread with U = 2
// 16-byte vectors per input in flight, one block per 128 * U vectors (no grid-stride loop). The
// tail (n % kCount elements) goes to the first threads of each block's range past the vectors.
constexpr int kVecThreads = 128;
constexpr int kVecPerThread = 2;

template <typename T, typename F, typename... TI>
__global__ void __launch_bounds__(kVecThreads)
    MapVecKernel(T* out, int64_t n, F f, const TI*... in) {
  constexpr int kCount = Vec16<T>::kCount;
  constexpr int U = kVecPerThread;
  const int64_t nv = n / kCount;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * kVecThreads * U + threadIdx.x;
  Vec16<T> loaded[U][sizeof...(TI) > 0 ? sizeof...(TI) : 1];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int64_t i = base + u * kVecThreads;
    if (i < nv) {
      [[maybe_unused]] int k = 0;
      ((loaded[u][k++] = reinterpret_cast<const Vec16<T>*>(in)[i]), ...);
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int64_t i = base + u * kVecThreads;
    if (i < nv) {
      Vec16<T> r;
#pragma unroll
      for (int c = 0; c < kCount; ++c) {
        r.v[c] = Store<T>(ApplyVec(f, loaded[u], c, std::index_sequence_for<TI...>{}));
      }
      reinterpret_cast<Vec16<T>*>(out)[i] = r;
    }
  }
  const int64_t t = nv * kCount + static_cast<int64_t>(blockIdx.x) * kVecThreads + threadIdx.x;
  if (t < n) out[t] = Store<T>(f(Load(in[t])...));
}

}  // namespace detail

/*! \brief Queues out[i] = Store<TO>(f(Load(in[i])...)) for i < n on env's stream. */
template <typename TO, typename F, typename... TI>
void LaunchMap(const LaunchEnv& env, TO* out, int64_t n, F f, const TI*... in) {
  constexpr int kThreads = detail::kTypedThreads;
  constexpr bool kSameType = (std::is_same_v<TO, TI> && ...);
  bool aligned = Aligned16(out);
  ((aligned = aligned && Aligned16(in)), ...);
  if constexpr (kSameType && sizeof(TO) <= 8) {
    if (aligned) {
      constexpr int kT = detail::kVecThreads;
      const int64_t vectors = n / detail::Vec16<TO>::kCount;
      const int64_t blocks = std::max<int64_t>(1, CeilDiv(vectors, kT * detail::kVecPerThread));
      detail::MapVecKernel<TO, F, TI...>
          <<<static_cast<unsigned>(blocks), kT, 0, env.stream>>>(out, n, f, in...);
      CHECK_LAUNCH("MapVecKernel");
      return;
    }
  }
  const int blocks = GridSize(n, kThreads, FullWaveBlocks(env, kThreads) * 4);
  detail::MapScalarKernel<TO, F, TI...><<<blocks, kThreads, 0, env.stream>>>(out, n, f, in...);
  CHECK_LAUNCH("MapScalarKernel");
}

/*! \brief A same-dtype elementwise op with inputs in[0..N) and one output, for dtype T. */
template <typename T, typename F, int... I>
void LaunchSameType(const LaunchEnv& env, const KernelContext& ctx, F f,
                    std::integer_sequence<int, I...>) {
  LaunchMap(env, Data<T>(ctx.outputs[0]), Numel(ctx.outputs[0]), f,
            Data<const T>(ctx.inputs[I])...);
}

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_ELEMENTWISE_TYPED_CUH_
