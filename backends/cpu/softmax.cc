/*!
 * \file softmax.cc
 * \brief softmax over the last axis, fused per row: max, then exp and sum, then scale (the row
 *        stays in cache between the passes). Rows are spread over the OpenMP threads.
 */
#include <type_traits>

#include "cpu_kernels.h"
#include "elementwise.h"
#include "fast_exp.h"
#include "parallel.h"
#include "simd.h"

namespace dlarray::cpu {
namespace {

// Pass 3 streams the row out when the output is too large to stay cached.
template <bool kStream>
void SoftmaxRow(const float* x, float* y, int64_t n) {
  const float m = MaxOf(x, n);
  VecF vsum{};
  int64_t i = 0;
  for (; i + kVecWidth <= n; i += kVecWidth) {
    const VecF e = Exp(LoadU(x + i) - m);
    StoreU(y + i, e);
    vsum += e;
  }
  float sum = HorizontalSum(vsum);
  for (; i < n; ++i) {
    y[i] = Exp(x[i] - m);
    sum += y[i];
  }
  const float inv = 1.0f / sum;
  MapRange<kStream>(0, n, y, [inv](auto v) { return v * inv; }, static_cast<const float*>(y));
}

}  // namespace

void SoftmaxKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  const int64_t numel = NumElements(in);
  const int64_t cols = in->ndim > 0 ? in->shape[in->ndim - 1] : 1;
  const float* x = InData(in);
  float* y = OutData(ctx.outputs[0]);
  auto rows = [&](auto stream) {
    ParallelFor(numel / cols, numel * 8, 1, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) SoftmaxRow<stream()>(x + r * cols, y + r * cols, cols);
    });
  };
  if (UseStreamingStores(y, numel, x)) {
    rows(std::true_type{});
  } else {
    rows(std::false_type{});
  }
}

}  // namespace dlarray::cpu
