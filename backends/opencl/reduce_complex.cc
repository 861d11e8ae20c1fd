/*!
 * \file reduce_complex.cc
 * \brief reduce (sum, prod) and scan (cumulative sum, product) of complex64/complex128, which
 *        reduce.cc and scan.cc hand complex inputs to: a work-item per output column (o, j) of
 *        the contiguous [outer, n, inner] input walks it in order, accumulating in double2 where
 *        the device has cl_khr_fp64 (float2 otherwise), with NumPy's schoolbook product. Simple
 *        rather than fast, as the real scan.
 */
#include <algorithm>
#include <string>

#include "kernels.h"
#include "launch.h"

namespace dlarray::opencl {
namespace {

constexpr const char* kColumns = R"CLC(
#define WIDE DL_CAT(ACC, 2)
WIDE dlw_mul(WIDE a, WIDE b) { return (WIDE)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
// SCAN 0: y[o, j] = the sum (KIND 0) or product (1) over r; 1: y[o, r (+1), j] the running values.
__kernel void complex_columns(__global const T* x, ulong xo, __global T* y, ulong yo, ulong n,
                              ulong inner, ulong outputs, int initial) {
  const ulong idx = get_global_id(0);
  if (idx >= outputs) return;
  const ulong o = idx / inner, j = idx % inner;
  x += xo + o * n * inner + j;
  y += yo + (SCAN ? o * (n + initial) * inner + j : idx);
  WIDE a = (WIDE)(KIND == 0 ? 0 : 1, 0);
  if (SCAN && initial) {
    y[0] = DL_CAT(convert_, T)(a);
    y += inner;
  }
  for (ulong r = 0; r < n; ++r) {
    const WIDE v = DL_CAT(convert_, WIDE)(x[r * inner]);
    a = r == 0 && !(SCAN && initial) ? v : KIND == 0 ? a + v : dlw_mul(a, v);
    if (SCAN) y[r * inner] = DL_CAT(convert_, T)(a);
  }
  if (!SCAN) y[0] = DL_CAT(convert_, T)(a);
}
)CLC";

const ProgramSource kProgram{"reduce_complex", kColumns};

void Run(const KernelContext& ctx, bool scan, bool initial) {
  const DLArray* in = ctx.inputs[0];
  const DeviceInfo& info = DeviceOf(ctx).info(ctx.device_id);
  const uint64_t outer = in->shape[0], n = in->shape[1], inner = in->ndim == 3 ? in->shape[2] : 1;
  const uint64_t outputs = outer * inner;
  const std::string options = BuildOptions(
      in->dtype, info,
      "-DKIND=" + std::to_string(static_cast<int>(ctx.attrs[0])) + " -DSCAN=" + (scan ? "1" : "0"));
  Launch launch(ctx, kProgram, "complex_columns", options);
  launch.array(in, "input").array(ctx.outputs[0], "output");
  launch.scalar<cl_ulong>(n).scalar<cl_ulong>(inner).scalar<cl_ulong>(outputs);
  launch.scalar<cl_int>(initial ? 1 : 0);
  launch.run(outputs, info.is_cpu ? std::clamp<size_t>(outputs / 256, 1, 64) : 64);
}

}  // namespace

void ReduceComplexKernel(const KernelContext& ctx) { Run(ctx, false, false); }

void ScanComplexKernel(const KernelContext& ctx) { Run(ctx, true, ctx.attrs[1] != 0.0); }

}  // namespace dlarray::opencl
