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
      vexp += Exp(d);
      vdot += t * d;
      vlabel += t;
    }
    exp_sum += HorizontalSum(vexp);
    dot += HorizontalSum(vdot);
    label_sum += HorizontalSum(vlabel);
  }
  for (; i < n; ++i) {
    const float d = y[i] - m;
    exp_sum += Exp(d);
    dot += static_cast<double>(label[i]) * d;
    label_sum += label[i];
  }
  return std::log(exp_sum) * label_sum - dot;
}

}  // namespace

void SoftmaxCrossEntropyKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  const int64_t numel = NumElements(in);
  const int64_t cols = in->ndim > 0 ? in->shape[in->ndim - 1] : 1;
  const int64_t rows = numel / cols;
  const float* y = InData(in);
  const float* label = InData(ctx.inputs[1]);
  // Per-chunk partial sums, added in chunk order: the result does not depend on which thread
  // ran which chunk.
  const int threads = ThreadsFor(numel * 8);
  const int64_t chunks = threads <= 1 ? 1 : std::min<int64_t>(rows, threads * kChunksPerThread);
  std::vector<double> partial(static_cast<size_t>(chunks), 0.0);
  ParallelTasks(chunks, threads, [&](int64_t c, int) {
    double sum = 0.0;
    for (int64_t r = ChunkBegin(rows, 1, c, chunks); r < ChunkBegin(rows, 1, c + 1, chunks); ++r)
      sum += CrossEntropyRow(y + r * cols, label + r * cols, cols);
    partial[static_cast<size_t>(c)] = sum;
  });
  double total = 0.0;
  for (double p : partial) total += p;
  OutData(ctx.outputs[0])[0] = static_cast<float>(total / static_cast<double>(rows));
}

}  // namespace dlarray::cpu
