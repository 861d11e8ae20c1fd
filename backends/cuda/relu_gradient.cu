// relu_gradient: out = grad * (in > 0), one fused pass (NaN or inf grads where in <= 0 give NaN, as
// in NumPy).
#include "elementwise.cuh"
#include "elementwise_typed.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

struct ReluGradientOp {
  __device__ float operator()(const float* x) const { return x[1] * (x[0] > 0.f ? 1.f : 0.f); }
};

struct ReluGradientTyped {
  template <typename C>
  __device__ C operator()(C x, C grad) const {
    return grad * (x > C{0} ? C{1} : C{0});
  }
};

}  // namespace

void ReluGradientKernel(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  if (!IsFloat32(ctx.outputs[0]->dtype)) {
    Dispatch<kFloatTypes>(ctx.outputs[0]->dtype, ctx.op_name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      LaunchSameType<T>(env, ctx, ReluGradientTyped{}, std::make_integer_sequence<int, 2>{});
    });
    return;
  }
  Inputs<2> in{{Data<const float>(ctx.inputs[0]), Data<const float>(ctx.inputs[1])}};
  LaunchElementwise(env, in, Data<float>(ctx.outputs[0]), Numel(ctx.outputs[0]), ReluGradientOp{});
}

}  // namespace cuda
}  // namespace dlarray
