// matrix_elementwise_divide: c = a / b (floating point; IEEE results for zero divisors).
#include "elementwise.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

struct Divide {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return a / b;
  }
};

}  // namespace

void MatrixElementwiseDivideKernel(const KernelContext& ctx) {
  LaunchSameType<kFloatTypes, 2>(ctx, [](auto) { return Divide{}; });
}

}  // namespace cuda
}  // namespace dlarray
