/*!
 * \file softmax.cc
 * \brief softmax: row-wise over the last axis, out = exp(x - max) / sum(exp(x - max)).
 *
 * Three passes over a row (max; exp, written out, and summed; scaled by 1 / sum), so the row is
 * read from memory once and the other passes hit the cache. Rows run one per work-item (many rows,
 * or narrow ones), or one per work-group with the max and the sum reduced in local memory.
 */
#include <string>

#include "kernels.h"
#include "launch.h"
#include "row_reduce.h"
#include "widen.h"

namespace dlarray::opencl {
namespace {

const std::string kSource = std::string(kRowReduceHelpers) + R"CLC(
// Rows [r0, r0 + rpb) of x, one work-item.
__kernel void softmax_rows(__global const T* x, ulong xo, __global T* y, ulong yo, ulong rows,
                           ulong C, ulong rpb) {
  const ulong r0 = get_global_id(0) * rpb;
  const ulong r1 = min(r0 + rpb, rows);
  const ulong nv = C / VW;
  for (ulong r = r0; r < r1; ++r) {
    __global const T* xr = x + xo + r * C;
    __global T* yr = y + yo + r * C;
    TV mv = (TV)(-INFINITY);
    for (ulong v = 0; v < nv; ++v) mv = DL_MAX(LOADV(v, xr), mv);
    T m = HMAX(mv);
    for (ulong c = nv * VW; c < C; ++c) m = DL_MAX(xr[c], m);
    TV sv = (TV)0;
    for (ulong v = 0; v < nv; ++v) {
      const TV e = exp(LOADV(v, xr) - m);
      STOREV(e, v, yr);
      sv += e;
    }
    T s = HSUM(sv);
    for (ulong c = nv * VW; c < C; ++c) {
      const T e = exp(xr[c] - m);
      yr[c] = e;
      s += e;
    }
    const T inv = (T)1 / s;
    for (ulong v = 0; v < nv; ++v) STOREV(LOADV(v, yr) * inv, v, yr);
    for (ulong c = nv * VW; c < C; ++c) yr[c] *= inv;
  }
}

#ifdef WG
// Row get_group_id(0), one work-group of WG work-items.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void softmax_group(__global const T* x, ulong xo, __global T* y, ulong yo, ulong C) {
  __local T tmax[WG];
  __local ACC tsum[WG];
  const ulong r = get_group_id(0);
  const int lid = get_local_id(0);
  __global const T* xr = x + xo + r * C;
  __global T* yr = y + yo + r * C;
  const ulong nv = C / VW;
  ROW_RANGE(nv, lid, v0, v1, vstep)
  TV mv = (TV)(-INFINITY);
  for (ulong v = v0; v < v1; v += vstep) mv = DL_MAX(LOADV(v, xr), mv);
  T m = HMAX(mv);
  for (ulong c = nv * VW + lid; c < C; c += WG) m = DL_MAX(xr[c], m);
  m = group_max(m, tmax);
  TV sv = (TV)0;
  for (ulong v = v0; v < v1; v += vstep) {
    const TV e = exp(LOADV(v, xr) - m);
    STOREV(e, v, yr);
    sv += e;
  }
  T s = HSUM(sv);
  for (ulong c = nv * VW + lid; c < C; c += WG) {
    const T e = exp(xr[c] - m);
    yr[c] = e;
    s += e;
  }
  const T inv = (T)1 / (T)group_sum((ACC)s, tsum);
  for (ulong v = v0; v < v1; v += vstep) STOREV(LOADV(v, yr) * inv, v, yr);
  for (ulong c = nv * VW + lid; c < C; c += WG) yr[c] *= inv;
}
#endif
)CLC";
const ProgramSource kProgram{"softmax", kSource.c_str()};

}  // namespace

void SoftmaxKernel(const KernelContext& ctx) {
  if (IsHalfType(ctx)) {
    RunInFloat32(ctx, &SoftmaxKernel);
    return;
  }
  const DLArray* in = ctx.inputs[0];
  const DLArray* out = ctx.outputs[0];
  OpenclDevice& device = DeviceOf(ctx);
  const DeviceInfo& info = device.info(ctx.device_id);
  const uint64_t C = static_cast<uint64_t>(in->shape[in->ndim - 1]);
  const uint64_t rows = static_cast<uint64_t>(NumElements(in)) / C;
  const RowPlan plan = PlanRows(info, rows, C);
  if (plan.group == 0) {
    Launch launch(ctx, kProgram, "softmax_rows", BuildOptions(out->dtype, info));
    launch.array(in, "input").array(out, "output");
    launch.scalar<cl_ulong>(rows).scalar<cl_ulong>(C).scalar<cl_ulong>(plan.rows_per_item);
    launch.run(ItemsFor(rows, plan.rows_per_item), plan.local);
    return;
  }
  Launch launch(ctx, kProgram, "softmax_group",
                BuildOptions(out->dtype, info, "-DWG=" + std::to_string(plan.group)));
  launch.array(in, "input").array(out, "output").scalar<cl_ulong>(C);
  launch.run(rows * plan.group, plan.group);
}

}  // namespace dlarray::opencl
