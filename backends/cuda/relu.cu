// relu: out = max(in, 0); NaN stays NaN, as in numpy.maximum.
#include "elementwise.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

struct Relu {
  template <typename C>
  __device__ C operator()(C x) const {
    return x < C{0} ? C{0} : x;
  }
};

}  // namespace

void ReluKernel(const KernelContext& ctx) {
  LaunchSameType<kFloatTypes, 1>(ctx, [](auto) { return Relu{}; });
}

}  // namespace cuda
}  // namespace dlarray
