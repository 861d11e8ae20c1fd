/*!
 * \file table_math.h
 * \brief The functions the expressions of dlarray/elementwise_table.h call, for the CPU's
 *        compute types: float and VecF (branch-free, so that one body serves a scalar and a
 *        vector of lanes) and double (the C library's). IEEE special values as NumPy gives them.
 */
#ifndef DLARRAY_BACKENDS_CPU_TABLE_MATH_H_
#define DLARRAY_BACKENDS_CPU_TABLE_MATH_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "dlarray/elementwise_math.h"
#include "fast_exp.h"
#include "simd.h"

namespace dlarray::cpu {

inline double Exp(double x) { return std::exp(x); }
inline double Log(double x) { return std::log(x); }
inline double Tanh(double x) { return std::tanh(x); }

namespace table_math_detail {
constexpr float kLn2Hi = 0.693359375f;  // 9 significant bits: e * kLn2Hi is exact
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr int32_t kSignBit = std::numeric_limits<int32_t>::min();

/*! \brief The lanes of an int32 value as floats. */
inline float ToFloat(int32_t i) { return static_cast<float>(i); }
inline VecF ToFloat(VecI i) { return __builtin_convertvector(i, VecF); }
}  // namespace table_math_detail

/*!
 * \brief Natural logarithm within about 1 ulp: x = 2^e m with m in [sqrt(1/2), sqrt(2)), and
 *        log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, by its series up to s^9
 *        (relative truncation error below 2e-9). Subnormals are scaled by 2^23 first.
 */
template <typename T>
inline T Log(T x) {
  using namespace table_math_detail;
  using I = typename IntOf<T>::type;
  const auto tiny = x < Splat<T>(std::numeric_limits<float>::min());
  const T scaled = tiny ? x * 8388608.0f : x;
  const I bits = BitCast<I>(scaled);
  I e = ((bits >> 23) & 0xff) - 127;
  e = tiny ? e - 23 : e;
  T m = BitCast<T>((bits & 0x7fffff) | 0x3f800000);  // [1, 2)
  const auto high = m > Splat<T>(1.41421356f);
  m = high ? m * 0.5f : m;
  e = high ? e + 1 : e;
  const T s = (m - 1.0f) / (m + 1.0f);
  const T z = s * s;
  T p = Splat<T>(1.0f / 9.0f);
  p = p * z + 1.0f / 7.0f;
  p = p * z + 1.0f / 5.0f;
  p = p * z + 1.0f / 3.0f;
  const T f = ToFloat(e);
  T r = f * kLn2Hi + (f * kLn2Lo + ((s + s) + (s + s) * z * p));
  const float inf = std::numeric_limits<float>::infinity();
  r = x == Splat<T>(0.0f) ? Splat<T>(-inf) : r;
  r = x < Splat<T>(0.0f) ? Splat<T>(std::numeric_limits<float>::quiet_NaN()) : r;
  r = x == Splat<T>(inf) ? x : r;
  return x != x ? x : r;  // NaN stays NaN
}

namespace table_math_detail {
// e^r ~ 1 + r + c2 r^2 + ... + c6 r^6 on |r| <= ln 2 / 2 (fast_exp.h's minimax coefficients), as
// the coefficients of e^(2h) - 1 in h = r / 2: c_k 2^k (exact scalings).
constexpr float kTanhC6 = 64 * exp_detail::kC6;
constexpr float kTanhC5 = 32 * exp_detail::kC5;
constexpr float kTanhC4 = 16 * exp_detail::kC4;
constexpr float kTanhC3 = 8 * exp_detail::kC3;
constexpr float kTanhC2 = 4 * exp_detail::kC2;
// From here on tanh rounds to 1 (e^(2|x|) - 1 > 2^26: m + 2 rounds to m) and the 2^n below stays
// a normal float.
constexpr float kTanhClamp = 9.1f;
}  // namespace table_math_detail

/*!
 * \brief Hyperbolic tangent within 2.6 ulp (every float checked): tanh |x| = m / (m + 2) with
 *        m = e^(2|x|) - 1 = 2^n (e^(2h) - 1) + (2^n - 1), n = round(2|x| / ln 2) and
 *        |h| <= ln 2 / 4; e^(2h) - 1 by the odd-and-even series of exp's minimax polynomial, so
 *        that small |x| (n = 0) keeps its relative accuracy. One formula for every lane (the
 *        earlier series-or-exp form computed both, and a division, per lane: 15% more time);
 *        saturates to +-1 (|x| clamped to 9.1, NaN passing), x's sign restored (tanh(-0) = -0).
 */
template <typename T>
inline T Tanh(T x) {
  using namespace table_math_detail;
  using I = typename IntOf<T>::type;
  using U = typename UIntOf<T>::type;
  const I sign = BitCast<I>(x) & kSignBit;
  T a = BitCast<T>(BitCast<I>(x) ^ sign);
  a = a > Splat<T>(kTanhClamp) ? Splat<T>(kTanhClamp) : a;
  // n = round(2a / ln 2) by the 1.5 * 2^23 shift (fast_exp.h), in [0, 27].
  const T magic = Splat<T>(12582912.0f);
  const T shifted = a * (2.0f * exp_detail::kLog2e) + magic;
  const T n = shifted - magic;
  const I ni = BitCast<I>(shifted) - BitCast<I>(magic);
  const T h = (a - n * (0.5f * kLn2Hi)) - n * (0.5f * kLn2Lo);
  T s = Splat<T>(kTanhC6);
  s = s * h + kTanhC5;
  s = s * h + kTanhC4;
  s = s * h + kTanhC3;
  s = s * h + kTanhC2;
  const T em1 = (s * h) * h + (h + h);  // e^(2h) - 1
  const T scale = BitCast<T>(BitCast<U>(ni + 127) << 23);
  const T m = em1 * scale + (scale - 1.0f);
  const T t = m / (m + 2.0f);
  return BitCast<T>(BitCast<I>(t) | sign);
}

// VecF forms of the array API rows that elementwise_table.cc's kVectorRows lists: the C library's
// floor, ceil, trunc, rint and sqrt are scalar calls in a loop (and so is a bool result per
// element), where NumPy runs SIMD loops. The scalar overloads stay dlarray's (elementwise_math.h).
using ::dlarray::Ceil;
using ::dlarray::Equal;
using ::dlarray::Floor;
using ::dlarray::Remainder;
using ::dlarray::Rint;
using ::dlarray::Sqrt;
using ::dlarray::Trunc;

/*! \brief The lanes of a and b equal: a mask (-1 or 0 per lane), as the vector compare gives. */
inline VecI Equal(VecF a, VecF b) { return a == b; }

namespace table_math_detail {
constexpr float kTwo23 = 8388608.0f;  // from here up every float is an integer

// x rounded toward 0 with x's sign (-0.0 for -0.5); NaN, infinities and |x| >= 2^23 as they are.
inline VecF TruncWithSign(VecF x) {
  const VecI bits = BitCast<VecI>(x);
  const VecF a = BitCast<VecF>(bits & ~kSignBit);
  const VecF t = __builtin_convertvector(__builtin_convertvector(x, VecI), VecF);
  const VecF signed_t = BitCast<VecF>(BitCast<VecI>(t) | (bits & kSignBit));
  return a < kTwo23 ? signed_t : x;  // false for NaN
}
}  // namespace table_math_detail

inline VecF Trunc(VecF x) { return table_math_detail::TruncWithSign(x); }

inline VecF Floor(VecF x) {
  const VecF t = table_math_detail::TruncWithSign(x);
  return t > x ? t - 1.0f : t;  // only below 0, where t - 1 keeps the sign
}

inline VecF Ceil(VecF x) {
  const VecF t = table_math_detail::TruncWithSign(x);
  return t < x ? t + 1.0f : t;  // only above 0, where t + 1 is positive
}

/*!
 * \brief x rounded to the nearest integer, half to even: |x| + 2^23 - 2^23 rounds in the current
 *        (nearest-even) mode for |x| < 2^23, then x's sign (-0.0 for -0.4).
 */
inline VecF Rint(VecF x) {
  using namespace table_math_detail;
  const VecI bits = BitCast<VecI>(x);
  const VecF a = BitCast<VecF>(bits & ~kSignBit);
  const VecF r = (a + kTwo23) - kTwo23;
  return a < kTwo23 ? BitCast<VecF>(BitCast<VecI>(r) | (bits & kSignBit)) : x;
}

/*! \brief The correctly rounded square root of each lane (sqrtps; NaN below 0, as sqrtf). */
inline VecF Sqrt(VecF x) {
#if defined(__AVX512F__)
  return BitCast<VecF>(_mm512_sqrt_ps(BitCast<__m512>(x)));
#elif defined(__AVX__)
  return BitCast<VecF>(_mm256_sqrt_ps(BitCast<__m256>(x)));
#else
  return BitCast<VecF>(_mm_sqrt_ps(BitCast<__m128>(x)));
#endif
}

namespace table_math_detail {
constexpr int kHalfLanes = kVecWidth / 2;
typedef float HalfF __attribute__((vector_size(kHalfLanes * sizeof(float))));
typedef double HalfD __attribute__((vector_size(kHalfLanes * sizeof(double))));
typedef int64_t HalfL __attribute__((vector_size(kHalfLanes * sizeof(int64_t))));

// fmod(a, b) of one half of the lanes (h = 0 or 1) from q = trunc(|a| / |b|), an integer below
// 2^23 that is the true quotient n or n + 1: |a| - q |b| is exact in double (q |b| has at most
// 23 + 24 bits) and equals fmod or fmod - |b| (then |b| is added back, exactly); either is a
// float, so the conversion back is exact too.
inline HalfF FmodHalf(VecF a, VecF b, VecF q, int h) {
  HalfF ah, bh, qh;
  std::memcpy(&ah, reinterpret_cast<const char*>(&a) + h * sizeof(HalfF), sizeof(HalfF));
  std::memcpy(&bh, reinterpret_cast<const char*>(&b) + h * sizeof(HalfF), sizeof(HalfF));
  std::memcpy(&qh, reinterpret_cast<const char*>(&q) + h * sizeof(HalfF), sizeof(HalfF));
  const HalfD bd = __builtin_convertvector(bh, HalfD);
  HalfD r = __builtin_convertvector(ah, HalfD) - __builtin_convertvector(qh, HalfD) * bd;
  r = r < 0.0 ? r + bd : r;
  return __builtin_convertvector(r, HalfF);
}
}  // namespace table_math_detail

/*!
 * \brief a mod b with b's sign, as the scalar Remainder (NumPy's %), bit for bit: the exact fmod
 *        of |a| and |b| (FmodHalf), given a's sign, then moved into b's sign by one float add.
 *        Lanes whose quotient |a| / |b| is 2^23 or more, or not finite (b = 0, infinities, NaN)
 *        go through the scalar Remainder; random operands of similar size never do.
 */
inline VecF Remainder(VecF a, VecF b) {
  using namespace table_math_detail;
  const VecI sign_a = BitCast<VecI>(a) & kSignBit;
  const VecI sign_b = BitCast<VecI>(b) & kSignBit;
  const VecF abs_a = BitCast<VecF>(BitCast<VecI>(a) ^ sign_a);
  const VecF abs_b = BitCast<VecF>(BitCast<VecI>(b) ^ sign_b);
  const VecF ratio = abs_a / abs_b;
  // Truncated through int32, valid below 2^23 (the lanes past it are redone below).
  const VecF q = ToFloat(__builtin_convertvector(ratio < kTwo23 ? ratio : Splat<VecF>(0.0f), VecI));
  HalfF lo = FmodHalf(abs_a, abs_b, q, 0), hi = FmodHalf(abs_a, abs_b, q, 1);
  VecF r;
  std::memcpy(&r, &lo, sizeof lo);
  std::memcpy(reinterpret_cast<char*>(&r) + sizeof lo, &hi, sizeof hi);
  const VecF fmod = BitCast<VecF>(BitCast<VecI>(r) | sign_a);
  // fmod != 0 with a sign other than b's: fmod + b (rounded, as NumPy); an exact 0: b's sign.
  const VecI moved = (r != 0.0f) & ((sign_a ^ sign_b) != 0);
  VecF out = moved ? fmod + b : fmod;
  out = r == 0.0f ? BitCast<VecF>(sign_b) : out;
  const VecI served = (ratio < kTwo23) & (abs_b < std::numeric_limits<float>::infinity());
  if (AnyLane(~served)) {
    float x[kVecWidth], y[kVecWidth], o[kVecWidth];
    std::memcpy(x, &a, sizeof x);
    std::memcpy(y, &b, sizeof y);
    std::memcpy(o, &out, sizeof o);
    for (int k = 0; k < kVecWidth; ++k) {
      if (!served[k]) o[k] = Remainder(x[k], y[k]);
    }
    std::memcpy(&out, o, sizeof o);
  }
  return out;
}

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_TABLE_MATH_H_
