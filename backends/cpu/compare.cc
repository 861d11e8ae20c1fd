/*!
 * \file compare.cc
 * \brief compare: out (bool) = a <cmp> b, for every dtype.
 */
#include "compare_util.h"
#include "cpu_kernels.h"
#include "dtype.h"
#include "elementwise.h"

namespace dlarray::cpu {

void CompareKernel(const KernelContext& ctx) {
  DLArray* out = ctx.outputs[0];
  Dispatch<kAllTypes>(ctx.inputs[0]->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    WithComparison(ctx.attrs[0], [&](auto cmp) {
      MapTyped(NumElements(out), Data<bool>(out), cmp, Data<const T>(ctx.inputs[0]),
               Data<const T>(ctx.inputs[1]));
    });
  });
}

}  // namespace dlarray::cpu
