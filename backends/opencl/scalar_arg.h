/*!
 * \file scalar_arg.h
 * \brief Double attributes passed to kernels: as the stored bits of an element (array_set) or as
 *        the compute type CT (the *_by_const ops), converted exactly as the CPU backend converts
 *        them (float16 and bfloat16 rounded to nearest even; integers saturated or wrapped; a
 *        complex one gets imaginary part 0).
 */
#ifndef DLARRAY_BACKENDS_OPENCL_SCALAR_ARG_H_
#define DLARRAY_BACKENDS_OPENCL_SCALAR_ARG_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "dlarray/errors.h"
#include "launch.h"

namespace dlarray::opencl {

/*! \brief double -> IEEE binary16 bits, rounded to nearest even once (NumPy's conversion). */
inline uint16_t DoubleToHalfBits(double d) {
  uint64_t x;
  std::memcpy(&x, &d, sizeof x);
  const uint16_t sign = static_cast<uint16_t>((x >> 48) & 0x8000u);
  const int exp = static_cast<int>((x >> 52) & 0x7ff);
  uint64_t mant = x & 0xfffffffffffffull;
  if (exp == 0x7ff) return mant == 0 ? (sign | 0x7c00u) : (sign | 0x7e00u);
  const int e = exp - 1023;
  if (e > 15) return sign | 0x7c00u;
  if (e < -25) return sign;
  mant |= (exp != 0 ? (1ull << 52) : 0);
  const int shift = e < -14 ? 42 + (-14 - e) : 42;
  const uint32_t base = e < -14 ? 0u : static_cast<uint32_t>((e + 15) << 10);
  if (e >= -14) mant &= 0xfffffffffffffull;
  const uint64_t kept = mant >> shift;
  const uint64_t rest = mant & ((1ull << shift) - 1);
  const uint64_t half = 1ull << (shift - 1);
  uint32_t r = base + static_cast<uint32_t>(kept);
  if (rest > half || (rest == half && (kept & 1))) ++r;  // may carry into the exponent: fine
  return static_cast<uint16_t>(sign | r);
}

/*! \brief IEEE binary16 bits -> float (exact). */
inline float HalfBitsToFloat(uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  float v;
  if (exp == 0x1f) {
    v = mant == 0 ? std::numeric_limits<float>::infinity()
                  : std::numeric_limits<float>::quiet_NaN();
  } else if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), -24);
  } else {
    v = std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
  }
  return (h & 0x8000u) != 0 ? -v : v;
}

/*! \brief float -> bfloat16 bits, rounded to nearest even (NaN stays a quiet NaN). */
inline uint16_t FloatToBFloat16Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

/*! \brief bfloat16 bits -> float (exact). */
inline float BFloat16BitsToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/*! \brief A double as an integer of type I: truncated; NaN 0; out of range saturated. */
template <typename I>
inline I SaturatingCast(double v) {
  if (std::isnan(v)) return I{0};
  if (v <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

/*! \brief Sets an integer argument of `bits` bits from the two's complement bits v. */
inline void SetIntBits(Launch& launch, int bits, uint64_t v) {
  switch (bits) {
    case 8:
      launch.scalar<cl_uchar>(static_cast<cl_uchar>(v));
      return;
    case 16:
      launch.scalar<cl_ushort>(static_cast<cl_ushort>(v));
      return;
    case 32:
      launch.scalar<cl_uint>(static_cast<cl_uint>(v));
      return;
    case 64:
      launch.scalar<cl_ulong>(v);
      return;
    default:
      throw DTypeError("no OpenCL scalar of " + std::to_string(bits) + " bits");
  }
}

/*! \brief The stored bits of value in dtype t, as NumPy's np.array(value, t) (integers saturate,
 *         NaN 0; bool is value != 0). */
inline uint64_t StoredBits(DLArrayDType t, double value) {
  switch (TypeKind(t)) {
    case 1:
      return DoubleToHalfBits(value);
    case 2:
      return FloatToBFloat16Bits(static_cast<float>(value));
    case 3:
      return value != 0.0 ? 1 : 0;
    default:
      break;
  }
  if (t.code == kDLArrayFloat && t.bits == 32) {
    const float f = static_cast<float>(value);
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
  }
  if (t.code == kDLArrayFloat && t.bits == 64) {
    uint64_t b;
    std::memcpy(&b, &value, sizeof b);
    return b;
  }
  const bool u = t.code == kDLArrayUInt;
  switch (t.bits) {
    case 8:
      return u ? SaturatingCast<uint8_t>(value)
               : static_cast<uint8_t>(SaturatingCast<int8_t>(value));
    case 16:
      return u ? SaturatingCast<uint16_t>(value)
               : static_cast<uint16_t>(SaturatingCast<int16_t>(value));
    case 32:
      return u ? SaturatingCast<uint32_t>(value)
               : static_cast<uint32_t>(SaturatingCast<int32_t>(value));
    case 64:
      return u ? SaturatingCast<uint64_t>(value)
               : static_cast<uint64_t>(SaturatingCast<int64_t>(value));
    default:
      throw DTypeError("no OpenCL scalar of " + std::to_string(t.bits) + " bits");
  }
}

/*!
 * \brief Sets the next argument to value in the compute type CT of dtype t, as the CPU backend's
 *        *_by_const ops take it: floats rounded to t first (float16 and bfloat16 then widened to
 *        float), integers truncated and wrapped into t (x + (-5) on uint8 is x - 5).
 */
inline void SetComputeScalar(Launch& launch, DLArrayDType t, double value) {
  switch (TypeKind(t)) {
    case 1:
      launch.scalar<cl_float>(HalfBitsToFloat(DoubleToHalfBits(value)));
      return;
    case 2:
      launch.scalar<cl_float>(BFloat16BitsToFloat(FloatToBFloat16Bits(static_cast<float>(value))));
      return;
    case 3:
      launch.scalar<cl_uchar>(value != 0.0 ? 1 : 0);
      return;
    case 4:
      if (t.bits == 64) {
        launch.scalar<cl_float2>(cl_float2{{static_cast<cl_float>(value), 0.0f}});
      } else {
        launch.scalar<cl_double2>(cl_double2{{value, 0.0}});
      }
      return;
    default:
      break;
  }
  if (t.code == kDLArrayFloat && t.bits == 32) {
    launch.scalar<cl_float>(static_cast<cl_float>(value));
  } else if (t.code == kDLArrayFloat && t.bits == 64) {
    launch.scalar<cl_double>(value);
  } else if (t.code == kDLArrayInt || t.code == kDLArrayUInt) {
    SetIntBits(launch, t.bits, static_cast<uint64_t>(SaturatingCast<int64_t>(value)));
  } else {
    throw DTypeError("no OpenCL scalar for this dtype");
  }
}

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_SCALAR_ARG_H_
