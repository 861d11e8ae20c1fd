/*!
 * \file row_reduce.cuh
 * \brief Warp and block reductions for the row-wise kernels (softmax, softmax_cross_entropy),
 *        including the online (max, rescaled sum) pair of a streaming softmax, in a compute type C
 *        (float, or double for float64).
 */
#ifndef DLARRAY_BACKENDS_CUDA_ROW_REDUCE_CUH_
#define DLARRAY_BACKENDS_CUDA_ROW_REDUCE_CUH_

#include <cfloat>

namespace dlarray {
namespace cuda {

/*! \brief max(a, b) ignoring a NaN operand: fmaxf for float (as the float32 kernels always did). */
__device__ __forceinline__ float Max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double Max(double a, double b) { return fmax(a, b); }

/*! \brief exp in the compute type: the fast intrinsic for float, full precision for double. */
__device__ __forceinline__ float FastExp(float x) { return __expf(x); }
__device__ __forceinline__ double FastExp(double x) { return exp(x); }

/*! \brief The most negative finite value of C. */
template <typename C>
__device__ __forceinline__ C Lowest() {
  if constexpr (sizeof(C) == sizeof(float)) {
    return -FLT_MAX;
  } else {
    return -DBL_MAX;
  }
}

/*!
 * \brief Running max m and sum s of exp(x - m) over the values seen, in compute type C. Starts at
 *        m = Lowest (not -inf) so that -inf inputs add exp(-inf) = 0 and never form inf - inf.
 */
template <typename C>
struct MaxSum {
  C m;
  C s;
};

template <typename C>
__device__ __forceinline__ MaxSum<C> MaxSumIdentity() {
  return {Lowest<C>(), C(0)};
}

/*! \brief Adds one value: one exp, rescaling the sum when the max grows. */
template <typename C>
__device__ __forceinline__ void MaxSumAdd(MaxSum<C>& a, C x) {
  if (x > a.m) {
    a.s = a.s * FastExp(a.m - x) + C(1);
    a.m = x;
  } else {
    a.s += FastExp(x - a.m);
  }
}

/*! \brief Adds four floats: the max first, so at most one rescale. */
__device__ __forceinline__ void MaxSumAdd4(MaxSum<float>& a, float4 x) {
  const float m = fmaxf(fmaxf(x.x, x.y), fmaxf(x.z, x.w));
  if (m > a.m) {
    a.s *= __expf(a.m - m);
    a.m = m;
  }
  a.s += __expf(x.x - a.m) + __expf(x.y - a.m) + __expf(x.z - a.m) + __expf(x.w - a.m);
}

/*! \brief Combines two partial (max, sum) pairs. */
template <typename C>
__device__ __forceinline__ MaxSum<C> MaxSumCombine(MaxSum<C> a, MaxSum<C> b) {
  const C m = Max(a.m, b.m);
  return {m, a.s * FastExp(a.m - m) + b.s * FastExp(b.m - m)};
}

template <typename C>
__device__ __forceinline__ C WarpMax(C v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v = Max(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

template <typename C>
__device__ __forceinline__ C WarpSum(C v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <typename C>
__device__ __forceinline__ MaxSum<C> WarpMaxSum(MaxSum<C> v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    const MaxSum<C> other{__shfl_xor_sync(0xffffffffu, v.m, o),
                          __shfl_xor_sync(0xffffffffu, v.s, o)};
    v = MaxSumCombine(v, other);
  }
  return v;
}

template <typename C>
struct MaxOp {
  __device__ C operator()(C a, C b) const { return Max(a, b); }
  __device__ C warp(C v) const { return WarpMax(v); }
};

template <typename C>
struct SumOp {
  __device__ C operator()(C a, C b) const { return a + b; }
  __device__ C warp(C v) const { return WarpSum(v); }
};

template <typename C>
struct MaxSumOp {
  __device__ MaxSum<C> operator()(MaxSum<C> a, MaxSum<C> b) const { return MaxSumCombine(a, b); }
  __device__ MaxSum<C> warp(MaxSum<C> v) const { return WarpMaxSum(v); }
};

/*!
 * \brief Reduces v over the block (blockDim.x a multiple of 32, y and z 1); every thread gets the
 *        result, combined in warp order. scratch: 32 elements of shared memory; it may be reused
 *        by the next BlockReduce at once (each one starts with a barrier).
 */
template <typename T, typename Op>
__device__ __forceinline__ T BlockReduce(T v, T* scratch, Op op) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  v = op.warp(v);
  __syncthreads();  // a previous reduction may still read scratch
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = scratch[0];
  for (int w = 1; w < warps; ++w) v = op(v, scratch[w]);
  return v;
}

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_ROW_REDUCE_CUH_
