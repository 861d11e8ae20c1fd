/*!
 * \file relu_gradient.cc
 * \brief relu_gradient: out = grad * (in > 0), multiplied so that NaN and inf behave as in NumPy.
 */
#include <type_traits>

#include "cpu_kernels.h"
#include "elementwise.h"

namespace dlarray::cpu {

void ReluGradientKernel(const KernelContext& ctx) {
  DispatchElementwise<2, kFloatTypes>(ctx, [](auto x, auto grad) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) {
      return grad * (x > T{} ? T{1} : T{});
    } else {
      return grad * (x > T{} ? Splat<T>(1.0f) : T{});
    }
  });
}

}  // namespace dlarray::cpu
