// softmax_cross_entropy: out[0] = mean over rows of -sum(y_ * log_softmax(y)), rows over the
// last axis, in one kernel, for every floating dtype (elements of type T computed in
// C = Compute<T>: float for float32 and the half types, double for float64).
//
// Per row, one streaming pass over logits y and labels y_ keeps the running max m and rescaled
// sum s of exp(y - m) together with a = sum(y_ * y) and b = sum(y_); then
// loss = b * (m + log s) - a. A warp per row for rows up to 2048 columns, a block per row
// beyond. Each block adds its rows' losses in a fixed order, and the last block to finish
// (counted on the device's semaphores) adds the blocks' sums in block order and writes the mean:
// no atomics on floats, the same result on every run.
//
// Accuracy: the sums of a row (of exp, of y_ * y, of y_) and the losses are accumulated in
// double (each float4's four terms are added in float first), so a row of 1e8 elements or a mean
// over 1e8 rows stays within 1e-6 of a float64 reference; exp itself is __expf (exp for
// float64).
#include <cmath>
#include <type_traits>

#include "dtype.cuh"
#include "kernel_util.cuh"
#include "kernels.h"
#include "row_reduce.cuh"

namespace dlarray {
namespace cuda {
namespace {

constexpr int kWarpThreads = 256;  // block size of the warp-per-row kernel
constexpr int kWarpRowsPerBlock = kWarpThreads / 32;

// The per-row state: online max m of the logits and sum s of exp(y - m), sum(y_ * y), sum(y_).
template <typename C>
struct RowAcc {
  C m;
  double s;
  double a;
  double b;
};

template <typename C>
__device__ __forceinline__ RowAcc<C> RowAccIdentity() {
  return {Lowest<C>(), 0.0, 0.0, 0.0};
}

template <typename C>
__device__ __forceinline__ void RowAccAdd(RowAcc<C>& acc, C y, C label) {
  if (y > acc.m) {
    acc.s = acc.s * FastExp(acc.m - y) + 1.0;
    acc.m = y;
  } else {
    acc.s += FastExp(y - acc.m);
  }
  acc.a += label * y;
  acc.b += label;
}

__device__ __forceinline__ void RowAccAdd4(RowAcc<float>& acc, float4 y, float4 label) {
  const float m = fmaxf(fmaxf(y.x, y.y), fmaxf(y.z, y.w));
  if (m > acc.m) {
    acc.s *= __expf(acc.m - m);
    acc.m = m;
  }
  acc.s +=
      (__expf(y.x - acc.m) + __expf(y.y - acc.m)) + (__expf(y.z - acc.m) + __expf(y.w - acc.m));
  acc.a += (label.x * y.x + label.y * y.y) + (label.z * y.z + label.w * y.w);
  acc.b += (label.x + label.y) + (label.z + label.w);
}

template <typename C>
__device__ __forceinline__ RowAcc<C> RowAccCombine(RowAcc<C> x, RowAcc<C> y) {
  const C m = Max(x.m, y.m);
  return {m, x.s * FastExp(x.m - m) + y.s * FastExp(y.m - m), x.a + y.a, x.b + y.b};
}

template <typename C>
__device__ __forceinline__ RowAcc<C> WarpRowAcc(RowAcc<C> v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    RowAcc<C> other;
    other.m = __shfl_xor_sync(0xffffffffu, v.m, o);
    other.s = __shfl_xor_sync(0xffffffffu, v.s, o);
    other.a = __shfl_xor_sync(0xffffffffu, v.a, o);
    other.b = __shfl_xor_sync(0xffffffffu, v.b, o);
    v = RowAccCombine(v, other);
  }
  return v;
}

template <typename C>
struct RowAccOp {
  __device__ RowAcc<C> operator()(RowAcc<C> x, RowAcc<C> y) const { return RowAccCombine(x, y); }
  __device__ RowAcc<C> warp(RowAcc<C> v) const { return WarpRowAcc(v); }
};

template <typename C>
__device__ __forceinline__ double RowLoss(const RowAcc<C>& acc) {
  return acc.b * (static_cast<double>(acc.m) + log(acc.s)) - acc.a;
}

// Accumulates the columns of one row that belong to thread `t` of `n` threads (kVec: float4s).
template <bool kVec, typename T>
__device__ __forceinline__ RowAcc<Compute<T>> AccumulateRow(const T* y, const T* label,
                                                            int64_t cols, int t, int n) {
  using C = Compute<T>;
  RowAcc<C> acc = RowAccIdentity<C>();
  if constexpr (kVec) {
    static_assert(std::is_same_v<T, float>, "float4 rows are float32 rows");
    const float4* y4 = reinterpret_cast<const float4*>(y);
    const float4* l4 = reinterpret_cast<const float4*>(label);
#pragma unroll 4
    for (int64_t q = t; q < cols / 4; q += n) RowAccAdd4(acc, y4[q], l4[q]);
  } else {
#pragma unroll 4
    for (int64_t j = t; j < cols; j += n) RowAccAdd(acc, C(Load(y[j])), C(Load(label[j])));
  }
  return acc;
}

// Called by every thread of every block with the block's loss sum (valid in thread 0): the last
// block to arrive writes the mean. partial: gridDim.x doubles; semaphore: zero, left zero.
template <typename T>
__device__ void FinishMean(double block_loss, double* partial, unsigned int* semaphore, T* out,
                           int64_t rows) {
  __shared__ double scratch[32];
  __shared__ bool last_block;
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) out[0] = Store<T>(block_loss / static_cast<double>(rows));
    return;
  }
  // Other threads may still be reading the caller's shared memory, and the compiler may place
  // last_block over it (compute-sanitizer racecheck caught exactly that): wait for them.
  __syncthreads();
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = block_loss;
    __threadfence();  // publish the partial before counting this block as done
    last_block = atomicAdd(semaphore, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last_block) return;
  __threadfence();
  double sum = 0.0;
  for (int i = threadIdx.x; i < static_cast<int>(gridDim.x); i += blockDim.x) {
    sum += __ldcg(&partial[i]);
  }
  sum = BlockReduce(sum, scratch, SumOp<double>());
  if (threadIdx.x == 0) {
    out[0] = Store<T>(sum / static_cast<double>(rows));
    *semaphore = 0;  // ready for the next op
  }
}

template <typename T, bool kVec>
__global__ void __launch_bounds__(kWarpThreads)
    CrossEntropyWarpKernel(const T* logits, const T* labels, int64_t rows, int64_t cols,
                           double* partial, unsigned int* semaphore, T* out) {
  __shared__ double warp_loss[kWarpRowsPerBlock];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpRowsPerBlock;
  double loss = 0.0;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpRowsPerBlock + warp; row < rows;
       row += warps) {
    const auto acc =
        WarpRowAcc(AccumulateRow<kVec>(logits + row * cols, labels + row * cols, cols, lane, 32));
    loss += RowLoss(acc);
  }
  if (lane == 0) warp_loss[warp] = loss;
  __syncthreads();
  double block_loss = 0.0;
  if (threadIdx.x == 0) {
    for (int w = 0; w < kWarpRowsPerBlock; ++w) block_loss += warp_loss[w];
  }
  FinishMean(block_loss, partial, semaphore, out, rows);
}

template <typename T, int kThreads, bool kVec>
__global__ void __launch_bounds__(kThreads)
    CrossEntropyBlockKernel(const T* logits, const T* labels, int64_t rows, int64_t cols,
                            double* partial, unsigned int* semaphore, T* out) {
  using C = Compute<T>;
  __shared__ RowAcc<C> scratch[32];
  double block_loss = 0.0;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    RowAcc<C> acc =
        AccumulateRow<kVec>(logits + row * cols, labels + row * cols, cols, threadIdx.x, kThreads);
    acc = BlockReduce(acc, scratch, RowAccOp<C>());
    block_loss += RowLoss(acc);
  }
  FinishMean(block_loss, partial, semaphore, out, rows);
}

// The kernel's arguments past the grid.
template <typename T>
struct CrossEntropyArgs {
  const T* logits;
  const T* labels;
  int64_t rows;
  int64_t cols;
  double* partial;
  unsigned int* semaphore;
  T* out;
};

template <typename T, bool kVec>
void LaunchShape(const LaunchEnv& env, int blocks, bool warp_per_row, int block_threads,
                 const CrossEntropyArgs<T>& a) {
  if (warp_per_row) {
    CrossEntropyWarpKernel<T, kVec><<<blocks, kWarpThreads, 0, env.stream>>>(
        a.logits, a.labels, a.rows, a.cols, a.partial, a.semaphore, a.out);
  } else if (block_threads == 256) {
    CrossEntropyBlockKernel<T, 256, kVec><<<blocks, 256, 0, env.stream>>>(
        a.logits, a.labels, a.rows, a.cols, a.partial, a.semaphore, a.out);
  } else {
    CrossEntropyBlockKernel<T, 1024, kVec><<<blocks, 1024, 0, env.stream>>>(
        a.logits, a.labels, a.rows, a.cols, a.partial, a.semaphore, a.out);
  }
}

template <typename T>
void LaunchCrossEntropy(const KernelContext& ctx) {
  const DLArray* y_arr = ctx.inputs[0];
  CrossEntropyArgs<T> a{
      Data<const T>(y_arr),   Data<const T>(ctx.inputs[1]), 0, 0, nullptr, nullptr,
      Data<T>(ctx.outputs[0])};
  a.cols = y_arr->ndim == 0 ? 1 : y_arr->shape[y_arr->ndim - 1];
  a.rows = NumElements(y_arr) / a.cols;
  // float4 rows: float32 only.
  const bool vec =
      std::is_same_v<T, float> && a.cols % 4 == 0 && Aligned16(a.logits) && Aligned16(a.labels);
  const LaunchEnv env = Prepare(ctx);
  // Warp per row up to 2048 columns, else a block of 256 (1024 past 16384 columns) per row.
  const bool warp_per_row = a.cols <= 2048;
  const int block_threads = a.cols <= 16384 ? 256 : 1024;
  const int blocks = warp_per_row
                         ? GridSize(a.rows, kWarpRowsPerBlock, FullWaveBlocks(env, kWarpThreads))
                     : a.cols <= 16384 ? GridSize(a.rows, 1, FullWaveBlocks(env, 256))
                                       : GridSize(a.rows, 1, 2 * env.device->sm_count(env.id));
  const size_t partial_bytes = static_cast<size_t>(blocks) * sizeof(double);
  if (blocks > 1) {
    a.semaphore = env.device->semaphores(env.id);
    // Stream-ordered: the block can go back to the cache right after the launch.
    a.partial = static_cast<double*>(env.device->allocate(env.id, partial_bytes));
  }
  if constexpr (std::is_same_v<T, float>) {
    if (vec) {
      LaunchShape<T, true>(env, blocks, warp_per_row, block_threads, a);
    } else {
      LaunchShape<T, false>(env, blocks, warp_per_row, block_threads, a);
    }
  } else {
    LaunchShape<T, false>(env, blocks, warp_per_row, block_threads, a);
  }
  const cudaError_t err = cudaGetLastError();
  if (a.partial != nullptr) env.device->free(env.id, a.partial, partial_bytes);
  if (err != cudaSuccess) ThrowCudaError(err, "CrossEntropyKernel", __FILE__, __LINE__);
}

}  // namespace

void SoftmaxCrossEntropyKernel(const KernelContext& ctx) {
  Dispatch<kFloatTypes>(ctx.inputs[0]->dtype, ctx.op_name,
                        [&](auto tag) { LaunchCrossEntropy<typename decltype(tag)::type>(ctx); });
}

}  // namespace cuda
}  // namespace dlarray
