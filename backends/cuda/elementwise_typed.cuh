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

template <typename T, typename F, typename... TI>
__global__ void __launch_bounds__(kTypedThreads)
    MapVecKernel(T* out, int64_t n, F f, const TI*... in) {
  constexpr int kCount = Vec16<T>::kCount;
  const int64_t nv = n / kCount;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = tid; i < nv; i += stride) {
    Vec16<T> r;
#pragma unroll
    for (int c = 0; c < kCount; ++c) {
      r.v[c] = Store<T>(f(Load(reinterpret_cast<const Vec16<TI>*>(in)[i].v[c])...));
    }
    reinterpret_cast<Vec16<T>*>(out)[i] = r;
  }
  for (int64_t i = nv * kCount + tid; i < n; i += stride) out[i] = Store<T>(f(Load(in[i])...));
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
      const int64_t work = CeilDiv(n, detail::Vec16<TO>::kCount);
      const int blocks = GridSize(work, kThreads, FullWaveBlocks(env, kThreads) * 4);
      detail::MapVecKernel<TO, F, TI...><<<blocks, kThreads, 0, env.stream>>>(out, n, f, in...);
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
