// relu: out = max(in, 0); NaN stays NaN, as in numpy.maximum.
#include "elementwise.cuh"
#include "elementwise_typed.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

struct ReluOp {
  __device__ float operator()(const float* x) const { return x[0] < 0.f ? 0.f : x[0]; }
};

struct ReluTyped {
  template <typename C>
  __device__ C operator()(C x) const {
    return x < C{0} ? C{0} : x;
  }
};

}  // namespace

void ReluKernel(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  if (!IsFloat32(ctx.outputs[0]->dtype)) {
    Dispatch<kFloatTypes>(ctx.outputs[0]->dtype, ctx.op_name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      LaunchSameType<T>(env, ctx, ReluTyped{}, std::make_integer_sequence<int, 1>{});
    });
    return;
  }
  Inputs<1> in{{Data<const float>(ctx.inputs[0])}};
  LaunchElementwise(env, in, Data<float>(ctx.outputs[0]), Numel(ctx.outputs[0]), ReluOp{});
}

}  // namespace cuda
}  // namespace dlarray
