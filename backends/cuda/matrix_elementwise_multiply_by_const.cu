// matrix_elementwise_multiply_by_const: out = in * value (value rounded to the array's dtype
// first, or truncated and wrapped for integers, as NumPy does with a Python scalar).
#include "elementwise.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

template <typename C>
struct MultiplyConst {
  C value;
  __device__ C operator()(C x) const { return MulOf(x, value); }
};

}  // namespace

void MatrixElementwiseMultiplyByConstKernel(const KernelContext& ctx) {
  LaunchSameType<kFloatTypes | kIntTypes, 1>(ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return MultiplyConst<Compute<T>>{ScalarFor<T>(ctx.attrs[0])};
  });
}

}  // namespace cuda
}  // namespace dlarray
