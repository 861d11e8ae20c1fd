/*!
 * \file fast_exp.h
 * \brief A branch-free expf for float and VecF (a few ulp, Cephes polynomial): exp(0) = 1 exactly,
 *        x < -104 gives 0, x > 88.73 gives inf, NaN stays NaN.
 */
#ifndef DLARRAY_BACKENDS_CPU_FAST_EXP_H_
#define DLARRAY_BACKENDS_CPU_FAST_EXP_H_

#include "simd.h"

namespace dlarray::cpu {

template <typename T>
inline T Exp(T x) {
  using I = typename IntOf<T>::type;
  // Clamping keeps n in [-159, 129]; NaN fails both comparisons and passes through.
  x = x < Splat<T>(-110.0f) ? Splat<T>(-110.0f) : x;
  x = x > Splat<T>(89.0f) ? Splat<T>(89.0f) : x;
  // n = round(x / ln 2): adding 1.5 * 2^23 rounds to an integer held in the low mantissa bits.
  const T magic = Splat<T>(12582912.0f);
  const T shifted = x * 1.44269504088896341f + magic;
  const T n = shifted - magic;
  const I ni = BitCast<I>(shifted) - BitCast<I>(magic);
  // r = x - n ln 2 in two steps (Cody-Waite), |r| <= ln 2 / 2.
  T r = x - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  T p = Splat<T>(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  // 2^n as two factors 2^n1 * 2^n2 (each a normal float) so that subnormal results round right.
  const I n1 = ni >> 1;
  const I n2 = ni - n1;
  const T scale1 = BitCast<T>((n1 + 127) << 23);
  const T scale2 = BitCast<T>((n2 + 127) << 23);
  return p * scale1 * scale2;
}

#if defined(__AVX512F__)
/*! \brief The same on AVX-512: rounding by vrndscaleps, 2^n by vscalefps (which gets subnormals,
 *         underflow and overflow right by itself). */
template <>
inline VecF Exp(VecF x) {
  __m512 v = reinterpret_cast<__m512&>(x);
  // max/min with the bound first: a NaN x is passed through.
  v = _mm512_max_ps(_mm512_set1_ps(-110.0f), v);
  v = _mm512_min_ps(_mm512_set1_ps(89.0f), v);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(v, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), v);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  const __m512 result = _mm512_scalef_ps(p, n);
  return reinterpret_cast<const VecF&>(result);
}
#endif

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_FAST_EXP_H_
