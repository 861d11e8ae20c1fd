/*!
 * \file elementwise_table.cc
 * \brief The OpenCL kernels of every op of dlarray/elementwise_table.h: one program made of the
 *        table's expressions as OpenCL C text (the vector form and the scalar form are the same
 *        expression; OpenCL's built-in functions take both).
 */
#include "dlarray/elementwise_table.h"

#include <string>

#include "dlarray/plugin.h"
#include "elementwise.h"
#include "kernels.h"

namespace dlarray::opencl {
namespace {

// The table's functions in OpenCL C (correctly rounded to within the spec's few ulp).
constexpr const char* kTableFunctions = R"CLC(
#define Exp(v) exp(v)
#define Log(v) log(v)
#define Tanh(v) tanh(v)
)CLC";

// DL_MAP1 names its input x, DL_MAP2 a and b: the table's input names are macros for those
// while the entry's kernel is expanded.
#define DLARRAY_CL_SOURCE_1(name, x, dtypes, expr, grads, doc) \
  "#define " #x " x\nDL_MAP1(dl_" #name ", (" #expr "), (" #expr "))\n#undef " #x "\n"
#define DLARRAY_CL_SOURCE_2(name, a, b, dtypes, expr, grads, doc)                  \
  "#define " #a " a\n#define " #b " b\nDL_MAP2(dl_" #name ", (" #expr "), (" #expr \
  "))\n#undef " #a "\n#undef " #b "\n"

const std::string kSource = std::string(kElementwiseMacros) + kTableFunctions +
                            DLARRAY_ELEMENTWISE_OPS(DLARRAY_CL_SOURCE_1, DLARRAY_CL_SOURCE_2);
const ProgramSource kProgram{"elementwise_table", kSource.c_str()};

#define DLARRAY_CL_KERNEL_1(name, x, dtypes, expr, grads, doc)                            \
  void name##_kernel(const KernelContext& ctx) {                                          \
    RunElementwise(ctx, kProgram, "dl_" #name, {ctx.inputs[0]}, ctx.outputs[0], nullptr); \
  }
#define DLARRAY_CL_KERNEL_2(name, a, b, dtypes, expr, grads, doc)                              \
  void name##_kernel(const KernelContext& ctx) {                                               \
    RunElementwise(ctx, kProgram, "dl_" #name, {ctx.inputs[0], ctx.inputs[1]}, ctx.outputs[0], \
                   nullptr);                                                                   \
  }
DLARRAY_ELEMENTWISE_OPS(DLARRAY_CL_KERNEL_1, DLARRAY_CL_KERNEL_2)

}  // namespace

void RegisterTableKernels(Registry* registry) {
  auto register_one = [registry](const char* op, KernelFn fn) {
    registry->register_kernel(op, kDLArrayOpenCL, fn);
  };
  DLARRAY_ELEMENTWISE_OPS(DLARRAY_ELEMENTWISE_REGISTER_1, DLARRAY_ELEMENTWISE_REGISTER_2)
}

}  // namespace dlarray::opencl
