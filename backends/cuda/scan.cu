// scan: out[o, r, j] = x[o, 0, j] (+ or *) ... (+ or *) x[o, r, j], the input a contiguous
// [outer, n, inner] array; with include_initial the output has n + 1 rows, the first the identity.
// Running values are kept in the reduction's wide accumulator (dlarray/reduce_kinds.h: 64-bit
// wrapping integers, double for floats), rounded to the dtype on each store.
//
// A thread per (o, j) walks its column in order (neighbouring threads read neighbouring
// columns). A long scan of few columns runs on few threads: a blocked scan (partial totals per
// piece, then a second pass) is the next step where that matters.
#include "dlarray/reduce_kinds.h"
#include "dtype.cuh"
#include "elementwise_complex.h"
#include "kernel_util.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

constexpr int kThreads = 256;

template <int K, typename T>
__global__ void __launch_bounds__(kThreads)
    ScanColumns(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool initial) {
  using R = Reducer<K, Compute<T>>;
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (idx >= outer * inner) return;
  const int64_t o = idx / inner, j = idx % inner;
  const T* xs = x + o * n * inner + j;
  T* ys = y + o * (n + (initial ? 1 : 0)) * inner + j;
  typename R::Acc acc(K == kReduceSum ? 0 : 1);
  if (initial) {
    ys[0] = Store<T>(acc);
    ys += inner;
  }
  for (int64_t r = 0; r < n; ++r) {
    acc = R::Add(acc, Load(xs[r * inner]), r);
    ys[r * inner] = Store<T>(acc);
  }
}

}  // namespace

void ScanKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  DLArray* out = ctx.outputs[0];
  const int64_t outer = in->shape[0], n = in->shape[1], inner = in->ndim == 3 ? in->shape[2] : 1;
  const bool initial = ctx.attrs[1] != 0.0;
  if (in->dtype.code == kDLArrayComplex) return ScanComplexKernel(ctx);  // reduce_complex.cu
  const LaunchEnv env = Prepare(ctx);
  const int grid = RowGrid(CeilDiv(outer * inner, kThreads), ctx.op_name);
  Dispatch<kAllTypes>(in->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = Data<const T>(in);
    T* y = Data<T>(out);
    if (ctx.attrs[0] == kReduceSum) {
      ScanColumns<kReduceSum><<<grid, kThreads, 0, env.stream>>>(x, y, outer, n, inner, initial);
    } else {
      ScanColumns<kReduceProd><<<grid, kThreads, 0, env.stream>>>(x, y, outer, n, inner, initial);
    }
  });
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) ThrowCudaError(err, "scan", __FILE__, __LINE__);
}

}  // namespace cuda
}  // namespace dlarray
