// reduce: out[o, j] = kind-reduction over r of x[o, r, j], the input a contiguous [outer, n, inner]
// array (n >= 1), for every real dtype and ReduceKind (dlarray/reduce_kinds.h, shared with the
// CPU backend), and the sum and product of the complex dtypes.
//
// inner == 1 (rows): a warp per row for short rows, a block of kThreads for long ones; each
// thread reduces a strided part of the row (16-byte loads), then the group combines the threads'
// results in shared memory. inner > 1 (columns): a thread per output element walks down its column,
// neighbouring threads reading neighbouring columns (coalesced). When the outputs alone give too
// few blocks to fill the GPU, the reduced axis is cut into pieces (blockIdx.y); each piece writes
// its partial result, and the last block of a column of the grid to finish (a ticket counted on
// the device's semaphores) combines the partials of its outputs: one launch for the whole
// reduction, the whole array's (axis=None) included, where a second kernel to combine the partials
// cost a launch more. Columns cut into more than 16 pieces are the exception: their last block
// would walk the pieces with a thread per column, so a second kernel (a warp per output) does it.
#include <algorithm>
#include <type_traits>

#include "dlarray/elementwise_complex.h"
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
  Out* out;
  typename R::Acc* partial;  // [pieces][outputs], pieces > 1 only
  unsigned int* tickets;     // a counter per blockIdx.x (the device's semaphores), pieces > 1 only
  int64_t outputs;
  // reduce_mean (a float Out): the value rounded to Out, then divided by this in Out's compute
  // type, as matrix_elementwise_divide_by_const would in a second launch; 0: none.
  Compute<Out> divisor{};
  __device__ Out Final(typename R::Acc a) const {
    const Out v = Store<Out>(R::Value(a));
    if constexpr (std::is_floating_point_v<Compute<Out>>) {
      if (divisor != Compute<Out>{}) return Store<Out>(Load(v) / divisor);
    }
    return v;
  }
  __device__ void put(int64_t idx, typename R::Acc a) const {
    if (gridDim.y == 1) {
      out[idx] = Final(a);
    } else {
      partial[blockIdx.y * outputs + idx] = a;
    }
  }
};

// Reads a partial another block wrote: from L2, past this multiprocessor's L1 (an accumulator is
// a number, a bool, a complex number or an arg-reduction's value and index).
template <typename A>
__device__ __forceinline__ A LoadL2(const A* p) {
  if constexpr (std::is_same_v<A, bool>) {
    return __ldcg(reinterpret_cast<const unsigned char*>(p)) != 0;
  } else if constexpr (std::is_arithmetic_v<A>) {
    return __ldcg(p);
  } else if constexpr (kIsComplex<A>) {
    return A{__ldcg(&p->re), __ldcg(&p->im)};
  } else {
    return A{LoadL2(&p->value), LoadL2(&p->index)};
  }
}

// The threads of each group of `group` (a power of two: a warp, the whole block, ...) combine
// their accumulators acc[] / has[] (shared, one per thread of the block) into the group's first
// slot. Every thread of the block calls it with the same group: it synchronises the block.
template <typename R>
__device__ __forceinline__ void GroupCombine(typename R::Acc* acc, bool* has, int group) {
  const int lane = threadIdx.x % group;
  __syncthreads();
  for (int s = group / 2; s > 0; s /= 2) {
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
  // After the first element (any is true): no select per element.
  template <typename V>
  __device__ __forceinline__ void add_more(V v, int64_t i) {
    a = R::Add(a, v, i);
  }
};

// Chunks c + u * kStep (u < 4) of cs, loaded at once (four in flight), then added in index order
// (cs[c] starts at element b0 + c * kV of the row). kStarted: run has its first element already.
template <bool kStarted, int kStep, typename R, typename T>
__device__ __forceinline__ void AddFour(Running<R>& run, const Chunk<T>* cs, int64_t c,
                                        int64_t b0) {
  constexpr int kV = Chunk<T>::kSize;
  Chunk<T> v[4];
#pragma unroll
  for (int u = 0; u < 4; ++u) v[u] = cs[c + u * kStep];
#pragma unroll
  for (int u = 0; u < 4; ++u) {
#pragma unroll
    for (int k = 0; k < kV; ++k) {
      const int64_t i = b0 + (c + u * kStep) * kV + k;
      if constexpr (kStarted) {
        run.add_more(Load(v[u].v[k]), i);
      } else {
        run.add(Load(v[u].v[k]), i);
      }
    }
  }
}

// Whether this block is the last of its grid column (the pieces of the same outputs) to finish.
// Every thread of the block calls it after writing its partials. The last block resets its
// counter for the next launch (the stream orders the launches that share the semaphores).
__device__ __forceinline__ bool LastPiece(unsigned int* tickets) {
  __shared__ bool last;
  __threadfence();  // this thread's partials reach the GPU before the block takes its ticket
  __syncthreads();
  if (threadIdx.x == 0) {
    last = atomicAdd(&tickets[blockIdx.x], 1u) == gridDim.y - 1;
    if (last) tickets[blockIdx.x] = 0;
  }
  __syncthreads();
  if (last) __threadfence();  // the partials are read after the ticket that counted them
  return last;
}

// In the last block of a grid column: out[idx] for idx in [first, end) (block-uniform bounds),
// the partials of every piece combined. The block's threads split into groups, one per output, as
// large as the outputs allow (the whole block for a row, a thread each for 256 columns), a group's
// lanes striding over the pieces: a few outputs of a thousand pieces each would keep a lone
// thread per output walking them long after the other blocks are done.
template <typename R, typename Out>
__device__ __forceinline__ void CombinePieces(const Sink<R, Out>& sink, int64_t first, int64_t end,
                                              typename R::Acc* acc, bool* has) {
  int group = kThreads;
  while (group > 1 && group * (end - first) > kThreads) group /= 2;
  const int lane = threadIdx.x % group;
  const int64_t pieces = gridDim.y;
  for (int64_t base = first; base < end; base += kThreads / group) {
    const int64_t idx = base + threadIdx.x / group;
    typename R::Acc a{};
    bool any = false;
    if (idx < end) {
#pragma unroll 4
      for (int64_t p = lane; p < pieces; p += group) {
        const typename R::Acc b = LoadL2(&sink.partial[p * sink.outputs + idx]);
        a = any ? R::Combine(a, b) : b;
        any = true;
      }
    }
    acc[threadIdx.x] = a;
    has[threadIdx.x] = any;
    GroupCombine<R>(acc, has, group);
    if (lane == 0 && idx < end) sink.out[idx] = sink.Final(acc[threadIdx.x]);
  }
}

// Rows of n elements, a group of kGroup threads per (row, piece): a warp for short rows, the
// block for long ones (and for the whole array, one row). The aligned middle of a piece is read
// in 16-byte chunks, four chunks in flight per thread (memory-level parallelism is what a
// reduction is bound by); the few elements before the first aligned chunk and after the last are
// read one by one. Each thread still adds its elements in index order before the group combines.
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
    if (c + 3 * kGroup < chunks) {  // the first four: the loop below then never asks run.any
      AddFour<false, kGroup>(run, cs, c, b0);
      c += 4 * kGroup;
    }
    for (; c + 3 * kGroup < chunks; c += 4 * kGroup) AddFour<true, kGroup>(run, cs, c, b0);
    if (c < chunks) {  // the last one to three chunks, loaded at once too
      Chunk<T> v[3];
#pragma unroll
      for (int u = 0; u < 3; ++u) {
        if (c + u * kGroup < chunks) v[u] = cs[c + u * kGroup];
      }
#pragma unroll
      for (int u = 0; u < 3; ++u) {
        if (c + u * kGroup >= chunks) break;
#pragma unroll
        for (int k = 0; k < kV; ++k) run.add(Load(v[u].v[k]), b0 + (c + u * kGroup) * kV + k);
      }
    }
    for (int64_t i = b1 + lane; i < r1; i += kGroup) run.add(Load(xs[i]), i);
  }
  acc[threadIdx.x] = run.a;
  has[threadIdx.x] = run.any;
  GroupCombine<R>(acc, has, kGroup);
  // A piece's first element went to some lane of the group: the group's first slot has it.
  if (lane == 0 && row < rows) sink.put(row, acc[threadIdx.x]);
  if (gridDim.y > 1 && LastPiece(sink.tickets)) {
    const int64_t first = static_cast<int64_t>(blockIdx.x) * (kThreads / kGroup);
    CombinePieces<R>(sink, first, min(rows, first + kThreads / kGroup), acc, has);
  }
}

// A thread per output (o, j) of the outer x inner outputs and piece blockIdx.y; four rows' loads
// in flight at a time.
template <typename R, typename T, typename Out>
__global__ void __launch_bounds__(kThreads)
    ColumnKernel(const T* x, int64_t outer, int64_t n, int64_t inner, int64_t rows_per_piece,
                 Sink<R, Out> sink) {
  __shared__ typename R::Acc acc[kThreads];  // the last block's combine
  __shared__ bool has[kThreads];
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kThreads;
  const int64_t idx = first + threadIdx.x;
  const int64_t outputs = outer * inner;
  if (idx < outputs) {
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
  if (gridDim.y > 1 && sink.tickets != nullptr && LastPiece(sink.tickets)) {
    CombinePieces<R>(sink, first, min(outputs, first + kThreads), acc, has);
  }
}

// out[idx] = the pieces' partial results combined, a warp per output, its lanes striding over the
// pieces: for columns cut into many pieces, where the column kernel's last block would walk them
// with a thread per column long after the other blocks are done (axis 0 of 4096 x 4096 took
// 1.10-1.26x torch's time that way, 0.80-0.97x with this second launch, H200).
template <typename R, typename Out>
__global__ void __launch_bounds__(kThreads) CombineKernel(int64_t pieces, Sink<R, Out> sink) {
  using Acc = typename R::Acc;
  constexpr int kWarp = 32;
  __shared__ Acc acc[kThreads];
  __shared__ bool has[kThreads];
  const int lane = threadIdx.x % kWarp;
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * (kThreads / kWarp) + threadIdx.x / kWarp;
  const int64_t outputs = sink.outputs;
  Acc a{};
  bool any = false;
  if (idx < outputs) {
    for (int64_t p = lane; p < pieces; p += kWarp) {
      const Acc b = sink.partial[p * outputs + idx];
      a = any ? R::Combine(a, b) : b;
      any = true;
    }
  }
  acc[threadIdx.x] = a;
  has[threadIdx.x] = any;
  GroupCombine<R>(acc, has, kWarp);
  if (lane == 0 && idx < outputs) sink.out[idx] = sink.Final(acc[threadIdx.x]);
}

// sum (K = kReduceSum) and prod of complex64/complex128 in complex128, as the real kernels add
// floats in double: the Reducer interface of dlarray/reduce_kinds.h on the storage type.
template <int K, typename T>
struct ComplexReducer {
  using Acc = Complex<double>;
  __device__ static Acc Widen(T v) {
    return Acc{static_cast<double>(v.re), static_cast<double>(v.im)};
  }
  __device__ static Acc First(T v, int64_t) { return Widen(v); }
  __device__ static Acc Add(Acc a, T v, int64_t) { return Combine(a, Widen(v)); }
  __device__ static Acc Combine(Acc a, Acc b) { return K == kReduceSum ? a + b : a * b; }
  __device__ static Acc Value(Acc a) { return a; }
};

// Blocks of kKernel (kThreads each) that one multiprocessor holds at once, asked once per kernel:
// its registers decide it, not only its threads. (Pieces planned for 2048 / kThreads blocks per
// multiprocessor made 1.2-1.3 waves of the kernels that hold fewer, and the whole-array reductions
// took 1.15-1.3x the time of one wave on an H200.)
template <auto kKernel>
int ResidentBlocks() {
  static const int blocks = [] {
    int b = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kKernel, kThreads, 0) != cudaSuccess) {
      (void)cudaGetLastError();  // not the launch's error
      b = 0;
    }
    return b > 0 ? b : 2048 / kThreads;
  }();
  return blocks;
}

// Rows of at most this many elements get a warp each rather than a block. A block per row of
// 4096 floats gave each thread one round of four chunks and then the block's combine, in 5.2
// waves; a warp per row reads eight rounds a lane, and the rows fit one wave. H100, float32 sum
// over axis 1 against torch: 4096 x 4096 1.00 -> 0.87, 8192 x 2048 (the old limit: two chunks
// a thread) 1.37 -> 0.96, 16384 x 4096 1.10 -> 0.97. Warps for 8192-element rows were slower
// (2048 x 8192: 0.96 -> 0.98), and for 16384 slower than torch (1.03).
constexpr int64_t kWarpRowLimit = 4096;

// divisor: reduce_mean's (see Sink), else 0.
template <typename R, typename T, typename Out>
void Launch(const LaunchEnv& env, const char* op, const T* x, Out* out, int64_t outer, int64_t n,
            int64_t inner, Compute<Out> divisor = Compute<Out>{}) {
  using Acc = typename R::Acc;
  const bool rows = inner == 1;
  const int group = !rows ? 1 : n <= kWarpRowLimit ? 32 : kThreads;  // threads per output
  const int64_t outputs = outer * inner;
  const int64_t blocks = CeilDiv(outputs * group, kThreads);
  // Pieces: enough blocks for one full wave; each thread still handles a few elements. A grid
  // column counts its finished pieces on a semaphore of its own.
  const int per_sm = !rows         ? ResidentBlocks<ColumnKernel<R, T, Out>>()
                     : group == 32 ? ResidentBlocks<RowKernel<R, 32, T, Out>>()
                                   : ResidentBlocks<RowKernel<R, kThreads, T, Out>>();
  const int64_t target = static_cast<int64_t>(env.device->sm_count(env.id)) * per_sm;
  int64_t pieces = 1;
  if (blocks < target && blocks <= CudaDevice::kNumSemaphores) {
    const int64_t per_piece = rows ? 64 * group : 64;  // rows: four chunks of 16 B a thread
    pieces = std::clamp<int64_t>(std::min(target / blocks, CeilDiv(n, per_piece)), 1, 65535);
  }
  // Pieces of rows: a whole number of rounds (each thread of the group four 16-byte chunks), so
  // no thread ends with a short round (a multiple of 16 elements: a piece of an aligned row starts
  // aligned). The whole-array sum of 64 MB took 24.7 us in 792 pieces of 20-21 chunks a thread,
  // 22.9 in 512 pieces of 32 (H200; torch 21.0).
  const int64_t unit = rows ? std::max<int64_t>(16, 4 * group * Chunk<T>::kSize) : 1;
  const int64_t rows_per_piece = CeilDiv(CeilDiv(n, pieces), unit) * unit;
  pieces = CeilDiv(n, rows_per_piece);
  const size_t partial_bytes = static_cast<size_t>(pieces * outputs) * sizeof(Acc);
  Sink<R, Out> sink{out, nullptr, nullptr, outputs, divisor};
  // Columns in more pieces than this combine them in a second kernel (CombineKernel).
  constexpr int64_t kColumnLastBlockPieces = 16;
  const bool second_kernel = !rows && pieces > kColumnLastBlockPieces;
  if (pieces > 1) {
    if (!second_kernel) sink.tickets = env.device->semaphores(env.id);
    sink.partial = static_cast<Acc*>(env.device->allocate(env.id, partial_bytes));
  }
  const dim3 grid(static_cast<unsigned>(RowGrid(blocks, op)), static_cast<unsigned>(pieces));
  if (!rows) {
    ColumnKernel<R><<<grid, kThreads, 0, env.stream>>>(x, outer, n, inner, rows_per_piece, sink);
  } else if (group == 32) {
    RowKernel<R, 32><<<grid, kThreads, 0, env.stream>>>(x, outer, n, rows_per_piece, sink);
  } else {
    RowKernel<R, kThreads><<<grid, kThreads, 0, env.stream>>>(x, outer, n, rows_per_piece, sink);
  }
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess && second_kernel) {
    CombineKernel<R>
        <<<RowGrid(CeilDiv(outputs * 32, kThreads), op), kThreads, 0, env.stream>>>(pieces, sink);
    err = cudaGetLastError();
  }
  // Stream-ordered: the scratch may go back to the cache right after the launches.
  if (sink.partial != nullptr) env.device->free(env.id, sink.partial, partial_bytes);
  if (err != cudaSuccess) ThrowCudaError(err, "reduce", __FILE__, __LINE__);
}

}  // namespace

void ReduceKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  DLArray* out = ctx.outputs[0];
  const int64_t outer = in->shape[0], n = in->shape[1], inner = in->ndim == 3 ? in->shape[2] : 1;
  const LaunchEnv env = Prepare(ctx);
  if (in->dtype.code == kDLArrayComplex) {
    // Elements off their size's alignment (a view reinterpreting other data) cannot be read in
    // 16-byte chunks: reduce_complex.cu's column walk reads them one by one.
    if (reinterpret_cast<uintptr_t>(Data<const char>(in)) % (in->dtype.bits / 8) != 0) {
      return ReduceComplexKernel(ctx);
    }
    return Dispatch<kComplexTypes>(in->dtype, ctx.op_name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = Data<const T>(in);
      if (static_cast<int>(ctx.attrs[0]) == kReduceSum) {
        Launch<ComplexReducer<kReduceSum, T>>(env, ctx.op_name, x, Data<T>(out), outer, n, inner);
      } else {
        Launch<ComplexReducer<kReduceProd, T>>(env, ctx.op_name, x, Data<T>(out), outer, n, inner);
      }
    });
  }
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

// mean's one pass: the sum, rounded to x's dtype, divided by count in the compute type (the bits
// of reduce kind 0 followed by matrix_elementwise_divide_by_const).
void ReduceMeanKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  DLArray* out = ctx.outputs[0];
  const int64_t outer = in->shape[0], n = in->shape[1], inner = in->ndim == 3 ? in->shape[2] : 1;
  const LaunchEnv env = Prepare(ctx);
  Dispatch<kFloatTypes>(in->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Launch<Reducer<kReduceSum, Compute<T>>>(env, ctx.op_name, Data<const T>(in), Data<T>(out),
                                            outer, n, inner, ScalarFor<T>(ctx.attrs[0]));
  });
}

}  // namespace cuda
}  // namespace dlarray
