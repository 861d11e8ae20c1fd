// CUDA kernels, launched on the stream dlarray hands the kernel.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "leaky_relu.h"

namespace {

__global__ void Forward(const float* x, float* y, float slope, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    y[i] = x[i] > 0.0f ? x[i] : slope * x[i];
}

__global__ void Backward(const float* x, const float* dy, float* dx, float slope, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    dx[i] = x[i] > 0.0f ? dy[i] : slope * dy[i];
}

void Check(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw dlarray::BackendError(std::string(what) + ": " + cudaGetErrorString(e));
}

unsigned Blocks(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<unsigned>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}

}  // namespace

void LeakyReluCuda(const dlarray::KernelContext& ctx) {
  cudaSetDevice(ctx.device_id);
  const int64_t n = dlarray::NumElements(ctx.outputs[0]);
  Forward<<<Blocks(n), 256, 0, static_cast<cudaStream_t>(ctx.stream)>>>(
      dlarray::Data<const float>(ctx.inputs[0]), dlarray::Data<float>(ctx.outputs[0]),
      static_cast<float>(ctx.attrs[0]), n);
  Check("leaky_relu");
}

void LeakyReluGradientCuda(const dlarray::KernelContext& ctx) {
  cudaSetDevice(ctx.device_id);
  const int64_t n = dlarray::NumElements(ctx.outputs[0]);
  Backward<<<Blocks(n), 256, 0, static_cast<cudaStream_t>(ctx.stream)>>>(
      dlarray::Data<const float>(ctx.inputs[0]), dlarray::Data<const float>(ctx.inputs[1]),
      dlarray::Data<float>(ctx.outputs[0]), static_cast<float>(ctx.attrs[0]), n);
  Check("leaky_relu_gradient");
}
