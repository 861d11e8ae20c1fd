/*!
 * \file elementwise.h
 * \brief The one elementwise loop every map-like kernel uses: y[i] = op(in0[i], in1[i], ...), with
 *        op a generic functor called on VecF for the body and on float for the tail.
 */
#ifndef DLARRAY_BACKENDS_CPU_ELEMENTWISE_H_
#define DLARRAY_BACKENDS_CPU_ELEMENTWISE_H_

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "cpu_kernels.h"
#include "dtype.h"
#include "parallel.h"
#include "simd.h"

namespace dlarray::cpu {

/*! \brief Output bytes from which stores may bypass the caches (too big to stay cached). */
int64_t StreamingStoreBytes();

/*! \brief Whether a map writing n floats to y may use non-temporal stores. */
template <typename... In>
inline bool UseStreamingStores(const float* y, int64_t n, const In*... in) {
  const bool aliased = ((static_cast<const void*>(in) == y) || ...);
  return !aliased && n * static_cast<int64_t>(sizeof(float)) >= StreamingStoreBytes();
}

/*!
 * \brief y[i] = op(in[i]...) for i in [begin, end) on the calling thread. kStream: non-temporal
 *        stores (after a scalar head up to the first aligned y), which skip the read for ownership.
 */
template <bool kStream, typename Op, typename... In>
inline void MapRange(int64_t begin, int64_t end, float* y, Op op, const In*... in) {
  int64_t i = begin;
  if constexpr (kStream) {
    for (; i < end && !IsVecAligned(y + i); ++i) y[i] = op(in[i]...);
  }
  auto store = [y](int64_t at, VecF v) {
    if constexpr (kStream) {
      StoreStream(y + at, v);
    } else {
      StoreU(y + at, v);
    }
  };
  // Two vectors a step: a long op (tanh, exp: a chain of dependent multiply-adds) then has two
  // independent chains in flight, 15-20% faster than one where the core waits on latencies.
  // Both are computed before either is stored: in place (y == in), the second vector's input
  // is read before any write.
  for (; i + 2 * kVecWidth <= end; i += 2 * kVecWidth) {
    const VecF v0 = op(LoadU(in + i)...);
    const VecF v1 = op(LoadU(in + i + kVecWidth)...);
    store(i, v0);
    store(i + kVecWidth, v1);
  }
  for (; i + kVecWidth <= end; i += kVecWidth) store(i, op(LoadU(in + i)...));
  for (; i < end; ++i) y[i] = op(in[i]...);
  if constexpr (kStream) StreamFence();
}

/*! \brief y[i] = value for i in [begin, end) (the op ignores its input: no load is made). */
template <bool kStream>
inline void FillRange(int64_t begin, int64_t end, float* y, float value) {
  MapRange<kStream>(
      begin, end, y, [value](auto x) { return Splat<decltype(x)>(value); },
      static_cast<const float*>(y));
}

/*! \brief y[i] = op(in[i]...) for i in [0, n), in parallel for large n. */
template <typename Op, typename... In>
inline void Map(int64_t n, float* y, Op op, const In*... in) {
  if (UseStreamingStores(y, n, in...)) {
    ParallelFor(n, n, kElementAlign,
                [&](int64_t b, int64_t e) { MapRange<true>(b, e, y, op, in...); });
  } else {
    ParallelFor(n, n, kElementAlign,
                [&](int64_t b, int64_t e) { MapRange<false>(b, e, y, op, in...); });
  }
}

/*!
 * \brief y[i] = pred(in[i]...) for i in [0, n), in parallel for large n: pred called on VecF gives
 *        a lane mask (-1 or 0 per lane, as vector comparisons do), stored as kVecWidth bools; on
 *        float (the tail), a truth value.
 */
template <typename Pred, typename... In>
inline void MapMask(int64_t n, bool* y, Pred pred, const In*... in) {
  typedef int8_t VecB __attribute__((vector_size(kVecWidth)));
  ParallelFor(n, n, kElementAlign, [&](int64_t b, int64_t e) {
    int64_t i = b;
    for (; i + kVecWidth <= e; i += kVecWidth) {
      const VecI mask = pred(LoadU(in + i)...);
      const VecB bytes = __builtin_convertvector(mask & 1, VecB);
      std::memcpy(y + i, &bytes, sizeof bytes);
    }
    for (; i < e; ++i) y[i] = static_cast<bool>(pred(in[i]...));
  });
}

/*! \brief A kernel of kNumInputs same-shape inputs and one output: out = op(inputs...). */
template <int kNumInputs, typename Op, int... I>
inline void ElementwiseKernelImpl(const KernelContext& ctx, Op op,
                                  std::integer_sequence<int, I...>) {
  DLArray* out = ctx.outputs[0];
  Map(NumElements(out), OutData(out), op, InData(ctx.inputs[I])...);
}

template <int kNumInputs, typename Op>
inline void ElementwiseKernel(const KernelContext& ctx, Op op) {
  ElementwiseKernelImpl<kNumInputs>(ctx, op, std::make_integer_sequence<int, kNumInputs>{});
}

/*!
 * \brief y[i] = Store<TO>(op(Load(in[i])...)) for i in [0, n), in parallel for large n: the loop of
 *        every dtype but float32 (op sees compute values: float for the half types).
 */
template <typename TO, typename Op, typename... TI>
inline void MapTyped(int64_t n, TO* y, Op op, const TI*... in) {
  ParallelFor(n, n, kElementAlign, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) y[i] = Store<TO>(op(Load(in[i])...));
  });
}

/*! \brief MapTyped over the operands of a kernel whose inputs and output share dtype T. */
template <typename T, int kNumInputs, typename Op, int... I>
inline void TypedKernelImpl(const KernelContext& ctx, Op op, std::integer_sequence<int, I...>) {
  DLArray* out = ctx.outputs[0];
  MapTyped(NumElements(out), Data<T>(out), op, Data<const T>(ctx.inputs[I])...);
}

#if defined(__AVX512F__) || (defined(__AVX__) && defined(__F16C__))
/*! \brief Whether float16 maps run vectorised, converting with the F16C/AVX-512 instructions. */
#define DLARRAY_CPU_HALF_VECTORS 1

/*! \brief kVecWidth float16 values as floats (exact, as HalfToFloat). */
inline VecF LoadHalfU(const Half* p) {
#if defined(__AVX512F__)
  __m256i h;
  std::memcpy(&h, p, sizeof h);
  // The masked forms: GCC 12 warns about the plain ones' undefined passthrough operand.
  return BitCast<VecF>(_mm512_mask_cvtph_ps(_mm512_setzero_ps(), 0xffff, h));
#else
  __m128i h;
  std::memcpy(&h, p, sizeof h);
  return BitCast<VecF>(_mm256_cvtph_ps(h));
#endif
}

/*! \brief kVecWidth floats stored as float16, rounded to nearest even (as Store<Half>). */
inline void StoreHalfU(Half* p, VecF v) {
#if defined(__AVX512F__)
  const __m256i h = _mm512_mask_cvtps_ph(_mm256_setzero_si256(), 0xffff, BitCast<__m512>(v),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#else
  const __m128i h = _mm256_cvtps_ph(BitCast<__m256>(v), _MM_FROUND_TO_NEAREST_INT);
#endif
  std::memcpy(p, &h, sizeof h);
}

/*!
 * \brief MapTyped for float16 in float lanes: the hardware converts kVecWidth values at a time
 *        (the scalar conversions cost 8 ns an element, slower than NumPy); the tail is scalar.
 */
template <typename Op, typename... In>
inline void MapHalf(int64_t n, Half* y, Op op, const In*... in) {
  ParallelFor(n, n, kElementAlign, [&](int64_t b, int64_t e) {
    int64_t i = b;
    for (; i + kVecWidth <= e; i += kVecWidth) StoreHalfU(y + i, op(LoadHalfU(in + i)...));
    for (; i < e; ++i) y[i] = Store<Half>(op(Load(in[i])...));
  });
}
#endif

#if defined(DLARRAY_CPU_HALF_VECTORS)
template <typename Op, int... I>
inline void HalfKernelImpl(const KernelContext& ctx, Op op, std::integer_sequence<int, I...>) {
  DLArray* out = ctx.outputs[0];
  MapHalf(NumElements(out), Data<Half>(out), op, Data<const Half>(ctx.inputs[I])...);
}
#endif

/*!
 * \brief A same-dtype elementwise kernel for every dtype in `set`: float32 through the vectorised
 *        Map (op called on VecF and float), the others through MapTyped (op called on compute
 *        values).
 */
template <int kNumInputs, int kSet, typename Op>
inline void DispatchElementwise(const KernelContext& ctx, Op op) {
  const DLArrayDType t = ctx.outputs[0]->dtype;
  if (IsFloat32(t)) {
    ElementwiseKernel<kNumInputs>(ctx, op);
    return;
  }
  Dispatch<kSet>(t, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
#if defined(DLARRAY_CPU_HALF_VECTORS)
    if constexpr (std::is_same_v<T, Half>) {
      HalfKernelImpl(ctx, op, std::make_integer_sequence<int, kNumInputs>{});
      return;
    }
#endif
    TypedKernelImpl<T, kNumInputs>(ctx, op, std::make_integer_sequence<int, kNumInputs>{});
  });
}

/*!
 * \brief DispatchElementwise for ops of one input and the scalar attribute ctx.attrs[0]:
 *        op(x, s), s the attribute as NumPy applies it to the dtype (see ScalarFor), broadcast
 *        to VecF lanes on the float32 path.
 */
template <int kSet, typename Op>
inline void DispatchElementwiseScalar(const KernelContext& ctx, Op op) {
  const DLArrayDType t = ctx.outputs[0]->dtype;
  if (IsFloat32(t)) {
    const float s = static_cast<float>(ctx.attrs[0]);
    ElementwiseKernel<1>(ctx, [op, s](auto x) { return op(x, Splat<decltype(x)>(s)); });
    return;
  }
  Dispatch<kSet>(t, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Compute<T> s = ScalarFor<T>(ctx.attrs[0]);
    DLArray* out = ctx.outputs[0];
#if defined(DLARRAY_CPU_HALF_VECTORS)
    if constexpr (std::is_same_v<T, Half>) {
      MapHalf(
          NumElements(out), Data<Half>(out),
          [op, s](auto x) { return op(x, Splat<decltype(x)>(s)); },
          Data<const Half>(ctx.inputs[0]));
      return;
    }
#endif
    MapTyped(
        NumElements(out), Data<T>(out), [op, s](Compute<T> x) { return op(x, s); },
        Data<const T>(ctx.inputs[0]));
  });
}

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_ELEMENTWISE_H_
