/*!
 * \file softmax_cross_entropy.cc
 * \brief softmax_cross_entropy: mean over rows of -sum(y_ * log_softmax(y)), computed per row as
 *        log(s) * sum(y_) - sum(y_ * (y - m)) with m = max(y), s = sum(exp(y - m)): one exp per
 *        element and no temporary.
 */
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu_kernels.h"
#include "dtype.h"
#include "fast_exp.h"
#include "parallel.h"
#include "simd.h"

namespace dlarray::cpu {
namespace {

double CrossEntropyRow(const float* y, const float* label, int64_t n) {
  const float m = MaxOf(y, n);
  double exp_sum = 0.0, dot = 0.0, label_sum = 0.0;
  int64_t i = 0;
  while (i + kVecWidth <= n) {
    const int64_t block_end = std::min(n, i + kSumBlock);
    VecF vexp{}, vdot{}, vlabel{};
    for (; i + kVecWidth <= block_end; i += kVecWidth) {
      // Fetch the next row while this one computes (prefetches never fault).
      __builtin_prefetch(y + n + i, 0, 2);
      __builtin_prefetch(label + n + i, 0, 2);
      const VecF d = LoadU(y + i) - m;
      const VecF t = LoadU(label + i);
      vexp += Exp<VecF, true>(d);
      vdot += t * d;
      vlabel += t;
    }
    exp_sum += HorizontalSum(vexp);
    dot += HorizontalSum(vdot);
    label_sum += HorizontalSum(vlabel);
  }
  for (; i < n; ++i) {
    const float d = y[i] - m;
    exp_sum += Exp<float, true>(d);
    dot += static_cast<double>(label[i]) * d;
    label_sum += label[i];
  }
  return std::log(exp_sum) * label_sum - dot;
}

// Sum of row(r) over [0, rows) on the pool: per-chunk partial sums added in chunk order, so the
// result does not depend on which thread ran which chunk.
template <typename RowFn>
double SumOfRows(int64_t rows, int64_t work, RowFn row) {
  const int threads = ThreadsFor(work);
  const int64_t chunks = threads <= 1 ? 1 : std::min<int64_t>(rows, threads * kChunksPerThread);
  std::vector<double> partial(static_cast<size_t>(chunks), 0.0);
  ParallelTasks(chunks, threads, [&](int64_t c, int) {
    double sum = 0.0;
    for (int64_t r = ChunkBegin(rows, 1, c, chunks); r < ChunkBegin(rows, 1, c + 1, chunks); ++r)
      sum += row(r);
    partial[static_cast<size_t>(c)] = sum;
  });
  double total = 0.0;
  for (double p : partial) total += p;
  return total;
}

// Every dtype but float32: the same per-row formula in double, the mean rounded to T once.
template <typename T>
void CrossEntropyTyped(const T* y, const T* label, T* out, int64_t rows, int64_t cols) {
  const double total = SumOfRows(rows, rows * cols * 8, [&](int64_t r) {
    const T* yr = y + r * cols;
    const T* lr = label + r * cols;
    double m = Load(yr[0]);
    for (int64_t i = 1; i < cols; ++i) m = Load(yr[i]) > m ? static_cast<double>(Load(yr[i])) : m;
    double exp_sum = 0.0, dot = 0.0, label_sum = 0.0;
    for (int64_t i = 0; i < cols; ++i) {
      const double d = static_cast<double>(Load(yr[i])) - m;
      const double t = Load(lr[i]);
      exp_sum += std::exp(d);
      dot += t * d;
      label_sum += t;
    }
    return std::log(exp_sum) * label_sum - dot;
  });
  out[0] = Store<T>(total / static_cast<double>(rows));
}

}  // namespace

void SoftmaxCrossEntropyKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  const int64_t numel = NumElements(in);
  const int64_t cols = in->ndim > 0 ? in->shape[in->ndim - 1] : 1;
  const int64_t rows = numel / cols;
  if (!IsFloat32(in->dtype)) {
    Dispatch<kFloatTypes>(in->dtype, ctx.op_name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      CrossEntropyTyped(Data<const T>(in), Data<const T>(ctx.inputs[1]), Data<T>(ctx.outputs[0]),
                        rows, cols);
    });
    return;
  }
  const float* y = InData(in);
  const float* label = InData(ctx.inputs[1]);
  const double total = SumOfRows(rows, numel * 8, [&](int64_t r) {
    return CrossEntropyRow(y + r * cols, label + r * cols, cols);
  });
  OutData(ctx.outputs[0])[0] = static_cast<float>(total / static_cast<double>(rows));
}

}  // namespace dlarray::cpu
