/*!
 * \file matrix_elementwise_divide_by_const.cc
 * \brief matrix_elementwise_divide_by_const: out = in / value, value rounded to the array's dtype
 *        first (NumPy's x / scalar); a true division, not a multiplication by 1 / value.
 */
#include <string>

#include "elementwise.h"
#include "kernels.h"

namespace dlarray::opencl {
namespace {

const std::string kSource = std::string(kElementwiseMacros) + R"CLC(
DL_MAP1S(matrix_elementwise_divide_by_const, x / (TV)(s), x / s)
)CLC";
const ProgramSource kProgram{"matrix_elementwise_divide_by_const", kSource.c_str()};

}  // namespace

void MatrixElementwiseDivideByConstKernel(const KernelContext& ctx) {
  RunElementwise(ctx, kProgram, "matrix_elementwise_divide_by_const", {ctx.inputs[0]},
                 ctx.outputs[0], &ctx.attrs[0], ElementMode::kTyped,
                 CorrectDivision(DeviceOf(ctx).info(ctx.device_id)));
}

}  // namespace dlarray::opencl
