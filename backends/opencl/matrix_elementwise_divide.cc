/*!
 * \file matrix_elementwise_divide.cc
 * \brief matrix_elementwise_divide: c = a / b (floating types; IEEE results for zero divisors;
 *        float16 and bfloat16 divide in float and round once).
 */
#include <string>

#include "elementwise.h"
#include "kernels.h"

namespace dlarray::opencl {
namespace {

const std::string kSource = std::string(kElementwiseMacros) + R"CLC(
DL_MAP2(matrix_elementwise_divide, a / b, a / b)
)CLC";
const ProgramSource kProgram{"matrix_elementwise_divide", kSource.c_str()};

}  // namespace

void MatrixElementwiseDivideKernel(const KernelContext& ctx) {
  RunElementwise(ctx, kProgram, "matrix_elementwise_divide", {ctx.inputs[0], ctx.inputs[1]},
                 ctx.outputs[0], nullptr, ElementMode::kTyped,
                 CorrectDivision(DeviceOf(ctx).info(ctx.device_id)));
}

}  // namespace dlarray::opencl
