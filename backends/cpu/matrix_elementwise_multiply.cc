/*!
 * \file matrix_elementwise_multiply.cc
 * \brief matrix_elementwise_multiply: c = a * b.
 */
#include "cpu_kernels.h"
#include "elementwise.h"

namespace dlarray::cpu {

void MatrixElementwiseMultiplyKernel(const KernelContext& ctx) {
  ElementwiseKernel<2>(ctx, [](auto a, auto b) { return a * b; });
}

}  // namespace dlarray::cpu
