/*!
 * \file elementwise_table.cc
 * \brief The CPU kernels of every op of dlarray/elementwise_table.h: the table's expression as a
 *        generic lambda, called on VecF and float for float32 (the vectorised loop) and on the
 *        compute type (float, double or the integer itself) for the other dtypes.
 */
#include "dlarray/elementwise_table.h"

#include "cpu_kernels.h"
#include "dlarray/plugin.h"
#include "elementwise.h"
#include "table_math.h"

namespace dlarray::cpu {
namespace {

#define DLARRAY_CPU_KERNEL_1(name, x, dtypes, expr, grads, doc)                      \
  void name##_kernel(const KernelContext& ctx) {                                     \
    DispatchElementwise<1, dtypes>(ctx, [](auto x) -> decltype(x) { return expr; }); \
  }
#define DLARRAY_CPU_KERNEL_2(name, a, b, dtypes, expr, grads, doc)                             \
  void name##_kernel(const KernelContext& ctx) {                                               \
    DispatchElementwise<2, dtypes>(ctx,                                                        \
                                   [](auto a, decltype(a) b) -> decltype(a) { return expr; }); \
  }
#define DLARRAY_CPU_KERNEL_S(name, x, s, dtypes, expr, grads, doc)                                \
  void name##_kernel(const KernelContext& ctx) {                                                  \
    DispatchElementwiseScalar<dtypes>(ctx,                                                        \
                                      [](auto x, decltype(x) s) -> decltype(x) { return expr; }); \
  }
DLARRAY_ELEMENTWISE_OPS(DLARRAY_CPU_KERNEL_1, DLARRAY_CPU_KERNEL_2, DLARRAY_CPU_KERNEL_S)
#undef DLARRAY_CPU_KERNEL_1
#undef DLARRAY_CPU_KERNEL_2
#undef DLARRAY_CPU_KERNEL_S

}  // namespace

void RegisterTableKernels(Registry* registry) {
  auto register_one = [registry](const char* op, KernelFn fn) {
    registry->register_kernel(op, kDLArrayCPU, fn);
  };
  DLARRAY_ELEMENTWISE_REGISTER_ALL
}

}  // namespace dlarray::cpu
