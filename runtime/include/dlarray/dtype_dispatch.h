/*!
 * \file dlarray/dtype_dispatch.h
 * \brief Kernels written once over their dtypes, header-only, for host compilers and nvcc alike:
 *        the dispatch from a DLArrayDType to the C++ type of its elements, the type each one
 *        computes in, and NumPy's conversions and integer arithmetic on them.
 *
 * The 16-bit float storage types are the one thing that differs between a host and a device
 * compiler (a plugin's own structs on the host, `__half` and `__nv_bfloat16` in CUDA code), so
 * every template here takes them from a traits struct `F16`:
 *
 *     struct MyFloat16 {
 *       using Half = ...;      // IEEE binary16 storage
 *       using BFloat16 = ...;  // bfloat16 storage
 *       static float ToFloat(Half h);
 *       static float ToFloat(BFloat16 b);
 *       static Half ToHalf(double v);        // rounded to nearest even, once
 *       static BFloat16 ToBFloat16(float v);  // rounded to nearest even
 *     };
 *
 * and a kernel file does
 *
 *     DispatchDType<kFloatTypes | kIntTypes, MyFloat16>(out->dtype, ctx.op_name, "cpu",
 *         [&](auto tag) {
 *           using T = typename decltype(tag)::type;  // float, int8_t, MyHalf, ...
 *           using C = ComputeType<T, MyFloat16>;     // float for the 16-bit floats, else T
 *           ... out[i] = StoreAs<MyFloat16, T>(AddOf(LoadAs<MyFloat16>(a[i]), c)) ...
 *         });
 *
 * Under nvcc the element helpers are `__host__ __device__`, so one functor serves a CPU loop and
 * a CUDA kernel (the F16 functions must then be `__host__ __device__` too).
 */
#ifndef DLARRAY_DTYPE_DISPATCH_H_
#define DLARRAY_DTYPE_DISPATCH_H_

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "dlarray/dlarray.h"
#include "dlarray/errors.h"
#include "dlarray/sdk_util.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
/*! \brief Callable from host and device code (and inlined) under a device compiler. */
#define DLARRAY_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define DLARRAY_HOST_DEVICE inline
#endif

namespace dlarray {

/*! \brief Carries a type through a generic lambda (read back as decltype(tag)'s `type`). */
template <typename T>
struct TypeTag {
  using type = T;
};

/*! \brief Kinds of dtype a dispatch accepts, or-ed together. */
enum DTypeSet : int {
  kFloatTypes = 1,     //!< float32, float64, float16, bfloat16
  kIntTypes = 2,       //!< int8, int16, int32, int64, uint8 (the integers NumPy promotes safely)
  kWideUInts = 4,      //!< uint16, uint32, uint64
  kBoolType = 8,       //!< bool
  kComplexTypes = 16,  //!< complex64, complex128
};
/*! \brief Every real storage dtype and bool: what the arithmetic kernels may take. */
constexpr int kAllTypes = kFloatTypes | kIntTypes | kWideUInts | kBoolType;
/*! \brief Every storage dtype, complex included: what kernels that only move or convert take. */
constexpr int kStorageTypes = kAllTypes | kComplexTypes;

/*! \brief complex64 (R = float) and complex128 (R = double) elements: NumPy's and C's layout. */
template <typename R>
struct Complex {
  R re;  //!< real part
  R im;  //!< imaginary part
};

/*! \brief Whether T is a Complex. */
template <typename T>
constexpr bool kIsComplex = false;
/// \cond
// (a partial specialisation of a variable template: Doxygen names it in a form Breathe refuses)
template <typename R>
constexpr bool kIsComplex<Complex<R>> = true;
/// \endcond

/*! \brief An element of 16 bytes (complex128) for kernels that only move elements. */
struct alignas(8) Bytes16 {
  uint64_t lo;
  uint64_t hi;
};
/*! \brief The floats and the safely promoted integers (the elementwise table's kNumericTypes). */
constexpr int kNumericTypes = kFloatTypes | kIntTypes;

/*! \brief One row of the dtype table: the kind that admits it, its code and bits, its C++ type. */
template <int kKind, int kCode, int kBits, typename T>
struct DTypeRow {
  using type = T;
  static constexpr int kind = kKind;
  static constexpr int code = kCode;
  static constexpr int bits = kBits;
};

/*! \brief A list of rows. */
template <typename... Rows>
struct DTypeRows {};

/*! \brief Every storage dtype and its element type, the 16-bit floats from F16. */
template <typename F16>
using DTypeTable = DTypeRows<
    DTypeRow<kFloatTypes, kDLArrayFloat, 32, float>,
    DTypeRow<kFloatTypes, kDLArrayFloat, 64, double>,
    DTypeRow<kFloatTypes, kDLArrayFloat, 16, typename F16::Half>,
    DTypeRow<kFloatTypes, kDLArrayBfloat, 16, typename F16::BFloat16>,
    DTypeRow<kIntTypes, kDLArrayInt, 8, int8_t>, DTypeRow<kIntTypes, kDLArrayInt, 16, int16_t>,
    DTypeRow<kIntTypes, kDLArrayInt, 32, int32_t>, DTypeRow<kIntTypes, kDLArrayInt, 64, int64_t>,
    DTypeRow<kIntTypes, kDLArrayUInt, 8, uint8_t>, DTypeRow<kWideUInts, kDLArrayUInt, 16, uint16_t>,
    DTypeRow<kWideUInts, kDLArrayUInt, 32, uint32_t>,
    DTypeRow<kWideUInts, kDLArrayUInt, 64, uint64_t>, DTypeRow<kBoolType, kDLArrayBool, 8, bool>,
    DTypeRow<kComplexTypes, kDLArrayComplex, 64, Complex<float>>,
    DTypeRow<kComplexTypes, kDLArrayComplex, 128, Complex<double>>>;

namespace detail {

// Calls f for Row when t is its dtype; rows outside kSet are not even instantiated.
template <int kSet, typename Row, typename F>
inline bool VisitRow(DLArrayDType t, F& f) {
  if constexpr ((kSet & Row::kind) == 0) {
    return false;
  } else {
    if (t.code != Row::code || t.bits != Row::bits) return false;
    f(TypeTag<typename Row::type>{});
    return true;
  }
}

template <int kSet, typename F, typename... Rows>
inline bool VisitRows(DLArrayDType t, F& f, DTypeRows<Rows...> /*table*/) {
  return (VisitRow<kSet, Rows>(t, f) || ...);
}

template <typename T, typename... Rows>
constexpr DLArrayDType DTypeOfRows(DTypeRows<Rows...> /*table*/) {
  DLArrayDType t{0, 0, 0};  // lanes 0: not in the table
  ((std::is_same_v<T, typename Rows::type>
        ? (t = DLArrayDType{static_cast<uint8_t>(Rows::code), static_cast<uint8_t>(Rows::bits), 1})
        : t),
   ...);
  return t;
}

}  // namespace detail

/*!
 * \brief Calls f(TypeTag<T>{}) with T the element type of t (the 16-bit floats from F16) when t
 *        is in kSet, and returns true; returns false, calling nothing, for any other dtype. f is
 *        instantiated for the dtypes of kSet only.
 */
template <int kSet, typename F16, typename F>
inline bool VisitDType(DLArrayDType t, F&& f) {
  return t.lanes == 1 && detail::VisitRows<kSet>(t, f, DTypeTable<F16>{});
}

/*! \brief The dtype whose elements are T (lanes 0 when T is no element type). */
template <typename T, typename F16>
constexpr DLArrayDType DTypeOf() {
  return detail::DTypeOfRows<T>(DTypeTable<F16>{});
}

/*!
 * \brief VisitDType, throwing DTypeError "<op> on <device>: no kernel for <dtype>" for a dtype
 *        outside kSet.
 */
template <int kSet, typename F16, typename F>
inline void DispatchDType(DLArrayDType t, const char* op, const char* device, F&& f) {
  if (!VisitDType<kSet, F16>(t, std::forward<F>(f))) {
    throw DTypeError(std::string(op) + " on " + device + ": no kernel for " + FormatDType(t));
  }
}

/*!
 * \brief For kernels that only move elements: calls f with the TypeTag of an unsigned integer
 *        type of t's element size (Bytes16 for 16 bytes) and returns true; false for other
 *        sizes.
 */
template <typename F>
inline bool VisitElementSize(DLArrayDType t, F&& f) {
  switch ((t.bits * t.lanes + 7) / 8) {
    case 1:
      return f(TypeTag<uint8_t>{}), true;
    case 2:
      return f(TypeTag<uint16_t>{}), true;
    case 4:
      return f(TypeTag<uint32_t>{}), true;
    case 8:
      return f(TypeTag<uint64_t>{}), true;
    case 16:
      return f(TypeTag<Bytes16>{}), true;
    default:
      return false;
  }
}

/*! \brief Whether t is float32. */
inline bool IsFloat32(DLArrayDType t) {
  return t.code == kDLArrayFloat && t.bits == 32 && t.lanes == 1;
}

/*! \brief Whether T is one of F16's 16-bit float storage types. */
template <typename T, typename F16>
constexpr bool kIsFloat16 =
    std::is_same_v<T, typename F16::Half> || std::is_same_v<T, typename F16::BFloat16>;

/*! \brief The type T computes in: float for the 16-bit floats, T itself otherwise. */
template <typename T, typename F16>
using ComputeType = std::conditional_t<kIsFloat16<T, F16>, float, T>;

/*! \brief Storage -> compute value. */
template <typename F16, typename T>
DLARRAY_HOST_DEVICE ComputeType<T, F16> LoadAs(T v) {
  if constexpr (kIsFloat16<T, F16>) {
    return F16::ToFloat(v);
  } else {
    return v;
  }
}

/*! \brief A double as integer type I: truncated; NaN gives 0; out of range saturates. */
template <typename I>
DLARRAY_HOST_DEVICE I SaturatingCast(double v) {
  if (v != v) return I{0};
  // The bounds by hand: std::numeric_limits is host-only in device code.
  constexpr int kBits = static_cast<int>(sizeof(I) * 8) - (std::is_signed_v<I> ? 1 : 0);
  constexpr I kMax = static_cast<I>(~static_cast<unsigned long long>(0) >> (64 - kBits));
  constexpr I kMin = std::is_signed_v<I> ? static_cast<I>(-kMax - 1) : I{0};
  if (v <= static_cast<double>(kMin)) return kMin;
  if (v >= static_cast<double>(kMax)) return kMax;
  return static_cast<I>(v);
}

/*!
 * \brief Any compute value -> storage T, as NumPy casts: the 16-bit floats round to nearest
 *        even (bfloat16 from float, as ml_dtypes does), anything to bool is != 0, floats to
 *        integers truncate (saturating, NaN 0: NumPy leaves those undefined), integers wrap.
 *        A real value becomes a complex one with imaginary part 0; a complex value becomes a
 *        real one through its real part (NumPy's cast, which warns: dlarray's astype refuses
 *        it, the kernels keep it well defined), and bool when either part is non-zero.
 */
template <typename F16, typename T, typename V>
DLARRAY_HOST_DEVICE T StoreAs(V v) {
  if constexpr (kIsComplex<T>) {
    using R = decltype(T::re);
    if constexpr (kIsComplex<V>) {
      return T{static_cast<R>(v.re), static_cast<R>(v.im)};
    } else {
      return T{static_cast<R>(v), R{0}};
    }
  } else if constexpr (kIsComplex<V>) {
    if constexpr (std::is_same_v<T, bool>) {
      return v.re != 0 || v.im != 0;
    } else {
      return StoreAs<F16, T>(v.re);
    }
  } else if constexpr (std::is_same_v<T, typename F16::Half>) {
    return F16::ToHalf(static_cast<double>(v));
  } else if constexpr (std::is_same_v<T, typename F16::BFloat16>) {
    return F16::ToBFloat16(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != V{0};
  } else if constexpr (std::is_integral_v<T> && std::is_floating_point_v<V>) {
    return SaturatingCast<T>(static_cast<double>(v));
  } else {
    return static_cast<T>(v);
  }
}

/*! \brief a + b: integers wrap around as in NumPy (no signed overflow), floats as usual. */
template <typename C>
DLARRAY_HOST_DEVICE C AddOf(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    return static_cast<C>(static_cast<unsigned long long>(a) + static_cast<unsigned long long>(b));
  } else {
    return a + b;
  }
}

/*! \brief a * b: integers wrap around as in NumPy (no signed overflow), floats as usual. */
template <typename C>
DLARRAY_HOST_DEVICE C MulOf(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    return static_cast<C>(static_cast<unsigned long long>(a) * static_cast<unsigned long long>(b));
  } else {
    return a * b;
  }
}

/*!
 * \brief A scalar attribute as the compute value NumPy uses with an array of type T: rounded to
 *        T for the floats, truncated to int64 and wrapped into T for integers (x + (-5) on uint8
 *        is x - 5), != 0 for bool.
 */
template <typename F16, typename T>
DLARRAY_HOST_DEVICE ComputeType<T, F16> ScalarAs(double v) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return static_cast<T>(static_cast<unsigned long long>(SaturatingCast<long long>(v)));
  } else {
    return LoadAs<F16>(StoreAs<F16, T>(v));
  }
}

}  // namespace dlarray

#endif  // DLARRAY_DTYPE_DISPATCH_H_
