/*!
 * \file softmax.cc
 * \brief softmax over the last axis, fused per row: max, then exp and sum, then scale (the row
 *        stays in cache between the passes). Rows are spread over the pool's threads.
 */
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "cpu_kernels.h"
#include "dtype.h"
#include "elementwise.h"
#include "fast_exp.h"
#include "parallel.h"
#include "simd.h"

namespace dlarray::cpu {
namespace {

// Rows up to this length keep exp(x - max) in a stack buffer, so that the scaled result can be
// streamed to y: y is then written once, without being read for ownership first.
constexpr int64_t kScratchFloats = 16384;

// tmp[i] = exp(x[i] - m); returns the sum. Meanwhile the next row (x + n) is fetched into the
// cache, so that its max pass does not wait on memory (prefetches never fault).
float ExpAndSum(const float* x, float m, float* tmp, int64_t n) {
  double sum = 0.0;
  int64_t i = 0;
  while (i + kVecWidth <= n) {
    const int64_t block_end = std::min(n, i + kSumBlock);
    VecF vsum{};
    for (; i + kVecWidth <= block_end; i += kVecWidth) {
      __builtin_prefetch(x + n + i, 0, 2);
      const VecF e = Exp<VecF, true>(LoadU(x + i) - m);
      StoreU(tmp + i, e);
      vsum += e;
    }
    sum += HorizontalSum(vsum);
  }
  for (; i < n; ++i) {
    tmp[i] = Exp<float, true>(x[i] - m);
    sum += tmp[i];
  }
  return static_cast<float>(sum);
}

template <bool kStream>
void SoftmaxRow(const float* x, float* y, int64_t n) {
  const float m = MaxOf(x, n);
  if (kStream && n <= kScratchFloats) {
    alignas(64) float tmp[kScratchFloats];
    const float inv = 1.0f / ExpAndSum(x, m, tmp, n);
    MapRange<true>(
        0, n, y, [inv](auto v) { return v * inv; }, static_cast<const float*>(tmp));
    return;
  }
  const float inv = 1.0f / ExpAndSum(x, m, y, n);
  MapRange<false>(
      0, n, y, [inv](auto v) { return v * inv; }, static_cast<const float*>(y));
}

// Every dtype but float32: each row widened to its compute type (float for the half types,
// double for float64), softmax there, rounded back once.
template <typename T>
void SoftmaxTyped(const T* x, T* y, int64_t rows, int64_t cols) {
  using C = Compute<T>;
  ParallelFor(rows, rows * cols * 8, 1, [&](int64_t r0, int64_t r1) {
    std::vector<C> e(static_cast<size_t>(cols));
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + r * cols;
      C m = Load(xr[0]);
      for (int64_t i = 1; i < cols; ++i) m = Load(xr[i]) > m ? Load(xr[i]) : m;
      double sum = 0.0;
      for (int64_t i = 0; i < cols; ++i) {
        e[i] = std::exp(Load(xr[i]) - m);
        sum += e[i];
      }
      const C inv = static_cast<C>(1.0 / sum);
      for (int64_t i = 0; i < cols; ++i) y[r * cols + i] = Store<T>(e[i] * inv);
    }
  });
}

}  // namespace

void SoftmaxKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  const int64_t numel = NumElements(in);
  const int64_t cols = in->ndim > 0 ? in->shape[in->ndim - 1] : 1;
  if (!IsFloat32(in->dtype)) {
    Dispatch<kFloatTypes>(in->dtype, ctx.op_name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      SoftmaxTyped(Data<const T>(in), Data<T>(ctx.outputs[0]), numel / cols, cols);
    });
    return;
  }
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
