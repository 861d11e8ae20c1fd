/*!
 * \file typed_reduce.cuh
 * \brief Block-wide max and sum of float or double values, for the row kernels of the dtypes
 *        beyond float32 (see row_reduce.cuh's BlockReduce).
 */
#ifndef DLARRAY_BACKENDS_CUDA_TYPED_REDUCE_CUH_
#define DLARRAY_BACKENDS_CUDA_TYPED_REDUCE_CUH_

#include "row_reduce.cuh"

namespace dlarray {
namespace cuda {

template <typename C>
struct TypedMaxOp {
  __device__ C operator()(C a, C b) const { return b > a ? b : a; }
  __device__ C warp(C v) const {
#pragma unroll
    for (int o = 16; o > 0; o /= 2) v = (*this)(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
  }
};

template <typename C>
struct TypedSumOp {
  __device__ C operator()(C a, C b) const { return a + b; }
  __device__ C warp(C v) const {
#pragma unroll
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
  }
};

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_TYPED_REDUCE_CUH_
