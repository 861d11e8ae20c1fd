// array_set: out[:] = value.
#include "elementwise.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

template <typename C>
struct Fill {
  C value;
  __device__ C operator()() const { return value; }
};

}  // namespace

void ArraySetKernel(const KernelContext& ctx) {
  LaunchSameType<kStorageTypes, 0>(ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return Fill<Compute<T>>{ScalarFor<T>(ctx.attrs[0])};
  });
}

}  // namespace cuda
}  // namespace dlarray
