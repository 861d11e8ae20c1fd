/*!
 * \file matrix_elementwise_multiply_by_const.cc
 * \brief matrix_elementwise_multiply_by_const: out = in * value.
 */
#include <string>

#include "elementwise.h"
#include "kernels.h"

namespace dlarray::opencl {
namespace {

const std::string kSource = std::string(kElementwiseMacros) + R"CLC(
DL_MAP1S(matrix_elementwise_multiply_by_const, DL_MULV(x, (TV)(s)), DL_MULS(x, s))
)CLC";
const ProgramSource kProgram{"matrix_elementwise_multiply_by_const", kSource.c_str()};

}  // namespace

void MatrixElementwiseMultiplyByConstKernel(const KernelContext& ctx) {
  RunElementwise(ctx, kProgram, "matrix_elementwise_multiply_by_const", {ctx.inputs[0]},
                 ctx.outputs[0], &ctx.attrs[0]);
}

}  // namespace dlarray::opencl
