// The CUDA kernels of every op of dlarray/elementwise_table.h: the table's expression as a device
// functor on the compute type (float for the 16-bit types and float32, double for float64, the
// integer itself), run by the elementwise launcher (16-byte vectors when the operands are
// aligned), as every hand-written elementwise kernel was.
#include "dlarray/elementwise_table.h"
#include "dlarray/plugin.h"
#include "elementwise.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

// The table's functions, from CUDA's math library (within 2 ulp).
__device__ __forceinline__ float Exp(float x) { return expf(x); }
__device__ __forceinline__ double Exp(double x) { return exp(x); }
__device__ __forceinline__ float Log(float x) { return logf(x); }
__device__ __forceinline__ double Log(double x) { return log(x); }
__device__ __forceinline__ float Tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double Tanh(double x) { return tanh(x); }

#define DLARRAY_CUDA_KERNEL_1(name, x, dtypes, expr, grads, doc)      \
  struct name##_fn {                                                  \
    template <typename C>                                             \
    __device__ C operator()(C x) const {                              \
      return expr;                                                    \
    }                                                                 \
  };                                                                  \
  void name##_kernel(const KernelContext& ctx) {                      \
    LaunchSameType<dtypes, 1>(ctx, [](auto) { return name##_fn{}; }); \
  }
#define DLARRAY_CUDA_KERNEL_2(name, a, b, dtypes, expr, grads, doc)   \
  struct name##_fn {                                                  \
    template <typename C>                                             \
    __device__ C operator()(C a, C b) const {                         \
      return expr;                                                    \
    }                                                                 \
  };                                                                  \
  void name##_kernel(const KernelContext& ctx) {                      \
    LaunchSameType<dtypes, 2>(ctx, [](auto) { return name##_fn{}; }); \
  }
// The scalar, in the compute type C, is a member of the functor (a kernel argument).
#define DLARRAY_CUDA_KERNEL_S(name, x, s, dtypes, expr, grads, doc) \
  template <typename C>                                             \
  struct name##_fn {                                                \
    C s;                                                            \
    __device__ C operator()(C x) const { return expr; }             \
  };                                                                \
  void name##_kernel(const KernelContext& ctx) {                    \
    LaunchSameType<dtypes, 1>(ctx, [&](auto tag) {                  \
      using T = typename decltype(tag)::type;                       \
      return name##_fn<Compute<T>>{ScalarFor<T>(ctx.attrs[0])};     \
    });                                                             \
  }
DLARRAY_ELEMENTWISE_OPS(DLARRAY_CUDA_KERNEL_1, DLARRAY_CUDA_KERNEL_2, DLARRAY_CUDA_KERNEL_S)

}  // namespace

void RegisterTableKernels(Registry* registry) {
  auto register_one = [registry](const char* op, KernelFn fn) {
    registry->register_kernel(op, kDLArrayCUDA, fn);
  };
  DLARRAY_ELEMENTWISE_REGISTER_ALL
}

}  // namespace cuda
}  // namespace dlarray
