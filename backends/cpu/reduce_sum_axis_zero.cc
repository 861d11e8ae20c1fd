/*!
 * \file reduce_sum_axis_zero.cc
 * \brief reduce_sum_axis_zero: out = in.sum(axis=0), in viewed as (rows, cols).
 *
 * Accuracy: float lanes add at most kRowGroup values, then their sums go into double
 * accumulators, so the relative error stays below 1e-6 (about 2e-7 in the worst case, a
 * constant) whatever the number of rows; a float32 running sum over 5e7 ones would stop at 2^24.
 *
 * Paths: wide outputs (>= 64 columns): each thread owns a range of columns and adds the rows
 * into an L1-sized block. Narrow outputs: the rows are read as wider rows of P floats, P a
 * multiple of lcm(cols, vector width) of at least 128 (consecutive rows side by side), summed in
 * parallel over row blocks, and folded back to cols at the end. One column (1-D input): vector sums
 * over blocks of the column. Every order of addition is fixed by the shape and the thread count.
 */
#include <algorithm>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "cpu_kernels.h"
#include "dtype.h"
#include "parallel.h"
#include "simd.h"

namespace dlarray::cpu {
namespace {

// Columns summed together: the float block (8 KiB) stays in L1, its double sums near it.
constexpr int64_t kColumnBlock = 2048;
// Rows added in float before their sum moves to the double accumulator.
constexpr int64_t kRowGroup = 16;
// Outputs narrower than this take the narrow path.
constexpr int64_t kNarrowColumns = 64;
constexpr int kMaxRowBlocks = 64;
// The narrow path's rows hold at least this many floats (several independent vectors a row).
constexpr int64_t kNarrowRowFloats = 128;
// Its widest row: lcm(cols, kVecWidth) <= cols * kVecWidth < kNarrowColumns * kVecWidth, or below
// 2 * kNarrowRowFloats when doubled.
constexpr int64_t kMaxNarrowRowFloats = std::max(kNarrowColumns * kVecWidth, 2 * kNarrowRowFloats);

// Half a vector of floats, and the same lanes as doubles.
typedef float HalfF __attribute__((vector_size(kVecWidth / 2 * sizeof(float))));
typedef double HalfD __attribute__((vector_size(kVecWidth / 2 * sizeof(double))));

// acc[0, kVecWidth) += v, in double (two widening conversions, no scalar loop).
inline void AddToDouble(double* acc, VecF v) {
  HalfF lo, hi;
  std::memcpy(&lo, &v, sizeof(lo));
  std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof(lo), sizeof(hi));
  HalfD a0, a1;
  std::memcpy(&a0, acc, sizeof(a0));
  std::memcpy(&a1, acc + kVecWidth / 2, sizeof(a1));
  a0 += __builtin_convertvector(lo, HalfD);
  a1 += __builtin_convertvector(hi, HalfD);
  std::memcpy(acc, &a0, sizeof(a0));
  std::memcpy(acc + kVecWidth / 2, &a1, sizeof(a1));
}

// acc[0, w) += sum over r in [0, rows) of x[r * ld + j]; w <= kColumnBlock. Rows stream past an
// L1-resident float block; every kRowGroup rows the block moves to acc in the same pass that
// loads the next row into it, so the stream of row loads never pauses.
void AccumulateRows(const float* x, int64_t ld, int64_t rows, int64_t w, double* acc) {
  if (rows <= 0) return;
  alignas(64) float part[kColumnBlock];
  std::copy(x, x + w, part);
  for (int64_t r = 1; r < rows; ++r) {
    const float* row = x + r * ld;
    const bool flush = r % kRowGroup == 0;
    int64_t j = 0;
    for (; j + kVecWidth <= w; j += kVecWidth) {
      // The rows are far apart: without a prefetch two rows ahead (into L2) the loads wait on
      // memory (measured 2x). Prefetches past the end are harmless.
      __builtin_prefetch(row + 2 * ld + j, 0, 1);
      const VecF v = LoadU(row + j);
      if (flush) {
        AddToDouble(acc + j, LoadU(part + j));
        StoreU(part + j, v);
      } else {
        StoreU(part + j, LoadU(part + j) + v);
      }
    }
    for (; j < w; ++j) {
      if (flush) {
        acc[j] += part[j];
        part[j] = row[j];
      } else {
        part[j] += row[j];
      }
    }
  }
  int64_t j = 0;
  for (; j + kVecWidth <= w; j += kVecWidth) AddToDouble(acc + j, LoadU(part + j));
  for (; j < w; ++j) acc[j] += part[j];
}

// y[c0, c1) = column sums of the (rows, cols) matrix x.
void SumColumns(const float* x, float* y, int64_t rows, int64_t cols, int64_t c0, int64_t c1) {
  alignas(64) double acc[kColumnBlock];
  for (int64_t b0 = c0; b0 < c1; b0 += kColumnBlock) {
    const int64_t w = std::min(c1, b0 + kColumnBlock) - b0;
    std::fill(acc, acc + w, 0.0);
    AccumulateRows(x + b0, cols, rows, w, acc);
    for (int64_t j = 0; j < w; ++j) y[b0 + j] = static_cast<float>(acc[j]);
  }
}

// Sum of x[0, n): four vector sums per block of 4 * kVecWidth * kRowGroup elements, so each lane
// adds kRowGroup values on every instruction set path (a fixed block of elements would let the
// narrower vectors of the baseline and AVX2 paths add 64 or 32), block totals in double.
double SumContiguous(const float* x, int64_t n) {
  constexpr int64_t kBlock = 4 * kVecWidth * kRowGroup;
  double sum = 0.0;
  int64_t i = 0;
  while (i + 4 * kVecWidth <= n) {
    const int64_t block_end = std::min(n, i + kBlock);
    VecF s0{}, s1{}, s2{}, s3{};
    for (; i + 4 * kVecWidth <= block_end; i += 4 * kVecWidth) {
      s0 += LoadU(x + i);
      s1 += LoadU(x + i + kVecWidth);
      s2 += LoadU(x + i + 2 * kVecWidth);
      s3 += LoadU(x + i + 3 * kVecWidth);
    }
    sum += static_cast<double>(HorizontalSum(s0)) + HorizontalSum(s1) + HorizontalSum(s2) +
           HorizontalSum(s3);
  }
  for (; i < n; ++i) sum += x[i];
  return sum;
}

// Row blocks for n rows: one per thread, at most kMaxRowBlocks, at least 1.
int NumRowBlocks(int64_t n, int threads) {
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({threads, kMaxRowBlocks, n})));
}

// Splits [0, n) into NumRowBlocks(n, threads) ranges and calls body(block, begin, end) for each,
// in parallel when there are several. Returns the number of blocks.
template <typename Body>
int ForRowBlocks(int64_t n, int threads, Body&& body) {
  const int blocks = NumRowBlocks(n, threads);
  auto run = [&](int b) { body(b, ChunkBegin(n, 1, b, blocks), ChunkBegin(n, 1, b + 1, blocks)); };
  ParallelTasks(blocks, blocks, [&](int64_t b, int) { run(static_cast<int>(b)); });
  return blocks;
}

// One column: partial sums of row blocks, added in block order.
float SumOneColumn(const float* x, int64_t rows, int threads) {
  double partial[kMaxRowBlocks] = {};
  const int blocks = ForRowBlocks(rows, threads, [&](int b, int64_t r0, int64_t r1) {
    partial[b] = SumContiguous(x + r0, r1 - r0);
  });
  double sum = 0.0;
  for (int b = 0; b < blocks; ++b) sum += partial[b];
  return static_cast<float>(sum);
}

// Narrow output: the data as rows of P floats (P a multiple of cols and of the vector width, and
// at least kNarrowRowFloats: one vector per row would chain every row's add through the part
// block's store and reload, about 6 cycles a row, half the speed of memory on one core). Each
// block adds into its own cache-line-aligned accumulators on its stack, copied out once: blocks
// writing neighbouring doubles of one shared vector every kRowGroup rows would pass cache lines
// between cores (false sharing).
void SumNarrow(const float* x, float* y, int64_t rows, int64_t cols, int threads) {
  int64_t p = std::lcm(cols, static_cast<int64_t>(kVecWidth));
  while (p < kNarrowRowFloats) p *= 2;
  const int64_t total = rows * cols;
  const int64_t wide_rows = total / p;
  std::vector<double> partial(static_cast<size_t>(NumRowBlocks(wide_rows, threads) * p), 0.0);
  const int blocks = ForRowBlocks(wide_rows, threads, [&](int b, int64_t r0, int64_t r1) {
    alignas(64) double acc[kMaxNarrowRowFloats] = {};
    AccumulateRows(x + r0 * p, p, r1 - r0, p, acc);
    std::copy(acc, acc + p, partial.data() + b * p);
  });
  double sums[kNarrowColumns] = {};
  for (int b = 0; b < blocks; ++b) {
    for (int64_t j = 0; j < p; ++j) sums[j % cols] += partial[b * p + j];
  }
  for (int64_t e = wide_rows * p; e < total; ++e) sums[e % cols] += x[e];  // fewer than P left
  for (int64_t j = 0; j < cols; ++j) y[j] = static_cast<float>(sums[j]);
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
      SumColumnsTyped(Data<const T>(in), Data<T>(ctx.outputs[0]), rows, cols);
    });
    return;
  }
  SumAxisZeroF32(InData(in), OutData(ctx.outputs[0]), rows, cols);
}

void SumAxisZeroF32(const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t numel = rows * cols;
  const int threads = ThreadsFor(numel);
  if (cols == 1) {
    y[0] = SumOneColumn(x, rows, threads);
  } else if (cols < kNarrowColumns) {
    SumNarrow(x, y, rows, cols, threads);
  } else {
    ParallelFor(cols, numel, kElementAlign,
                [&](int64_t c0, int64_t c1) { SumColumns(x, y, rows, cols, c0, c1); });
  }
}

}  // namespace dlarray::cpu
