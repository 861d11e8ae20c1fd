// matrix_elementwise_multiply: c = a * b.
#include "elementwise.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

struct Multiply {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return MulOf(a, b);
  }
};

}  // namespace

void MatrixElementwiseMultiplyKernel(const KernelContext& ctx) {
  LaunchSameType<kFloatTypes | kIntTypes, 2>(ctx, [](auto) { return Multiply{}; });
}

}  // namespace cuda
}  // namespace dlarray
