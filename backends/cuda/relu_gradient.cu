// relu_gradient: out = grad * (in > 0), one fused pass (NaN or inf grads where in <= 0 give NaN, as
// in NumPy).
#include "elementwise.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

struct ReluGradientOp {
  __device__ float operator()(const float* x) const { return x[1] * (x[0] > 0.f ? 1.f : 0.f); }
};

}  // namespace

void ReluGradientKernel(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  Inputs<2> in{{Data<const float>(ctx.inputs[0]), Data<const float>(ctx.inputs[1])}};
  LaunchElementwise(env, in, Data<float>(ctx.outputs[0]), Numel(ctx.outputs[0]), ReluGradientOp{});
}

}  // namespace cuda
}  // namespace dlarray
