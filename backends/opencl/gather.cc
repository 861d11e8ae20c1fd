/*!
 * \file gather.cc
 * \brief The indexing primitives gather, scatter and nonzero (canonical shapes: the core's
 *        index_ops.cc). gather and scatter take one work-item per moved element, elements moved
 *        as unsigned integers of their size (complex128 as two 8-byte halves). An index outside
 *        [-n, n) is neither read nor written through: the work-item records it in a scratch word
 *        that the host reads back after the kernel, and the call fails naming it. nonzero counts
 *        per chunk, scans the chunk counts in one work-item and writes each chunk's positions.
 */
#include <string>

#include "cl_check.h"
#include "dlarray/errors.h"
#include "kernels.h"
#include "launch.h"

namespace dlarray::opencl {
namespace {

const ProgramSource kProgram{"gather", R"CLC(
// Element t of the picked array (outer, m, inner) and its row k of the indexed one (outer, n,
// inner); false (and the index recorded in bad) when the index is out of bounds.
bool dl_locate(__global const long* idx, ulong io, ulong t, ulong n, ulong m, ulong inner,
               __global long* bad, ulong* indexed) {
  const ulong i = t % inner;
  const ulong r = t / inner;
  const long raw = idx[io + r % m];
  const long k = raw < 0 ? raw + (long)n : raw;
  if (k < 0 || k >= (long)n) {
    bad[0] = raw;
    bad[1] = 1;
    return false;
  }
  *indexed = ((r / m) * n + (ulong)k) * inner + i;
  return true;
}

__kernel void gather(__global const T* x, ulong xo, __global const long* idx, ulong io,
                     __global T* y, ulong yo, ulong total, ulong n, ulong m, ulong inner,
                     __global long* bad) {
  const ulong t = get_global_id(0);
  ulong k;
  if (t < total && dl_locate(idx, io, t, n, m, inner, bad, &k)) y[yo + t] = x[xo + k];
}

__kernel void scatter(__global const T* v, ulong vo, __global const long* idx, ulong io,
                      __global T* y, ulong yo, ulong total, ulong n, ulong m, ulong inner,
                      __global long* bad) {
  const ulong t = get_global_id(0);
  ulong k;
  if (t < total && dl_locate(idx, io, t, n, m, inner, bad, &k)) y[yo + k] = v[vo + t];
}

__kernel void nonzero_count(__global const uchar* mask, ulong mo, ulong n, ulong chunk,
                            ulong chunks, __global long* count) {
  const ulong c = get_global_id(0);
  if (c >= chunks) return;
  const ulong end = min(n, (c + 1) * chunk);
  long k = 0;
  for (ulong i = c * chunk; i < end; ++i) k += mask[mo + i] != 0;
  count[c] = k;
}

// One work-item: count[c] becomes the number of Trues before chunk c; out[0] the total.
__kernel void nonzero_scan(__global long* count, ulong chunks, __global long* out, ulong oo) {
  if (get_global_id(0) != 0) return;
  long sum = 0;
  for (ulong c = 0; c < chunks; ++c) {
    const long k = count[c];
    count[c] = sum;
    sum += k;
  }
  out[oo] = sum;
}

__kernel void nonzero_write(__global const uchar* mask, ulong mo, ulong n, ulong chunk,
                            ulong chunks, __global const long* count, __global long* out,
                            ulong oo) {
  const ulong c = get_global_id(0);
  if (c >= chunks) return;
  const ulong end = min(n, (c + 1) * chunk);
  __global long* w = out + oo + 1 + count[c];
  for (ulong i = c * chunk; i < end; ++i) {
    if (mask[mo + i] != 0) *w++ = (long)i;
  }
}
)CLC"};

// A view of `a` whose elements are at most 8 bytes: complex128 as two 8-byte halves in a longer
// last dimension (the canonical shapes are 3-D, so only the last extent changes).
struct Words {
  explicit Words(const DLArray* a) : view(*a) {
    if (ElementBytes(a->dtype) == 16) {
      for (int d = 0; d < a->ndim; ++d) shape[d] = a->shape[d];
      shape[a->ndim - 1] *= 2;
      view.shape = shape;
      view.dtype = DLArrayDType{kDLArrayUInt, 64, 1};
    }
  }
  DLArray view;
  int64_t shape[DLARRAY_MAX_NDIM] = {};
};

template <bool kScatter>
void Take(const KernelContext& ctx) {
  const Words data(kScatter ? ctx.outputs[0] : ctx.inputs[0]);
  const Words picked(kScatter ? ctx.inputs[0] : ctx.outputs[0]);
  const DLArray* indices = ctx.inputs[1];
  const uint64_t n = static_cast<uint64_t>(data.view.shape[1]);
  const uint64_t total = static_cast<uint64_t>(NumElements(&picked.view));
  if (total == 0) return;
  OpenclDevice& device = DeviceOf(ctx);
  const DeviceInfo& info = device.info(ctx.device_id);
  const cl_command_queue queue = device.queue(ctx.device_id);
  const Scratch bad(&device, ctx.device_id, 2 * sizeof(cl_long));
  const cl_long zero[2] = {0, 0};
  CL_CALL(
      clEnqueueWriteBuffer(queue, bad.get(), CL_TRUE, 0, sizeof zero, zero, 0, nullptr, nullptr));
  {
    Launch launch(ctx, kProgram, kScatter ? "scatter" : "gather",
                  StorageOptions(ElementBytes(data.view.dtype), info));
    launch.array(kScatter ? &picked.view : &data.view, "input").array(indices, "indices");
    launch.array(kScatter ? &data.view : &picked.view, "output");
    launch.scalar<cl_ulong>(total).scalar<cl_ulong>(n);
    launch.scalar<cl_ulong>(static_cast<cl_ulong>(indices->shape[0]));
    launch.scalar<cl_ulong>(static_cast<cl_ulong>(data.view.shape[2])).buffer(bad.get());
    launch.run(total, 64);
  }
  cl_long found[2] = {0, 0};
  CL_CALL(
      clEnqueueReadBuffer(queue, bad.get(), CL_TRUE, 0, sizeof found, found, 0, nullptr, nullptr));
  if (found[1] != 0) {
    throw Error(ErrorKind::kValue, std::string(ctx.op_name) + ": index " +
                                       std::to_string(found[0]) + " is out of bounds for size " +
                                       std::to_string(n));
  }
}

}  // namespace

void GatherKernel(const KernelContext& ctx) { Take<false>(ctx); }

void ScatterKernel(const KernelContext& ctx) { Take<true>(ctx); }

void NonzeroKernel(const KernelContext& ctx) {
  const DLArray* mask = ctx.inputs[0];
  const uint64_t n = static_cast<uint64_t>(NumElements(mask));
  OpenclDevice& device = DeviceOf(ctx);
  const DeviceInfo& info = device.info(ctx.device_id);
  const uint64_t chunk = 1024;
  const uint64_t chunks = n == 0 ? 1 : ItemsFor(n, chunk);
  const Scratch count(&device, ctx.device_id, chunks * sizeof(cl_long));
  const std::string options = CommonOptions(info);
  {
    Launch launch(ctx, kProgram, "nonzero_count", options);
    launch.array(mask, "mask").scalar<cl_ulong>(n).scalar<cl_ulong>(chunk);
    launch.scalar<cl_ulong>(chunks).buffer(count.get());
    launch.run(chunks, 64);
  }
  {
    Launch launch(ctx, kProgram, "nonzero_scan", options);
    launch.buffer(count.get()).scalar<cl_ulong>(chunks).array(ctx.outputs[0], "output");
    launch.run(1, 1);
  }
  Launch launch(ctx, kProgram, "nonzero_write", options);
  launch.array(mask, "mask").scalar<cl_ulong>(n).scalar<cl_ulong>(chunk);
  launch.scalar<cl_ulong>(chunks).buffer(count.get()).array(ctx.outputs[0], "output");
  launch.run(chunks, 64);
}

}  // namespace dlarray::opencl
