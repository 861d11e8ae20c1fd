/*!
 * \file matrix_elementwise_add.cc
 * \brief matrix_elementwise_add: c = a + b.
 */
#include "cpu_kernels.h"
#include "elementwise.h"

namespace dlarray::cpu {

void MatrixElementwiseAddKernel(const KernelContext& ctx) {
  ElementwiseKernel<2>(ctx, [](auto a, auto b) { return a + b; });
}

}  // namespace dlarray::cpu
