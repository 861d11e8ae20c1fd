/*!
 * \file compare_by_const.cc
 * \brief compare_by_const: out (bool) = in <cmp> value. The value is compared exactly (in double,
 *        or in int64 against integers), not rounded to the array's dtype first.
 */
#include <cmath>
#include <type_traits>

#include "compare_util.h"
#include "cpu_kernels.h"
#include "dtype.h"
#include "elementwise.h"

namespace dlarray::cpu {

void CompareByConstKernel(const KernelContext& ctx) {
  DLArray* out = ctx.outputs[0];
  const double value = ctx.attrs[0];
  Dispatch<kAllTypes>(ctx.inputs[0]->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    WithComparison(ctx.attrs[1], [&](auto cmp) {
      MapTyped(
          NumElements(out), Data<bool>(out),
          [cmp, value](auto x) { return cmp(static_cast<double>(x), value); },
          Data<const T>(ctx.inputs[0]));
    });
  });
}

}  // namespace dlarray::cpu
