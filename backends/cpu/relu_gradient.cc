/*!
 * \file relu_gradient.cc
 * \brief relu_gradient: out = grad * (in > 0), multiplied so that NaN and inf behave as in NumPy.
 */
#include "cpu_kernels.h"
#include "elementwise.h"

namespace dlarray::cpu {

void ReluGradientKernel(const KernelContext& ctx) {
  ElementwiseKernel<2>(ctx, [](auto x, auto grad) {
    using T = decltype(x);
    return grad * (x > T{} ? Splat<T>(1.0f) : T{});
  });
}

}  // namespace dlarray::cpu
