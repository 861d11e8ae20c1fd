/*!
 * \file relu.cc
 * \brief relu: out = max(in, 0); NaN stays NaN, like numpy.maximum.
 */
#include "cpu_kernels.h"
#include "elementwise.h"

namespace dlarray::cpu {

void ReluKernel(const KernelContext& ctx) {
  DispatchElementwise<1, kFloatTypes>(ctx, [](auto x) {
    using T = decltype(x);
    return x < T{} ? T{} : x;
  });
}

}  // namespace dlarray::cpu
