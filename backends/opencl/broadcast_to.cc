/*!
 * \file broadcast_to.cc
 * \brief broadcast_to: out = in broadcast to out's shape (NumPy rules), for every dtype (elements
 *        moved as unsigned integers of their size).
 *
 * The shapes are first collapsed: dimensions of extent 1 in the output are dropped and
 * neighbours that are both broadcast or both kept are merged, so (200, 300) -> (130, 200, 300)
 * is one broadcast dimension of 130 over a kept one of 60000. The output is then rows of the last
 * collapsed dimension: each work-item finds its row's input offset and copies (kept) or fills
 * (broadcast) a chunk of the row with vector stores.
 */
#include <algorithm>
#include <string>
#include <vector>

#include "cl_check.h"
#include "dlarray/errors.h"
#include "kernels.h"
#include "launch.h"

namespace dlarray::opencl {
namespace {

constexpr int kMaxDims = 8;

const ProgramSource kProgram{"broadcast_to", R"CLC(
// ext/xstride: the collapsed dimensions before the last (nd of them), outermost first; a
// broadcast dimension has input stride 0. inner: the last dimension's extent; inner_step: 1 when
// it is kept, 0 when it is broadcast.
__kernel void broadcast_to(__global const T* x, ulong xo, __global T* y, ulong yo, ulong8 ext,
                           ulong8 xstride, int nd, ulong rows, ulong inner, ulong inner_step,
                           ulong chunk, uint nt) {
  const ulong r = get_global_id(1);
  ulong j = get_global_id(0) * chunk;
  if (r >= rows || j >= inner) return;
  const ulong e[8] = {ext.s0, ext.s1, ext.s2, ext.s3, ext.s4, ext.s5, ext.s6, ext.s7};
  const ulong s[8] = {xstride.s0, xstride.s1, xstride.s2, xstride.s3,
                      xstride.s4, xstride.s5, xstride.s6, xstride.s7};
  ulong off = 0;
  ulong rest = r;
  for (int d = nd - 1; d >= 0; --d) {
    off += (rest % e[d]) * s[d];
    rest /= e[d];
  }
  x += xo + off;
  y += yo + r * inner;
  const ulong end = min(j + chunk, inner);
  const bool stream = DL_NT_OK(y + j);
  if (inner_step == 0) {
    const T v = x[0];
    if (stream) {
      for (; j + VW <= end; j += VW) DL_STORE_NT((TV)(v), y + j);
    } else {
      for (; j + VW <= end; j += VW) STOREV((TV)(v), 0, y + j);
    }
    for (; j < end; ++j) y[j] = v;
  } else {
    if (stream) {
      for (; j + VW <= end; j += VW) DL_STORE_NT(LOADV(0, x + j), y + j);
    } else {
      for (; j + VW <= end; j += VW) STOREV(LOADV(0, x + j), 0, y + j);
    }
    for (; j < end; ++j) y[j] = x[j];
  }
}
)CLC"};

struct Dim {
  uint64_t extent;
  bool broadcast;
};

}  // namespace

void BroadcastToKernel(const KernelContext& ctx) {
  const MovedElements moved_in(ctx.inputs[0]);
  const MovedElements moved_out(ctx.outputs[0]);
  const DLArray* in = moved_in.get();
  const DLArray* out = moved_out.get();
  std::vector<Dim> dims;
  const int pad = out->ndim - in->ndim;
  for (int d = 0; d < out->ndim; ++d) {
    const int64_t o = out->shape[d];
    if (o == 1) continue;
    const int64_t i = d < pad ? 1 : in->shape[d - pad];
    const bool b = i == 1;
    if (!dims.empty() && dims.back().broadcast == b) {
      dims.back().extent *= static_cast<uint64_t>(o);
    } else {
      dims.push_back(Dim{static_cast<uint64_t>(o), b});
    }
  }
  if (dims.empty()) dims.push_back(Dim{1, false});  // one element
  if (dims.size() > kMaxDims + 1) {
    throw ShapeError("broadcast_to on OpenCL: " + ShapeToString(in) + " -> " + ShapeToString(out) +
                     " alternates broadcast and kept dimensions " + std::to_string(dims.size()) +
                     " times; at most " + std::to_string(kMaxDims + 1) + " are supported");
  }
  const Dim last = dims.back();
  dims.pop_back();
  cl_ulong8 ext{};
  cl_ulong8 stride{};
  uint64_t rows = 1;
  uint64_t in_stride = last.broadcast ? 1 : last.extent;  // input elements per step of a dim
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    ext.s[d] = dims[d].extent;
    stride.s[d] = dims[d].broadcast ? 0 : in_stride;
    if (!dims[d].broadcast) in_stride *= dims[d].extent;
    rows *= dims[d].extent;
  }
  OpenclDevice& device = DeviceOf(ctx);
  const DeviceInfo& info = device.info(ctx.device_id);
  const size_t vw = static_cast<size_t>(VectorWidth(info));
  size_t chunk = vw;
  size_t local0 = 64;
  size_t local1 = 1;
  if (info.is_cpu) {
    chunk = std::max<size_t>(ItemsFor(4096, vw) * vw, ItemsFor(last.extent / 4, vw) * vw);
    local0 = 1;
    local1 = 8;
  }
  Launch launch(ctx, kProgram, "broadcast_to", StorageOptions(ElementBytes(out->dtype), info));
  launch.array(in, "input").array(out, "output");
  launch.scalar(ext).scalar(stride).scalar<cl_int>(static_cast<cl_int>(dims.size()));
  launch.scalar<cl_ulong>(rows).scalar<cl_ulong>(last.extent);
  launch.scalar<cl_ulong>(last.broadcast ? 0 : 1).scalar<cl_ulong>(chunk);
  const size_t nbytes = static_cast<size_t>(NumElements(out)) * ElementBytes(out->dtype);
  launch.scalar<cl_uint>(NonTemporal(info, nbytes) ? 1 : 0);
  launch.run2(ItemsFor(last.extent, chunk), rows, local0, local1);
}

}  // namespace dlarray::opencl
