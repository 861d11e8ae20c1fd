// CPU kernels: y = x > 0 ? x : slope * x, and dx = dy * (x > 0 ? 1 : slope). The loops run on
// the CPU plugin's thread pool (dlarray::ParallelFor), never on threads of their own, which would
// compete with the pool every core op uses.
#include <cstdint>

#include "dlarray/parallel.h"
#include "leaky_relu.h"

namespace {
constexpr int64_t kAlign = 16;  // chunks start on 64-byte boundaries of floats
}  // namespace

void LeakyReluCpu(const dlarray::KernelContext& ctx) {
  const float* x = dlarray::Data<const float>(ctx.inputs[0]);
  float* y = dlarray::Data<float>(ctx.outputs[0]);
  const float slope = static_cast<float>(ctx.attrs[0]);
  const int64_t n = dlarray::NumElements(ctx.outputs[0]);
  dlarray::ParallelFor(ctx, n, n, kAlign, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0.0f ? x[i] : slope * x[i];
  });
}

void LeakyReluGradientCpu(const dlarray::KernelContext& ctx) {
  const float* x = dlarray::Data<const float>(ctx.inputs[0]);
  const float* dy = dlarray::Data<const float>(ctx.inputs[1]);
  float* dx = dlarray::Data<float>(ctx.outputs[0]);
  const float slope = static_cast<float>(ctx.attrs[0]);
  const int64_t n = dlarray::NumElements(ctx.outputs[0]);
  dlarray::ParallelFor(ctx, n, n, kAlign, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dx[i] = x[i] > 0.0f ? dy[i] : slope * dy[i];
  });
}
