/*!
 * \file relu_gradient.cc
 * \brief relu_gradient: out = grad * (in > 0), as NumPy computes it (so -0.0 and NaN match).
 */
#include <string>

#include "elementwise.h"
#include "kernels.h"

namespace dlarray::opencl {
namespace {

// a = the forward input, b = the incoming gradient.
const std::string kSource = std::string(kElementwiseMacros) + R"CLC(
DL_MAP2(relu_gradient, b * (a > (TV)0 ? (TV)1 : (TV)0), b * (a > (CT)0 ? (CT)1 : (CT)0))
)CLC";
const ProgramSource kProgram{"relu_gradient", kSource.c_str()};

}  // namespace

void ReluGradientKernel(const KernelContext& ctx) {
  RunElementwise(ctx, kProgram, "relu_gradient", {ctx.inputs[0], ctx.inputs[1]}, ctx.outputs[0],
                 nullptr);
}

}  // namespace dlarray::opencl
