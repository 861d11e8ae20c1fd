/*!
 * \file elementwise_math.h
 * \brief The functions the elementwise table's expressions call (dlarray/elementwise_table.h),
 *        written once for the CPU and CUDA backends (host and device code) over a compute type C:
 *        float or double (the C library's or CUDA's math), or an integer type (wrapping around as
 *        NumPy does, never a signed overflow nor a trap: x // 0 and x % 0 are 0). The OpenCL
 *        backend spells the same functions in OpenCL C (backends/opencl/elementwise_table.cc).
 */
#ifndef DLARRAY_ELEMENTWISE_MATH_H_
#define DLARRAY_ELEMENTWISE_MATH_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "dlarray/dtype_dispatch.h"

namespace dlarray {

// The elementwise table's dtype sets beyond kFloatTypes and kNumericTypes (dtype_dispatch.h).
/*! \brief Every real dtype and bool (the table's kRealTypes). */
constexpr int kRealTypes = kAllTypes;
/*! \brief The floats and every integer type (the table's kRealNumericTypes). */
constexpr int kRealNumericTypes = kFloatTypes | kIntTypes | kWideUInts;
/*! \brief Every integer type (the table's kIntegerTypes). */
constexpr int kIntegerTypes = kIntTypes | kWideUInts;
/*! \brief Every integer type and bool (the table's kIntegralTypes). */
constexpr int kIntegralTypes = kIntTypes | kWideUInts | kBoolType;
/*! \brief The floats and complex64/complex128 (the table's kFloatComplexTypes). */
constexpr int kFloatComplexTypes = kFloatTypes | kComplexTypes;
/*! \brief The floats, every integer type and the complex types (kNumericComplexTypes). */
constexpr int kNumericComplexTypes = kRealNumericTypes | kComplexTypes;

namespace ew {

template <typename C>
constexpr bool kFloating = std::is_floating_point_v<C>;

/*! \brief The unsigned type of C's size (where integer arithmetic wraps). */
template <typename C>
using Unsigned =
    std::make_unsigned_t<std::conditional_t<std::is_same_v<C, bool>, unsigned char, C>>;

/*! \brief x < 0, without a comparison the compiler calls always false for unsigned C. */
template <typename C>
DLARRAY_HOST_DEVICE bool IsNegative(C x) {
  if constexpr (std::is_signed_v<C>) {
    return x < C{0};
  } else {
    return false;
  }
}

/*! \brief Whether b, a shift count, is negative or at least C's width. */
template <typename C>
DLARRAY_HOST_DEVICE bool ShiftOutOfRange(C b) {
  return IsNegative(b) || static_cast<unsigned long long>(b) >= sizeof(C) * 8;
}

}  // namespace ew

// The C library's functions under the table's names, for float and double compute values.
// Hidden from Doxygen, which reads each macro call as a function it cannot parse.
/// \cond
#define DLARRAY_EW_MATH_1(Name, fn) \
  template <typename C>             \
  DLARRAY_HOST_DEVICE C Name(C x) { \
    return std::fn(x);              \
  }
#define DLARRAY_EW_MATH_2(Name, fn)      \
  template <typename C>                  \
  DLARRAY_HOST_DEVICE C Name(C a, C b) { \
    return std::fn(a, b);                \
  }
DLARRAY_EW_MATH_1(Sqrt, sqrt)
DLARRAY_EW_MATH_1(Expm1, expm1)
DLARRAY_EW_MATH_1(Log1p, log1p)
DLARRAY_EW_MATH_1(Log2, log2)
DLARRAY_EW_MATH_1(Log10, log10)
DLARRAY_EW_MATH_1(Sin, sin)
DLARRAY_EW_MATH_1(Cos, cos)
DLARRAY_EW_MATH_1(Tan, tan)
DLARRAY_EW_MATH_1(Asin, asin)
DLARRAY_EW_MATH_1(Acos, acos)
DLARRAY_EW_MATH_1(Atan, atan)
DLARRAY_EW_MATH_1(Sinh, sinh)
DLARRAY_EW_MATH_1(Cosh, cosh)
DLARRAY_EW_MATH_1(Asinh, asinh)
DLARRAY_EW_MATH_1(Acosh, acosh)
DLARRAY_EW_MATH_1(Atanh, atanh)
DLARRAY_EW_MATH_1(Floor, floor)
DLARRAY_EW_MATH_1(Ceil, ceil)
DLARRAY_EW_MATH_1(Trunc, trunc)
DLARRAY_EW_MATH_1(Rint, rint)  // half to even in the default rounding mode
DLARRAY_EW_MATH_2(Atan2, atan2)
DLARRAY_EW_MATH_2(Hypot, hypot)
DLARRAY_EW_MATH_2(CopySign, copysign)
DLARRAY_EW_MATH_2(NextAfter, nextafter)
#undef DLARRAY_EW_MATH_1
#undef DLARRAY_EW_MATH_2
/// \endcond

/*! \brief Whether x is NaN (never for integers and bool). */
template <typename C>
DLARRAY_HOST_DEVICE bool IsNan(C x) {
  if constexpr (ew::kFloating<C>) {
    return std::isnan(x);
  } else {
    return false;
  }
}

/*! \brief Whether x is +-infinity (never for integers and bool). */
template <typename C>
DLARRAY_HOST_DEVICE bool IsInf(C x) {
  if constexpr (ew::kFloating<C>) {
    return std::isinf(x);
  } else {
    return false;
  }
}

/*! \brief Whether x is neither infinite nor NaN (always for integers and bool). */
template <typename C>
DLARRAY_HOST_DEVICE bool IsFinite(C x) {
  if constexpr (ew::kFloating<C>) {
    return std::isfinite(x);
  } else {
    return true;
  }
}

/*! \brief Whether x's sign bit is set (-0.0 and negative NaNs included). */
template <typename C>
DLARRAY_HOST_DEVICE bool SignBit(C x) {
  if constexpr (ew::kFloating<C>) {
    // From the bits: GCC's vectoriser fails (an internal error) on std::signbit in a loop
    // storing bool at -march=x86-64.
    using Bits = std::conditional_t<sizeof(C) == 4, uint32_t, uint64_t>;
    Bits bits;
    memcpy(&bits, &x, sizeof bits);
    return (bits >> (sizeof(C) * 8 - 1)) != 0;
  } else {
    return ew::IsNegative(x);
  }
}

/*! \brief a / b (elementwise_complex.h's operator/ for complex values). */
template <typename C>
DLARRAY_HOST_DEVICE C Div(C a, C b) {
  return a / b;
}

/*! \brief a == b (elementwise_complex.h's operator== for complex values). */
template <typename C>
DLARRAY_HOST_DEVICE bool Equal(C a, C b) {
  return a == b;
}

/*! \brief 1 / x (a float's; elementwise_complex.h has the complex one). */
template <typename C>
DLARRAY_HOST_DEVICE C Reciprocal(C x) {
  return C{1} / x;
}

/*! \brief a - b: integers wrap around as in NumPy. */
template <typename C>
DLARRAY_HOST_DEVICE C SubOf(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    return static_cast<C>(static_cast<ew::Unsigned<C>>(static_cast<ew::Unsigned<C>>(a) -
                                                       static_cast<ew::Unsigned<C>>(b)));
  } else {
    return a - b;
  }
}

/*! \brief -x: integers wrap (-(-128) is -128 in int8, as NumPy), floats flip the sign bit. */
template <typename C>
DLARRAY_HOST_DEVICE C Neg(C x) {
  if constexpr (std::is_integral_v<C>) {
    return SubOf(C{0}, x);
  } else {
    return -x;
  }
}

/*! \brief |x|: fabs for floats (|-0.0| is +0.0), wrapping for the most negative integer. */
template <typename C>
DLARRAY_HOST_DEVICE C Abs(C x) {
  if constexpr (ew::kFloating<C>) {
    return std::fabs(x);
  } else {
    return ew::IsNegative(x) ? Neg(x) : x;
  }
}

/*! \brief -1, 0 or 1 by x's sign (+0 for either zero); NaN stays NaN. */
template <typename C>
DLARRAY_HOST_DEVICE C Sign(C x) {
  if constexpr (std::is_unsigned_v<C>) {
    return x > C{0} ? C{1} : C{0};
  } else {
    return x > C{0} ? C{1} : x < C{0} ? C{-1} : x == C{0} ? C{0} : x;
  }
}

/*! \brief The larger of a and b; NaN if either is NaN (NumPy's maximum). */
template <typename C>
DLARRAY_HOST_DEVICE C Maximum(C a, C b) {
  if constexpr (ew::kFloating<C>) {
    if (a != a) return a;
  }
  return a >= b ? a : b;  // b NaN: a >= b is false, so b
}

/*! \brief The smaller of a and b; NaN if either is NaN (NumPy's minimum). */
template <typename C>
DLARRAY_HOST_DEVICE C Minimum(C a, C b) {
  if constexpr (ew::kFloating<C>) {
    if (a != a) return a;
  }
  return a <= b ? a : b;
}

/*!
 * \brief a mod b with b's sign (Python's and NumPy's %): a - floor(a / b) * b. Integers: 0 when
 *        b is 0 (NumPy's result, without its warning). Floats: fmod, moved into b's sign; NaN
 *        for b == 0 or an infinite a; an exact zero takes b's sign.
 */
template <typename C>
DLARRAY_HOST_DEVICE C Remainder(C a, C b) {
  if constexpr (ew::kFloating<C>) {
    C r = std::fmod(a, b);
    if (r != C{0}) {
      if ((r < C{0}) != (b < C{0})) r += b;
    } else {
      r = std::copysign(C{0}, b);
    }
    return r;
  } else if constexpr (std::is_signed_v<C>) {
    if (b == C{0} || b == C{-1}) return C{0};  // -1: the most negative a / -1 overflows
    C r = static_cast<C>(a % b);
    if (r != C{0} && ((r < C{0}) != (b < C{0}))) r = static_cast<C>(r + b);
    return r;
  } else {
    return b == C{0} ? C{0} : static_cast<C>(a % b);
  }
}

/*!
 * \brief floor(a / b) (Python's and NumPy's //). Integers: 0 when b is 0, wrapping for the most
 *        negative a // -1. Floats: (a - Remainder(a, b)) / b, which is exact up to one rounding
 *        and then rounded to the integer it stands for; a / b itself where b is 0 (inf or NaN)
 *        and NaN for an infinite a, as NumPy.
 */
template <typename C>
DLARRAY_HOST_DEVICE C FloorDivide(C a, C b) {
  if constexpr (ew::kFloating<C>) {
    const C q = a / b;
    if (b == C{0}) return q;
    if (!std::isfinite(a)) return a - a;  // NaN, as NumPy (inf // 2 is NaN)
    const C mod = std::fmod(a, b);
    C div = (a - mod) / b;  // an integer, up to one rounding
    if (mod != C{0} && ((mod < C{0}) != (b < C{0}))) div -= C{1};
    C whole = std::floor(div);
    if (div - whole > C{0.5}) whole += C{1};
    return whole == C{0} ? std::copysign(C{0}, q) : whole;
  } else if constexpr (std::is_signed_v<C>) {
    if (b == C{0}) return C{0};
    if (b == C{-1}) return Neg(a);
    C q = static_cast<C>(a / b);
    if ((a % b != C{0}) && ((a < C{0}) != (b < C{0}))) q = static_cast<C>(q - 1);
    return q;
  } else {
    return b == C{0} ? C{0} : static_cast<C>(a / b);
  }
}

/*!
 * \brief a ** b. Floats: pow. Integers: by repeated squaring, wrapping around; a negative
 *        exponent gives 0 (NumPy refuses it; 1 ** -n is 1 and (-1) ** -n is +-1, exactly).
 */
template <typename C>
DLARRAY_HOST_DEVICE C Pow(C a, C b) {
  if constexpr (ew::kFloating<C>) {
    return std::pow(a, b);
  } else {
    if constexpr (std::is_signed_v<C>) {
      if (b < C{0}) {
        if (a == C{1}) return C{1};
        if (a == C{-1}) return (b & C{1}) ? C{-1} : C{1};
        return C{0};
      }
    }
    C result{1};
    C base = a;
    for (auto e = static_cast<ew::Unsigned<C>>(b); e != 0; e >>= 1) {
      if (e & 1u) result = MulOf(result, base);
      base = MulOf(base, base);
    }
    return result;
  }
}

/*! \brief a << b; 0 once b reaches C's width (NumPy), and for a negative b. */
template <typename C>
DLARRAY_HOST_DEVICE C ShiftLeft(C a, C b) {
  if (ew::ShiftOutOfRange(b)) return C{0};
  return static_cast<C>(static_cast<ew::Unsigned<C>>(a) << b);
}

/*! \brief a >> b, arithmetic for signed C; past C's width (or negative b) all sign bits. */
template <typename C>
DLARRAY_HOST_DEVICE C ShiftRight(C a, C b) {
  if (ew::ShiftOutOfRange(b)) return ew::IsNegative(a) ? static_cast<C>(~C{0}) : C{0};
  return static_cast<C>(a >> b);
}

/*! \brief log(exp(a) + exp(b)) without overflow; equal infinities give themselves. */
template <typename C>
DLARRAY_HOST_DEVICE C LogAddExp(C a, C b) {
  if (a == b) return a + static_cast<C>(0.693147180559945309417232121458176568);
  const C d = a - b;
  if (d > C{0}) return a + std::log1p(std::exp(-d));
  if (d <= C{0}) return b + std::log1p(std::exp(d));
  return d;  // NaN
}

}  // namespace dlarray

#endif  // DLARRAY_ELEMENTWISE_MATH_H_
