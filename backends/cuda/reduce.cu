// reduce: out[o, j] = kind-reduction over r of x[o, r, j], the input a contiguous [outer, n, inner]
// array (n >= 1), for every real dtype and ReduceKind (dlarray/reduce_kinds.h, shared with the
// CPU backend).
//
// inner == 1 (rows): a warp per row for short rows, a block of kThreads for long ones; each
// thread reduces a strided part of the row (16-byte loads), then the group combines the threads'
// results in shared memory. inner > 1 (columns): a thread per output element walks down its column,
// neighbouring threads reading neighbouring columns (coalesced). When the outputs alone give too
// few blocks to fill the GPU, the reduced axis is cut into pieces (blockIdx.y); each piece writes
// its partial result and a second kernel combines them per output.
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

// The kGroup threads of a group (a warp or the whole block) combine their accumulators acc[] /
// has[] (shared, one per thread of the block) into the group's first slot. Every thread of the
// block calls it: it synchronises the block.
template <typename R, int kGroup>
__device__ void GroupCombine(typename R::Acc* acc, bool* has) {
  const int lane = threadIdx.x % kGroup;
  __syncthreads();
  for (int s = kGroup / 2; s > 0; s /= 2) {
    if (lane < s && has[threadIdx.x + s]) {
      acc[threadIdx.x] = has[threadIdx.x] ? R::Combine(acc[threadIdx.x], acc[threadIdx.x + s])
                                          : acc[threadIdx.x + s];
      has[threadIdx.x] = true;
    }
    __syncthreads();
  }
}

// 16 bytes of T: one vector load.
template <typename T>
struct alignas(16) Chunk {
  static constexpr int kSize = 16 / static_cast<int>(sizeof(T));
  T v[kSize];
};

// A thread's running reduction: First at its first element, then Add, in index order (the
// arg-reductions keep the first of equal values).
template <typename R>
struct Running {
  typename R::Acc a{};
  bool any = false;
  template <typename V>
  __device__ __forceinline__ void add(V v, int64_t i) {
    a = any ? R::Add(a, v, i) : R::First(v, i);
    any = true;
  }
};

// Rows of n elements, a group of kGroup threads per (row, piece): a warp for short rows, the
// block for long ones. The aligned middle of a piece is read in 16-byte chunks, four chunks in
// flight per thread (memory-level parallelism is what a reduction is bound by); the few elements
// before the first aligned chunk and after the last are read one by one. Each thread still adds
// its elements in index order before the group combines.
template <typename R, int kGroup, typename T, typename Out>
__global__ void __launch_bounds__(kThreads)
    RowKernel(const T* x, int64_t rows, int64_t n, int64_t rows_per_piece, Sink<R, Out> sink) {
  using Acc = typename R::Acc;
  constexpr int kV = Chunk<T>::kSize;
  __shared__ Acc acc[kThreads];
  __shared__ bool has[kThreads];
  const int lane = threadIdx.x % kGroup;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (kThreads / kGroup) + threadIdx.x / kGroup;
  Running<R> run;
  if (row < rows) {
    const int64_t r0 = static_cast<int64_t>(blockIdx.y) * rows_per_piece;
    const int64_t r1 = min(n, r0 + rows_per_piece);
    const T* xs = x + row * n;
    const int64_t misaligned = (reinterpret_cast<uintptr_t>(xs + r0) % 16) / sizeof(T);
    const int64_t b0 = min(r1, r0 + (misaligned == 0 ? 0 : kV - misaligned));
    const int64_t chunks = (r1 - b0) / kV, b1 = b0 + chunks * kV;
    for (int64_t i = r0 + lane; i < b0; i += kGroup) run.add(Load(xs[i]), i);
    const Chunk<T>* cs = reinterpret_cast<const Chunk<T>*>(xs + b0);
    int64_t c = lane;
    for (; c + 3 * kGroup < chunks; c += 4 * kGroup) {
      Chunk<T> v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) v[u] = cs[c + u * kGroup];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
#pragma unroll
        for (int k = 0; k < kV; ++k) run.add(Load(v[u].v[k]), b0 + (c + u * kGroup) * kV + k);
      }
    }
    for (; c < chunks; c += kGroup) {
      const Chunk<T> v = cs[c];
#pragma unroll
      for (int k = 0; k < kV; ++k) run.add(Load(v.v[k]), b0 + c * kV + k);
    }
    for (int64_t i = b1 + lane; i < r1; i += kGroup) run.add(Load(xs[i]), i);
  }
  acc[threadIdx.x] = run.a;
  has[threadIdx.x] = run.any;
  GroupCombine<R, kGroup>(acc, has);
  // A piece's first element went to some lane of the group: the group's first slot has it.
  if (lane == 0 && row < rows) sink.put(row, acc[threadIdx.x]);
}

// A thread per output (o, j) of the outer x inner outputs and piece blockIdx.y; four rows' loads
// in flight at a time.
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
  int64_t r = r0 + 1;
  for (; r + 3 < r1; r += 4) {
    const auto v0 = Load(xs[r * inner]), v1 = Load(xs[(r + 1) * inner]);
    const auto v2 = Load(xs[(r + 2) * inner]), v3 = Load(xs[(r + 3) * inner]);
    a = R::Add(R::Add(R::Add(R::Add(a, v0, r), v1, r + 1), v2, r + 2), v3, r + 3);
  }
  for (; r < r1; ++r) a = R::Add(a, Load(xs[r * inner]), r);
  sink.put(idx, a);
}

// out[idx] = the pieces' partial results combined: a warp per output, its lanes striding over
// the pieces (a single thread walking a thousand pieces took longer than the first kernel).
template <typename R, typename Out>
__global__ void __launch_bounds__(kThreads)
    CombineKernel(const typename R::Acc* partial, int64_t pieces, int64_t outputs, Out* out) {
  using Acc = typename R::Acc;
  constexpr int kWarp = 32;
  __shared__ Acc acc[kThreads];
  __shared__ bool has[kThreads];
  const int lane = threadIdx.x % kWarp;
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * (kThreads / kWarp) + threadIdx.x / kWarp;
  Acc a{};
  bool any = false;
  if (idx < outputs) {
    for (int64_t p = lane; p < pieces; p += kWarp) {
      const Acc b = partial[p * outputs + idx];
      a = any ? R::Combine(a, b) : b;
      any = true;
    }
  }
  acc[threadIdx.x] = a;
  has[threadIdx.x] = any;
  GroupCombine<R, kWarp>(acc, has);
  if (lane == 0 && idx < outputs) out[idx] = Store<Out>(R::Value(acc[threadIdx.x]));
}

// Rows shorter than this get a warp each rather than a block.
constexpr int64_t kWarpRowLimit = 2048;

template <typename R, typename T, typename Out>
void Launch(const LaunchEnv& env, const char* op, const T* x, Out* out, int64_t outer, int64_t n,
            int64_t inner) {
  using Acc = typename R::Acc;
  const bool rows = inner == 1;
  const int group = !rows ? 1 : n < kWarpRowLimit ? 32 : kThreads;  // threads per output
  const int64_t outputs = outer * inner;
  const int64_t blocks = CeilDiv(outputs * group, kThreads);
  // Pieces: enough blocks for one full wave; each thread still handles a few elements.
  const int64_t target = FullWaveBlocks(env, kThreads);
  int64_t pieces = 1;
  if (blocks < target) {
    const int64_t per_piece = rows ? 64 * group : 64;  // rows: four chunks of 16 B a thread
    pieces = std::clamp<int64_t>(std::min(target / blocks, CeilDiv(n, per_piece)), 1, 65535);
  }
  // Pieces of a multiple of 16 elements: a piece of an aligned row starts aligned.
  const int64_t rows_per_piece = rows ? CeilDiv(CeilDiv(n, pieces), 16) * 16 : CeilDiv(n, pieces);
  pieces = CeilDiv(n, rows_per_piece);
  const size_t partial_bytes = static_cast<size_t>(pieces * outputs) * sizeof(Acc);
  Acc* partial =
      pieces > 1 ? static_cast<Acc*>(env.device->allocate(env.id, partial_bytes)) : nullptr;
  const Sink<R, Out> sink{out, partial, outputs};
  const dim3 grid(static_cast<unsigned>(RowGrid(blocks, op)), static_cast<unsigned>(pieces));
  if (!rows) {
    ColumnKernel<R><<<grid, kThreads, 0, env.stream>>>(x, outer, n, inner, rows_per_piece, sink);
  } else if (group == 32) {
    RowKernel<R, 32><<<grid, kThreads, 0, env.stream>>>(x, outer, n, rows_per_piece, sink);
  } else {
    RowKernel<R, kThreads><<<grid, kThreads, 0, env.stream>>>(x, outer, n, rows_per_piece, sink);
  }
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess && partial != nullptr) {
    const int64_t combine_blocks = CeilDiv(outputs * 32, kThreads);
    CombineKernel<R>
        <<<RowGrid(combine_blocks, op), kThreads, 0, env.stream>>>(partial, pieces, outputs, out);
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
