// array_set: out[:] = value.
#include "elementwise.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

struct FillOp {
  float value;
  __device__ float operator()(const float* /*x*/) const { return value; }
};

}  // namespace

void ArraySetKernel(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  Inputs<0> in{{nullptr}};
  LaunchElementwise(env, in, Data<float>(ctx.outputs[0]), Numel(ctx.outputs[0]),
                    FillOp{static_cast<float>(ctx.attrs[0])});
}

}  // namespace cuda
}  // namespace dlarray
