// compare_by_const: out (bool) = in <cmp> value, the value compared exactly (in double).
#include "elementwise.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {

namespace {

template <int kCmp>
struct CompareConst {
  double value;
  template <typename C>
  __device__ bool operator()(C x) const {
    const double v = static_cast<double>(x);
    if constexpr (kCmp == 0) return v == value;
    if constexpr (kCmp == 1) return v != value;
    if constexpr (kCmp == 2) return v < value;
    if constexpr (kCmp == 3) return v <= value;
    if constexpr (kCmp == 4) return v > value;
    return v >= value;
  }
};

template <typename T, int kCmp>
void Run(const LaunchEnv& env, const KernelContext& ctx) {
  LaunchMap(env, Data<bool>(ctx.outputs[0]), NumElements(ctx.outputs[0]),
            CompareConst<kCmp>{ctx.attrs[0]}, Data<const T>(ctx.inputs[0]));
}

}  // namespace

void CompareByConstKernel(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  Dispatch<kAllTypes>(ctx.inputs[0]->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (static_cast<int>(ctx.attrs[1])) {
      case 0:
        return Run<T, 0>(env, ctx);
      case 1:
        return Run<T, 1>(env, ctx);
      case 2:
        return Run<T, 2>(env, ctx);
      case 3:
        return Run<T, 3>(env, ctx);
      case 4:
        return Run<T, 4>(env, ctx);
      default:
        return Run<T, 5>(env, ctx);
    }
  });
}

}  // namespace cuda
}  // namespace dlarray
