/*!
 * \file softmax_cross_entropy.cc
 * \brief softmax_cross_entropy: out[0] = mean over rows of -sum(y_ * log softmax(y)).
 *
 * A row's loss is lse * sum(y_) - sum(y_ * y) with lse = max + log(sum(exp(y - max))): two passes
 * over y (the second also reads y_). The sums and the losses are accumulated in ACC (double where
 * the device has it), the losses per work-item (a block of rows) or per work-group (one row) are
 * written to scratch, and a last kernel adds them in order: the same result on every run.
 */
#include <string>

#include "kernels.h"
#include "launch.h"
#include "row_reduce.h"
#include "widen.h"

namespace dlarray::opencl {
namespace {

const std::string kSource = std::string(kRowReduceHelpers) + R"CLC(
// Rows [r0, r0 + rpb): their summed loss goes to part[get_global_id(0)].
__kernel void sce_rows(__global const T* y, ulong yo, __global const T* l, ulong lo,
                       __global ACC* part, ulong rows, ulong C, ulong rpb) {
  const ulong item = get_global_id(0);
  const ulong r0 = item * rpb;
  if (r0 >= rows) return;
  const ulong r1 = min(r0 + rpb, rows);
  const ulong nv = C / VW;
  ACC total = 0;
  for (ulong r = r0; r < r1; ++r) {
    __global const T* yr = y + yo + r * C;
    __global const T* lr = l + lo + r * C;
    TV mv = (TV)(-INFINITY);
    for (ulong v = 0; v < nv; ++v) mv = DL_MAX(LOADV(v, yr), mv);
    T m = HMAX(mv);
    for (ulong c = nv * VW; c < C; ++c) m = DL_MAX(yr[c], m);
    ACCV ev = (ACCV)0, lv = (ACCV)0, lyv = (ACCV)0;
    for (ulong v = 0; v < nv; ++v) {
      const TV yy = LOADV(v, yr);
      const ACCV ll = CONVERT_ACCV(LOADV(v, lr));
      ev += CONVERT_ACCV(exp(yy - m));
      lv += ll;
      lyv += ll * CONVERT_ACCV(yy);
    }
    ACC e = HSUM(ev), ls = HSUM(lv), ly = HSUM(lyv);
    for (ulong c = nv * VW; c < C; ++c) {
      e += CONVERT_ACC(exp(yr[c] - m));
      ls += CONVERT_ACC(lr[c]);
      ly += CONVERT_ACC(lr[c]) * CONVERT_ACC(yr[c]);
    }
    total += ((ACC)m + log(e)) * ls - ly;
  }
  part[item] = total;
}

#ifdef WG
// Row get_group_id(0): its loss goes to part[row].
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sce_group(__global const T* y, ulong yo, __global const T* l, ulong lo, __global ACC* part,
               ulong C) {
  __local T tmax[WG];
  __local ACC tsum[WG];
  const ulong r = get_group_id(0);
  const int lid = get_local_id(0);
  __global const T* yr = y + yo + r * C;
  __global const T* lr = l + lo + r * C;
  const ulong nv = C / VW;
  ROW_RANGE(nv, lid, v0, v1, vstep)
  TV mv = (TV)(-INFINITY);
  for (ulong v = v0; v < v1; v += vstep) mv = DL_MAX(LOADV(v, yr), mv);
  T m = HMAX(mv);
  for (ulong c = nv * VW + lid; c < C; c += WG) m = DL_MAX(yr[c], m);
  m = group_max(m, tmax);
  ACCV ev = (ACCV)0, lv = (ACCV)0, lyv = (ACCV)0;
  for (ulong v = v0; v < v1; v += vstep) {
    const TV yy = LOADV(v, yr);
    const ACCV ll = CONVERT_ACCV(LOADV(v, lr));
    ev += CONVERT_ACCV(exp(yy - m));
    lv += ll;
    lyv += ll * CONVERT_ACCV(yy);
  }
  ACC e = HSUM(ev), ls = HSUM(lv), ly = HSUM(lyv);
  for (ulong c = nv * VW + lid; c < C; c += WG) {
    e += CONVERT_ACC(exp(yr[c] - m));
    ls += CONVERT_ACC(lr[c]);
    ly += CONVERT_ACC(lr[c]) * CONVERT_ACC(yr[c]);
  }
  e = group_sum(e, tsum);
  ls = group_sum(ls, tsum);
  ly = group_sum(ly, tsum);
  if (lid == 0) part[r] = ((ACC)m + log(e)) * ls - ly;
}
#endif

// out[0] = (sum of part[0..n), in order) / rows.
__kernel void sce_finish(__global const ACC* part, ulong n, ulong rows, __global T* out,
                         ulong oo) {
  if (get_global_id(0) != 0) return;
  ACC s = 0;
  for (ulong i = 0; i < n; ++i) s += part[i];
  out[oo] = CONVERT_T(s / (ACC)rows);
}
)CLC";
const ProgramSource kProgram{"softmax_cross_entropy", kSource.c_str()};

}  // namespace

void SoftmaxCrossEntropyKernel(const KernelContext& ctx) {
  if (IsHalfType(ctx)) {
    RunInFloat32(ctx, &SoftmaxCrossEntropyKernel);
    return;
  }
  const DLArray* y = ctx.inputs[0];
  const DLArray* labels = ctx.inputs[1];
  const DLArray* out = ctx.outputs[0];
  OpenclDevice& device = DeviceOf(ctx);
  const DeviceInfo& info = device.info(ctx.device_id);
  const uint64_t C = static_cast<uint64_t>(y->shape[y->ndim - 1]);
  const uint64_t rows = static_cast<uint64_t>(NumElements(y)) / C;
  const RowPlan plan = PlanRows(info, rows, C);
  const size_t acc_bytes = info.fp64 ? 8 : 4;
  const uint64_t parts = plan.group == 0 ? ItemsFor(rows, plan.rows_per_item) : rows;
  Scratch part(&device, ctx.device_id, parts * acc_bytes);
  const std::string extra = plan.group == 0 ? "" : "-DWG=" + std::to_string(plan.group);
  const std::string options = BuildOptions(out->dtype, info, extra);
  if (plan.group == 0) {
    Launch launch(ctx, kProgram, "sce_rows", options);
    launch.array(y, "y").array(labels, "y_").buffer(part.get());
    launch.scalar<cl_ulong>(rows).scalar<cl_ulong>(C).scalar<cl_ulong>(plan.rows_per_item);
    launch.run(parts, plan.local);
  } else {
    Launch launch(ctx, kProgram, "sce_group", options);
    launch.array(y, "y").array(labels, "y_").buffer(part.get()).scalar<cl_ulong>(C);
    launch.run(rows * plan.group, plan.group);
  }
  Launch launch(ctx, kProgram, "sce_finish", options);
  launch.buffer(part.get()).scalar<cl_ulong>(parts).scalar<cl_ulong>(rows);
  launch.array(out, "output");
  launch.run(1, 1);
}

}  // namespace dlarray::opencl
