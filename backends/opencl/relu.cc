/*!
 * \file relu.cc
 * \brief relu: out = max(in, 0) (NaN stays NaN, as in NumPy).
 */
#include <string>

#include "elementwise.h"
#include "kernels.h"

namespace dlarray::opencl {
namespace {

const std::string kSource = std::string(kElementwiseMacros) + R"CLC(
DL_MAP1(relu, (x < (TV)0 ? (TV)0 : x), (x < (CT)0 ? (CT)0 : x))
)CLC";
const ProgramSource kProgram{"relu", kSource.c_str()};

}  // namespace

void ReluKernel(const KernelContext& ctx) {
  RunElementwise(ctx, kProgram, "relu", {ctx.inputs[0]}, ctx.outputs[0], nullptr);
}

}  // namespace dlarray::opencl
