/*!
 * \file matrix_elementwise_add.cc
 * \brief matrix_elementwise_add: c = a + b (integers wrap around, as in NumPy).
 */
#include <type_traits>

#include "cpu_kernels.h"
#include "elementwise.h"

namespace dlarray::cpu {

void MatrixElementwiseAddKernel(const KernelContext& ctx) {
  DispatchElementwise<2, kFloatTypes | kIntTypes>(ctx, [](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>) {
      return AddOf(a, b);
    } else {
      return a + b;
    }
  });
}

}  // namespace dlarray::cpu
