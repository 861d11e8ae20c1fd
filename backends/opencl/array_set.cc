/*!
 * \file array_set.cc
 * \brief array_set: out[:] = value (the value's bits in the dtype computed on the host, as NumPy
 *        converts it; the kernel stores them as unsigned integers of the element size).
 */
#include <string>

#include "elementwise.h"
#include "kernels.h"

namespace dlarray::opencl {
namespace {

const std::string kSource = std::string(kElementwiseMacros) + R"CLC(
DL_MAP0(array_set, (TV)(s), s)
)CLC";
const ProgramSource kProgram{"array_set", kSource.c_str()};

}  // namespace

void ArraySetKernel(const KernelContext& ctx) {
  RunElementwise(ctx, kProgram, "array_set", {}, ctx.outputs[0], &ctx.attrs[0],
                 ElementMode::kStorage);
}

}  // namespace dlarray::opencl
