/*!
 * \file elementwise_complex.h
 * \brief complex64 and complex128 as compute values of the elementwise table
 *        (dlarray/elementwise_table.h), for the CPU and CUDA backends (host and device code).
 *
 * The compute type of a complex dtype is its storage type, dlarray::Complex<R> (NumPy's layout:
 * re, im), so that the backends' Load/Store need nothing new. This header gives it what the
 * table's expressions use: the operators + - * / == != (found by argument-dependent lookup from
 * any backend namespace) and the table's functions (Exp, Log, Sqrt, Sin, ...), as overloads more
 * specialised than elementwise_math.h's templates.
 *
 * Why a struct of our own rather than std::complex as the compute type: the arithmetic must be
 * NumPy's (a * b without C99 Annex G's infinity recovery, a / b by Smith's method), which
 * std::complex's operators are not (GCC's call __mulsc3/__divsc3). The transcendental functions
 * are our own too (dlarray/complex_math.h, one implementation for host and device: libcu++'s
 * overflow and lose Annex G's special values on CUDA), so no `<complex>` is needed.
 *
 * The OpenCL backend spells the same functions in OpenCL C on float2/double2
 * (backends/opencl/elementwise_complex.h).
 */
#ifndef DLARRAY_ELEMENTWISE_COMPLEX_H_
#define DLARRAY_ELEMENTWISE_COMPLEX_H_

#include <cmath>

#include "dlarray/complex_math.h"
#include "dlarray/elementwise_math.h"

namespace dlarray {

// The functions below overload elementwise_math.h's names (Abs, Sign, Pow, ...) for Complex:
// hidden from Doxygen, whose references by name (docs/reference/cpp) would be ambiguous; this
// comment and the header's own say what they are.
/// \cond

// --- Arithmetic, as NumPy's complex loops compute it ------------------------------------------

template <typename R>
DLARRAY_HOST_DEVICE Complex<R> operator+(Complex<R> a, Complex<R> b) {
  return Complex<R>{a.re + b.re, a.im + b.im};
}
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> operator-(Complex<R> a, Complex<R> b) {
  return Complex<R>{a.re - b.re, a.im - b.im};
}
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> operator-(Complex<R> a) {
  return Complex<R>{-a.re, -a.im};
}
/*! \brief The schoolbook product (NumPy's: no recovery of infinities from NaN parts). */
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> operator*(Complex<R> a, Complex<R> b) {
  return Complex<R>{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
/*!
 * \brief a / b by Smith's method (scaled by the larger part of b, so that |b|^2 never overflows),
 *        as NumPy divides; b == 0 gives the parts of a divided by +0 (inf or NaN), as NumPy.
 */
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> operator/(Complex<R> a, Complex<R> b) {
  const R abs_re = std::fabs(b.re), abs_im = std::fabs(b.im);
  if (abs_re >= abs_im) {
    if (abs_re == R{0} && abs_im == R{0}) return Complex<R>{a.re / abs_re, a.im / abs_re};
    const R ratio = b.im / b.re;
    const R scale = R{1} / (b.re + b.im * ratio);
    return Complex<R>{(a.re + a.im * ratio) * scale, (a.im - a.re * ratio) * scale};
  }
  // |b.im| > |b.re| (or a NaN part: NaN results either way)
  const R ratio = b.re / b.im;
  const R scale = R{1} / (b.im + b.re * ratio);
  return Complex<R>{(a.re * ratio + a.im) * scale, (a.im * ratio - a.re) * scale};
}
template <typename R>
DLARRAY_HOST_DEVICE bool operator==(Complex<R> a, Complex<R> b) {
  return a.re == b.re && a.im == b.im;
}
template <typename R>
DLARRAY_HOST_DEVICE bool operator!=(Complex<R> a, Complex<R> b) {
  return !(a == b);
}

// --- The table's functions ---------------------------------------------------------------------

/*!
 * \brief 1 / x as NumPy's reciprocal: scaled by the larger part, like the quotient, but with the
 *        numerator 1 folded in (1 / 0 is NaN + NaN j, 1 / inf is 0 - 0 j, as NumPy's).
 */
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Reciprocal(Complex<R> x) {
  if (std::fabs(x.im) <= std::fabs(x.re)) {
    const R ratio = x.im / x.re, d = x.re + x.im * ratio;
    return Complex<R>{R{1} / d, -ratio / d};
  }
  const R ratio = x.re / x.im, d = x.re * ratio + x.im;
  return Complex<R>{ratio / d, R{-1} / d};
}

/*! \brief |x| = hypot(re, im): +inf when either part is infinite, even with a NaN other part. */
template <typename R>
DLARRAY_HOST_DEVICE R Abs(Complex<R> x) {
  return std::hypot(x.re, x.im);
}
template <typename R>
DLARRAY_HOST_DEVICE R Real(Complex<R> x) {
  return x.re;
}
template <typename R>
DLARRAY_HOST_DEVICE R Imag(Complex<R> x) {
  return x.im;
}
/*! \brief The complex conjugate (the imaginary part's sign flipped, -0.0 included). */
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Conj(Complex<R> x) {
  return Complex<R>{x.re, -x.im};
}

template <typename R>
DLARRAY_HOST_DEVICE bool IsNan(Complex<R> x) {
  return std::isnan(x.re) || std::isnan(x.im);
}
template <typename R>
DLARRAY_HOST_DEVICE bool IsInf(Complex<R> x) {
  return std::isinf(x.re) || std::isinf(x.im);
}
template <typename R>
DLARRAY_HOST_DEVICE bool IsFinite(Complex<R> x) {
  return std::isfinite(x.re) && std::isfinite(x.im);
}

/*!
 * \brief x / |x| (the standard's sign): 0 for 0; NaN + NaN j when either part is NaN (the
 *        standard; NumPy gives 1 for inf + nan j) or both are infinite (inf / inf); +-1 or +-1j
 *        when one part is infinite (NumPy's).
 */
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Sign(Complex<R> x) {
  const R nan = static_cast<R>(NAN);  // NAN: a constant, unlike numeric_limits on CUDA
  if (IsNan(x) || (std::isinf(x.re) && std::isinf(x.im))) return Complex<R>{nan, nan};
  if (x.re == R{0} && x.im == R{0}) return Complex<R>{R{0}, R{0}};
  if (std::isinf(x.re)) return Complex<R>{std::copysign(R{1}, x.re), R{0}};
  if (std::isinf(x.im)) return Complex<R>{R{0}, std::copysign(R{1}, x.im)};
  const R a = std::hypot(x.re, x.im);
  return Complex<R>{x.re / a, x.im / a};
}

/*! \brief Each part rounded to the nearest integer, half to even (the standard's round). */
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Rint(Complex<R> x) {
  return Complex<R>{std::rint(x.re), std::rint(x.im)};
}

/*! \brief log(x) / log(2), each part scaled (no complex division: NumPy's log2). */
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Log2(Complex<R> x) {
  const Complex<R> l = Log(x);
  const R k = static_cast<R>(1.442695040888963407359924681001892137);
  return Complex<R>{l.re * k, l.im * k};
}
/*! \brief log(x) / log(10), each part scaled (NumPy's log10). */
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Log10(Complex<R> x) {
  const Complex<R> l = Log(x);
  const R k = static_cast<R>(0.434294481903251827651128918916605082);
  return Complex<R>{l.re * k, l.im * k};
}
/*!
 * \brief e^x - 1, accurate near 0: real part expm1(re) cos(im) - 2 sin^2(im / 2) (no
 *        cancellation), imaginary part e^re sin(im) (exactly im when that is +-0). Infinite or NaN
 *        parts, or a real part where e^re overflows: exp(x) - 1, so that Annex G's special values
 *        of exp carry over as the standard asks (NumPy's formula gives inf + nan j for inf + 0j);
 *        +-0 + 0j gives +0 + 0j (exp(0) - 1).
 */
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Expm1(Complex<R> x) {
  if (!IsFinite(x) || x.re >= ew::ComplexConsts<R>::kLnMax) {
    const Complex<R> e = Exp(x);
    return Complex<R>{e.re - R{1}, e.im};
  }
  if (x.re == R{0} && x.im == R{0}) return Complex<R>{R{0}, x.im};
  if (x.im == R{0}) return Complex<R>{std::expm1(x.re), x.im};
  const R h = std::sin(x.im / R{2});
  return Complex<R>{std::expm1(x.re) * std::cos(x.im) - R{2} * h * h,
                    std::exp(x.re) * std::sin(x.im)};
}
/*!
 * \brief log(1 + x): log(1 + x) itself (Annex G's special values) except near 0, where
 *        |1 + x| - 1 would cancel: there the real part is log1p(2 re + re^2 + im^2) / 2.
 */
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Log1p(Complex<R> x) {
  const R a = std::fabs(x.re), b = std::fabs(x.im);
  if (!(a < R{0.5} && b < R{0.5})) return Log(Complex<R>{x.re + R{1}, x.im});
  const R re = std::log1p(x.re * (R{2} + x.re) + x.im * x.im) / R{2};
  return Complex<R>{re, std::atan2(x.im, x.re + R{1})};
}

/*!
 * \brief a ** b as NumPy: b == 0 gives 1; 0 ** b is 0 for real(b) > 0 (NaN otherwise); b = 1, 2,
 *        3 are a, a * a, a * (a * a); another integer |b| < 100 is repeated squaring from 1
 *        (1 / that for b < 0): NumPy's sequence of products, so the NaN and infinite parts come
 *        out alike; otherwise exp(b log a) with C99's product (glibc's cpow).
 */
template <typename R>
DLARRAY_HOST_DEVICE Complex<R> Pow(Complex<R> a, Complex<R> b) {
  const Complex<R> one{R{1}, R{0}};
  if (b.re == R{0} && b.im == R{0}) return one;
  if (a.re == R{0} && a.im == R{0}) {
    if (b.re > R{0}) return Complex<R>{R{0}, R{0}};
    const R nan = static_cast<R>(NAN);  // NAN: a constant, unlike numeric_limits on CUDA
    return Complex<R>{nan, nan};
  }
  if (b.im == R{0} && b.re == std::trunc(b.re) && std::fabs(b.re) < R{100}) {
    long n = static_cast<long>(b.re);
    const bool invert = n < 0;
    if (invert) n = -n;
    if (!invert && n <= 3) return n == 1 ? a : n == 2 ? a * a : a * (a * a);
    Complex<R> result = one, base = a;
    for (; n != 0; n >>= 1) {
      if (n & 1) result = result * base;
      if (n > 1) base = base * base;
    }
    return invert ? one / result : result;
  }
  return Exp(ew::MulAnnexG(b, Log(a)));
}

/// \endcond

}  // namespace dlarray

#endif  // DLARRAY_ELEMENTWISE_COMPLEX_H_
