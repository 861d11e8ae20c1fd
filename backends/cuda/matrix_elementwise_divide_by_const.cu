// matrix_elementwise_divide_by_const: out = in / value, value rounded to the array's dtype first
// (NumPy's x / scalar); a true division, not a multiplication by 1 / value.
#include "elementwise.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

template <typename C>
struct DivideConst {
  C value;
  __device__ C operator()(C x) const { return x / value; }
};

}  // namespace

void MatrixElementwiseDivideByConstKernel(const KernelContext& ctx) {
  LaunchSameType<kFloatTypes, 1>(ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return DivideConst<Compute<T>>{ScalarFor<T>(ctx.attrs[0])};
  });
}

}  // namespace cuda
}  // namespace dlarray
