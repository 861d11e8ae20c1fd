/*!
 * \file copy.cc
 * \brief copy: out = in, for any dtype and any strides on either side (how views become compact
 *        and how values are assigned into views). The elements are moved as unsigned integers of
 *        their size. Dimensions both sides store contiguously are merged first (as the CPU
 *        backend does); a compact pair is one elementwise copy kernel (on CPUs it runs on every
 *        core, unlike clEnqueueCopyBuffer), anything else a gather/scatter kernel over rows of
 *        the innermost merged dimension, each work-item finding its row's two offsets.
 */
#include <algorithm>
#include <string>
#include <vector>

#include "elementwise.h"
#include "kernels.h"
#include "launch.h"

namespace dlarray::opencl {
namespace {

constexpr int kMaxOuterDims = 8;

const std::string kSource = std::string(kElementwiseMacros) + R"CLC(
DL_MAP1(copy, x, x)

// Rows r of the nd outer dimensions (extents ext, steps xs / ys in elements, outermost first),
// elements j of the inner dimension (steps xi / yi).
__kernel void strided_copy(__global const T* x, ulong xo, __global T* y, ulong yo, ulong8 ext,
                           long8 xs, long8 ys, int nd, ulong rows, ulong inner, long xi, long yi,
                           ulong chunk) {
  const ulong r = get_global_id(1);
  ulong j = get_global_id(0) * chunk;
  if (r >= rows || j >= inner) return;
  const ulong e[8] = {ext.s0, ext.s1, ext.s2, ext.s3, ext.s4, ext.s5, ext.s6, ext.s7};
  const long a[8] = {xs.s0, xs.s1, xs.s2, xs.s3, xs.s4, xs.s5, xs.s6, xs.s7};
  const long b[8] = {ys.s0, ys.s1, ys.s2, ys.s3, ys.s4, ys.s5, ys.s6, ys.s7};
  long xoff = (long)xo;
  long yoff = (long)yo;
  ulong rest = r;
  for (int d = nd - 1; d >= 0; --d) {
    const long i = (long)(rest % e[d]);
    rest /= e[d];
    xoff += i * a[d];
    yoff += i * b[d];
  }
  const ulong end = min(j + chunk, inner);
  for (; j < end; ++j) y[yoff + (long)j * yi] = x[xoff + (long)j * xi];
}
)CLC";
const ProgramSource kProgram{"copy", kSource.c_str()};

// One merged dimension: extent and the two steps in elements.
struct Dim {
  int64_t extent;
  int64_t in_step;
  int64_t out_step;
};

std::vector<Dim> MergedDims(const DLArray* in, const DLArray* out) {
  std::vector<Dim> all(static_cast<size_t>(out->ndim));
  int64_t in_compact = 1, out_compact = 1;
  for (int d = out->ndim - 1; d >= 0; --d) {
    const int64_t in_s = in->strides != nullptr ? in->strides[d] : in_compact;
    const int64_t out_s = out->strides != nullptr ? out->strides[d] : out_compact;
    all[d] = {out->shape[d], in_s, out_s};
    in_compact *= in->shape[d];
    out_compact *= out->shape[d];
  }
  std::vector<Dim> dims;  // outermost first
  for (const Dim& d : all) {
    if (d.extent == 1) continue;
    if (!dims.empty()) {
      Dim& outer = dims.back();
      if (outer.in_step == d.in_step * d.extent && outer.out_step == d.out_step * d.extent) {
        outer = {outer.extent * d.extent, d.in_step, d.out_step};
        continue;
      }
    }
    dims.push_back(d);
  }
  if (dims.empty()) dims.push_back({1, 1, 1});
  return dims;
}

// An operand of the strided kernel: the buffer of all its elements and the element offset of
// its first one (its lowest element may come before it: negative strides).
struct Operand {
  cl_mem mem;
  uint64_t first;
};

Operand Resolve(OpenclDevice& device, int id, const DLArray* a, const char* what) {
  const int64_t elem = static_cast<int64_t>(ElementBytes(a->dtype));
  int64_t lo = 0, hi = 1;  // elements [lo, hi) relative to the first
  for (int d = 0; d < a->ndim; ++d) {
    const int64_t step = a->strides != nullptr ? a->strides[d] : 0;
    const int64_t reach = (a->shape[d] - 1) * step;
    (reach < 0 ? lo : hi) += reach;
  }
  if (a->strides == nullptr) hi = NumElements(a);
  // The core keeps every element inside the buffer: byte_offset + lo * elem >= 0.
  const BufferRef b = device.resolve(id, a->data, a->byte_offset + static_cast<uint64_t>(lo * elem),
                                     static_cast<size_t>((hi - lo) * elem), what);
  if (b.offset % static_cast<size_t>(elem) != 0) {
    throw DeviceError(std::string(what) + ": byte offset " + std::to_string(b.offset) +
                      " is not a multiple of the element size " + std::to_string(elem));
  }
  return {b.mem, b.offset / static_cast<uint64_t>(elem) + static_cast<uint64_t>(-lo)};
}

void LaunchStrided(const KernelContext& ctx, const std::string& options, Operand x, Operand y,
                   const std::vector<Dim>& dims) {
  OpenclDevice& device = DeviceOf(ctx);
  const DeviceInfo& info = device.info(ctx.device_id);
  const int outer = static_cast<int>(dims.size()) - 1;
  if (outer > kMaxOuterDims) {  // peel the outermost dimension on the host
    const std::vector<Dim> rest(dims.begin() + 1, dims.end());
    for (int64_t i = 0; i < dims[0].extent; ++i) {
      LaunchStrided(ctx, options, {x.mem, x.first + static_cast<uint64_t>(i * dims[0].in_step)},
                    {y.mem, y.first + static_cast<uint64_t>(i * dims[0].out_step)}, rest);
    }
    return;
  }
  cl_ulong8 ext{};
  cl_long8 xs{};
  cl_long8 ys{};
  uint64_t rows = 1;
  for (int d = 0; d < outer; ++d) {
    ext.s[d] = static_cast<cl_ulong>(dims[d].extent);
    xs.s[d] = dims[d].in_step;
    ys.s[d] = dims[d].out_step;
    rows *= static_cast<uint64_t>(dims[d].extent);
  }
  const Dim inner = dims.back();
  const size_t n = static_cast<size_t>(inner.extent);
  const size_t chunk = info.is_cpu ? std::max<size_t>(4096, ItemsFor(n, 4)) : 1;
  Launch launch(ctx, kProgram, "strided_copy", options);
  launch.buffer(x.mem).scalar<cl_ulong>(x.first).buffer(y.mem).scalar<cl_ulong>(y.first);
  launch.scalar(ext).scalar(xs).scalar(ys).scalar<cl_int>(outer);
  launch.scalar<cl_ulong>(rows).scalar<cl_ulong>(n);
  launch.scalar<cl_long>(inner.in_step).scalar<cl_long>(inner.out_step);
  launch.scalar<cl_ulong>(chunk);
  launch.run2(ItemsFor(n, chunk), rows, info.is_cpu ? 1 : 64, info.is_cpu ? 8 : 1);
}

}  // namespace

void CopyKernel(const KernelContext& ctx) {
  const MovedElements moved_in(ctx.inputs[0]);
  const MovedElements moved_out(ctx.outputs[0]);
  const DLArray* in = moved_in.get();
  const DLArray* out = moved_out.get();
  if (NumElements(out) == 0) return;
  const std::vector<Dim> dims = MergedDims(in, out);
  const bool compact = dims.size() == 1 && dims[0].in_step == 1 && dims[0].out_step == 1;
  if (compact && in->data == out->data && in->byte_offset == out->byte_offset) return;
  OpenclDevice& device = DeviceOf(ctx);
  const DeviceInfo& info = device.info(ctx.device_id);
  const std::string options = StorageOptions(ElementBytes(out->dtype), info);
  if (compact) {
    RunMap(ctx, kProgram, "copy", {in}, out, options, nullptr);
    return;
  }
  LaunchStrided(ctx, options, Resolve(device, ctx.device_id, in, "input"),
                Resolve(device, ctx.device_id, out, "output"), dims);
}

}  // namespace dlarray::opencl
