// CPU kernels: y = x > 0 ? x : slope * x, and dx = dy * (x > 0 ? 1 : slope).
#include <cstdint>

#include "leaky_relu.h"

namespace {

const float* In(const dlarray::KernelContext& c, int i) {
  return reinterpret_cast<const float*>(static_cast<const char*>(c.inputs[i]->data) +
                                        c.inputs[i]->byte_offset);
}

float* Out(const dlarray::KernelContext& c) {
  return reinterpret_cast<float*>(static_cast<char*>(c.outputs[0]->data) +
                                  c.outputs[0]->byte_offset);
}

}  // namespace

void LeakyReluCpu(const dlarray::KernelContext& ctx) {
  const float* x = In(ctx, 0);
  float* y = Out(ctx);
  const float slope = static_cast<float>(ctx.attrs[0]);
  const int64_t n = dlarray::NumElements(ctx.outputs[0]);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : slope * x[i];
}

void LeakyReluGradientCpu(const dlarray::KernelContext& ctx) {
  const float* x = In(ctx, 0);
  const float* dy = In(ctx, 1);
  float* dx = Out(ctx);
  const float slope = static_cast<float>(ctx.attrs[0]);
  const int64_t n = dlarray::NumElements(ctx.outputs[0]);
  for (int64_t i = 0; i < n; ++i) dx[i] = x[i] > 0.0f ? dy[i] : slope * dy[i];
}
