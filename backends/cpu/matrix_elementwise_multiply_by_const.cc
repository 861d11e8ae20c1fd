/*!
 * \file matrix_elementwise_multiply_by_const.cc
 * \brief matrix_elementwise_multiply_by_const: out = in * value (in the array's dtype: value is
 *        rounded to it first, or truncated for integers, as NumPy does with a Python scalar).
 */
#include "cpu_kernels.h"
#include "elementwise.h"

namespace dlarray::cpu {

void MatrixElementwiseMultiplyByConstKernel(const KernelContext& ctx) {
  const double value = ctx.attrs[0];
  const DLArrayDType t = ctx.outputs[0]->dtype;
  if (IsFloat32(t)) {
    const float v = static_cast<float>(value);
    ElementwiseKernel<1>(ctx, [v](auto x) { return x * v; });
    return;
  }
  Dispatch<kFloatTypes | kIntTypes>(t, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    const C v = ScalarFor<T>(value);
    MapTyped(
        NumElements(ctx.outputs[0]), Data<T>(ctx.outputs[0]), [v](C x) { return MulOf(x, v); },
        Data<const T>(ctx.inputs[0]));
  });
}

}  // namespace dlarray::cpu
