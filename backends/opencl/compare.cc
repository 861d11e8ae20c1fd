/*!
 * \file compare.cc
 * \brief compare: out (bool) = a <cmp> b for every dtype, in the inputs' compute type (float for
 *        float16 and bfloat16); NaN compares unequal to everything, as in NumPy. One program per
 *        (dtype, comparison).
 */
#include <string>

#include "compare_util.h"
#include "elementwise.h"
#include "kernels.h"

namespace dlarray::opencl {
namespace {

const std::string kSource = std::string(kCompareMacros) + R"CLC(
__kernel void compare(__global const T* ap, ulong ao, __global const T* bp, ulong bo,
                      __global uchar* yp, ulong yo, uint nt, ulong n, ulong chunk) {
  ap += ao;
  bp += bo;
  yp += yo;
  ulong i = get_global_id(0) * chunk;
  if (i >= n) return;
  const ulong end = min(i + chunk, n);
  for (; i < end; ++i) yp[i] = DL_CMP(LD(ap, i), LD(bp, i)) ? 1 : 0;
}
)CLC";
const ProgramSource kProgram{"compare", kSource.c_str()};

}  // namespace

void CompareKernel(const KernelContext& ctx) {
  const DLArray* a = ctx.inputs[0];
  RequireReal(ctx, a->dtype);
  const DeviceInfo& info = DeviceOf(ctx).info(ctx.device_id);
  const std::string options = BuildOptions(a->dtype, info, CompareOption(ctx.attrs[0]));
  RunMap(ctx, kProgram, "compare", {a, ctx.inputs[1]}, ctx.outputs[0], options, nullptr);
}

}  // namespace dlarray::opencl
