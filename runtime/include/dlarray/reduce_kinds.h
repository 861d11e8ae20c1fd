/*!
 * \file dlarray/reduce_kinds.h
 * \brief The reductions of the `reduce` op, written once for host compilers and nvcc: what each
 *        kind accumulates, how it adds an element and how two partial results combine.
 *
 * The op sees its input as [outer, n, inner] and reduces the middle axis (n >= 1; the core's
 * Python side handles n == 0). Every reducer works on the compute value C of an element (float
 * for the 16-bit floats) and its index along the reduced axis:
 *
 *     Acc a = R::First(v0, 0);  a = R::Add(a, v1, 1); ...;  a = R::Combine(a, partial);
 *     out = Store<Out>(R::Value(a));
 *
 * Combine is commutative (ties go to the lower index), so partial results may be combined in
 * any order: lanes, threads and blocks alike.
 */
#ifndef DLARRAY_REDUCE_KINDS_H_
#define DLARRAY_REDUCE_KINDS_H_

#include <cstdint>
#include <type_traits>

#include "dlarray/dtype_dispatch.h"

namespace dlarray {

/*! \brief The `kind` attribute of the reduce op (and of scan: sum and prod only). */
enum ReduceKind : int {
  kReduceSum = 0,     //!< out dtype = input dtype; integers wrap in 64 bits, floats add in double
  kReduceProd = 1,    //!< as sum
  kReduceMin = 2,     //!< NaN propagates
  kReduceMax = 3,     //!< NaN propagates
  kReduceAny = 4,     //!< out bool
  kReduceAll = 5,     //!< out bool
  kReduceArgmin = 6,  //!< out int64: the first index of the minimum; the first NaN wins
  kReduceArgmax = 7,  //!< out int64: the first index of the maximum; the first NaN wins
  kNumReduceKinds = 8
};

/*! \brief Whether v is NaN (false for integers and bool). */
template <typename C>
DLARRAY_HOST_DEVICE bool IsNaNValue(C v) {
  return v != v;  // NOLINT(misc-redundant-expression): true only for NaN
}

/*! \brief The accumulator of sums and products: a wrapping 64-bit unsigned integer for the
 *         integers and bool, double for the floats (rounded to the element type once). */
template <typename C>
using WideAcc = std::conditional_t<std::is_integral_v<C>, unsigned long long, double>;

/*! \brief An arg-reduction's running best: the value and its index. */
template <typename C>
struct ArgAcc {
  C value;        //!< the best value so far
  int64_t index;  //!< its index along the reduced axis
};

/*! \brief The reducer of kind K on compute type C. */
template <int K, typename C>
struct Reducer;

template <typename C>
struct Reducer<kReduceSum, C> {
  using Acc = WideAcc<C>;
  DLARRAY_HOST_DEVICE static Acc First(C v, int64_t) { return static_cast<Acc>(v); }
  DLARRAY_HOST_DEVICE static Acc Add(Acc a, C v, int64_t) { return a + static_cast<Acc>(v); }
  DLARRAY_HOST_DEVICE static Acc Combine(Acc a, Acc b) { return a + b; }
  DLARRAY_HOST_DEVICE static Acc Value(Acc a) { return a; }
};

template <typename C>
struct Reducer<kReduceProd, C> {
  using Acc = WideAcc<C>;
  DLARRAY_HOST_DEVICE static Acc First(C v, int64_t) { return static_cast<Acc>(v); }
  DLARRAY_HOST_DEVICE static Acc Add(Acc a, C v, int64_t) { return a * static_cast<Acc>(v); }
  DLARRAY_HOST_DEVICE static Acc Combine(Acc a, Acc b) { return a * b; }
  DLARRAY_HOST_DEVICE static Acc Value(Acc a) { return a; }
};

// min and max: a NaN, once seen, stays (v < NaN and NaN < v are false). The conditions use | and
// & rather than || and && (here and in any / all): no branch, so that loops over lanes vectorise.
template <typename C>
struct Reducer<kReduceMin, C> {
  using Acc = C;
  DLARRAY_HOST_DEVICE static Acc First(C v, int64_t) { return v; }
  DLARRAY_HOST_DEVICE static Acc Add(Acc a, C v, int64_t) {
    return ((v < a) | IsNaNValue(v)) ? v : a;
  }
  DLARRAY_HOST_DEVICE static Acc Combine(Acc a, Acc b) { return Add(a, b, 0); }
  DLARRAY_HOST_DEVICE static Acc Value(Acc a) { return a; }
};

template <typename C>
struct Reducer<kReduceMax, C> {
  using Acc = C;
  DLARRAY_HOST_DEVICE static Acc First(C v, int64_t) { return v; }
  DLARRAY_HOST_DEVICE static Acc Add(Acc a, C v, int64_t) {
    return ((a < v) | IsNaNValue(v)) ? v : a;
  }
  DLARRAY_HOST_DEVICE static Acc Combine(Acc a, Acc b) { return Add(a, b, 0); }
  DLARRAY_HOST_DEVICE static Acc Value(Acc a) { return a; }
};

template <typename C>
struct Reducer<kReduceAny, C> {
  using Acc = bool;
  DLARRAY_HOST_DEVICE static Acc First(C v, int64_t) { return v != C(0); }
  DLARRAY_HOST_DEVICE static Acc Add(Acc a, C v, int64_t) { return a | (v != C(0)); }
  DLARRAY_HOST_DEVICE static Acc Combine(Acc a, Acc b) { return a | b; }
  DLARRAY_HOST_DEVICE static Acc Value(Acc a) { return a; }
};

template <typename C>
struct Reducer<kReduceAll, C> {
  using Acc = bool;
  DLARRAY_HOST_DEVICE static Acc First(C v, int64_t) { return v != C(0); }
  DLARRAY_HOST_DEVICE static Acc Add(Acc a, C v, int64_t) { return a & (v != C(0)); }
  DLARRAY_HOST_DEVICE static Acc Combine(Acc a, Acc b) { return a & b; }
  DLARRAY_HOST_DEVICE static Acc Value(Acc a) { return a; }
};

/*! \brief argmin (kLess: b better than a when b < a) and argmax: the better value wins, a NaN
 *         beats every number, and equal candidates (NaN with NaN too) go to the lower index. */
template <typename C, bool kMin>
struct ArgReducer {
  using Acc = ArgAcc<C>;
  /*! \brief The reducer of the value alone (a first pass may find it, a second its index). */
  using Extreme = Reducer<kMin ? kReduceMin : kReduceMax, C>;
  DLARRAY_HOST_DEVICE static bool Better(C b, C a) { return kMin ? b < a : a < b; }
  DLARRAY_HOST_DEVICE static Acc First(C v, int64_t i) { return Acc{v, i}; }
  // Elements arrive in increasing index order: a later one wins only when strictly better.
  DLARRAY_HOST_DEVICE static Acc Add(Acc a, C v, int64_t i) {
    if (IsNaNValue(a.value)) return a;
    return (IsNaNValue(v) || Better(v, a.value)) ? Acc{v, i} : a;
  }
  DLARRAY_HOST_DEVICE static Acc Combine(Acc a, Acc b) {
    const bool na = IsNaNValue(a.value), nb = IsNaNValue(b.value);
    if (na != nb) return na ? a : b;
    if (!na) {
      if (Better(b.value, a.value)) return b;
      if (Better(a.value, b.value)) return a;
    }
    return b.index < a.index ? b : a;
  }
  DLARRAY_HOST_DEVICE static int64_t Value(Acc a) { return a.index; }
};

template <typename C>
struct Reducer<kReduceArgmin, C> : ArgReducer<C, true> {};
template <typename C>
struct Reducer<kReduceArgmax, C> : ArgReducer<C, false> {};

/*!
 * \brief Calls f(std::integral_constant<int, K>{}) for kind k in [0, kNumReduceKinds); returns
 *        false for any other value.
 */
template <typename F>
inline bool VisitReduceKind(int k, F&& f) {
  switch (k) {
    case kReduceSum:
      return f(std::integral_constant<int, kReduceSum>{}), true;
    case kReduceProd:
      return f(std::integral_constant<int, kReduceProd>{}), true;
    case kReduceMin:
      return f(std::integral_constant<int, kReduceMin>{}), true;
    case kReduceMax:
      return f(std::integral_constant<int, kReduceMax>{}), true;
    case kReduceAny:
      return f(std::integral_constant<int, kReduceAny>{}), true;
    case kReduceAll:
      return f(std::integral_constant<int, kReduceAll>{}), true;
    case kReduceArgmin:
      return f(std::integral_constant<int, kReduceArgmin>{}), true;
    case kReduceArgmax:
      return f(std::integral_constant<int, kReduceArgmax>{}), true;
    default:
      return false;
  }
}

/*! \brief The output dtype of kind k for an input of dtype t. */
inline DLArrayDType ReduceOutputDType(int k, DLArrayDType t) {
  if (k == kReduceAny || k == kReduceAll) return DLArrayDType{kDLArrayBool, 8, 1};
  if (k == kReduceArgmin || k == kReduceArgmax) return DLArrayDType{kDLArrayInt, 64, 1};
  return t;
}

}  // namespace dlarray

#endif  // DLARRAY_REDUCE_KINDS_H_
