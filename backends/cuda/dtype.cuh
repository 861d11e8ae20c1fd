/*!
 * \file dtype.cuh
 * \brief The CUDA kernels' float16 (__half) and bfloat16 (__nv_bfloat16) storage, plugged into
 *        the dtype dispatch shared with the CPU backend (dlarray/dtype_dispatch.h): Load, Store,
 *        Compute, ScalarFor and Dispatch on CUDA's types, callable from host and device code.
 */
#ifndef DLARRAY_BACKENDS_CUDA_DTYPE_CUH_
#define DLARRAY_BACKENDS_CUDA_DTYPE_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <utility>

#include "dlarray/dtype_dispatch.h"
#include "dlarray/kernel.h"

namespace dlarray {
namespace cuda {

/*! \brief CUDA's 16-bit float storage, for the shared dtype dispatch (rounded to nearest even;
 *         double -> bfloat16 goes through float, as ml_dtypes does). */
struct Float16 {
  using Half = __half;
  using BFloat16 = __nv_bfloat16;
  // __half2float makes every NaN the positive canonical one; NumPy keeps a NaN's sign (signbit,
  // copysign(x, -nan)), so the sign bit is put back.
  DLARRAY_HOST_DEVICE static float ToFloat(__half h) {
    const float f = __half2float(h);
    const bool negative = (static_cast<__half_raw>(h).x & 0x8000u) != 0;
    return f != f ? copysignf(f, negative ? -1.0f : 1.0f) : f;
  }
  DLARRAY_HOST_DEVICE static float ToFloat(__nv_bfloat16 b) { return __bfloat162float(b); }
  DLARRAY_HOST_DEVICE static __half ToHalf(double v) { return __double2half(v); }
  DLARRAY_HOST_DEVICE static __nv_bfloat16 ToBFloat16(float v) { return __float2bfloat16_rn(v); }
};

/*! \brief The type T computes in: float for the half types, T otherwise. */
template <typename T>
using Compute = ComputeType<T, Float16>;

/*! \brief Storage -> compute value. */
template <typename T>
DLARRAY_HOST_DEVICE Compute<T> Load(T v) {
  return LoadAs<Float16>(v);
}

/*! \brief Any arithmetic value -> storage T, as NumPy casts (see dlarray::StoreAs). */
template <typename T, typename V>
DLARRAY_HOST_DEVICE T Store(V v) {
  return StoreAs<Float16, T>(v);
}

/*! \brief A scalar attribute as the compute value NumPy uses with an array of type T. */
template <typename T>
inline Compute<T> ScalarFor(double v) {
  return ScalarAs<Float16, T>(v);
}

/*! \brief DispatchDType on CUDA's element types; errors name the op "on cuda". */
template <int kSet, typename F>
inline void Dispatch(DLArrayDType t, const char* op, F&& f) {
  DispatchDType<kSet, Float16>(t, op, "cuda", std::forward<F>(f));
}

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_DTYPE_CUH_
