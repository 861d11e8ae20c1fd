/*!
 * \file copy.cc
 * \brief copy: out = in (a kernel: on CPUs it runs on every core, unlike clEnqueueCopyBuffer).
 */
#include <string>

#include "elementwise.h"
#include "kernels.h"

namespace dlarray::opencl {
namespace {

const std::string kSource = std::string(kElementwiseMacros) + R"CLC(
DL_MAP1(copy, x, x)
)CLC";
const ProgramSource kProgram{"copy", kSource.c_str()};

}  // namespace

void CopyKernel(const KernelContext& ctx) {
  RunElementwise(ctx, kProgram, "copy", {ctx.inputs[0]}, ctx.outputs[0], nullptr);
}

}  // namespace dlarray::opencl
