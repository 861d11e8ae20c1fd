// reduce: out[o, j] = kind-reduction over r of x[o, r, j], the input a contiguous [outer, n, inner]
// array (n >= 1), for every real dtype and ReduceKind (dlarray/reduce_kinds.h, shared with the
// CPU backend).
//
// inner == 1 (rows): a block of kThreads per row; each thread reduces a strided part of the row,
// then the block combines the threads' results in shared memory. inner > 1 (columns): a thread
// per output element walks down its column, neighbouring threads reading neighbouring columns
// (coalesced). When the outputs alone give too few blocks to fill the GPU, the reduced axis is cut
// into pieces (blockIdx.y); each piece writes its partial result and a second kernel combines
// them per output.
#include <algorithm>

#include "dlarray/reduce_kinds.h"
#include "dtype.cuh"
#include "elementwise_complex.h"
#include "kernel_util.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

constexpr int kThreads = 256;

// The output of a piece: the final value (one piece) or the accumulator (several).
template <typename R, typename Out>
struct Sink {
  Out* out;                  // pieces == 1
  typename R::Acc* partial;  // [pieces][outputs]
  int64_t outputs;
  __device__ void put(int64_t idx, typename R::Acc a) const {
    if (partial == nullptr) {
      out[idx] = Store<Out>(R::Value(a));
    } else {
      partial[blockIdx.y * outputs + idx] = a;
    }
  }
};

// One block per (row, piece): rows of n elements, pieces of rows_per_piece.
template <typename R, typename T, typename Out>
__global__ void __launch_bounds__(kThreads)
    RowKernel(const T* x, int64_t n, int64_t rows_per_piece, Sink<R, Out> sink) {
  using Acc = typename R::Acc;
  __shared__ Acc acc[kThreads];
  __shared__ bool has[kThreads];
  const int64_t row = blockIdx.x;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * rows_per_piece;
  const int64_t r1 = min(n, r0 + rows_per_piece);
  const T* xs = x + row * n;
  Acc a{};
  bool any = false;
  for (int64_t i = r0 + threadIdx.x; i < r1; i += kThreads) {
    const auto v = Load(xs[i]);
    a = any ? R::Add(a, v, i) : R::First(v, i);
    any = true;
  }
  acc[threadIdx.x] = a;
  has[threadIdx.x] = any;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (threadIdx.x < s && has[threadIdx.x + s]) {
      acc[threadIdx.x] = has[threadIdx.x] ? R::Combine(acc[threadIdx.x], acc[threadIdx.x + s])
                                          : acc[threadIdx.x + s];
      has[threadIdx.x] = true;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) sink.put(row, acc[0]);  // the piece is never empty: thread 0 had r0
}

// A thread per output (o, j) of the outer x inner outputs and piece blockIdx.y.
template <typename R, typename T, typename Out>
__global__ void __launch_bounds__(kThreads)
    ColumnKernel(const T* x, int64_t outer, int64_t n, int64_t inner, int64_t rows_per_piece,
                 Sink<R, Out> sink) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (idx >= outer * inner) return;
  const int64_t o = idx / inner, j = idx % inner;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * rows_per_piece;
  const int64_t r1 = min(n, r0 + rows_per_piece);
  const T* xs = x + o * n * inner + j;
  typename R::Acc a = R::First(Load(xs[r0 * inner]), r0);
  for (int64_t r = r0 + 1; r < r1; ++r) a = R::Add(a, Load(xs[r * inner]), r);
  sink.put(idx, a);
}

// out[idx] = the pieces' partial results combined.
template <typename R, typename Out>
__global__ void CombineKernel(const typename R::Acc* partial, int64_t pieces, int64_t outputs,
                              Out* out) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= outputs) return;
  typename R::Acc a = partial[idx];
  for (int64_t p = 1; p < pieces; ++p) a = R::Combine(a, partial[p * outputs + idx]);
  out[idx] = Store<Out>(R::Value(a));
}

template <typename R, typename T, typename Out>
void Launch(const LaunchEnv& env, const char* op, const T* x, Out* out, int64_t outer, int64_t n,
            int64_t inner) {
  using Acc = typename R::Acc;
  const bool rows = inner == 1;
  const int64_t outputs = outer * inner;
  const int64_t blocks = rows ? outer : CeilDiv(outputs, kThreads);
  // Pieces: enough blocks for one full wave; each thread still handles a few elements.
  const int64_t target = FullWaveBlocks(env, kThreads);
  int64_t pieces = 1;
  if (blocks < target) {
    const int64_t per_piece = rows ? 8 * kThreads : 64;
    pieces = std::clamp<int64_t>(std::min(target / blocks, CeilDiv(n, per_piece)), 1, 65535);
  }
  const int64_t rows_per_piece = CeilDiv(n, pieces);
  pieces = CeilDiv(n, rows_per_piece);
  const size_t partial_bytes = static_cast<size_t>(pieces * outputs) * sizeof(Acc);
  Acc* partial =
      pieces > 1 ? static_cast<Acc*>(env.device->allocate(env.id, partial_bytes)) : nullptr;
  const Sink<R, Out> sink{out, partial, outputs};
  const dim3 grid(static_cast<unsigned>(rows ? RowGrid(outer, op) : RowGrid(blocks, op)),
                  static_cast<unsigned>(pieces));
  if (rows) {
    RowKernel<R><<<grid, kThreads, 0, env.stream>>>(x, n, rows_per_piece, sink);
  } else {
    ColumnKernel<R><<<grid, kThreads, 0, env.stream>>>(x, outer, n, inner, rows_per_piece, sink);
  }
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess && partial != nullptr) {
    CombineKernel<R><<<RowGrid(CeilDiv(outputs, kThreads), op), kThreads, 0, env.stream>>>(
        partial, pieces, outputs, out);
    err = cudaGetLastError();
  }
  // Stream-ordered: the scratch may go back to the cache right after the launches.
  if (partial != nullptr) env.device->free(env.id, partial, partial_bytes);
  if (err != cudaSuccess) ThrowCudaError(err, "reduce", __FILE__, __LINE__);
}

}  // namespace

void ReduceKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  DLArray* out = ctx.outputs[0];
  const int64_t outer = in->shape[0], n = in->shape[1], inner = in->ndim == 3 ? in->shape[2] : 1;
  if (in->dtype.code == kDLArrayComplex) return ReduceComplexKernel(ctx);  // reduce_complex.cu
  const LaunchEnv env = Prepare(ctx);
  Dispatch<kAllTypes>(in->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    VisitReduceKind(static_cast<int>(ctx.attrs[0]), [&](auto k) {
      constexpr int K = decltype(k)::value;
      using R = Reducer<K, Compute<T>>;
      const T* x = Data<const T>(in);
      if constexpr (K == kReduceAny || K == kReduceAll) {
        Launch<R>(env, ctx.op_name, x, Data<bool>(out), outer, n, inner);
      } else if constexpr (K >= kReduceArgmin) {
        Launch<R>(env, ctx.op_name, x, Data<int64_t>(out), outer, n, inner);
      } else {
        Launch<R>(env, ctx.op_name, x, Data<T>(out), outer, n, inner);
      }
    });
  });
}

}  // namespace cuda
}  // namespace dlarray
