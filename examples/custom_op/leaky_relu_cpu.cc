// CPU kernels: y = x > 0 ? x : slope * x, and dx = dy * (x > 0 ? 1 : slope).
#include <cstdint>

#include "leaky_relu.h"

void LeakyReluCpu(const dlarray::KernelContext& ctx) {
  const float* x = dlarray::Data<const float>(ctx.inputs[0]);
  float* y = dlarray::Data<float>(ctx.outputs[0]);
  const float slope = static_cast<float>(ctx.attrs[0]);
  const int64_t n = dlarray::NumElements(ctx.outputs[0]);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : slope * x[i];
}

void LeakyReluGradientCpu(const dlarray::KernelContext& ctx) {
  const float* x = dlarray::Data<const float>(ctx.inputs[0]);
  const float* dy = dlarray::Data<const float>(ctx.inputs[1]);
  float* dx = dlarray::Data<float>(ctx.outputs[0]);
  const float slope = static_cast<float>(ctx.attrs[0]);
  const int64_t n = dlarray::NumElements(ctx.outputs[0]);
  for (int64_t i = 0; i < n; ++i) dx[i] = x[i] > 0.0f ? dy[i] : slope * dy[i];
}
