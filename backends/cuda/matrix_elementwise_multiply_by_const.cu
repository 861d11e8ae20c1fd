// matrix_elementwise_multiply_by_const: out = in * value.
#include "elementwise.cuh"
#include "elementwise_typed.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

struct MultiplyConstOp {
  float value;
  __device__ float operator()(const float* x) const { return x[0] * value; }
};

template <typename C>
struct MulConstTyped {
  C value;
  __device__ C operator()(C x) const { return MulOf(x, value); }
};

}  // namespace

void MatrixElementwiseMultiplyByConstKernel(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  if (!IsFloat32(ctx.outputs[0]->dtype)) {
    Dispatch<kFloatTypes | kIntTypes>(ctx.outputs[0]->dtype, ctx.op_name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      LaunchSameType<T>(env, ctx, MulConstTyped<Compute<T>>{ScalarFor<T>(ctx.attrs[0])},
                        std::make_integer_sequence<int, 1>{});
    });
    return;
  }
  Inputs<1> in{{Data<const float>(ctx.inputs[0])}};
  LaunchElementwise(env, in, Data<float>(ctx.outputs[0]), Numel(ctx.outputs[0]),
                    MultiplyConstOp{static_cast<float>(ctx.attrs[0])});
}

}  // namespace cuda
}  // namespace dlarray
