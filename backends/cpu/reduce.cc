/*!
 * \file reduce.cc
 * \brief reduce: out[o, j] = kind-reduction over r of x[o, r, j], the input seen as a contiguous
 *        [outer, n, inner] array (n >= 1), for every real dtype and every ReduceKind
 *        (dlarray/reduce_kinds.h).
 *
 * Paths: inner == 1 (rows): kLanes independent accumulators per row, so that the inner loop
 * vectorises; many rows are split over the threads, few long rows are cut into pieces whose
 * partial results are combined. inner > 1 (columns): a block of up to kColumnBlock accumulators
 * for neighbouring columns is updated row by row (unit stride, vectorisable); the (outer, column
 * block) tasks go to the threads, and when they are too few the rows are cut into pieces too.
 */
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "cpu_kernels.h"
#include "dlarray/reduce_kinds.h"
#include "dtype.h"
#include "elementwise_complex.h"
#include "parallel.h"
#include "simd.h"

namespace dlarray::cpu {
namespace {

constexpr int64_t kLanes = 8;
// Columns reduced together: 1024 accumulators (8 KiB of doubles) stay in L1 while the rows
// stream past; 256 left the row reads too short to stream well (a sum over axis 0 of 4096 x
// 4096 took 1.7x NumPy's time).
constexpr int64_t kColumnBlock = 1024;
// Pieces of a reduced axis are at least this long (a piece is a task of its own).
constexpr int64_t kMinPiece = 16384;

// Whether R is an arg-reduction (it names the reducer of its value, R::Extreme).
template <typename R, typename = void>
struct HasExtreme : std::false_type {};
template <typename R>
struct HasExtreme<R, std::void_t<typename R::Extreme>> : std::true_type {};

// min / max of float or double elements: GCC turns Reducer's NaN-propagating select back into
// branches (scalar code, 3-5x NumPy's time), so the value and "a NaN was seen" are kept apart:
// a plain select (vminps / vmaxps) and an or of the unordered compares, both vectorised.
template <typename R, typename T>
constexpr bool kFastMinMax = (std::is_same_v<T, float> || std::is_same_v<T, double>)&&(
    std::is_same_v<R, Reducer<kReduceMin, T>> || std::is_same_v<R, Reducer<kReduceMax, T>>);

// any / all of float elements: the lanes' "not zero" masks or-ed / and-ed whole vectors at a
// time (the bool accumulators of Reducer ran 2-4x NumPy's time).
template <typename R, typename T>
constexpr bool kFastAnyAll = std::is_same_v<T, float> &&
                             (std::is_same_v<R, Reducer<kReduceAny, T>> ||
                              std::is_same_v<R, Reducer<kReduceAll, T>>);

template <typename R, typename T>
inline T Select(T a, T v) {
  if constexpr (std::is_same_v<R, Reducer<kReduceMin, T>>) {
    return v < a ? v : a;
  } else {
    return a < v ? v : a;
  }
}

// min / max of float or double x[i0, i1) (at least 4 vectors) in whole vectors: GCC does not
// vectorise the lane loop below (float64 max ran 3x NumPy's time). Four running extremes, as one
// would make every step wait for the previous compare; NaN kept apart as in kFastMinMax.
template <typename R, typename T>
T VectorMinMax(const T* x, int64_t i0, int64_t i1) {
  typedef T V __attribute__((vector_size(sizeof(VecF))));
  constexpr int64_t kW = sizeof(VecF) / sizeof(T);
  constexpr bool kMin = std::is_same_v<R, Reducer<kReduceMin, T>>;
  auto load = [x](int64_t i) {
    V v;
    std::memcpy(&v, x + i, sizeof v);
    return v;
  };
  auto select = [](V a, V v) { return kMin ? (v < a ? v : a) : (a < v ? v : a); };
  V best[4] = {load(i0), load(i0 + kW), load(i0 + 2 * kW), load(i0 + 3 * kW)};
  auto nan =
      (best[0] != best[0]) | (best[1] != best[1]) | (best[2] != best[2]) | (best[3] != best[3]);
  int64_t i = i0 + 4 * kW;
  for (; i + 4 * kW <= i1; i += 4 * kW) {
    for (int k = 0; k < 4; ++k) {
      const V v = load(i + k * kW);
      best[k] = select(best[k], v);
      nan |= v != v;
    }
  }
  for (; i + kW <= i1; i += kW) {
    const V v = load(i);
    best[0] = select(best[0], v);
    nan |= v != v;
  }
  const V all = select(select(best[0], best[1]), select(best[2], best[3]));
  T b = all[0];
  bool any_nan = false;
  for (int64_t k = 0; k < kW; ++k) {
    b = Select<R>(b, all[k]);
    any_nan |= nan[k] != 0;
  }
  for (; i < i1; ++i) {
    b = Select<R>(b, x[i]);
    any_nan |= x[i] != x[i];
  }
  return any_nan ? std::numeric_limits<T>::quiet_NaN() : b;
}

template <typename R, typename T>
typename R::Acc ReduceRun(const T* x, int64_t i0, int64_t i1);

// Blocks of an arg-reduction's run: a block's extreme is found in L1-sized pieces of the row.
constexpr int64_t kArgBlock = 4096;
// Arg-reductions over columns of fewer than this many columns take them one at a time.
constexpr int64_t kNarrowArg = 8;

// The first i in [i0, i1) where x[i] is v (the first NaN for a NaN v); there is one. Chunks of
// 64 are tested whole first (an or of compares, which vectorises: a loop that stops at the match
// does not, and ran 1.8x NumPy's argmax over rows of 4096), then the matching chunk one by one.
template <typename T, typename C>
int64_t FirstIndexOf(const T* x, int64_t i0, int64_t i1, C v) {
  constexpr int64_t kChunk = 64;
  const bool nan = IsNaNValue(v);
  int64_t i = i0;
  for (; i + kChunk <= i1; i += kChunk) {
    int32_t hit = 0;
    for (int64_t k = 0; k < kChunk; ++k) {
      const C e = Load(x[i + k]);
      hit |= nan ? IsNaNValue(e) : e == v;
    }
    if (hit) break;
  }
  while (nan ? !IsNaNValue(Load(x[i])) : !(Load(x[i]) == v)) ++i;
  return i;
}

// The arg-reduction R of the contiguous x[i0, i1), i1 - i0 >= 2 kLanes. One pass of vectorised
// extremes of blocks (Extreme's ReduceRun) that keeps the first block whose extreme beats every
// earlier one (or holds the first NaN: then the rest need not be read), then a search of that
// block alone for the first index of its extreme. The former two passes over the whole run (the
// extreme, then a scalar search from i0) read it twice and ran 1.05-1.1x NumPy's time; one pass
// with the index in every lane ran 6x slower.
template <typename R, typename T>
typename R::Acc ArgReduceRun(const T* x, int64_t i0, int64_t i1) {
  using E = typename R::Extreme;
  auto best = E::Value(ReduceRun<E>(x, i0, std::min(i1, i0 + kArgBlock)));
  int64_t block = i0;
  for (int64_t b = i0 + kArgBlock; b < i1 && !IsNaNValue(best); b += kArgBlock) {
    const auto m = E::Value(ReduceRun<E>(x, b, std::min(i1, b + kArgBlock)));
    if (IsNaNValue(m) || R::Better(m, best)) {  // strictly better: ties keep the earlier block
      best = m;
      block = b;
    }
  }
  return typename R::Acc{best, FirstIndexOf(x, block, std::min(i1, block + kArgBlock), best)};
}

// The reduction of the contiguous x[i0, i1) (i1 > i0) in kLanes accumulators; arg-reductions of
// runs of 2 kLanes or more are ArgReduceRun's.
template <typename R, typename T>
typename R::Acc ReduceRun(const T* x, int64_t i0, int64_t i1) {
  using Acc = typename R::Acc;
  if constexpr (HasExtreme<R>::value) {
    if (i1 - i0 >= 2 * kLanes) return ArgReduceRun<R>(x, i0, i1);
  }
  if constexpr (kFastAnyAll<R, T>) {
    constexpr bool kAll = std::is_same_v<R, Reducer<kReduceAll, T>>;
    VecI acc = kAll ? ~VecI{} : VecI{};
    int64_t i = i0;
    for (; i + kVecWidth <= i1; i += kVecWidth) {
      const VecI nonzero = LoadU(x + i) != 0.0f;  // NaN is not zero
      acc = kAll ? (acc & nonzero) : (acc | nonzero);
    }
    bool r = kAll ? !AnyLane(~acc) : AnyLane(acc);
    for (; i < i1; ++i) r = kAll ? (r && x[i] != 0.0f) : (r || x[i] != 0.0f);
    return r;
  }
  if constexpr (kFastMinMax<R, T>) {
    if (i1 - i0 >= 4 * static_cast<int64_t>(sizeof(VecF) / sizeof(T))) {
      return VectorMinMax<R>(x, i0, i1);
    }
  }
  if constexpr (kFastMinMax<R, T>) {
    if (i1 - i0 >= 2 * kLanes) {
      T best[kLanes];
      int32_t nan[kLanes];
      for (int64_t k = 0; k < kLanes; ++k) {
        best[k] = x[i0 + k];
        nan[k] = x[i0 + k] != x[i0 + k];
      }
      int64_t i = i0 + kLanes;
      for (; i + kLanes <= i1; i += kLanes) {
        for (int64_t k = 0; k < kLanes; ++k) {
          const T v = x[i + k];
          best[k] = Select<R>(best[k], v);
          nan[k] |= v != v;
        }
      }
      for (; i < i1; ++i) {
        best[0] = Select<R>(best[0], x[i]);
        nan[0] |= x[i] != x[i];
      }
      for (int64_t k = 1; k < kLanes; ++k) {
        best[0] = Select<R>(best[0], best[k]);
        nan[0] |= nan[k];
      }
      return nan[0] ? std::numeric_limits<T>::quiet_NaN() : best[0];
    }
  }
  if (i1 - i0 < 2 * kLanes) {
    Acc a = R::First(Load(x[i0]), i0);
    for (int64_t i = i0 + 1; i < i1; ++i) a = R::Add(a, Load(x[i]), i);
    return a;
  }
  Acc lane[kLanes];
  for (int64_t k = 0; k < kLanes; ++k) lane[k] = R::First(Load(x[i0 + k]), i0 + k);
  int64_t i = i0 + kLanes;
  for (; i + kLanes <= i1; i += kLanes) {
    for (int64_t k = 0; k < kLanes; ++k) lane[k] = R::Add(lane[k], Load(x[i + k]), i + k);
  }
  for (; i < i1; ++i) lane[0] = R::Add(lane[0], Load(x[i]), i);
  for (int64_t k = 1; k < kLanes; ++k) lane[0] = R::Combine(lane[0], lane[k]);
  return lane[0];
}

// acc[0, w) = reduction over r in [r0, r1) of x[r * inner + j], j in [0, w).
template <typename R, typename T>
void ReduceColumns(const T* x, int64_t inner, int64_t r0, int64_t r1, int64_t w,
                   typename R::Acc* acc) {
  const T* first = x + r0 * inner;
  if constexpr (HasExtreme<R>::value) {
    if (w < kNarrowArg) {
      // A few columns (4096 x 3 over axis 0): one column at a time, in kChains running bests
      // (rows r = k mod kChains) kept in registers and combined at the end. Through acc, every
      // row waited on the previous row's store, and one chain on each compare: 2-3x NumPy.
      constexpr int64_t kChains = 4;
      for (int64_t j = 0; j < w; ++j) {
        typename R::Acc a[kChains];
        const int64_t chains = std::min(kChains, r1 - r0);
        for (int64_t k = 0; k < chains; ++k) a[k] = R::First(Load(x[(r0 + k) * inner + j]), r0 + k);
        int64_t r = r0 + chains;
        for (; r + kChains <= r1; r += kChains) {
          for (int64_t k = 0; k < kChains; ++k)
            a[k] = R::Add(a[k], Load(x[(r + k) * inner + j]), r + k);
        }
        for (; r < r1; ++r) a[0] = R::Add(a[0], Load(x[r * inner + j]), r);
        for (int64_t k = 1; k < chains; ++k) a[0] = R::Combine(a[0], a[k]);
        acc[j] = a[0];
      }
      return;
    }
  }
  if constexpr (kFastAnyAll<R, T>) {  // as in ReduceRun: "not zero" masks, in int32 lanes
    constexpr bool kAll = std::is_same_v<R, Reducer<kReduceAll, T>>;
    int32_t mask[kColumnBlock];
    for (int64_t j = 0; j < w; ++j) mask[j] = -static_cast<int32_t>(first[j] != 0.0f);
    for (int64_t r = r0 + 1; r < r1; ++r) {
      const T* row = x + r * inner;
      for (int64_t j = 0; j < w; ++j) {
        const int32_t nonzero = -static_cast<int32_t>(row[j] != 0.0f);
        mask[j] = kAll ? (mask[j] & nonzero) : (mask[j] | nonzero);
      }
    }
    for (int64_t j = 0; j < w; ++j) acc[j] = mask[j] != 0;
    return;
  }
  if constexpr (kFastMinMax<R, T>) {  // as in ReduceRun: value and NaN apart
    int32_t nan[kColumnBlock];
    for (int64_t j = 0; j < w; ++j) {
      acc[j] = first[j];
      nan[j] = first[j] != first[j];
    }
    for (int64_t r = r0 + 1; r < r1; ++r) {
      const T* row = x + r * inner;
      for (int64_t j = 0; j < w; ++j) {
        acc[j] = Select<R>(acc[j], row[j]);
        nan[j] |= row[j] != row[j];
      }
    }
    for (int64_t j = 0; j < w; ++j) {
      if (nan[j]) acc[j] = std::numeric_limits<T>::quiet_NaN();
    }
    return;
  }
  for (int64_t j = 0; j < w; ++j) acc[j] = R::First(Load(first[j]), r0);
  for (int64_t r = r0 + 1; r < r1; ++r) {
    const T* row = x + r * inner;
    for (int64_t j = 0; j < w; ++j) acc[j] = R::Add(acc[j], Load(row[j]), r);
  }
}

template <typename R, typename T, typename Out>
void Reduce(const T* x, Out* y, int64_t outer, int64_t n, int64_t inner) {
  using Acc = typename R::Acc;
  const int64_t numel = outer * n * inner;
  const int threads = ThreadsFor(numel);
  const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;  // column blocks per slab
  const int64_t tasks = outer * blocks;
  // Pieces of the reduced axis per task: enough tasks for every thread when the outputs alone
  // are too few.
  int64_t pieces = 1;
  if (tasks < threads * kChunksPerThread) {
    pieces = std::max<int64_t>(1, std::min(threads * kChunksPerThread / tasks, n / kMinPiece));
  }
  if (pieces == 1) {
    if (inner == 1) {
      ParallelFor(outer, numel, 1, [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o)
          y[o] = Store<Out>(R::Value(ReduceRun<R>(x + o * n, 0, n)));
      });
      return;
    }
    ParallelTasks(tasks, threads, [&](int64_t t, int) {
      const int64_t o = t / blocks, j0 = t % blocks * kColumnBlock;
      const int64_t w = std::min(kColumnBlock, inner - j0);
      Acc acc[kColumnBlock];
      ReduceColumns<R>(x + o * n * inner + j0, inner, 0, n, w, acc);
      for (int64_t j = 0; j < w; ++j) y[o * inner + j0 + j] = Store<Out>(R::Value(acc[j]));
    });
    return;
  }
  // Few outputs, long reductions: task (t, p) reduces piece p of task t's rows into part.
  const int64_t width = std::min(kColumnBlock, inner);
  // Not a std::vector: Acc may be bool.
  const std::unique_ptr<Acc[]> part(new Acc[tasks * pieces * width]);
  ParallelTasks(tasks * pieces, threads, [&](int64_t tp, int) {
    const int64_t t = tp / pieces, p = tp % pieces;
    const int64_t o = t / blocks, j0 = t % blocks * kColumnBlock;
    const int64_t w = std::min(kColumnBlock, inner - j0);
    const int64_t r0 = ChunkBegin(n, 1, p, pieces), r1 = ChunkBegin(n, 1, p + 1, pieces);
    Acc* acc = part.get() + tp * width;
    if (inner == 1) {
      acc[0] = ReduceRun<R>(x + o * n, r0, r1);
    } else {
      ReduceColumns<R>(x + o * n * inner + j0, inner, r0, r1, w, acc);
    }
  });
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t o = t / blocks, j0 = t % blocks * kColumnBlock;
    const int64_t w = std::min(kColumnBlock, inner - j0);
    for (int64_t j = 0; j < w; ++j) {
      Acc a = part[t * pieces * width + j];
      for (int64_t p = 1; p < pieces; ++p) a = R::Combine(a, part[(t * pieces + p) * width + j]);
      y[o * inner + j0 + j] = Store<Out>(R::Value(a));
    }
  }
}

}  // namespace

void ReduceKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  DLArray* out = ctx.outputs[0];
  const int64_t outer = in->shape[0], n = in->shape[1], inner = in->ndim == 3 ? in->shape[2] : 1;
  const int kind = static_cast<int>(ctx.attrs[0]);
  if (in->dtype.code == kDLArrayComplex) return ReduceComplexKernel(ctx);  // reduce_complex.cc
  if (kind == kReduceSum && IsFloat32(in->dtype) && outer == 1 && inner > 1) {
    // A float32 sum over the leading axis is reduce_sum_axis_zero's: its narrow-output path reads
    // rows of two columns as whole vectors (ReduceColumns would add them two at a time, 10x
    // slower) and its wide path prefetches the rows (2x).
    return SumAxisZeroF32(Data<const float>(in), Data<float>(out), n, inner);
  }
  Dispatch<kAllTypes>(in->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    VisitReduceKind(kind, [&](auto k) {
      using R = Reducer<decltype(k)::value, C>;
      const T* x = Data<const T>(in);
      if constexpr (decltype(k)::value == kReduceAny || decltype(k)::value == kReduceAll) {
        Reduce<R>(x, Data<bool>(out), outer, n, inner);
      } else if constexpr (decltype(k)::value >= kReduceArgmin) {
        Reduce<R>(x, Data<int64_t>(out), outer, n, inner);
      } else {
        Reduce<R>(x, Data<T>(out), outer, n, inner);
      }
    });
  });
}

// mean: the sum (reduce kind 0), then each result divided in place by count as
// matrix_elementwise_divide_by_const divides (the same bits as those two ops).
void ReduceMeanKernel(const KernelContext& ctx) {
  KernelContext sum = ctx;
  const double kind = kReduceSum;
  sum.attrs = &kind;
  ReduceKernel(sum);
  DLArray* out = ctx.outputs[0];
  Dispatch<kFloatTypes>(out->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Compute<T> count = ScalarFor<T>(ctx.attrs[0]);
    T* y = Data<T>(out);
    const int64_t size = NumElements(out);
    for (int64_t i = 0; i < size; ++i) y[i] = Store<T>(Load(y[i]) / count);
  });
}

}  // namespace dlarray::cpu
