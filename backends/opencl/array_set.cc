/*!
 * \file array_set.cc
 * \brief array_set: out[:] = value (the value's bits in the dtype computed on the host, as NumPy
 *        converts it; the kernel stores them as unsigned integers of the element size; complex
 *        elements are stored as float2 or double2).
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
  // A complex value is two numbers (the value, then 0), not one pattern of bits: stored typed.
  const bool complex = ctx.outputs[0]->dtype.code == kDLArrayComplex;
  RunElementwise(ctx, kProgram, "array_set", {}, ctx.outputs[0], &ctx.attrs[0],
                 complex ? ElementMode::kTyped : ElementMode::kStorage);
}

}  // namespace dlarray::opencl
