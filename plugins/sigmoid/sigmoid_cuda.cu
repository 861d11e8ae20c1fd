// The CUDA kernels: grid-stride loops with 16-byte loads, on the stream the core hands the
// kernel. The plugin links the CUDA runtime statically, so it loads where CUDA is absent.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "sigmoid_kernels.h"

namespace sigmoid {
namespace {

// One-shot blocks: each of kThreads threads loads kPerThread float4s of each input up front (so
// that many loads are in flight), then computes and stores them; the n % 4 tail goes to the first
// threads. A grid-stride loop over one wave of blocks was measured slower at 8192x8192.
constexpr int kThreads = 128;
constexpr int kPerThread = 2;
constexpr int kScalarThreads = 256;

// expf is accurate to 2 ulp; the reciprocal is correctly rounded (and cheaper than a division).
__device__ __forceinline__ float Sigmoid(float x) { return __frcp_rn(1.0f + expf(-x)); }
__device__ __forceinline__ float Grad(float y, float dy) { return dy * y * (1.0f - y); }

struct SigmoidOp {
  __device__ float operator()(float x, float) const { return Sigmoid(x); }
};
struct GradOp {
  __device__ float operator()(float y, float dy) const { return Grad(y, dy); }
};

__device__ __forceinline__ float4 Apply4(float4 a, float4 b, SigmoidOp f) {
  return make_float4(f(a.x, 0), f(a.y, 0), f(a.z, 0), f(a.w, 0));
}
__device__ __forceinline__ float4 Apply4(float4 a, float4 b, GradOp f) {
  return make_float4(f(a.x, b.x), f(a.y, b.y), f(a.z, b.z), f(a.w, b.w));
}

// out = f(a, b) over n elements; b is null for sigmoid. All pointers 16-byte aligned.
template <typename F>
__global__ void __launch_bounds__(kThreads)
    MapVec4(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
            int64_t n, F f) {
  const int64_t n4 = n / 4;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * kThreads * kPerThread + threadIdx.x;
  float4 va[kPerThread], vb[kPerThread];
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    const int64_t i = base + u * kThreads;
    if (i < n4) {
      va[u] = reinterpret_cast<const float4*>(a)[i];
      vb[u] = b ? reinterpret_cast<const float4*>(b)[i] : va[u];
    }
  }
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    const int64_t i = base + u * kThreads;
    if (i < n4) reinterpret_cast<float4*>(out)[i] = Apply4(va[u], vb[u], f);
  }
  const int64_t t = n4 * 4 + static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (t < n) out[t] = f(a[t], b ? b[t] : a[t]);
}

// The same for unaligned pointers: a grid-stride loop.
template <typename F>
__global__ void __launch_bounds__(kScalarThreads)
    MapScalar(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
              int64_t n, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = f(a[i], b ? b[i] : a[i]);
}

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    throw dlarray::BackendError(std::string("sigmoid_ops: ") + what + ": " + cudaGetErrorName(e) +
                                " (" + cudaGetErrorString(e) + ")");
  }
}

template <typename F>
void Launch(const dlarray::KernelContext& ctx, const float* a, const float* b, F f) {
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current != ctx.device_id)
    Check(cudaSetDevice(ctx.device_id), "cudaSetDevice");
  float* out = dlarray::Data<float>(ctx.outputs[0]);
  const int64_t n = dlarray::NumElements(ctx.outputs[0]);
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  const auto stream = static_cast<cudaStream_t>(ctx.stream);
  if (aligned(a) && (b == nullptr || aligned(b)) && aligned(out)) {
    const int64_t per_block = int64_t{kThreads} * kPerThread;
    const int64_t blocks = ((n + 3) / 4 + per_block - 1) / per_block;
    MapVec4<<<static_cast<unsigned>(blocks < 1 ? 1 : blocks), kThreads, 0, stream>>>(a, b, out, n,
                                                                                     f);
  } else {
    static int sm_counts[64] = {};  // per device id; a benign race writes the same value
    int& sms = sm_counts[ctx.device_id & 63];
    if (sms == 0) {
      Check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.device_id), "SMs");
    }
    int64_t blocks = (n + kScalarThreads - 1) / kScalarThreads;
    blocks = blocks > int64_t{sms} * 8 ? int64_t{sms} * 8 : (blocks < 1 ? 1 : blocks);
    MapScalar<<<static_cast<unsigned>(blocks), kScalarThreads, 0, stream>>>(a, b, out, n, f);
  }
  Check(cudaGetLastError(), "kernel launch");
}

}  // namespace

void SigmoidCuda(const dlarray::KernelContext& ctx) {
  Launch(ctx, dlarray::Data<const float>(ctx.inputs[0]), nullptr, SigmoidOp{});
}

void SigmoidGradientCuda(const dlarray::KernelContext& ctx) {
  Launch(ctx, dlarray::Data<const float>(ctx.inputs[0]), dlarray::Data<const float>(ctx.inputs[1]),
         GradOp{});
}

}  // namespace sigmoid
