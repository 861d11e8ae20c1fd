// matrix_elementwise_add: c = a + b.
#include "elementwise.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

struct Add {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return AddOf(a, b);
  }
};

}  // namespace

void MatrixElementwiseAddKernel(const KernelContext& ctx) {
  LaunchSameType<kFloatTypes | kIntTypes, 2>(ctx, [](auto) { return Add{}; });
}

}  // namespace cuda
}  // namespace dlarray
