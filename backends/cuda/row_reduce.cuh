/*!
 * \file row_reduce.cuh
 * \brief Warp and block reductions for the row-wise kernels (softmax, softmax_cross_entropy),
 *        including the online (max, rescaled sum) pair of a streaming softmax.
 */
#ifndef DLARRAY_BACKENDS_CUDA_ROW_REDUCE_CUH_
#define DLARRAY_BACKENDS_CUDA_ROW_REDUCE_CUH_

#include <cfloat>

namespace dlarray {
namespace cuda {

/*!
 * \brief Running max m and sum s of exp(x - m) over the values seen. Starts at m = -FLT_MAX
 *        (not -inf) so that -inf inputs add exp(-inf) = 0 and never form inf - inf.
 */
struct MaxSum {
  float m;
  float s;
};

__device__ __forceinline__ MaxSum MaxSumIdentity() { return {-FLT_MAX, 0.f}; }

/*! \brief Adds one value: one exp, rescaling the sum when the max grows. */
__device__ __forceinline__ void MaxSumAdd(MaxSum& a, float x) {
  if (x > a.m) {
    a.s = a.s * __expf(a.m - x) + 1.f;
    a.m = x;
  } else {
    a.s += __expf(x - a.m);
  }
}

/*! \brief Adds four values: the max first, so at most one rescale. */
__device__ __forceinline__ void MaxSumAdd4(MaxSum& a, float4 x) {
  const float m = fmaxf(fmaxf(x.x, x.y), fmaxf(x.z, x.w));
  if (m > a.m) {
    a.s *= __expf(a.m - m);
    a.m = m;
  }
  a.s += __expf(x.x - a.m) + __expf(x.y - a.m) + __expf(x.z - a.m) + __expf(x.w - a.m);
}

/*! \brief Combines two partial (max, sum) pairs. */
__device__ __forceinline__ MaxSum MaxSumCombine(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.m, b.m);
  return {m, a.s * __expf(a.m - m) + b.s * __expf(b.m - m)};
}

__device__ __forceinline__ float WarpMax(float v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ __forceinline__ float WarpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ MaxSum WarpMaxSum(MaxSum v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    const MaxSum other{__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.s, o)};
    v = MaxSumCombine(v, other);
  }
  return v;
}

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
  __device__ float warp(float v) const { return WarpMax(v); }
};

struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
  __device__ float warp(float v) const { return WarpSum(v); }
};

struct MaxSumOp {
  __device__ MaxSum operator()(MaxSum a, MaxSum b) const { return MaxSumCombine(a, b); }
  __device__ MaxSum warp(MaxSum v) const { return WarpMaxSum(v); }
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
