// relu_gradient: out = grad * (in > 0), one fused pass (NaN or inf grads where in <= 0 give NaN, as
// in NumPy).
#include "elementwise.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

struct ReluGradient {
  template <typename C>
  __device__ C operator()(C x, C grad) const {
    return grad * (x > C{0} ? C{1} : C{0});
  }
};

}  // namespace

void ReluGradientKernel(const KernelContext& ctx) {
  LaunchSameType<kFloatTypes, 2>(ctx, [](auto) { return ReluGradient{}; });
}

}  // namespace cuda
}  // namespace dlarray
