/*!
 * \file fast_exp.h
 * \brief A branch-free expf for float and VecF, within about 1 ulp: exp(0) = 1 exactly,
 *        x < -104 gives 0, x > 88.73 gives inf, NaN stays NaN.
 *
 * exp(x) = 2^n * exp(r) with n = round(x / ln 2), r = x - n ln 2 (two-step Cody-Waite, exact
 * with FMA) in [-ln 2 / 2, ln 2 / 2], and exp(r) by a degree-6 minimax polynomial (Horner).
 */
#ifndef DLARRAY_BACKENDS_CPU_FAST_EXP_H_
#define DLARRAY_BACKENDS_CPU_FAST_EXP_H_

#include "simd.h"

namespace dlarray::cpu {

namespace exp_detail {
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;  // few mantissa bits: n * kLn2Hi is exact
constexpr float kLn2Lo = -2.12194440e-4f;
// exp(r) ~ 1 + r + c2 r^2 + ... + c6 r^6 (relative error 3e-9 on the reduced range)
constexpr float kC6 = 1.381461275741458e-3f;
constexpr float kC5 = 8.368710055947304e-3f;
constexpr float kC4 = 4.166838899254799e-2f;
constexpr float kC3 = 1.666652113199234e-1f;
constexpr float kC2 = 4.999999403953552e-1f;
}  // namespace exp_detail

template <typename T>
inline T Exp(T x) {
  using namespace exp_detail;
  using I = typename IntOf<T>::type;
  using U = typename UIntOf<T>::type;
  // Clamping keeps n in [-159, 129]; NaN fails both comparisons and passes through.
  x = x < Splat<T>(-110.0f) ? Splat<T>(-110.0f) : x;
  x = x > Splat<T>(89.0f) ? Splat<T>(89.0f) : x;
  // n = round(x / ln 2): adding 1.5 * 2^23 rounds to an integer held in the low mantissa bits.
  const T magic = Splat<T>(12582912.0f);
  const T shifted = x * kLog2e + magic;
  const T n = shifted - magic;
  const I ni = BitCast<I>(shifted) - BitCast<I>(magic);
  const T r = (x - n * kLn2Hi) - n * kLn2Lo;
  T p = Splat<T>(kC6);
  p = p * r + kC5;
  p = p * r + kC4;
  p = p * r + kC3;
  p = p * r + kC2;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^n as two factors 2^n1 * 2^n2 (each a normal float) so that subnormal results round right.
  // The exponent bits are shifted as unsigned: for NaN input n is garbage (and the result NaN
  // anyway), and a signed shift of a negative value would be undefined behaviour.
  const I n1 = ni >> 1;
  const I n2 = ni - n1;
  const T scale1 = BitCast<T>(BitCast<U>(n1 + 127) << 23);
  const T scale2 = BitCast<T>(BitCast<U>(n2 + 127) << 23);
  return p * scale1 * scale2;
}

#if defined(__AVX512F__)
/*!
 * \brief The same on AVX-512: rounding by vrndscaleps, 2^n by vscalefps (which gets subnormals,
 *        underflow and overflow right by itself). The masked intrinsics with a full mask avoid
 *        GCC 12's false -Wuninitialized on the unmasked ones.
 */
template <>
inline VecF Exp(VecF x) {
  using namespace exp_detail;
  constexpr __mmask16 kAll = 0xFFFF;
  const __m512 in = reinterpret_cast<__m512&>(x);
  // max/min with the bound first: a NaN x is passed through.
  __m512 v = _mm512_mask_max_ps(in, kAll, _mm512_set1_ps(-110.0f), in);
  v = _mm512_mask_min_ps(v, kAll, _mm512_set1_ps(89.0f), v);
  const __m512 n = _mm512_mask_roundscale_ps(v, kAll, _mm512_mul_ps(v, _mm512_set1_ps(kLog2e)),
                                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), v);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kC6);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC5));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  const __m512 result = _mm512_mask_scalef_ps(p, kAll, p, n);
  return reinterpret_cast<const VecF&>(result);
}
#endif

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_FAST_EXP_H_
