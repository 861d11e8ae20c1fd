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

// The reduction of the contiguous x[i0, i1) (i1 > i0) in kLanes accumulators. An arg-reduction
// takes two passes that both vectorise: the extreme value, then the first index holding it (or
// the first NaN); one pass with the index in every lane ran 6x slower.
template <typename R, typename T>
typename R::Acc ReduceRun(const T* x, int64_t i0, int64_t i1) {
  using Acc = typename R::Acc;
  if constexpr (HasExtreme<R>::value) {
    using E = typename R::Extreme;
    const auto best = E::Value(ReduceRun<E>(x, i0, i1));
    const bool nan = IsNaNValue(best);
    int64_t i = i0;
    while (nan ? !IsNaNValue(Load(x[i])) : !(Load(x[i]) == best)) ++i;  // best is in x[i0, i1)
    return Acc{best, i};
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
  if constexpr (kFastMinMax<R, T> && std::is_same_v<T, float>) {
    if (i1 - i0 >= 2 * kVecWidth) {  // whole vectors (GCC does not vectorise the lane loop)
      VecF best = LoadU(x + i0);
      VecI nan = best != best;
      int64_t i = i0 + kVecWidth;
      for (; i + kVecWidth <= i1; i += kVecWidth) {
        const VecF v = LoadU(x + i);
        best = std::is_same_v<R, Reducer<kReduceMin, T>> ? (v < best ? v : best)
                                                         : (best < v ? v : best);
        nan |= v != v;
      }
      float b = best[0];
      int32_t any_nan = nan[0];
      for (int k = 1; k < kVecWidth; ++k) {
        b = Select<R>(b, best[k]);
        any_nan |= nan[k];
      }
      for (; i < i1; ++i) {
        b = Select<R>(b, x[i]);
        any_nan |= x[i] != x[i];
      }
      return any_nan ? std::numeric_limits<float>::quiet_NaN() : b;
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

}  // namespace dlarray::cpu
