// array_set: out[:] = value.
#include "elementwise.cuh"
#include "elementwise_typed.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

struct FillOp {
  float value;
  __device__ float operator()(const float* /*x*/) const { return value; }
};

template <typename C>
struct FillTyped {
  C value;
  __device__ C operator()() const { return value; }
};

}  // namespace

void ArraySetKernel(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  if (!IsFloat32(ctx.outputs[0]->dtype)) {
    Dispatch<kAllTypes>(ctx.outputs[0]->dtype, ctx.op_name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      LaunchSameType<T>(env, ctx, FillTyped<Compute<T>>{ScalarFor<T>(ctx.attrs[0])},
                        std::make_integer_sequence<int, 0>{});
    });
    return;
  }
  Inputs<0> in{{nullptr}};
  LaunchElementwise(env, in, Data<float>(ctx.outputs[0]), Numel(ctx.outputs[0]),
                    FillOp{static_cast<float>(ctx.attrs[0])});
}

}  // namespace cuda
}  // namespace dlarray
