/*!
 * \file broadcast_to.cc
 * \brief broadcast_to: out = numpy.broadcast_to(in, out.shape). The dims are merged into runs that
 *        are either contiguous in `in` or broadcast; out is then a sequence of rows of the
 * innermost run, each a copy of part of `in` or a fill with one of its values.
 */
#include <algorithm>
#include <string>
#include <type_traits>

#include "cpu_kernels.h"
#include "dlarray/errors.h"
#include "dtype.h"
#include "elementwise.h"

namespace dlarray::cpu {
namespace {

constexpr int kMaxDims = 64;

// One merged dimension of out: its extent and the matching step in `in` (0: broadcast).
struct Run {
  int64_t size;
  int64_t in_stride;
};

// Merged runs of out, innermost first; returns their count.
int MergeRuns(const DLArray* in, const DLArray* out, Run* runs) {
  int count = 0;
  int64_t in_stride = 1;
  for (int d = out->ndim - 1; d >= 0; --d) {
    const int64_t size = out->shape[d];
    const int in_dim = d - (out->ndim - in->ndim);
    const int64_t in_size = in_dim >= 0 ? in->shape[in_dim] : 1;
    if (size == 1) continue;
    const int64_t stride = in_size == 1 ? 0 : in_stride;
    in_stride *= in_size;
    if (count > 0) {
      Run& inner = runs[count - 1];
      const bool both_broadcast = stride == 0 && inner.in_stride == 0;
      const bool contiguous =
          stride != 0 && inner.in_stride != 0 && stride == inner.in_stride * inner.size;
      if (both_broadcast || contiguous) {
        inner.size *= size;
        continue;
      }
    }
    runs[count++] = {size, stride};
  }
  return count;
}

// T: float (vectorised, optionally streaming) or an unsigned integer of the element's size
// (Bytes16 for complex128).
template <bool kStream, typename T>
void BroadcastRange(const T* x, T* y, const Run* runs, int num_runs, int64_t begin, int64_t end) {
  const int64_t row_len = runs[0].size;
  // Position of `begin`: its row's index in each outer run and the row's offset in `in`.
  int64_t index[kMaxDims] = {};
  int64_t src = 0;
  int64_t row = begin / row_len;
  for (int k = 1; k < num_runs; ++k) {
    index[k] = row % runs[k].size;
    row /= runs[k].size;
    src += index[k] * runs[k].in_stride;
  }
  int64_t col = begin % row_len;
  for (int64_t e = begin; e < end;) {
    const int64_t len = std::min(row_len - col, end - e);
    if constexpr (std::is_same_v<T, float>) {
      if (runs[0].in_stride == 0) {
        FillRange<kStream>(0, len, y + e, x[src]);
      } else {
        MapRange<kStream>(
            0, len, y + e, [](auto v) { return v; }, x + src + col);
      }
    } else if (runs[0].in_stride == 0) {
      std::fill(y + e, y + e + len, x[src]);
    } else {
      std::copy(x + src + col, x + src + col + len, y + e);
    }
    e += len;
    col = 0;
    for (int k = 1; k < num_runs; ++k) {
      src += runs[k].in_stride;
      if (++index[k] < runs[k].size) break;
      src -= runs[k].in_stride * runs[k].size;
      index[k] = 0;
    }
  }
}

template <typename U>
void BroadcastAny(const DLArray* in, DLArray* out, const Run* runs, int num_runs) {
  const U* x = Data<const U>(in);
  U* y = Data<U>(out);
  const int64_t n = NumElements(out);
  ParallelFor(n, n, kElementAlign,
              [&](int64_t b, int64_t e) { BroadcastRange<false>(x, y, runs, num_runs, b, e); });
}

}  // namespace

void BroadcastToKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  DLArray* out = ctx.outputs[0];
  if (out->ndim > kMaxDims) {
    throw BackendError("broadcast_to on cpu supports at most " + std::to_string(kMaxDims) +
                       " dimensions, got " + std::to_string(out->ndim));
  }
  Run runs[kMaxDims];
  int num_runs = MergeRuns(in, out, runs);
  if (num_runs == 0) runs[num_runs++] = {1, 1};
  if (!IsFloat32(out->dtype)) {  // pure data movement: by element size
    const bool moved = VisitElementSize(out->dtype, [&](auto tag) {
      BroadcastAny<typename decltype(tag)::type>(in, out, runs, num_runs);
    });
    if (!moved) {
      throw DTypeError("broadcast_to on cpu: no kernel for " + std::to_string(out->dtype.bits) +
                       "-bit elements");
    }
    return;
  }
  const float* x = InData(in);
  float* y = OutData(out);
  const int64_t n = NumElements(out);
  // Streaming stores pay when `in` is large too (a copy; a pure write is faster without them)
  // and rows are long (each row ends with a fence).
  if (UseStreamingStores(y, n, x) && UseStreamingStores(y, NumElements(in), x) &&
      runs[0].size >= 1024) {
    ParallelFor(n, n, kElementAlign,
                [&](int64_t b, int64_t e) { BroadcastRange<true>(x, y, runs, num_runs, b, e); });
  } else {
    ParallelFor(n, n, kElementAlign,
                [&](int64_t b, int64_t e) { BroadcastRange<false>(x, y, runs, num_runs, b, e); });
  }
}

}  // namespace dlarray::cpu
