/*!
 * \file dtype.h
 * \brief The CPU kernels' float16 and bfloat16 storage (with round-to-nearest-even conversions,
 *        as NumPy and ml_dtypes do), plugged into the dtype dispatch shared with the CUDA backend
 *        (dlarray/dtype_dispatch.h): Load, Store, Compute and Dispatch on the CPU's types.
 */
#ifndef DLARRAY_BACKENDS_CPU_DTYPE_H_
#define DLARRAY_BACKENDS_CPU_DTYPE_H_

#include <cstdint>
#include <cstring>
#include <utility>

#include "dlarray/dtype_dispatch.h"
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

// The conversions are forced inline: in a file with many kernels (elementwise_table.cc) GCC's
// unit growth limit left them out of line, a call per element (float16 ops 10-20 % slower).
#define DLARRAY_CPU_CONVERSION inline __attribute__((always_inline))

DLARRAY_CPU_CONVERSION float HalfToFloat(uint16_t h) {
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
DLARRAY_CPU_CONVERSION uint16_t DoubleToHalf(double d) {
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

DLARRAY_CPU_CONVERSION float BFloat16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/*! \brief float -> bfloat16, rounded to nearest even (NaN stays a quiet NaN). */
DLARRAY_CPU_CONVERSION uint16_t FloatToBFloat16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

/*! \brief The CPU side's 16-bit float storage, for the shared dtype dispatch. */
struct Float16 {
  using Half = cpu::Half;
  using BFloat16 = cpu::BFloat16;
  // Forced inline as the conversions themselves are: left out of line, every float16 element
  // paid a call (relu 1.18x, x + c 1.05-1.14x slower than the per-op kernels before the table).
  DLARRAY_CPU_CONVERSION static float ToFloat(Half h) { return HalfToFloat(h.bits); }
  DLARRAY_CPU_CONVERSION static float ToFloat(BFloat16 b) { return BFloat16ToFloat(b.bits); }
  DLARRAY_CPU_CONVERSION static Half ToHalf(double v) { return Half{DoubleToHalf(v)}; }
  DLARRAY_CPU_CONVERSION static BFloat16 ToBFloat16(float v) {
    return BFloat16{FloatToBFloat16(v)};
  }
};

/*! \brief The type T computes in: float for the half types, T otherwise. */
template <typename T>
using Compute = ComputeType<T, Float16>;

/*! \brief Storage -> compute value. */
template <typename T>
inline Compute<T> Load(T v) {
  return LoadAs<Float16>(v);
}

/*! \brief Any arithmetic value -> storage T, as NumPy casts (see dlarray::StoreAs). */
template <typename T, typename V>
inline T Store(V v) {
  return StoreAs<Float16, T>(v);
}

/*! \brief A scalar attribute as the compute value NumPy uses with an array of type T. */
template <typename T>
inline Compute<T> ScalarFor(double v) {
  return ScalarAs<Float16, T>(v);
}

/*! \brief DispatchDType on the CPU's element types; errors name the op "on cpu". */
template <int kSet, typename F>
inline void Dispatch(DLArrayDType t, const char* op, F&& f) {
  DispatchDType<kSet, Float16>(t, op, "cpu", std::forward<F>(f));
}

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_DTYPE_H_
