/*!
 * \file complex_math.h
 * \brief The elementwise table's complex transcendental functions (exp, log, sqrt, the
 *        trigonometric and hyperbolic functions and their inverses) on dlarray::Complex<R>,
 *        written once as host and device code: the CPU and CUDA backends both compile them
 *        (dlarray/elementwise_complex.h includes this header), so the CPU's tests check the code
 *        that CUDA runs.
 *
 * Why our own rather than the C++ library's: libcu++'s cuda::std::complex functions (a port of
 * libc++'s) overflow in z * z for large |z| (asinh(4e19 + 1j) gives inf where the answer is about
 * 45), give NaN for tan/tanh of a large part (sinh / cosh of it) and lose C99 Annex G's special
 * values with NaN parts. Here:
 *   - Annex G's special values (infinities, NaNs, signed zeros) are spelled out case by case in
 *     exp, log, sqrt, sinh, cosh, tanh, asinh and atanh; sin, cos, tan, asin, atan follow from
 *     them through f(z) = -i g(iz), acos and acosh from asin, as the array API standard defines
 *     them;
 *   - asin, acos, asinh and acosh use Hull, Fairgrieve and Tang's algorithm (ACM TOMS 1997):
 *     |z + 1| + |z - 1| = 2A and x / A, with A - 1 and A^2 - x^2 formed without cancellation,
 *     log(2z) past 1 / sqrt(eps), y / sqrt(1 - x^2) where y^2 would underflow;
 *   - atanh is Kahan's log1p(4x / ((1 - x)^2 + y^2)) / 4, with the difference of two logarithms
 *     near z = 1 (where (1 - x)^2 + y^2 underflows) and 1 / z past 1 / sqrt(eps);
 *   - tanh is Kahan's (1 + tan^2 y) form, +-1 past the point where tanh x rounds to 1;
 *   - exp, sinh and cosh of a real part past log(max) scale e^x by a power of two (ldexp), so
 *     that e^x * sin y is finite wherever it should be; sqrt scales by powers of 4 at both ends of
 *     the range; log's real part is log1p((|z| - 1)(|z| + 1)) / 2 near |z| = 1.
 * Every function takes its inputs in the part type R (float for complex64, double for
 * complex128). The OpenCL backend spells the same functions in OpenCL C
 * (backends/opencl/elementwise_complex.h).
 */
#ifndef DLARRAY_COMPLEX_MATH_H_
#define DLARRAY_COMPLEX_MATH_H_

#include <cmath>

#include "dlarray/dtype_dispatch.h"

namespace dlarray {
namespace ew {

/*! \brief The constants of the part type R (scalars: usable in device code as they are). */
template <typename R>
struct ComplexConsts;
/// \cond
template <>
struct ComplexConsts<float> {
  static constexpr float kPi = 3.14159265358979323846f, kPi2 = 1.57079632679489661923f,
                         kPi4 = 0.78539816339744830962f;
  static constexpr float kLn2 = 0.69314718055994530942f, kInvLn2 = 1.44269504088896340736f;
  // ln 2 in two parts, the first with 15 significant bits so that k * kLn2Hi is exact
  static constexpr float kLn2Hi = 0.693145751953125f, kLn2Lo = 1.42860682030941723212e-6f;
  static constexpr float kEps = 1.1920928955078125e-7f, kMax = 3.40282346638528859812e+38f,
                         kMinNormal = 1.17549435082228750797e-38f;
  static constexpr float kLnMax = 88;    // below log(max): e^x, sinh x and cosh x are finite
  static constexpr float kExpCap = 200;  // e^x * c overflows for any c != 0 past this
  static constexpr float kBig = 4096;    // 2^12 > 1 / sqrt(eps)
  static constexpr float kTanhCut = 9;   // tanh x rounds to +-1 past this
  static constexpr int kDigits = 24;
};
template <>
struct ComplexConsts<double> {
  static constexpr double kPi = 3.14159265358979323846, kPi2 = 1.57079632679489661923,
                          kPi4 = 0.78539816339744830962;
  static constexpr double kLn2 = 0.69314718055994530942, kInvLn2 = 1.44269504088896340736;
  static constexpr double kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058781614e-10;
  static constexpr double kEps = 2.220446049250313080847e-16, kMax = 1.79769313486231570815e+308,
                          kMinNormal = 2.22507385850720138309e-308;
  static constexpr double kLnMax = 709;
  static constexpr double kExpCap = 1500;
  static constexpr double kBig = 134217728;  // 2^27
  static constexpr double kTanhCut = 22;
  static constexpr int kDigits = 53;
};
/// \endcond

template <typename R>
DLARRAY_HOST_DEVICE R ComplexNan() {
  return static_cast<R>(NAN);  // NAN: a constant, unlike numeric_limits on CUDA
}
template <typename R>
DLARRAY_HOST_DEVICE R ComplexInf() {
  return static_cast<R>(INFINITY);
}

/*!
 * \brief e^x * c * 2^scale for kLnMax <= x, where e^x alone overflows but the product may not
 *        (c a sine or cosine): e^x = 2^k e^r with r = x - k ln 2 in [0, ln 2), c raised by
 *        2^digits first so that e^r * c stays a normal number, one rounding in ldexp.
 */
template <typename R>
DLARRAY_HOST_DEVICE R ExpTimes(R x, R c, int scale) {
  using K = ComplexConsts<R>;
  const R capped = std::fmin(x, K::kExpCap);
  const int k = static_cast<int>(capped * K::kInvLn2);
  const R r = (capped - static_cast<R>(k) * K::kLn2Hi) - static_cast<R>(k) * K::kLn2Lo;
  return std::ldexp(std::exp(r) * std::ldexp(c, K::kDigits), k - K::kDigits + scale);
}

/*!
 * \brief log |x + iy| without overflow (|z| / 4 past max / 4) and without the cancellation of
 *        log(|z|) near |z| = 1: there log1p((a - 1)(a + 1) + b^2) / 2, a >= b the parts' sizes.
 */
template <typename R>
DLARRAY_HOST_DEVICE R LogAbs(R x, R y) {
  using K = ComplexConsts<R>;
  R a = std::fabs(x), b = std::fabs(y);
  if (a < b) {
    const R t = a;
    a = b;
    b = t;
  }
  if (a >= R(0.5) && a <= R(2)) return std::log1p((a - R(1)) * (a + R(1)) + b * b) / R(2);
  if (a > K::kMax / R(4)) return std::log(std::hypot(a / R(4), b / R(4))) + R(2) * K::kLn2;
  if (a < K::kMinNormal) {  // |z| would round to a subnormal: scaled by 2^(2 digits)
    const int up = 2 * K::kDigits;
    return std::log(std::hypot(std::ldexp(a, up), std::ldexp(b, up))) - R(up) * K::kLn2;
  }
  return std::log(std::hypot(a, b));
}

/*! \brief asin(x + iy) = asin_re + i im, acos(x + iy) = acos_re - i im (x, y >= 0). */
template <typename R>
struct ArcParts {
  R asin_re;  //!< the real part of asin
  R acos_re;  //!< the real part of acos
  R im;       //!< the imaginary part of asin, minus that of acos: log(A + sqrt(A^2 - 1)) >= 0
};

/*!
 * \brief asin and acos of x + iy for finite x, y >= 0, by Hull, Fairgrieve and Tang's method:
 *        with A = (|z + 1| + |z - 1|) / 2 and B = x / A, asin z = asin B + i log(A + sqrt(A^2 -
 *        1)); near B = 1 the real part is atan(x / sqrt(A^2 - x^2)) and near A = 1 the imaginary
 *        part log1p(A - 1 + sqrt((A - 1)(A + 1))), each difference formed from its factors.
 */
template <typename R>
DLARRAY_HOST_DEVICE ArcParts<R> ArcFirstQuadrant(R x, R y) {
  using K = ComplexConsts<R>;
  if (x > K::kBig || y > K::kBig) {
    // Past 1 / sqrt(eps): asin z = -i log(2iz), acos z = -i log(2z) to within |z|^-2.
    return {std::atan2(x, y), std::atan2(y, x), LogAbs(x, y) + K::kLn2};
  }
  const R one = 1, half = R(0.5);
  const R xp1 = x + one, xm1 = x - one;
  const R r = std::hypot(xp1, y), s = std::hypot(xm1, y);
  const R a = half * (r + s), b = x / a, y2 = y * y;
  ArcParts<R> out;
  if (b <= R(0.6417)) {  // Hull et al.'s crossover for B
    out.asin_re = std::asin(b);
    out.acos_re = std::acos(b);
  } else {
    // sqrt(A^2 - x^2) = sqrt((A + x)(A - x)), A - x from r - (x + 1) = y^2 / (r + x + 1) and
    // s - |x - 1| = y^2 / (s + |x - 1|)
    const R apx = a + x;
    const R d = x <= one ? std::sqrt(half * apx * (y2 / (r + xp1) + (s - xm1)))
                         : y * std::sqrt(half * apx * (one / (r + xp1) + one / (s + xm1)));
    out.asin_re = std::atan2(x, d);
    out.acos_re = std::atan2(d, x);
  }
  if (x < one && y < K::kEps * (one - x)) {
    // y^2 may underflow here; log1p(sqrt(2 (A - 1))) is y / sqrt(1 - x^2) to within eps^2
    out.im = y / std::sqrt((one - x) * (one + x));
  } else if (x == one && y < K::kEps) {  // A - 1 = y / 2 may underflow; sqrt(y) to within y
    out.im = std::sqrt(y);
  } else if (a <= R(1.5)) {  // Hull et al.'s crossover for A
    const R am1 =
        x < one ? half * (y2 / (r + xp1) + y2 / (s - xm1)) : half * (y2 / (r + xp1) + (s + xm1));
    out.im = std::log1p(am1 + std::sqrt(am1 * (a + one)));
  } else {
    out.im = std::log(a + std::sqrt(a * a - one));
  }
  return out;
}

/*!
 * \brief The product as C99's complex * (Annex G.5.1): where the schoolbook form gives NaN + NaN j
 *        from an infinite factor, the infinities are recovered (pow's exp(b log a), as glibc's
 *        cpow; the table's own * is NumPy's schoolbook product).
 */
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> MulAnnexG(Complex<R> z, Complex<R> w) {
  R a = z.re, b = z.im, c = w.re, d = w.im;
  const R ac = a * c, bd = b * d, ad = a * d, bc = b * c;
  R x = ac - bd, y = ad + bc;
  if (!(std::isnan(x) && std::isnan(y))) return {x, y};
  const auto box = [](R& v) { v = std::copysign(std::isinf(v) ? R(1) : R(0), v); };
  const auto zero_nan = [](R& v) {
    if (std::isnan(v)) v = std::copysign(R(0), v);
  };
  bool again = false;
  if (std::isinf(a) || std::isinf(b)) {
    box(a);
    box(b);
    zero_nan(c);
    zero_nan(d);
    again = true;
  }
  if (std::isinf(c) || std::isinf(d)) {
    box(c);
    box(d);
    zero_nan(a);
    zero_nan(b);
    again = true;
  }
  if (!again && (std::isinf(ac) || std::isinf(bd) || std::isinf(ad) || std::isinf(bc))) {
    zero_nan(a);
    zero_nan(b);
    zero_nan(c);
    zero_nan(d);
    again = true;
  }
  if (!again) return {x, y};
  return {ComplexInf<R>() * (a * c - b * d), ComplexInf<R>() * (a * d + b * c)};
}

/*! \brief i z and -i z. */
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> TimesI(Complex<R> z) {
  return {-z.im, z.re};
}
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> TimesMinusI(Complex<R> z) {
  return {z.im, -z.re};
}

}  // namespace ew

// The table's names (overloads of elementwise_math.h's templates, hidden from Doxygen as in
// elementwise_complex.h).
/// \cond

template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Exp(Complex<R> z) {
  using K = ew::ComplexConsts<R>;
  const R x = z.re, y = z.im;
  if (y == R(0)) return {std::exp(x), y};  // exact zero imaginary part; e^(NaN + 0j) = NaN + 0j
  if (std::isfinite(x) && std::isfinite(y)) {
    const R c = std::cos(y), s = std::sin(y);
    if (x < K::kLnMax) {
      const R e = std::exp(x);
      return {e * c, e * s};
    }
    return {ew::ExpTimes(x, c, 0), ew::ExpTimes(x, s, 0)};
  }
  if (std::isinf(x)) {
    if (x > R(0)) {
      return std::isfinite(y) ? Complex<R>{x * std::cos(y), x * std::sin(y)}
                              : Complex<R>{x, y - y};  // inf + NaN j
    }
    return std::isfinite(y) ? Complex<R>{R(0) * std::cos(y), R(0) * std::sin(y)}
                            : Complex<R>{R(0), R(0)};
  }
  return {ew::ComplexNan<R>(), ew::ComplexNan<R>()};  // NaN real part, or infinite/NaN y
}

template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Log(Complex<R> z) {
  return {ew::LogAbs(z.re, z.im), std::atan2(z.im, z.re)};
}

template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Sqrt(Complex<R> z) {
  using K = ew::ComplexConsts<R>;
  const R x = z.re, y = z.im, inf = ew::ComplexInf<R>();
  if (std::isinf(y)) return {inf, y};
  if (std::isnan(x)) return {x, x};
  if (std::isinf(x)) {
    if (x > R(0)) return {x, std::isnan(y) ? y : std::copysign(R(0), y)};
    return {std::isnan(y) ? y : R(0), std::copysign(inf, y)};
  }
  if (std::isnan(y)) return {y, y};
  if (x == R(0) && y == R(0)) return {R(0), y};
  // t = sqrt((|x| + |z|) / 2), the parts scaled by 4^-1 where |x| + |z| could overflow and by
  // 4^digits where it would lose bits below the normal range
  R a = std::fabs(x), b = y;
  int scale = 0;
  if (a > K::kMax / R(4) || std::fabs(b) > K::kMax / R(4)) {
    a /= R(4);
    b /= R(4);
    scale = 1;
  } else if (a < R(4) * K::kMinNormal && std::fabs(b) < R(4) * K::kMinNormal) {
    a = std::ldexp(a, 2 * K::kDigits);
    b = std::ldexp(b, 2 * K::kDigits);
    scale = -K::kDigits;
  }
  const R t = std::ldexp(std::sqrt((a + std::hypot(a, b)) / R(2)), scale);
  if (x >= R(0)) return {t, y / (R(2) * t)};
  return {std::fabs(y) / (R(2) * t), std::copysign(t, y)};
}

template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Sinh(Complex<R> z) {
  using K = ew::ComplexConsts<R>;
  const R x = z.re, y = z.im;
  if (std::isfinite(x) && std::isfinite(y)) {
    if (y == R(0)) return {std::sinh(x), y};
    const R c = std::cos(y), s = std::sin(y), ax = std::fabs(x);
    if (ax < K::kLnMax) return {std::sinh(x) * c, std::cosh(x) * s};
    // sinh x = sign(x) e^|x| / 2 and cosh x = e^|x| / 2, scaled
    return {ew::ExpTimes(ax, x < R(0) ? -c : c, -1), ew::ExpTimes(ax, s, -1)};
  }
  if (y == R(0)) return {std::sinh(x), y};
  if (x == R(0)) return {x, y - y};  // +-0 + NaN j
  if (std::isinf(x)) {
    return std::isfinite(y) ? Complex<R>{x * std::cos(y), ew::ComplexInf<R>() * std::sin(y)}
                            : Complex<R>{x, y - y};
  }
  return {ew::ComplexNan<R>(), ew::ComplexNan<R>()};
}

template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Cosh(Complex<R> z) {
  using K = ew::ComplexConsts<R>;
  const R x = z.re, y = z.im;
  if (y == R(0)) return {std::cosh(x), std::copysign(R(0), x) * y};
  if (std::isfinite(x) && std::isfinite(y)) {
    const R c = std::cos(y), s = std::sin(y), ax = std::fabs(x);
    if (ax < K::kLnMax) return {std::cosh(x) * c, std::sinh(x) * s};
    return {ew::ExpTimes(ax, c, -1), ew::ExpTimes(ax, x < R(0) ? -s : s, -1)};
  }
  if (x == R(0)) return {y - y, x};  // NaN +- 0j
  if (std::isinf(x)) {
    return std::isfinite(y) ? Complex<R>{ew::ComplexInf<R>() * std::cos(y), x * std::sin(y)}
                            : Complex<R>{x * x, y - y};
  }
  return {ew::ComplexNan<R>(), ew::ComplexNan<R>()};
}

template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Tanh(Complex<R> z) {
  using K = ew::ComplexConsts<R>;
  const R x = z.re, y = z.im;
  // tanh(+-inf + yj) = +-1 + 0j with y's sign (the standard's; Annex G's sign of sin(2y) is
  // what glibc gives)
  if (std::isinf(x)) return {std::copysign(R(1), x), std::copysign(R(0), y)};
  if (std::isnan(x)) return y == R(0) ? Complex<R>{x, y} : Complex<R>{x, x};
  if (!std::isfinite(y)) return {x == R(0) ? x : y - y, y - y};
  if (std::fabs(x) > K::kTanhCut) {  // tanh x is +-1 to the last bit; the imaginary part
    const R e = std::exp(R(-2) * std::fabs(x));  // 2 sin 2y e^-2|x| (underflows to 0 in time)
    return {std::copysign(R(1), x), R(4) * std::sin(y) * std::cos(y) * e};
  }
  // Kahan's form: with t = tan y, b = 1 + t^2, s = sinh x, r = sqrt(1 + s^2),
  // tanh z = (b r s + i t) / (1 + b s^2)
  const R t = std::tan(y), b = R(1) + t * t, s = std::sinh(x), r = std::sqrt(R(1) + s * s);
  const R d = R(1) + b * s * s;
  return {b * r * s / d, t / d};
}

template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Asinh(Complex<R> z) {
  using K = ew::ComplexConsts<R>;
  const R x = z.re, y = z.im;
  if (std::isnan(x) || std::isnan(y)) {
    if (std::isinf(x)) return {x, y};             // +-inf + NaN j
    if (std::isinf(y)) return {std::fabs(y), x};  // inf + NaN j
    if (y == R(0)) return {x, y};                 // NaN + 0j
    return {ew::ComplexNan<R>(), ew::ComplexNan<R>()};
  }
  if (std::isinf(x) || std::isinf(y)) {
    const R im = std::isinf(x) ? (std::isinf(y) ? K::kPi4 : R(0)) : K::kPi2;
    return {std::copysign(ew::ComplexInf<R>(), x), std::copysign(im, y)};
  }
  // asinh(x + iy) = -i asin(-y + ix): for x, y >= 0 the imaginary and real parts of
  // asin(y + ix); odd, and conjugation commutes with it
  const ew::ArcParts<R> p = ew::ArcFirstQuadrant(std::fabs(y), std::fabs(x));
  return {std::copysign(p.im, x), std::copysign(p.asin_re, y)};
}

template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Asin(Complex<R> z) {
  return ew::TimesMinusI(Asinh(ew::TimesI(z)));
}

template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Acos(Complex<R> z) {
  using K = ew::ComplexConsts<R>;
  const R x = z.re, y = z.im;
  if (!std::isfinite(x) || !std::isfinite(y)) {  // Annex G's values follow from asin's
    const Complex<R> w = Asin(z);
    return {K::kPi2 - w.re, -w.im};
  }
  // acos(conj z) = conj acos z, acos(-z) = pi - acos z
  const ew::ArcParts<R> p = ew::ArcFirstQuadrant(std::fabs(x), std::fabs(y));
  return {std::signbit(x) ? K::kPi - p.acos_re : p.acos_re, std::signbit(y) ? p.im : -p.im};
}

/*! \brief acosh z = +-i acos z, the sign making the real part >= 0 (Annex G's cases follow). */
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Acosh(Complex<R> z) {
  const Complex<R> w = Acos(z);
  return {std::fabs(w.im), std::copysign(w.re, z.im)};
}

template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Atanh(Complex<R> z) {
  using K = ew::ComplexConsts<R>;
  const R x = z.re, y = z.im;
  if (std::isnan(x) || std::isnan(y)) {
    if (std::isinf(x)) return {std::copysign(R(0), x), y};  // +-0 + NaN j
    if (std::isinf(y)) return {std::copysign(R(0), x), std::copysign(K::kPi2, y)};
    if (x == R(0)) return {x, y};  // +-0 + NaN j
    return {ew::ComplexNan<R>(), ew::ComplexNan<R>()};
  }
  if (std::isinf(x) || std::isinf(y)) return {std::copysign(R(0), x), std::copysign(K::kPi2, y)};
  // for |x| + i|y|, z's signs given back (atanh is odd and commutes with conjugation)
  const R ax = std::fabs(x), ay = std::fabs(y);
  R re, im;
  if (ax > K::kBig || ay > K::kBig) {
    // 1 / z + i pi/2 to within |z|^-3 (|z| / 4: no overflow)
    const R h = std::hypot(ax / R(4), ay / R(4));
    re = (ax / R(4)) / h / (R(4) * h);
    im = K::kPi2 - (ay / R(4)) / h / (R(4) * h);
  } else {
    const R xm = R(1) - ax;
    if (std::fabs(xm) < R(0.5) && ay < R(0.5)) {
      // near z = 1, (1 - x)^2 + y^2 may underflow: log(|1 + z| / |1 - z|) / 2 (no cancellation)
      re = (ew::LogAbs(R(1) + ax, ay) - ew::LogAbs(xm, ay)) / R(2);
    } else {
      re = std::log1p(R(4) * ax / (xm * xm + ay * ay)) / R(4);
    }
    im = std::atan2(R(2) * ay, xm * (R(1) + ax) - ay * ay) / R(2);
  }
  return {std::copysign(re, x), std::copysign(im, y)};
}

// The trigonometric functions through the hyperbolic ones: f(z) = -i g(iz).
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Atan(Complex<R> z) {
  return ew::TimesMinusI(Atanh(ew::TimesI(z)));
}
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Sin(Complex<R> z) {
  return ew::TimesMinusI(Sinh(ew::TimesI(z)));
}
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Cos(Complex<R> z) {
  return Cosh(ew::TimesI(z));
}
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Tan(Complex<R> z) {
  return ew::TimesMinusI(Tanh(ew::TimesI(z)));
}

/// \endcond

}  // namespace dlarray

#endif  // DLARRAY_COMPLEX_MATH_H_
