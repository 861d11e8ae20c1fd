/*!
 * \file reduce_sum_axis_zero.cc
 * \brief reduce_sum_axis_zero: out = in.sum(axis=0). Wide outputs: each thread owns a range of
 *        columns and adds the rows in order into an L1-sized block of out (NumPy's summation order,
 *        so results match it bit for bit). Narrow outputs: partial sums over row blocks.
 */
#include <algorithm>
#include <type_traits>
#include <vector>

#include "cpu_kernels.h"
#include "dtype.h"
#include "parallel.h"
#include "simd.h"

namespace dlarray::cpu {
namespace {

// Columns summed together: one 8 KiB block of out stays in L1 while all rows stream past.
constexpr int64_t kColumnBlock = 2048;
// Outputs narrower than this split the rows instead of the columns.
constexpr int64_t kNarrowColumns = 64;
constexpr int kMaxRowBlocks = 64;

// y[c0, c1) = sum over rows of x[r][c0, c1), rows added one after the other.
void SumColumns(const float* x, float* y, int64_t rows, int64_t cols, int64_t c0, int64_t c1) {
  for (int64_t b0 = c0; b0 < c1; b0 += kColumnBlock) {
    const int64_t b1 = std::min(c1, b0 + kColumnBlock);
    std::copy(x + b0, x + b1, y + b0);
    for (int64_t r = 1; r < rows; ++r) {
      const float* row = x + r * cols;
      int64_t j = b0;
      for (; j + kVecWidth <= b1; j += kVecWidth) {
        // The rows are far apart: without a prefetch two rows ahead (into L2) the loads wait on
        // memory (measured 2x). Prefetches past the end are harmless.
        __builtin_prefetch(row + 2 * cols + j, 0, 1);
        StoreU(y + j, LoadU(y + j) + LoadU(row + j));
      }
      for (; j < b1; ++j) y[j] += row[j];
    }
  }
}

// Sum of x[0, n): four vector sums per kSumBlock elements, block totals in double.
float SumContiguous(const float* x, int64_t n) {
  double sum = 0.0;
  int64_t i = 0;
  while (i + 4 * kVecWidth <= n) {
    const int64_t block_end = std::min(n, i + kSumBlock);
    VecF s0{}, s1{}, s2{}, s3{};
    for (; i + 4 * kVecWidth <= block_end; i += 4 * kVecWidth) {
      s0 += LoadU(x + i);
      s1 += LoadU(x + i + kVecWidth);
      s2 += LoadU(x + i + 2 * kVecWidth);
      s3 += LoadU(x + i + 3 * kVecWidth);
    }
    sum += HorizontalSum((s0 + s1) + (s2 + s3));
  }
  for (; i < n; ++i) sum += x[i];
  return static_cast<float>(sum);
}

// Narrow output: row blocks summed (in parallel when threads > 1), then combined in block order.
void SumNarrow(const float* x, float* y, int64_t rows, int64_t cols, int threads) {
  float partial[kMaxRowBlocks][kNarrowColumns];
  const int blocks = static_cast<int>(std::min<int64_t>({threads, kMaxRowBlocks, rows}));
  auto sum_block = [&](int b) {
    const int64_t r0 = ChunkBegin(rows, 1, b, blocks);
    const int64_t r1 = ChunkBegin(rows, 1, b + 1, blocks);
    if (cols == 1) {
      partial[b][0] = SumContiguous(x + r0, r1 - r0);
      return;
    }
    std::fill(partial[b], partial[b] + cols, 0.0f);
    for (int64_t r = r0; r < r1; ++r) {
      for (int64_t j = 0; j < cols; ++j) partial[b][j] += x[r * cols + j];
    }
  };
  if (blocks == 1) {
    sum_block(0);
  } else {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int b = 0; b < blocks; ++b) sum_block(b);
  }
  std::copy(partial[0], partial[0] + cols, y);
  for (int b = 1; b < blocks; ++b) {
    for (int64_t j = 0; j < cols; ++j) y[j] += partial[b][j];
  }
}

// Every dtype but float32: each thread owns a range of columns and adds the rows in order into
// accumulators of the dtype's accumulation type (float for the half types, double for float64,
// wrapping 64-bit integers for integers), rounded to T once at the end.
template <typename T>
void SumColumnsTyped(const T* x, T* y, int64_t rows, int64_t cols) {
  using C = Compute<T>;
  using Acc = std::conditional_t<std::is_integral_v<C>, uint64_t, C>;
  ParallelFor(cols, rows * cols, kElementAlign, [&](int64_t c0, int64_t c1) {
    std::vector<Acc> acc(static_cast<size_t>(std::min(c1 - c0, kColumnBlock)));
    for (int64_t b0 = c0; b0 < c1; b0 += kColumnBlock) {
      const int64_t b1 = std::min(c1, b0 + kColumnBlock);
      std::fill(acc.begin(), acc.end(), Acc{0});
      for (int64_t r = 0; r < rows; ++r) {
        const T* row = x + r * cols;
        for (int64_t j = b0; j < b1; ++j) acc[j - b0] += static_cast<Acc>(Load(row[j]));
      }
      for (int64_t j = b0; j < b1; ++j) y[j] = Store<T>(static_cast<C>(acc[j - b0]));
    }
  });
}

}  // namespace

void ReduceSumAxisZeroKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  const int64_t rows = in->ndim > 0 ? in->shape[0] : 1;
  const int64_t numel = NumElements(in);
  const int64_t cols = numel / rows;
  if (!IsFloat32(in->dtype)) {
    Dispatch<kFloatTypes | kIntTypes>(in->dtype, ctx.op_name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      SumColumnsTyped(TypedData<const T>(in), TypedData<T>(ctx.outputs[0]), rows, cols);
    });
    return;
  }
  const float* x = InData(in);
  float* y = OutData(ctx.outputs[0]);
  const int threads = ThreadsFor(numel);
  if (cols == 1 || (cols < kNarrowColumns && threads > 1)) {
    SumNarrow(x, y, rows, cols, threads);
  } else {
    ParallelFor(cols, numel, kElementAlign,
                [&](int64_t c0, int64_t c1) { SumColumns(x, y, rows, cols, c0, c1); });
  }
}

}  // namespace dlarray::cpu
