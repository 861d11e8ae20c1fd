/*!
 * \file dtype.cuh
 * \brief Element types of the CUDA kernels beyond float32: float16 (__half) and bfloat16
 *        (__nv_bfloat16) storage computed in float, wrapping integer arithmetic, NumPy's casts, and
 *        host-side dispatch from a DLArrayDType to a C++ type.
 */
#ifndef DLARRAY_BACKENDS_CUDA_DTYPE_CUH_
#define DLARRAY_BACKENDS_CUDA_DTYPE_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "dlarray/errors.h"
#include "dlarray/kernel.h"

namespace dlarray {
namespace cuda {

/*! \brief The type T computes in: float for the half types, T otherwise. */
template <typename T>
struct ComputeOf {
  using type = T;
};
template <>
struct ComputeOf<__half> {
  using type = float;
};
template <>
struct ComputeOf<__nv_bfloat16> {
  using type = float;
};
template <typename T>
using Compute = typename ComputeOf<T>::type;

/*! \brief Storage -> compute value. */
__device__ __forceinline__ float Load(__half h) { return __half2float(h); }
__device__ __forceinline__ float Load(__nv_bfloat16 b) { return __bfloat162float(b); }
template <typename T>
__device__ __forceinline__ T Load(T v) {
  return v;
}

/*! \brief A floating value as integer type I: truncated; NaN 0; out of range saturated. */
template <typename I, typename V>
__device__ __forceinline__ I SaturatingCast(V v) {
  const double d = static_cast<double>(v);
  if (d != d) return I{0};
  // Bounds computed here: std::numeric_limits is host-only in device code.
  constexpr int kBits = static_cast<int>(sizeof(I) * 8) - (std::is_signed_v<I> ? 1 : 0);
  constexpr I kMax = static_cast<I>(~static_cast<unsigned long long>(0) >> (64 - kBits));
  constexpr I kMin = std::is_signed_v<I> ? static_cast<I>(-kMax - 1) : I{0};
  if (d <= static_cast<double>(kMin)) return kMin;
  if (d >= static_cast<double>(kMax)) return kMax;
  return static_cast<I>(d);
}

/*! \brief Any arithmetic value -> storage T, as NumPy casts (half types round to nearest even;
 *         double -> bfloat16 goes through float, as ml_dtypes does). */
template <typename T, typename V>
__device__ __forceinline__ T Store(V v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __double2half(static_cast<double>(v));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != V{0};
  } else if constexpr (std::is_integral_v<T> && std::is_floating_point_v<V>) {
    return SaturatingCast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

/*! \brief a + b and a * b: integers wrap around as in NumPy. */
template <typename C>
__device__ __forceinline__ C AddOf(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    return static_cast<C>(static_cast<unsigned long long>(a) + static_cast<unsigned long long>(b));
  } else {
    return a + b;
  }
}
template <typename C>
__device__ __forceinline__ C MulOf(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    return static_cast<C>(static_cast<unsigned long long>(a) * static_cast<unsigned long long>(b));
  } else {
    return a * b;
  }
}

/*! \brief Tag carrying a type through generic lambdas. */
template <typename T>
struct TypeTag {
  using type = T;
};

/*! \brief Which kinds of dtype a dispatch accepts. */
enum DTypeSet : int { kFloatTypes = 1, kIntTypes = 2, kWideUInts = 4, kBoolType = 8 };
constexpr int kAllTypes = kFloatTypes | kIntTypes | kWideUInts | kBoolType;

/*! \brief Calls f(TypeTag<T>{}) with T the C++ type of dtype when it is in `set`; else throws. */
template <int kSet, typename F>
inline void Dispatch(DLArrayDType t, const char* op, F&& f) {
  if (t.lanes == 1) {
    if constexpr ((kSet & kFloatTypes) != 0) {
      if (t.code == kDLArrayFloat && t.bits == 32) return f(TypeTag<float>{});
      if (t.code == kDLArrayFloat && t.bits == 64) return f(TypeTag<double>{});
      if (t.code == kDLArrayFloat && t.bits == 16) return f(TypeTag<__half>{});
      if (t.code == kDLArrayBfloat && t.bits == 16) return f(TypeTag<__nv_bfloat16>{});
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
  throw DTypeError(std::string(op) + " on cuda: no kernel for dtype code " +
                   std::to_string(t.code) + ", " + std::to_string(t.bits) + " bits");
}

/*! \brief Whether t is float32 (the existing vectorised float kernels). */
inline bool IsFloat32(DLArrayDType t) {
  return t.code == kDLArrayFloat && t.bits == 32 && t.lanes == 1;
}

/*! \brief A scalar attribute as the value NumPy would use with an array of type T: rounded to T
 *         for floating types, truncated and wrapped for integers. */
template <typename T>
inline Compute<T> ScalarFor(double v) {
  using C = Compute<T>;
  if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
    const double lim = 9.2233720368547758e18;  // 2^63
    const long long i = v != v      ? 0
                        : v >= lim  ? std::numeric_limits<long long>::max()
                        : v <= -lim ? std::numeric_limits<long long>::min()
                                    : static_cast<long long>(v);
    return static_cast<C>(static_cast<unsigned long long>(i));
  } else if constexpr (std::is_same_v<T, __half>) {
    return __half2float(__double2half(v));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(__float2bfloat16_rn(static_cast<float>(v)));
  } else {
    return static_cast<C>(v);
  }
}

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_DTYPE_CUH_
