/*!
 * \file matrix_elementwise_multiply_by_const.cc
 * \brief matrix_elementwise_multiply_by_const: out = in * value.
 */
#include "cpu_kernels.h"
#include "elementwise.h"

namespace dlarray::cpu {

void MatrixElementwiseMultiplyByConstKernel(const KernelContext& ctx) {
  const float value = static_cast<float>(ctx.attrs[0]);
  ElementwiseKernel<1>(ctx, [value](auto x) { return x * value; });
}

}  // namespace dlarray::cpu
