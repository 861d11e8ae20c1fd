// compare: out (bool) = a <cmp> b, for every dtype (NaN compares unequal to everything).
#include "elementwise.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {

namespace {

// a <kCmp> b; kCmp: 0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >=.
template <int kCmp>
struct CompareOp {
  template <typename A, typename B>
  __device__ bool operator()(A a, B b) const {
    if constexpr (kCmp == 0) return a == b;
    if constexpr (kCmp == 1) return a != b;
    if constexpr (kCmp == 2) return a < b;
    if constexpr (kCmp == 3) return a <= b;
    if constexpr (kCmp == 4) return a > b;
    return a >= b;
  }
};

template <typename T, int kCmp>
void Run(const LaunchEnv& env, const KernelContext& ctx) {
  LaunchMap(env, Data<bool>(ctx.outputs[0]), NumElements(ctx.outputs[0]), CompareOp<kCmp>{},
            Data<const T>(ctx.inputs[0]), Data<const T>(ctx.inputs[1]));
}

}  // namespace

void CompareKernel(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  Dispatch<kAllTypes>(ctx.inputs[0]->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (static_cast<int>(ctx.attrs[0])) {
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
