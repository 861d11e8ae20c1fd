/*!
 * \file reduce_complex.cc
 * \brief The reduce (sum, prod) and scan (cumulative sum, product) kernels of complex64 and
 *        complex128, which reduce.cc and scan.cc hand complex inputs to: accumulated in
 *        complex128 (as the real kernels add floats in double), one output column (o, j) at a
 *        time, the columns in parallel. Compiled once with the complex table (not per ISA).
 */
#include "cpu_kernels.h"
#include "dlarray/elementwise_complex.h"
#include "dlarray/reduce_kinds.h"
#include "dtype.h"
#include "elementwise_complex.h"
#include "parallel.h"

namespace dlarray::cpu {
namespace {

using Wide = Complex<double>;

template <typename T>
Wide Widen(T v) {
  return Wide{static_cast<double>(v.re), static_cast<double>(v.im)};
}
template <typename T>
T Narrow(Wide v) {
  using R = decltype(T::re);
  return T{static_cast<R>(v.re), static_cast<R>(v.im)};
}
Wide Combine(int kind, Wide a, Wide b) { return kind == kReduceSum ? a + b : a * b; }

// Sum or product over r of x[o, r, j] for every column (o, j) of [outer, n, inner] (n >= 1).
template <typename T>
void Reduce(int kind, const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  ParallelFor(outer * inner, outer * inner * n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const int64_t o = c / inner, j = c % inner;
      const T* p = x + o * n * inner + j;
      Wide a = Widen(p[0]);
      for (int64_t r = 1; r < n; ++r) a = Combine(kind, a, Widen(p[r * inner]));
      y[c] = Narrow<T>(a);
    }
  });
}

// The running sum or product along r, with the identity first when `initial`.
template <typename T>
void Scan(int kind, const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool initial) {
  const int64_t m = n + (initial ? 1 : 0);
  ParallelFor(outer * inner, outer * inner * m, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const int64_t o = c / inner, j = c % inner;
      const T* p = x + o * n * inner + j;
      T* q = y + o * m * inner + j;
      Wide a{kind == kReduceSum ? 0.0 : 1.0, 0.0};
      if (initial) q[0] = Narrow<T>(a), q += inner;
      for (int64_t r = 0; r < n; ++r) {
        a = r == 0 && !initial ? Widen(p[0]) : Combine(kind, a, Widen(p[r * inner]));
        q[r * inner] = Narrow<T>(a);
      }
    }
  });
}

}  // namespace

void ReduceComplexKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  const int64_t outer = in->shape[0], n = in->shape[1], inner = in->ndim == 3 ? in->shape[2] : 1;
  const int kind = static_cast<int>(ctx.attrs[0]);
  Dispatch<kComplexTypes>(in->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Reduce(kind, Data<const T>(in), Data<T>(ctx.outputs[0]), outer, n, inner);
  });
}

void ScanComplexKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  const int64_t outer = in->shape[0], n = in->shape[1], inner = in->ndim == 3 ? in->shape[2] : 1;
  Dispatch<kComplexTypes>(in->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Scan(static_cast<int>(ctx.attrs[0]), Data<const T>(in), Data<T>(ctx.outputs[0]), outer, n,
         inner, ctx.attrs[1] != 0.0);
  });
}

}  // namespace dlarray::cpu
