/*!
 * \file dtype.h
 * \brief The element types of the CPU kernels beyond float32: float16 and bfloat16 storage (with
 *        round-to-nearest-even conversions, as NumPy and ml_dtypes do), the type each computes in,
 *        wrapping integer arithmetic, and dispatch from a DLArrayDType to a C++ type.
 */
#ifndef DLARRAY_BACKENDS_CPU_DTYPE_H_
#define DLARRAY_BACKENDS_CPU_DTYPE_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "dlarray/errors.h"
#include "dlarray/kernel.h"

namespace dlarray::cpu {

/*! \brief IEEE binary16 storage. */
struct Half {
  uint16_t bits;
};
/*! \brief bfloat16 storage: the upper half of a float32. */
struct BFloat16 {
  uint16_t bits;
};

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf, NaN (payload kept)
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400u) == 0);
    bits = sign | static_cast<uint32_t>(112 - e) << 23 | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/*! \brief double -> binary16, rounded to nearest even once (NumPy's npy_double_to_half). */
inline uint16_t DoubleToHalf(double d) {
  uint64_t x;
  std::memcpy(&x, &d, sizeof x);
  const uint16_t sign = static_cast<uint16_t>((x >> 48) & 0x8000u);
  const int exp = static_cast<int>((x >> 52) & 0x7ff);
  uint64_t mant = x & 0xfffffffffffffull;
  if (exp == 0x7ff) {
    if (mant == 0) return sign | 0x7c00u;
    uint16_t m = static_cast<uint16_t>(mant >> 42);
    return sign | 0x7c00u | (m != 0 ? m : 1u) | 0x200u;  // quiet NaN
  }
  const int e = exp - 1023;  // unbiased
  if (e > 15) return sign | 0x7c00u;
  if (e < -25) return sign;               // below half the smallest subnormal
  mant |= (exp != 0 ? (1ull << 52) : 0);  // implicit bit
  int shift;                              // bits of mant dropped
  uint16_t base;
  if (e < -14) {  // subnormal result
    shift = 42 + (-14 - e);
    base = 0;
  } else {
    shift = 42;
    base = static_cast<uint16_t>((e + 15) << 10);
    mant &= 0xfffffffffffffull;  // the implicit bit is in base
  }
  const uint64_t kept = mant >> shift;
  const uint64_t rest = mant & ((1ull << shift) - 1);
  const uint64_t half = 1ull << (shift - 1);
  uint32_t r = base + static_cast<uint32_t>(kept);
  if (rest > half || (rest == half && (kept & 1))) ++r;  // may carry into the exponent: fine
  return static_cast<uint16_t>(sign | r);
}

inline float BFloat16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/*! \brief float -> bfloat16, rounded to nearest even (NaN stays a quiet NaN). */
inline uint16_t FloatToBFloat16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

/*! \brief The type T computes in: float for the half types, T otherwise. */
template <typename T>
struct ComputeOf {
  using type = T;
};
template <>
struct ComputeOf<Half> {
  using type = float;
};
template <>
struct ComputeOf<BFloat16> {
  using type = float;
};
template <typename T>
using Compute = typename ComputeOf<T>::type;

/*! \brief Storage -> compute value. */
inline float Load(Half h) { return HalfToFloat(h.bits); }
inline float Load(BFloat16 b) { return BFloat16ToFloat(b.bits); }
template <typename T>
inline T Load(T v) {
  return v;
}

/*! \brief A double as an integer of type I: truncated; NaN 0; out of range saturated. */
template <typename I>
inline I SaturatingCast(double v) {
  if (std::isnan(v)) return I{0};
  if (v <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

/*! \brief Any arithmetic value -> storage T, as NumPy casts (half types round to nearest even). */
template <typename T, typename V>
inline T Store(V v) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half{DoubleToHalf(static_cast<double>(v))};
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16{FloatToBFloat16(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != V{0};
  } else if constexpr (std::is_integral_v<T> && std::is_floating_point_v<V>) {
    return SaturatingCast<T>(static_cast<double>(v));
  } else {
    return static_cast<T>(v);  // integers wrap (two's complement), floats round
  }
}

/*! \brief a + b and a * b: integers wrap around as in NumPy, floats as usual. */
template <typename C>
inline C AddOf(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    return static_cast<C>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}
template <typename C>
inline C MulOf(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    return static_cast<C>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}

/*! \brief A scalar attribute as compute type C (integers: truncated, wrapped into C). */
template <typename C>
inline C ScalarOf(double v) {
  if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
    return static_cast<C>(static_cast<uint64_t>(SaturatingCast<int64_t>(v)));
  } else {
    return static_cast<C>(v);
  }
}

/*! \brief Tag carrying a type through generic lambdas. */
template <typename T>
struct TypeTag {
  using type = T;
};

/*! \brief Which kinds of dtype a dispatch accepts. */
enum DTypeSet : int { kFloatTypes = 1, kIntTypes = 2, kWideUInts = 4, kBoolType = 8 };

/*!
 * \brief Calls f(TypeTag<T>{}) with T the C++ type of dtype, when dtype is in `set`; throws
 *        DTypeError naming op otherwise. (float32 is included in kFloatTypes.)
 */
template <int kSet, typename F>
inline void Dispatch(DLArrayDType t, const char* op, F&& f) {
  if (t.lanes == 1) {
    if constexpr ((kSet & kFloatTypes) != 0) {
      if (t.code == kDLArrayFloat && t.bits == 32) return f(TypeTag<float>{});
      if (t.code == kDLArrayFloat && t.bits == 64) return f(TypeTag<double>{});
      if (t.code == kDLArrayFloat && t.bits == 16) return f(TypeTag<Half>{});
      if (t.code == kDLArrayBfloat && t.bits == 16) return f(TypeTag<BFloat16>{});
    }
    if constexpr ((kSet & kIntTypes) != 0) {
      if (t.code == kDLArrayInt && t.bits == 8) return f(TypeTag<int8_t>{});
      if (t.code == kDLArrayInt && t.bits == 16) return f(TypeTag<int16_t>{});
      if (t.code == kDLArrayInt && t.bits == 32) return f(TypeTag<int32_t>{});
      if (t.code == kDLArrayInt && t.bits == 64) return f(TypeTag<int64_t>{});
      if (t.code == kDLArrayUInt && t.bits == 8) return f(TypeTag<uint8_t>{});
    }
    if constexpr ((kSet & kWideUInts) != 0) {
      if (t.code == kDLArrayUInt && t.bits == 16) return f(TypeTag<uint16_t>{});
      if (t.code == kDLArrayUInt && t.bits == 32) return f(TypeTag<uint32_t>{});
      if (t.code == kDLArrayUInt && t.bits == 64) return f(TypeTag<uint64_t>{});
    }
    if constexpr ((kSet & kBoolType) != 0) {
      if (t.code == kDLArrayBool && t.bits == 8) return f(TypeTag<bool>{});
    }
  }
  throw DTypeError(std::string(op) + " on cpu: no kernel for dtype code " + std::to_string(t.code) +
                   ", " + std::to_string(t.bits) + " bits");
}

/*! \brief Every storage dtype. */
constexpr int kAllTypes = kFloatTypes | kIntTypes | kWideUInts | kBoolType;

/*! \brief Whether t is float32 (the vectorised paths). */
inline bool IsFloat32(DLArrayDType t) {
  return t.code == kDLArrayFloat && t.bits == 32 && t.lanes == 1;
}

/*! \brief Typed first element of an array (data + byte_offset). */
template <typename T>
inline T* TypedData(const DLArray* a) {
  return reinterpret_cast<T*>(static_cast<char*>(a->data) + a->byte_offset);
}

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_DTYPE_H_
