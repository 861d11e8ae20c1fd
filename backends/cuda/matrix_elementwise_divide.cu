// matrix_elementwise_divide: c = a / b (floating point; IEEE results for zero divisors).
#include "elementwise.cuh"
#include "elementwise_typed.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

struct DivideOp {
  __device__ float operator()(const float* x) const { return x[0] / x[1]; }
};

struct DivideTyped {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return a / b;
  }
};

}  // namespace

void MatrixElementwiseDivideKernel(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  if (!IsFloat32(ctx.outputs[0]->dtype)) {
    Dispatch<kFloatTypes>(ctx.outputs[0]->dtype, ctx.op_name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      LaunchSameType<T>(env, ctx, DivideTyped{}, std::make_integer_sequence<int, 2>{});
    });
    return;
  }
  Inputs<2> in{{Data<const float>(ctx.inputs[0]), Data<const float>(ctx.inputs[1])}};
  LaunchElementwise(env, in, Data<float>(ctx.outputs[0]), Numel(ctx.outputs[0]), DivideOp{});
}

}  // namespace cuda
}  // namespace dlarray
