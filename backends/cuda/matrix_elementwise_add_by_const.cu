// matrix_elementwise_add_by_const: out = in + value.
#include "elementwise.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

struct AddConstOp {
  float value;
  __device__ float operator()(const float* x) const { return x[0] + value; }
};

}  // namespace

void MatrixElementwiseAddByConstKernel(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  Inputs<1> in{{Data<const float>(ctx.inputs[0])}};
  LaunchElementwise(env, in, Data<float>(ctx.outputs[0]), Numel(ctx.outputs[0]),
                    AddConstOp{static_cast<float>(ctx.attrs[0])});
}

}  // namespace cuda
}  // namespace dlarray
