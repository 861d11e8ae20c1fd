// reduce_sum_axis_zero: out = in.sum(axis=0), in viewed as (rows, cols), cols = numel / rows, for
// the floating and integer dtypes (one kernel over the element type; float32 columns of a
// multiple of 4, 16-byte aligned, move as float4).
//
// Threads of a block own columns (bx of them, float4 when aligned) and split the block's rows
// (by of them). When there are too few columns to fill the GPU, the rows are also split across
// blockIdx.y: each block writes a partial sum, and the last block of a column group to finish
// (counted on the device's semaphores) adds the partials in split order. The order of every
// addition is fixed by the shape, so results are the same from run to run.
//
// Accuracy: for float32 each thread adds four rows in float and their sum to a double
// accumulator; the block and split reductions are in double, and only the result is rounded to
// float. A float running sum would stop growing at 2^24 times the value (5e7 ones summed to
// 33554432). The other floating dtypes add into double too; integers into a wrapping 64-bit
// unsigned accumulator (NumPy's wrap-around, whatever the order).
//
// On an H200, (500, 200, 100) takes 12.7 us (40 MB: 3.2 TB/s, launch included), about what
// PyTorch takes; a partial second wave of blocks, two waves, L2::256B prefetch hints, or
// sweeping the input backwards on every other launch (to reuse what L2 kept) did not change that.
#include <algorithm>
#include <type_traits>

#include "dtype.cuh"
#include "kernel_util.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float4 operator+(float4 a, float4 b) {
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

// Four doubles (CUDA 13 deprecates double4 in favour of alignment-specific names).
struct Double4 {
  double x, y, z, w;
};

// The accumulator of element type T: double for the floating types (Double4 for float4), a
// wrapping unsigned 64-bit integer for the integers.
template <typename T>
struct Wide {
  using C = Compute<T>;
  using type = std::conditional_t<std::is_integral_v<C>, unsigned long long, double>;
  __device__ static type Zero() { return 0; }
  // An element, or another accumulator (the same type when T is double).
  template <typename V>
  __device__ static type Add(type a, V v) {
    if constexpr (std::is_same_v<V, type>) {
      return a + v;
    } else {
      return a + static_cast<type>(Load(v));
    }
  }
  __device__ static type Add4(type a, T v0, T v1, T v2, T v3) {
    return Add(Add(Add(Add(a, v0), v1), v2), v3);
  }
  __device__ static T Narrow(type a) { return Store<T>(static_cast<C>(a)); }
  __device__ static type LoadL2(const type* p) { return __ldcg(p); }
};
template <>
struct Wide<float> {
  using type = double;
  __device__ static double Zero() { return 0.0; }
  __device__ static double Add(double a, float v) { return a + static_cast<double>(v); }
  __device__ static double Add(double a, double b) { return a + b; }
  // Four rows added in float first: one double addition per four elements.
  __device__ static double Add4(double a, float v0, float v1, float v2, float v3) {
    return Add(a, (v0 + v1) + (v2 + v3));
  }
  __device__ static float Narrow(double a) { return static_cast<float>(a); }
  // Past this block's L1: other blocks wrote the value.
  __device__ static double LoadL2(const double* p) { return __ldcg(p); }
};
template <>
struct Wide<float4> {
  using type = Double4;
  __device__ static Double4 Zero() { return {0.0, 0.0, 0.0, 0.0}; }
  __device__ static Double4 Add(Double4 a, float4 v) {
    return {a.x + static_cast<double>(v.x), a.y + static_cast<double>(v.y),
            a.z + static_cast<double>(v.z), a.w + static_cast<double>(v.w)};
  }
  __device__ static Double4 Add(Double4 a, Double4 b) {
    return {a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w};
  }
  __device__ static Double4 Add4(Double4 a, float4 v0, float4 v1, float4 v2, float4 v3) {
    return Add(a, (v0 + v1) + (v2 + v3));
  }
  __device__ static float4 Narrow(Double4 a) {
    return make_float4(static_cast<float>(a.x), static_cast<float>(a.y), static_cast<float>(a.z),
                       static_cast<float>(a.w));
  }
  __device__ static Double4 LoadL2(const Double4* p) {
    return {__ldcg(&p->x), __ldcg(&p->y), __ldcg(&p->z), __ldcg(&p->w)};
  }
};

// Sums shared[ty][tx] over ty into shared[0][tx]; by is a power of two.
template <typename T>
__device__ __forceinline__ typename Wide<T>::type ReduceOverRows(typename Wide<T>::type* shared,
                                                                 typename Wide<T>::type v) {
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int bx = blockDim.x;
  shared[ty * bx + tx] = v;
  __syncthreads();
  for (int h = blockDim.y / 2; h > 0; h /= 2) {
    if (ty < h)
      shared[ty * bx + tx] = Wide<T>::Add(shared[ty * bx + tx], shared[(ty + h) * bx + tx]);
    __syncthreads();
  }
  return shared[tx];
}

// T: the element type, or float4 for float32 columns in fours; cols in T units. partial: gridDim.y
// x cols accumulators (unused when gridDim.y == 1).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    ReduceRowsKernel(const T* in, T* out, typename Wide<T>::type* partial, unsigned int* semaphores,
                     int64_t rows, int64_t cols, int64_t rows_per_split) {
  using W = Wide<T>;
  using A = typename W::type;
  __shared__ A shared[kThreads];
  __shared__ bool last_block;
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t r_begin = static_cast<int64_t>(blockIdx.y) * rows_per_split;
  const int64_t r_end = min(rows, r_begin + rows_per_split);
  const int by = blockDim.y;
  A acc = W::Zero();
  if (c < cols) {
    int64_t r = r_begin + threadIdx.y;
    // Four independent loads in flight, added in float, then to the double accumulator.
    for (; r + 3 * by < r_end; r += 4 * by) {
      const T v0 = in[r * cols + c];
      const T v1 = in[(r + by) * cols + c];
      const T v2 = in[(r + 2 * by) * cols + c];
      const T v3 = in[(r + 3 * by) * cols + c];
      acc = W::Add4(acc, v0, v1, v2, v3);
    }
    for (; r < r_end; r += by) acc = W::Add(acc, in[r * cols + c]);
  }
  A sum = ReduceOverRows<T>(shared, acc);
  if (gridDim.y == 1) {
    if (threadIdx.y == 0 && c < cols) out[c] = W::Narrow(sum);
    return;
  }
  if (threadIdx.y == 0 && c < cols) partial[blockIdx.y * cols + c] = sum;
  __threadfence();  // publish the partial before counting this block as done
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    last_block = atomicAdd(&semaphores[blockIdx.x], 1u) == gridDim.y - 1;
  }
  __syncthreads();
  if (!last_block) return;
  __threadfence();
  acc = W::Zero();
  if (c < cols) {
    for (int64_t s = threadIdx.y; s < gridDim.y; s += by) {
      acc = W::Add(acc, W::LoadL2(&partial[s * cols + c]));
    }
  }
  __syncthreads();  // shared is reused
  sum = ReduceOverRows<T>(shared, acc);
  if (threadIdx.y == 0 && c < cols) out[c] = W::Narrow(sum);
  if (threadIdx.x == 0 && threadIdx.y == 0) semaphores[blockIdx.x] = 0;  // ready for the next op
}

template <typename T>
void Launch(const LaunchEnv& env, const T* in, T* out, int64_t rows, int64_t cols) {
  int bx = 1;
  while (bx < 32 && bx < cols) bx *= 2;
  const dim3 block(bx, kThreads / bx);
  const int64_t grid_x = CeilDiv(cols, bx);
  const int64_t target_blocks = FullWaveBlocks(env, kThreads);
  int64_t splits = 1;
  if (grid_x < target_blocks && grid_x <= CudaDevice::kNumSemaphores) {
    // Enough blocks to fill the GPU once (no partial second wave), each thread still adding
    // a few rows.
    splits = std::min(target_blocks / grid_x, CeilDiv(rows, 4 * block.y));
    splits = std::max<int64_t>(1, std::min<int64_t>(splits, 65535));
  }
  const int64_t rows_per_split = CeilDiv(rows, splits);
  splits = CeilDiv(rows, rows_per_split);
  const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(splits));
  using A = typename Wide<T>::type;
  A* partial = nullptr;
  unsigned int* semaphores = nullptr;
  const size_t partial_bytes = static_cast<size_t>(splits * cols) * sizeof(A);
  if (splits > 1) {
    semaphores = env.device->semaphores(env.id);
    // Stream-ordered: the block can go back to the cache right after the launch.
    partial = static_cast<A*>(env.device->allocate(env.id, partial_bytes));
  }
  ReduceRowsKernel<T>
      <<<grid, block, 0, env.stream>>>(in, out, partial, semaphores, rows, cols, rows_per_split);
  const cudaError_t err = cudaGetLastError();
  if (partial != nullptr) env.device->free(env.id, partial, partial_bytes);
  if (err != cudaSuccess) ThrowCudaError(err, "ReduceRowsKernel", __FILE__, __LINE__);
}

}  // namespace

void ReduceSumAxisZeroKernel(const KernelContext& ctx) {
  const DLArray* in_arr = ctx.inputs[0];
  const int64_t rows = in_arr->ndim == 0 ? 1 : in_arr->shape[0];
  const int64_t cols = NumElements(in_arr) / rows;
  Dispatch<kFloatTypes | kIntTypes>(in_arr->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = Data<const T>(in_arr);
    T* out = Data<T>(ctx.outputs[0]);
    const LaunchEnv env = Prepare(ctx);
    if constexpr (std::is_same_v<T, float>) {
      if (cols % 4 == 0 && Aligned16(in) && Aligned16(out)) {
        Launch<float4>(env, reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out),
                       rows, cols / 4);
        return;
      }
    }
    Launch<T>(env, in, out, rows, cols);
  });
}

}  // namespace cuda
}  // namespace dlarray
