// matrix_elementwise_multiply: c = a * b.
#include "elementwise.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

struct MultiplyOp {
  __device__ float operator()(const float* x) const { return x[0] * x[1]; }
};

}  // namespace

void MatrixElementwiseMultiplyKernel(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  Inputs<2> in{{Data<const float>(ctx.inputs[0]), Data<const float>(ctx.inputs[1])}};
  LaunchElementwise(env, in, Data<float>(ctx.outputs[0]), Numel(ctx.outputs[0]), MultiplyOp{});
}

}  // namespace cuda
}  // namespace dlarray
