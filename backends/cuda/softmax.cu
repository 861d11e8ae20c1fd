// softmax: row-wise over the last axis, out = exp(x - max) / sum(exp(x - max)), one kernel, for
// every floating dtype: elements of type T are computed in C = Compute<T> (float for float32 and
// the half types, with __expf; double for float64, with exp).
//
// Rows up to 1024 columns: a warp per row. Up to 16384: a block per row. In both the row is read
// once into registers, then max, exp and sum run over registers, and out is written once. Longer
// rows: a block per row makes one streaming pass for the running (max, rescaled sum) pair, then
// a second pass reads the row again and writes out. float32 rows of a multiple of 4 columns,
// 16-byte aligned, move as float4.
#include <cmath>
#include <type_traits>

#include "dtype.cuh"
#include "kernel_util.cuh"
#include "kernels.h"
#include "row_reduce.cuh"

namespace dlarray {
namespace cuda {
namespace {

constexpr int kWarpRowsPerBlock = 4;

// Loads a row of T into registers of C: v[k] holds column first + stride k (kVec, float only:
// the float4 at first + stride k fills v[4k..4k+3]); columns past the end read -inf.
template <int kPer, bool kVec, typename T, typename C>
__device__ __forceinline__ void LoadRow(const T* x, int cols, int first, int stride, C (&v)[kPer]) {
  if constexpr (kVec) {
    static_assert(std::is_same_v<T, float>, "float4 rows are float32 rows");
#pragma unroll
    for (int k = 0; k < kPer / 4; ++k) {
      const int q = first + stride * k;
      const float4 t = q < cols / 4 ? reinterpret_cast<const float4*>(x)[q]
                                    : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
      v[4 * k] = t.x;
      v[4 * k + 1] = t.y;
      v[4 * k + 2] = t.z;
      v[4 * k + 3] = t.w;
    }
  } else {
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int j = first + stride * k;
      v[k] = j < cols ? C(Load(x[j])) : C(-INFINITY);
    }
  }
}

// Stores v * scale back in LoadRow's layout, skipping columns past the end.
template <int kPer, bool kVec, typename T, typename C>
__device__ __forceinline__ void StoreRow(T* y, int cols, int first, int stride, const C (&v)[kPer],
                                         C scale) {
  if constexpr (kVec) {
#pragma unroll
    for (int k = 0; k < kPer / 4; ++k) {
      const int q = first + stride * k;
      if (q < cols / 4) {
        reinterpret_cast<float4*>(y)[q] = make_float4(v[4 * k] * scale, v[4 * k + 1] * scale,
                                                      v[4 * k + 2] * scale, v[4 * k + 3] * scale);
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int j = first + stride * k;
      if (j < cols) y[j] = Store<T>(v[k] * scale);
    }
  }
}

// A warp per row; lane holds kPerLane columns: float4 q = lane + 32 k when kVec, else single
// columns lane + 32 k.
template <typename T, int kPerLane, bool kVec>
__global__ void __launch_bounds__(32 * kWarpRowsPerBlock)
    SoftmaxWarpKernel(const T* in, T* out, int64_t rows, int cols) {
  using C = Compute<T>;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpRowsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  const T* x = in + row * cols;
  T* y = out + row * cols;
  C v[kPerLane];
  LoadRow<kPerLane, kVec>(x, cols, lane, 32, v);
  C m = -INFINITY;
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) m = Max(m, v[k]);
  m = WarpMax(m);
  C s = 0;
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) {
    v[k] = FastExp(v[k] - m);
    s += v[k];
  }
  StoreRow<kPerLane, kVec>(y, cols, lane, 32, v, C(1) / WarpSum(s));
}

// A block per row; thread holds kPerThread columns: float4 q = tid + kThreads k when kVec, else
// single columns tid + kThreads k.
template <typename T, int kThreads, int kPerThread, bool kVec>
__global__ void __launch_bounds__(kThreads) SoftmaxBlockKernel(const T* in, T* out, int cols) {
  using C = Compute<T>;
  __shared__ C scratch[32];
  const T* x = in + static_cast<int64_t>(blockIdx.x) * cols;
  T* y = out + static_cast<int64_t>(blockIdx.x) * cols;
  C v[kPerThread];
  LoadRow<kPerThread, kVec>(x, cols, threadIdx.x, kThreads, v);
  C m = -INFINITY;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) m = Max(m, v[k]);
  m = BlockReduce(m, scratch, MaxOp<C>());
  C s = 0;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    v[k] = FastExp(v[k] - m);
    s += v[k];
  }
  StoreRow<kPerThread, kVec>(y, cols, threadIdx.x, kThreads, v,
                             C(1) / BlockReduce(s, scratch, SumOp<C>()));
}

constexpr int kLongRowThreads = 1024;

// A block per row of any length: an online (max, sum) pass, then a pass that writes.
template <typename T, bool kVec>
__global__ void __launch_bounds__(kLongRowThreads)
    SoftmaxLongRowKernel(const T* in, T* out, int64_t cols) {
  using C = Compute<T>;
  __shared__ MaxSum<C> scratch[32];
  const T* x = in + static_cast<int64_t>(blockIdx.x) * cols;
  T* y = out + static_cast<int64_t>(blockIdx.x) * cols;
  MaxSum<C> acc = MaxSumIdentity<C>();
  if constexpr (kVec) {
    for (int64_t q = threadIdx.x; q < cols / 4; q += kLongRowThreads) {
      const float4 t = reinterpret_cast<const float4*>(x)[q];
      MaxSumAdd4(acc, t);
    }
  } else {
    for (int64_t j = threadIdx.x; j < cols; j += kLongRowThreads) MaxSumAdd(acc, C(Load(x[j])));
  }
  acc = BlockReduce(acc, scratch, MaxSumOp<C>());
  const C inv = C(1) / acc.s;
  if constexpr (kVec) {
    for (int64_t q = threadIdx.x; q < cols / 4; q += kLongRowThreads) {
      const float4 t = reinterpret_cast<const float4*>(x)[q];
      reinterpret_cast<float4*>(y)[q] =
          make_float4(__expf(t.x - acc.m) * inv, __expf(t.y - acc.m) * inv,
                      __expf(t.z - acc.m) * inv, __expf(t.w - acc.m) * inv);
    }
  } else {
    for (int64_t j = threadIdx.x; j < cols; j += kLongRowThreads) {
      y[j] = Store<T>(FastExp(C(Load(x[j])) - acc.m) * inv);
    }
  }
}

// Whether rows of T may move as float4: float32 only.
template <typename T>
constexpr bool kHasVec = std::is_same_v<T, float>;

template <typename T, int kPerLane>
void LaunchWarp(const LaunchEnv& env, const T* in, T* out, int64_t rows, int cols, bool vec) {
  const int blocks = RowGrid(CeilDiv(rows, kWarpRowsPerBlock), "softmax");
  if constexpr (kHasVec<T> && kPerLane % 4 == 0) {
    if (vec) {
      SoftmaxWarpKernel<T, kPerLane, true>
          <<<blocks, 32 * kWarpRowsPerBlock, 0, env.stream>>>(in, out, rows, cols);
      CHECK_LAUNCH("SoftmaxWarpKernel");
      return;
    }
  }
  SoftmaxWarpKernel<T, kPerLane, false>
      <<<blocks, 32 * kWarpRowsPerBlock, 0, env.stream>>>(in, out, rows, cols);
  CHECK_LAUNCH("SoftmaxWarpKernel");
}

template <typename T, int kThreads, int kPerThread>
void LaunchBlock(const LaunchEnv& env, const T* in, T* out, int64_t rows, int cols, bool vec) {
  const int blocks = RowGrid(rows, "softmax");
  if constexpr (kHasVec<T>) {
    if (vec) {
      SoftmaxBlockKernel<T, kThreads, kPerThread, true>
          <<<blocks, kThreads, 0, env.stream>>>(in, out, cols);
      CHECK_LAUNCH("SoftmaxBlockKernel");
      return;
    }
  }
  SoftmaxBlockKernel<T, kThreads, kPerThread, false>
      <<<blocks, kThreads, 0, env.stream>>>(in, out, cols);
  CHECK_LAUNCH("SoftmaxBlockKernel");
}

template <typename T>
void LaunchLongRow(const LaunchEnv& env, const T* in, T* out, int64_t rows, int64_t cols,
                   bool vec) {
  const int blocks = RowGrid(rows, "softmax");
  if constexpr (kHasVec<T>) {
    if (vec) {
      SoftmaxLongRowKernel<T, true><<<blocks, kLongRowThreads, 0, env.stream>>>(in, out, cols);
      CHECK_LAUNCH("SoftmaxLongRowKernel");
      return;
    }
  }
  SoftmaxLongRowKernel<T, false><<<blocks, kLongRowThreads, 0, env.stream>>>(in, out, cols);
  CHECK_LAUNCH("SoftmaxLongRowKernel");
}

template <typename T>
void LaunchSoftmax(const KernelContext& ctx) {
  const DLArray* in_arr = ctx.inputs[0];
  const T* in = Data<const T>(in_arr);
  T* out = Data<T>(ctx.outputs[0]);
  const int64_t cols = in_arr->ndim == 0 ? 1 : in_arr->shape[in_arr->ndim - 1];
  const int64_t rows = NumElements(in_arr) / cols;
  const bool vec = kHasVec<T> && cols % 4 == 0 && Aligned16(in) && Aligned16(out);
  const LaunchEnv env = Prepare(ctx);
  const int c = static_cast<int>(std::min<int64_t>(cols, 1 << 30));
  if (cols <= 32) {
    LaunchWarp<T, 1>(env, in, out, rows, c, vec);
  } else if (cols <= 64) {
    LaunchWarp<T, 2>(env, in, out, rows, c, vec);
  } else if (cols <= 128) {
    LaunchWarp<T, 4>(env, in, out, rows, c, vec);
  } else if (cols <= 256) {
    LaunchWarp<T, 8>(env, in, out, rows, c, vec);
  } else if (cols <= 512) {
    LaunchWarp<T, 16>(env, in, out, rows, c, vec);
  } else if (cols <= 1024) {
    LaunchWarp<T, 32>(env, in, out, rows, c, vec);
  } else if (cols <= 2048) {
    LaunchBlock<T, 256, 8>(env, in, out, rows, c, vec);
  } else if (cols <= 4096) {
    LaunchBlock<T, 256, 16>(env, in, out, rows, c, vec);
  } else if (cols <= 8192) {
    LaunchBlock<T, 256, 32>(env, in, out, rows, c, vec);
  } else if (cols <= 16384) {
    LaunchBlock<T, 1024, 16>(env, in, out, rows, c, vec);
  } else {
    LaunchLongRow<T>(env, in, out, rows, cols, vec);
  }
}

}  // namespace

void SoftmaxKernel(const KernelContext& ctx) {
  Dispatch<kFloatTypes>(ctx.inputs[0]->dtype, ctx.op_name,
                        [&](auto tag) { LaunchSoftmax<typename decltype(tag)::type>(ctx); });
}

}  // namespace cuda
}  // namespace dlarray
