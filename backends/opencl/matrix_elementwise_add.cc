/*!
 * \file matrix_elementwise_add.cc
 * \brief matrix_elementwise_add: c = a + b.
 */
#include <string>

#include "elementwise.h"
#include "kernels.h"

namespace dlarray::opencl {
namespace {

const std::string kSource = std::string(kElementwiseMacros) + R"CLC(
DL_MAP2(matrix_elementwise_add, DL_ADDV(a, b), DL_ADDS(a, b))
)CLC";
const ProgramSource kProgram{"matrix_elementwise_add", kSource.c_str()};

}  // namespace

void MatrixElementwiseAddKernel(const KernelContext& ctx) {
  RunElementwise(ctx, kProgram, "matrix_elementwise_add", {ctx.inputs[0], ctx.inputs[1]},
                 ctx.outputs[0], nullptr);
}

}  // namespace dlarray::opencl
