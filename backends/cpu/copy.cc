/*!
 * \file copy.cc
 * \brief copy: out = in, for any dtype and any strides on either side (how views become compact).
 *        Compact pairs are a parallel memcpy (float32: the vectorised map); strided ones are
 *        walked row by row after merging the dimensions both sides store contiguously.
 */
#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu_kernels.h"
#include "dtype.h"
#include "elementwise.h"

namespace dlarray::cpu {
namespace {

// One merged dimension: extent and the two strides in bytes.
struct Dim {
  int64_t extent;
  int64_t in_step;
  int64_t out_step;
};

std::vector<Dim> MergedDims(const DLArray* in, const DLArray* out, int64_t item) {
  std::vector<Dim> dims;  // outermost first
  int64_t in_compact = 1, out_compact = 1;
  std::vector<Dim> all(static_cast<size_t>(out->ndim));
  for (int d = out->ndim - 1; d >= 0; --d) {
    const int64_t in_s = in->strides != nullptr ? in->strides[d] : in_compact;
    const int64_t out_s = out->strides != nullptr ? out->strides[d] : out_compact;
    all[d] = {out->shape[d], in_s * item, out_s * item};
    in_compact *= in->shape[d];
    out_compact *= out->shape[d];
  }
  for (const Dim& d : all) {
    if (d.extent == 1) continue;
    if (!dims.empty()) {
      Dim& outer = dims.back();
      // outer and d merge when stepping outer once equals stepping d through its whole extent.
      if (outer.in_step == d.in_step * d.extent && outer.out_step == d.out_step * d.extent) {
        outer = {outer.extent * d.extent, d.in_step, d.out_step};
        continue;
      }
    }
    dims.push_back(d);
  }
  if (dims.empty()) dims.push_back({1, item, item});
  return dims;
}

template <typename U>
void CopyRow(const char* x, char* y, int64_t n, int64_t in_step, int64_t out_step) {
  if (in_step == static_cast<int64_t>(sizeof(U)) && out_step == static_cast<int64_t>(sizeof(U))) {
    std::memcpy(y, x, static_cast<size_t>(n) * sizeof(U));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    U v;
    std::memcpy(&v, x + i * in_step, sizeof(U));
    std::memcpy(y + i * out_step, &v, sizeof(U));
  }
}

template <typename U>
void StridedCopy(const DLArray* in, DLArray* out) {
  const std::vector<Dim> dims = MergedDims(in, out, sizeof(U));
  const char* x = Data<const char>(in);
  char* y = Data<char>(out);
  const Dim inner = dims.back();
  const int outer_dims = static_cast<int>(dims.size()) - 1;
  int64_t rows = 1;
  for (int d = 0; d < outer_dims; ++d) rows *= dims[d].extent;
  ParallelFor(rows, rows * inner.extent, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t rest = r, in_off = 0, out_off = 0;
      for (int d = outer_dims - 1; d >= 0; --d) {
        const int64_t i = rest % dims[d].extent;
        rest /= dims[d].extent;
        in_off += i * dims[d].in_step;
        out_off += i * dims[d].out_step;
      }
      CopyRow<U>(x + in_off, y + out_off, inner.extent, inner.in_step, inner.out_step);
    }
  });
}

}  // namespace

void CopyKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  DLArray* out = ctx.outputs[0];
  const bool compact = in->strides == nullptr && out->strides == nullptr;
  if (compact && Data<const char>(in) == Data<char>(out)) return;
  if (compact && IsFloat32(out->dtype)) {
    ElementwiseKernel<1>(ctx, [](auto x) { return x; });
    return;
  }
  const bool moved = VisitElementSize(
      out->dtype, [&](auto tag) { StridedCopy<typename decltype(tag)::type>(in, out); });
  if (!moved) {
    throw DTypeError("copy on cpu: no kernel for " + std::to_string(out->dtype.bits) +
                     "-bit elements");
  }
}

}  // namespace dlarray::cpu
