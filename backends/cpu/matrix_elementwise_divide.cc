/*!
 * \file matrix_elementwise_divide.cc
 * \brief matrix_elementwise_divide: c = a / b (floating point; IEEE results for zero divisors).
 */
#include "cpu_kernels.h"
#include "elementwise.h"

namespace dlarray::cpu {

void MatrixElementwiseDivideKernel(const KernelContext& ctx) {
  DispatchElementwise<2, kFloatTypes>(ctx, [](auto a, auto b) { return a / b; });
}

}  // namespace dlarray::cpu
