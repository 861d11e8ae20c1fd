/*!
 * \file matrix_elementwise_multiply.cc
 * \brief matrix_elementwise_multiply: c = a * b.
 */
#include <string>

#include "elementwise.h"
#include "kernels.h"

namespace dlarray::opencl {
namespace {

const std::string kSource = std::string(kElementwiseMacros) + R"CLC(
DL_MAP2(matrix_elementwise_multiply, DL_MULV(a, b), DL_MULS(a, b))
)CLC";
const ProgramSource kProgram{"matrix_elementwise_multiply", kSource.c_str()};

}  // namespace

void MatrixElementwiseMultiplyKernel(const KernelContext& ctx) {
  RunElementwise(ctx, kProgram, "matrix_elementwise_multiply", {ctx.inputs[0], ctx.inputs[1]},
                 ctx.outputs[0], nullptr);
}

}  // namespace dlarray::opencl
