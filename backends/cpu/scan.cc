/*!
 * \file scan.cc
 * \brief scan: out[o, r, j] = x[o, 0, j] (+ or *) ... (+ or *) x[o, r, j], the input seen as a
 *        contiguous [outer, n, inner] array; with include_initial the output has n + 1 rows, the
 *        first the identity (0 or 1). Running values are kept in the reduction's wide accumulator
 *        (64-bit wrapping integers, double for floats) and rounded to the dtype on each store.
 *
 * Tasks are (outer, block of kColumnBlock columns); each one walks its rows in order.
 */
#include <algorithm>

#include "cpu_kernels.h"
#include "dlarray/reduce_kinds.h"
#include "dtype.h"
#include "elementwise_complex.h"
#include "parallel.h"

namespace dlarray::cpu {
namespace {

constexpr int64_t kColumnBlock = 256;

template <int K, typename T>
void Scan(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool initial) {
  using R = Reducer<K, Compute<T>>;
  using Acc = typename R::Acc;
  const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
  const int64_t rows_out = n + (initial ? 1 : 0);
  ParallelTasks(outer * blocks, ThreadsFor(outer * n * inner), [&](int64_t t, int) {
    const int64_t o = t / blocks, j0 = t % blocks * kColumnBlock;
    const int64_t w = std::min(kColumnBlock, inner - j0);
    const T* xs = x + o * n * inner + j0;
    T* ys = y + o * rows_out * inner + j0;
    Acc acc[kColumnBlock];
    std::fill(acc, acc + w, Acc(K == kReduceSum ? 0 : 1));
    if (initial) {
      for (int64_t j = 0; j < w; ++j) ys[j] = Store<T>(acc[j]);
      ys += inner;
    }
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t j = 0; j < w; ++j) {
        acc[j] = R::Add(acc[j], Load(xs[r * inner + j]), r);
        ys[r * inner + j] = Store<T>(acc[j]);
      }
    }
  });
}

}  // namespace

void ScanKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  DLArray* out = ctx.outputs[0];
  const int64_t outer = in->shape[0], n = in->shape[1], inner = in->ndim == 3 ? in->shape[2] : 1;
  const bool initial = ctx.attrs[1] != 0.0;
  if (in->dtype.code == kDLArrayComplex) return ScanComplexKernel(ctx);  // reduce_complex.cc
  Dispatch<kAllTypes>(in->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (ctx.attrs[0] == kReduceSum) {
      Scan<kReduceSum>(Data<const T>(in), Data<T>(out), outer, n, inner, initial);
    } else {
      Scan<kReduceProd>(Data<const T>(in), Data<T>(out), outer, n, inner, initial);
    }
  });
}

}  // namespace dlarray::cpu
