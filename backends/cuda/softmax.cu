// softmax: row-wise over the last axis, out = exp(x - max) / sum(exp(x - max)), one kernel.
//
// Rows up to 1024 columns: a warp per row. Up to 16384: a block per row. In both the row is read
// once into registers, then max, exp and sum run over registers, and out is written once. Longer
// rows: a block per row makes one streaming pass for the running (max, rescaled sum) pair, then
// a second pass reads the row again and writes out.
#include <cmath>

#include "dtype.cuh"
#include "kernel_util.cuh"
#include "kernels.h"
#include "row_reduce.cuh"
#include "typed_reduce.cuh"

namespace dlarray {
namespace cuda {
namespace {

constexpr int kWarpRowsPerBlock = 4;

// Loads a row into registers: v[k] holds column first + stride k (kVec: the float4 at
// first + stride k fills v[4k..4k+3]); columns past the end read -inf.
template <int kPer, bool kVec>
__device__ __forceinline__ void LoadRow(const float* x, int cols, int first, int stride,
                                        float (&v)[kPer]) {
  if constexpr (kVec) {
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
      v[k] = j < cols ? x[j] : -INFINITY;
    }
  }
}

// Stores v * scale back in LoadRow's layout, skipping columns past the end.
template <int kPer, bool kVec>
__device__ __forceinline__ void StoreRow(float* y, int cols, int first, int stride,
                                         const float (&v)[kPer], float scale) {
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
      if (j < cols) y[j] = v[k] * scale;
    }
  }
}

// A warp per row; lane holds kPerLane columns: float4 q = lane + 32 k when kVec, else single
// columns lane + 32 k.
template <int kPerLane, bool kVec>
__global__ void __launch_bounds__(32 * kWarpRowsPerBlock)
    SoftmaxWarpKernel(const float* in, float* out, int64_t rows, int cols) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpRowsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  const float* x = in + row * cols;
  float* y = out + row * cols;
  float v[kPerLane];
  LoadRow<kPerLane, kVec>(x, cols, lane, 32, v);
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) m = fmaxf(m, v[k]);
  m = WarpMax(m);
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) {
    v[k] = __expf(v[k] - m);
    s += v[k];
  }
  StoreRow<kPerLane, kVec>(y, cols, lane, 32, v, 1.f / WarpSum(s));
}

// A block per row; thread holds kPerThread columns: float4 q = tid + kThreads k when kVec, else
// single columns tid + kThreads k.
template <int kThreads, int kPerThread, bool kVec>
__global__ void __launch_bounds__(kThreads)
    SoftmaxBlockKernel(const float* in, float* out, int cols) {
  __shared__ float scratch[32];
  const float* x = in + static_cast<int64_t>(blockIdx.x) * cols;
  float* y = out + static_cast<int64_t>(blockIdx.x) * cols;
  float v[kPerThread];
  LoadRow<kPerThread, kVec>(x, cols, threadIdx.x, kThreads, v);
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) m = fmaxf(m, v[k]);
  m = BlockReduce(m, scratch, MaxOp());
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    v[k] = __expf(v[k] - m);
    s += v[k];
  }
  StoreRow<kPerThread, kVec>(y, cols, threadIdx.x, kThreads, v,
                             1.f / BlockReduce(s, scratch, SumOp()));
}

constexpr int kLongRowThreads = 1024;

// A block per row of any length: an online (max, sum) pass, then a pass that writes.
template <bool kVec>
__global__ void __launch_bounds__(kLongRowThreads)
    SoftmaxLongRowKernel(const float* in, float* out, int64_t cols) {
  __shared__ MaxSum scratch[32];
  const float* x = in + static_cast<int64_t>(blockIdx.x) * cols;
  float* y = out + static_cast<int64_t>(blockIdx.x) * cols;
  MaxSum acc = MaxSumIdentity();
  if constexpr (kVec) {
    for (int64_t q = threadIdx.x; q < cols / 4; q += kLongRowThreads) {
      const float4 t = reinterpret_cast<const float4*>(x)[q];
      MaxSumAdd4(acc, t);
    }
  } else {
    for (int64_t j = threadIdx.x; j < cols; j += kLongRowThreads) MaxSumAdd(acc, x[j]);
  }
  acc = BlockReduce(acc, scratch, MaxSumOp());
  const float inv = 1.f / acc.s;
  if constexpr (kVec) {
    for (int64_t q = threadIdx.x; q < cols / 4; q += kLongRowThreads) {
      const float4 t = reinterpret_cast<const float4*>(x)[q];
      reinterpret_cast<float4*>(y)[q] =
          make_float4(__expf(t.x - acc.m) * inv, __expf(t.y - acc.m) * inv,
                      __expf(t.z - acc.m) * inv, __expf(t.w - acc.m) * inv);
    }
  } else {
    for (int64_t j = threadIdx.x; j < cols; j += kLongRowThreads) {
      y[j] = __expf(x[j] - acc.m) * inv;
    }
  }
}

template <int kPerLane>
void LaunchWarp(const LaunchEnv& env, const float* in, float* out, int64_t rows, int cols,
                bool vec) {
  const int blocks = RowGrid(CeilDiv(rows, kWarpRowsPerBlock), "softmax");
  if (kPerLane % 4 == 0 && vec) {
    SoftmaxWarpKernel<kPerLane, kPerLane % 4 == 0>
        <<<blocks, 32 * kWarpRowsPerBlock, 0, env.stream>>>(in, out, rows, cols);
  } else {
    SoftmaxWarpKernel<kPerLane, false>
        <<<blocks, 32 * kWarpRowsPerBlock, 0, env.stream>>>(in, out, rows, cols);
  }
  CHECK_LAUNCH("SoftmaxWarpKernel");
}

template <int kThreads, int kPerThread>
void LaunchBlock(const LaunchEnv& env, const float* in, float* out, int64_t rows, int cols,
                 bool vec) {
  const int blocks = RowGrid(rows, "softmax");
  if (vec) {
    SoftmaxBlockKernel<kThreads, kPerThread, true>
        <<<blocks, kThreads, 0, env.stream>>>(in, out, cols);
  } else {
    SoftmaxBlockKernel<kThreads, kPerThread, false>
        <<<blocks, kThreads, 0, env.stream>>>(in, out, cols);
  }
  CHECK_LAUNCH("SoftmaxBlockKernel");
}

// Every dtype but float32: a block per row (grid-stride over rows), three passes over the row in
// its compute type C (float for the half types, double for float64): max, sum of exp, write.
template <typename T>
__global__ void __launch_bounds__(256)
    SoftmaxTypedKernel(const T* x, T* y, int64_t rows, int64_t cols) {
  using C = Compute<T>;
  __shared__ C scratch[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * cols;
    C m = -INFINITY;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmax(m, C(Load(xr[j])));
    m = BlockReduce(m, scratch, TypedMaxOp<C>());
    C s = 0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += exp(C(Load(xr[j])) - m);
    const C inv = C(1) / BlockReduce(s, scratch, TypedSumOp<C>());
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      y[r * cols + j] = Store<T>(exp(C(Load(xr[j])) - m) * inv);
    }
  }
}

}  // namespace

void SoftmaxKernel(const KernelContext& ctx) {
  if (!IsFloat32(ctx.inputs[0]->dtype)) {
    const DLArray* in = ctx.inputs[0];
    const int64_t cols = in->shape[in->ndim - 1];
    const int64_t rows = NumElements(in) / cols;
    const LaunchEnv env = Prepare(ctx);
    Dispatch<kFloatTypes>(in->dtype, ctx.op_name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const int blocks = GridSize(rows, 1, FullWaveBlocks(env, 256) * 4);
      SoftmaxTypedKernel<T>
          <<<blocks, 256, 0, env.stream>>>(Data<const T>(in), Data<T>(ctx.outputs[0]), rows, cols);
      CHECK_LAUNCH("SoftmaxTypedKernel");
    });
    return;
  }
  const DLArray* in_arr = ctx.inputs[0];
  const float* in = Data<const float>(in_arr);
  float* out = Data<float>(ctx.outputs[0]);
  const int64_t cols = in_arr->ndim == 0 ? 1 : in_arr->shape[in_arr->ndim - 1];
  const int64_t rows = NumElements(in_arr) / cols;
  const bool vec = cols % 4 == 0 && Aligned16(in) && Aligned16(out);
  const LaunchEnv env = Prepare(ctx);
  const int c = static_cast<int>(std::min<int64_t>(cols, 1 << 30));
  if (cols <= 32) {
    LaunchWarp<1>(env, in, out, rows, c, vec);
  } else if (cols <= 64) {
    LaunchWarp<2>(env, in, out, rows, c, vec);
  } else if (cols <= 128) {
    LaunchWarp<4>(env, in, out, rows, c, vec);
  } else if (cols <= 256) {
    LaunchWarp<8>(env, in, out, rows, c, vec);
  } else if (cols <= 512) {
    LaunchWarp<16>(env, in, out, rows, c, vec);
  } else if (cols <= 1024) {
    LaunchWarp<32>(env, in, out, rows, c, vec);
  } else if (cols <= 2048) {
    LaunchBlock<256, 8>(env, in, out, rows, c, vec);
  } else if (cols <= 4096) {
    LaunchBlock<256, 16>(env, in, out, rows, c, vec);
  } else if (cols <= 8192) {
    LaunchBlock<256, 32>(env, in, out, rows, c, vec);
  } else if (cols <= 16384) {
    LaunchBlock<1024, 16>(env, in, out, rows, c, vec);
  } else {
    const int blocks = RowGrid(rows, "softmax");
    if (vec) {
      SoftmaxLongRowKernel<true><<<blocks, kLongRowThreads, 0, env.stream>>>(in, out, cols);
    } else {
      SoftmaxLongRowKernel<false><<<blocks, kLongRowThreads, 0, env.stream>>>(in, out, cols);
    }
    CHECK_LAUNCH("SoftmaxLongRowKernel");
  }
}

}  // namespace cuda
}  // namespace dlarray
