// scan (cumulative sum, product) of complex64/complex128, which scan.cu hands complex inputs to,
// and reduce (sum, prod) of complex data off its element alignment (reduce.cu reduces the rest
// with the real kernels): a thread per output column (o, j) of the contiguous [outer, n, inner]
// input walks it in order, accumulating in complex128 (as the real kernels add floats in double)
// with dlarray/elementwise_complex.h's arithmetic. Simple rather than fast: a long reduction of
// few columns runs on few threads.
#include "cuda_check.h"
#include "dlarray/elementwise_complex.h"
#include "dlarray/reduce_kinds.h"
#include "dtype.cuh"
#include "elementwise_complex.h"
#include "kernel_util.cuh"

namespace dlarray {
namespace cuda {
namespace {

constexpr int kThreads = 256;
using Wide = Complex<double>;

template <typename T>
__device__ Wide Widen(T v) {
  return Wide{static_cast<double>(v.re), static_cast<double>(v.im)};
}
template <typename T>
__device__ T Narrow(Wide v) {
  using R = decltype(T::re);
  return T{static_cast<R>(v.re), static_cast<R>(v.im)};
}

// kScan false: y[o, j] = the sum or product over r; true: y[o, r (+1), j] the running values.
template <bool kScan, typename T>
__global__ void __launch_bounds__(kThreads)
    ComplexColumns(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, int kind,
                   bool initial) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (idx >= outer * inner) return;
  const int64_t o = idx / inner, j = idx % inner;
  const T* xs = x + o * n * inner + j;
  Wide acc{kind == kReduceSum ? 0.0 : 1.0, 0.0};
  T* ys = kScan ? y + o * (n + (initial ? 1 : 0)) * inner + j : y + idx;
  if (kScan && initial) {
    ys[0] = Narrow<T>(acc);
    ys += inner;
  }
  for (int64_t r = 0; r < n; ++r) {
    const Wide v = Widen(xs[r * inner]);
    acc = r == 0 && !(kScan && initial) ? v : kind == kReduceSum ? acc + v : acc * v;
    if (kScan) ys[r * inner] = Narrow<T>(acc);
  }
  if (!kScan) ys[0] = Narrow<T>(acc);
}

template <bool kScan>
void Run(const KernelContext& ctx, bool initial) {
  const DLArray* in = ctx.inputs[0];
  const int64_t outer = in->shape[0], n = in->shape[1], inner = in->ndim == 3 ? in->shape[2] : 1;
  const LaunchEnv env = Prepare(ctx);
  const int grid = RowGrid(CeilDiv(outer * inner, kThreads), ctx.op_name);
  const int kind = static_cast<int>(ctx.attrs[0]);
  Dispatch<kComplexTypes>(in->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    ComplexColumns<kScan, T><<<grid, kThreads, 0, env.stream>>>(
        Data<const T>(in), Data<T>(ctx.outputs[0]), outer, n, inner, kind, initial);
    CHECK_LAUNCH("ComplexColumns");
  });
}

}  // namespace

void ReduceComplexKernel(const KernelContext& ctx) { Run<false>(ctx, false); }

void ScanComplexKernel(const KernelContext& ctx) { Run<true>(ctx, ctx.attrs[1] != 0.0); }

}  // namespace cuda
}  // namespace dlarray
