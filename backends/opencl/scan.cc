/*!
 * \file scan.cc
 * \brief scan: out[o, r, j] = x[o, 0, j] (+ or *) ... (+ or *) x[o, r, j], the input a contiguous
 *        [outer, n, inner] array; with include_initial the output has n + 1 rows, the first the
 *        identity. Running values are kept as the reductions keep them (64-bit wrapping integers,
 *        double where the device has it) and rounded to the dtype on each store.
 *
 * A work-item per (o, j) walks its column in order; a long scan of few columns runs on few
 * work-items (a blocked scan is the next step where that matters).
 */
#include <algorithm>
#include <string>

#include "kernels.h"
#include "launch.h"

namespace dlarray::opencl {
namespace {

const ProgramSource kProgram{"scan", R"CLC(
#if defined(T_INT) || T_KIND == 3
#define A ulong
#define TO_A(v) ((ulong)(long)(v))
#define TO_T(a) ((T)(UT)(a))
#else
#define A ACC
#define TO_A(v) ((ACC)(v))
#define TO_T(a) ((CT)(a))
#endif
#if KIND == 0
#define STEP(a, v) a += TO_A(v)
#else
#define STEP(a, v) a *= TO_A(v)
#endif

__kernel void scan_columns(__global const T* x, ulong xo, __global T* y, ulong yo, ulong n,
                           ulong inner, ulong outputs, int initial) {
  const ulong idx = get_global_id(0);
  if (idx >= outputs) return;
  const ulong o = idx / inner, j = idx % inner;
  x += xo + o * n * inner + j;
  y += yo + o * (n + initial) * inner + j;
  A a = (A)(KIND == 0 ? 0 : 1);
  if (initial) {
    ST(y, 0, TO_T(a));
    y += inner;
  }
  for (ulong r = 0; r < n; ++r) {
    STEP(a, LD(x, r * inner));
    ST(y, r * inner, TO_T(a));
  }
}
)CLC"};

}  // namespace

void ScanKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  const DLArray* out = ctx.outputs[0];
  if (in->dtype.code == kDLArrayComplex) return ScanComplexKernel(ctx);  // reduce_complex.cc
  const DeviceInfo& info = DeviceOf(ctx).info(ctx.device_id);
  const uint64_t outer = in->shape[0], n = in->shape[1], inner = in->ndim == 3 ? in->shape[2] : 1;
  const uint64_t outputs = outer * inner;
  const std::string options =
      BuildOptions(in->dtype, info, "-DKIND=" + std::to_string(static_cast<int>(ctx.attrs[0])));
  Launch launch(ctx, kProgram, "scan_columns", options);
  launch.array(in, "input").array(out, "output").scalar<cl_ulong>(n).scalar<cl_ulong>(inner);
  launch.scalar<cl_ulong>(outputs).scalar<cl_int>(ctx.attrs[1] != 0.0 ? 1 : 0);
  launch.run(outputs, info.is_cpu ? std::clamp<size_t>(outputs / 256, 1, 64) : 64);
}

}  // namespace dlarray::opencl
