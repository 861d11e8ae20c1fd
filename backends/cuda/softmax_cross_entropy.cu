// softmax_cross_entropy: out[0] = mean over rows of -sum(y_ * log_softmax(y)), rows over the
// last axis, in one kernel.
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
// over 1e8 rows stays within 1e-6 of a float64 reference; exp itself is __expf.
#include <cmath>

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
struct RowAcc {
  float m;
  double s;
  double a;
  double b;
};

__device__ __forceinline__ RowAcc RowAccIdentity() { return {-FLT_MAX, 0.0, 0.0, 0.0}; }

__device__ __forceinline__ void RowAccAdd(RowAcc& acc, float y, float label) {
  if (y > acc.m) {
    acc.s = acc.s * __expf(acc.m - y) + 1.0;
    acc.m = y;
  } else {
    acc.s += __expf(y - acc.m);
  }
  acc.a += label * y;
  acc.b += label;
}

__device__ __forceinline__ void RowAccAdd4(RowAcc& acc, float4 y, float4 label) {
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

__device__ __forceinline__ RowAcc RowAccCombine(RowAcc x, RowAcc y) {
  const float m = fmaxf(x.m, y.m);
  return {m, x.s * __expf(x.m - m) + y.s * __expf(y.m - m), x.a + y.a, x.b + y.b};
}

__device__ __forceinline__ RowAcc WarpRowAcc(RowAcc v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    RowAcc other;
    other.m = __shfl_xor_sync(0xffffffffu, v.m, o);
    other.s = __shfl_xor_sync(0xffffffffu, v.s, o);
    other.a = __shfl_xor_sync(0xffffffffu, v.a, o);
    other.b = __shfl_xor_sync(0xffffffffu, v.b, o);
    v = RowAccCombine(v, other);
  }
  return v;
}

struct RowAccOp {
  __device__ RowAcc operator()(RowAcc x, RowAcc y) const { return RowAccCombine(x, y); }
  __device__ RowAcc warp(RowAcc v) const { return WarpRowAcc(v); }
};

__device__ __forceinline__ double RowLoss(const RowAcc& acc) {
  return acc.b * (static_cast<double>(acc.m) + log(acc.s)) - acc.a;
}

// Accumulates the columns of one row that belong to thread `t` of `n` threads.
template <bool kVec>
__device__ __forceinline__ RowAcc AccumulateRow(const float* y, const float* label, int64_t cols,
                                                int t, int n) {
  RowAcc acc = RowAccIdentity();
  if constexpr (kVec) {
    const float4* y4 = reinterpret_cast<const float4*>(y);
    const float4* l4 = reinterpret_cast<const float4*>(label);
#pragma unroll 4
    for (int64_t q = t; q < cols / 4; q += n) RowAccAdd4(acc, y4[q], l4[q]);
  } else {
#pragma unroll 4
    for (int64_t j = t; j < cols; j += n) RowAccAdd(acc, y[j], label[j]);
  }
  return acc;
}

// Called by every thread of every block with the block's loss sum (valid in thread 0): the last
// block to arrive writes the mean. partial: gridDim.x doubles; semaphore: zero, left zero.
__device__ void FinishMean(double block_loss, double* partial, unsigned int* semaphore, float* out,
                           int64_t rows) {
  __shared__ double scratch[32];
  __shared__ bool last_block;
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) out[0] = static_cast<float>(block_loss / static_cast<double>(rows));
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
    out[0] = static_cast<float>(sum / static_cast<double>(rows));
    *semaphore = 0;  // ready for the next op
  }
}

template <bool kVec>
__global__ void __launch_bounds__(kWarpThreads)
    CrossEntropyWarpKernel(const float* logits, const float* labels, int64_t rows, int64_t cols,
                           double* partial, unsigned int* semaphore, float* out) {
  __shared__ double warp_loss[kWarpRowsPerBlock];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpRowsPerBlock;
  double loss = 0.0;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpRowsPerBlock + warp; row < rows;
       row += warps) {
    const RowAcc acc =
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

template <int kThreads, bool kVec>
__global__ void __launch_bounds__(kThreads)
    CrossEntropyBlockKernel(const float* logits, const float* labels, int64_t rows, int64_t cols,
                            double* partial, unsigned int* semaphore, float* out) {
  __shared__ RowAcc scratch[32];
  double block_loss = 0.0;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    RowAcc acc =
        AccumulateRow<kVec>(logits + row * cols, labels + row * cols, cols, threadIdx.x, kThreads);
    acc = BlockReduce(acc, scratch, RowAccOp());
    block_loss += RowLoss(acc);
  }
  FinishMean(block_loss, partial, semaphore, out, rows);
}

template <int kThreads>
void LaunchBlockKernel(const LaunchEnv& env, int blocks, bool vec, const float* logits,
                       const float* labels, int64_t rows, int64_t cols, double* partial,
                       unsigned int* semaphore, float* out) {
  if (vec) {
    CrossEntropyBlockKernel<kThreads, true>
        <<<blocks, kThreads, 0, env.stream>>>(logits, labels, rows, cols, partial, semaphore, out);
  } else {
    CrossEntropyBlockKernel<kThreads, false>
        <<<blocks, kThreads, 0, env.stream>>>(logits, labels, rows, cols, partial, semaphore, out);
  }
}

// Every dtype but float32: a block per row (grid-stride over rows) computes the row's loss in
// double; the losses are added into *total (zeroed before), and TypedMeanKernel writes the mean.
template <typename T>
__global__ void __launch_bounds__(256)
    CrossEntropyTypedKernel(const T* y, const T* label, int64_t rows, int64_t cols, double* total) {
  __shared__ double scratch[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* yr = y + r * cols;
    const T* lr = label + r * cols;
    double m = -INFINITY;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmax(m, double(Load(yr[j])));
    m = BlockReduce(m, scratch, MaxOp<double>());
    double e = 0, dot = 0, lsum = 0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      const double d = double(Load(yr[j])) - m;
      const double t = double(Load(lr[j]));
      e += exp(d);
      dot += t * d;
      lsum += t;
    }
    e = BlockReduce(e, scratch, SumOp<double>());
    dot = BlockReduce(dot, scratch, SumOp<double>());
    lsum = BlockReduce(lsum, scratch, SumOp<double>());
    if (threadIdx.x == 0) atomicAdd(total, log(e) * lsum - dot);
  }
}

template <typename T>
__global__ void TypedMeanKernel(const double* total, int64_t rows, T* out) {
  out[0] = Store<T>(*total / static_cast<double>(rows));
}

template <typename T>
void LaunchTyped(const LaunchEnv& env, const KernelContext& ctx, int64_t rows, int64_t cols) {
  double* total = static_cast<double*>(env.device->allocate(env.id, sizeof(double)));
  cudaError_t err = cudaMemsetAsync(total, 0, sizeof(double), env.stream);
  if (err == cudaSuccess) {
    const int blocks = GridSize(rows, 1, FullWaveBlocks(env, 256) * 4);
    CrossEntropyTypedKernel<T><<<blocks, 256, 0, env.stream>>>(
        Data<const T>(ctx.inputs[0]), Data<const T>(ctx.inputs[1]), rows, cols, total);
    TypedMeanKernel<T><<<1, 1, 0, env.stream>>>(total, rows, Data<T>(ctx.outputs[0]));
    err = cudaGetLastError();
  }
  // Stream-ordered: the block can go back to the cache right after the launches.
  env.device->free(env.id, total, sizeof(double));
  if (err != cudaSuccess) ThrowCudaError(err, "CrossEntropyTypedKernel", __FILE__, __LINE__);
}

}  // namespace

void SoftmaxCrossEntropyKernel(const KernelContext& ctx) {
  if (!IsFloat32(ctx.inputs[0]->dtype)) {
    const DLArray* in = ctx.inputs[0];
    const int64_t cols = in->shape[in->ndim - 1];
    const int64_t rows = NumElements(in) / cols;
    const LaunchEnv env = Prepare(ctx);
    Dispatch<kFloatTypes>(in->dtype, ctx.op_name, [&](auto tag) {
      LaunchTyped<typename decltype(tag)::type>(env, ctx, rows, cols);
    });
    return;
  }
  const DLArray* y_arr = ctx.inputs[0];
  const float* logits = Data<const float>(y_arr);
  const float* labels = Data<const float>(ctx.inputs[1]);
  float* out = Data<float>(ctx.outputs[0]);
  const int64_t cols = y_arr->ndim == 0 ? 1 : y_arr->shape[y_arr->ndim - 1];
  const int64_t rows = NumElements(y_arr) / cols;
  const bool vec = cols % 4 == 0 && Aligned16(logits) && Aligned16(labels);
  const LaunchEnv env = Prepare(ctx);
  // Warp per row up to 2048 columns, else a block of 256 (1024 past 16384 columns) per row.
  const bool warp_per_row = cols <= 2048;
  const int block_threads = cols <= 16384 ? 256 : 1024;
  const int blocks = warp_per_row
                         ? GridSize(rows, kWarpRowsPerBlock, FullWaveBlocks(env, kWarpThreads))
                     : cols <= 16384 ? GridSize(rows, 1, FullWaveBlocks(env, 256))
                                     : GridSize(rows, 1, 2 * env.device->sm_count(env.id));
  double* partial = nullptr;
  unsigned int* semaphore = nullptr;
  const size_t partial_bytes = static_cast<size_t>(blocks) * sizeof(double);
  if (blocks > 1) {
    semaphore = env.device->semaphores(env.id);
    // Stream-ordered: the block can go back to the cache right after the launch.
    partial = static_cast<double*>(env.device->allocate(env.id, partial_bytes));
  }
  if (warp_per_row && vec) {
    CrossEntropyWarpKernel<true><<<blocks, kWarpThreads, 0, env.stream>>>(
        logits, labels, rows, cols, partial, semaphore, out);
  } else if (warp_per_row) {
    CrossEntropyWarpKernel<false><<<blocks, kWarpThreads, 0, env.stream>>>(
        logits, labels, rows, cols, partial, semaphore, out);
  } else if (block_threads == 256) {
    LaunchBlockKernel<256>(env, blocks, vec, logits, labels, rows, cols, partial, semaphore, out);
  } else {
    LaunchBlockKernel<1024>(env, blocks, vec, logits, labels, rows, cols, partial, semaphore, out);
  }
  const cudaError_t err = cudaGetLastError();
  if (partial != nullptr) env.device->free(env.id, partial, partial_bytes);
  if (err != cudaSuccess) ThrowCudaError(err, "CrossEntropyKernel", __FILE__, __LINE__);
}

}  // namespace cuda
}  // namespace dlarray
