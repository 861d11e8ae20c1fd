// relu: out = max(in, 0); NaN stays NaN, as in numpy.maximum.
#include "elementwise.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

struct ReluOp {
  __device__ float operator()(const float* x) const { return x[0] < 0.f ? 0.f : x[0]; }
};

}  // namespace

void ReluKernel(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  Inputs<1> in{{Data<const float>(ctx.inputs[0])}};
  LaunchElementwise(env, in, Data<float>(ctx.outputs[0]), Numel(ctx.outputs[0]), ReluOp{});
}

}  // namespace cuda
}  // namespace dlarray
