/*!
 * \file elementwise_table.cc
 * \brief The OpenCL kernels of every op of dlarray/elementwise_table.h: one program made of the
 *        table's expressions as OpenCL C text (the vector form and the scalar form are the same
 *        expression; OpenCL's built-in functions take both).
 */
#include "dlarray/elementwise_table.h"

#include <string>
#include <vector>

#include "dlarray/plugin.h"
#include "elementwise.h"
#include "kernels.h"

namespace dlarray::opencl {
namespace {

// The table's functions in OpenCL C (correctly rounded to within the spec's few ulp); AddOf and
// MulOf are parameters of each entry's expression macro (below), as their vector and scalar forms
// differ for integers. DL_IN_<set>: whether the program's dtype T is in a dtype set of the table
// (an entry outside it is left out: exp has no integer form to compile).
constexpr const char* kTableFunctions = R"CLC(
#define Exp(v) exp(v)
#define Log(v) log(v)
#define Tanh(v) tanh(v)
#ifdef T_INT
#define DL_IN_kFloatTypes 0
#else
#define DL_IN_kFloatTypes 1
#endif
#define DL_IN_kNumericTypes 1
)CLC";

// Each entry's expression becomes a macro DL_F_<name>(AddOf, MulOf, <inputs>[, <scalar>]),
// expanded once with the vector forms (TV operands) and once with the scalar ones (CT): DL_MAP1
// names its input x, DL_MAP1S x and its scalar s, DL_MAP2 a and b.
#define DLARRAY_CL_SOURCE(name, params, map, vector_args, scalar_args, dtypes, expr)          \
  "#if DL_IN_" #dtypes "\n#define DL_F_" #name "(AddOf, MulOf, " params ") (" #expr ")\n" map \
  "(dl_" #name ", DL_F_" #name "(DL_ADDV, DL_MULV, " vector_args "), DL_F_" #name             \
  "(DL_ADDS, DL_MULS, " scalar_args "))\n#endif\n"
#define DLARRAY_CL_SOURCE_1(name, x, dtypes, expr, grads, doc) \
  DLARRAY_CL_SOURCE(name, #x, "DL_MAP1", "x", "x", dtypes, expr)
#define DLARRAY_CL_SOURCE_2(name, a, b, dtypes, expr, grads, doc) \
  DLARRAY_CL_SOURCE(name, #a ", " #b, "DL_MAP2", "a, b", "a, b", dtypes, expr)
#define DLARRAY_CL_SOURCE_S(name, x, s, dtypes, expr, grads, doc) \
  DLARRAY_CL_SOURCE(name, #x ", " #s, "DL_MAP1S", "x, (TV)(s)", "x, s", dtypes, expr)

const std::string kSource =
    std::string(kElementwiseMacros) + kTableFunctions +
    DLARRAY_ELEMENTWISE_OPS(DLARRAY_CL_SOURCE_1, DLARRAY_CL_SOURCE_2, DLARRAY_CL_SOURCE_S);
const ProgramSource kProgram{"elementwise_table", kSource.c_str()};

// Built with correctly rounded division where the device has it (the divide ops; nothing else in
// the table divides); one program per dtype serves every entry.
void Run(const KernelContext& ctx, const char* kernel, const std::vector<const DLArray*>& inputs,
         const double* scalar) {
  RunElementwise(ctx, kProgram, kernel, inputs, ctx.outputs[0], scalar, ElementMode::kTyped,
                 CorrectDivision(DeviceOf(ctx).info(ctx.device_id)));
}

#define DLARRAY_CL_KERNEL_1(name, x, dtypes, expr, grads, doc) \
  void name##_kernel(const KernelContext& ctx) { Run(ctx, "dl_" #name, {ctx.inputs[0]}, nullptr); }
#define DLARRAY_CL_KERNEL_2(name, a, b, dtypes, expr, grads, doc)   \
  void name##_kernel(const KernelContext& ctx) {                    \
    Run(ctx, "dl_" #name, {ctx.inputs[0], ctx.inputs[1]}, nullptr); \
  }
#define DLARRAY_CL_KERNEL_S(name, x, s, dtypes, expr, grads, doc) \
  void name##_kernel(const KernelContext& ctx) {                  \
    Run(ctx, "dl_" #name, {ctx.inputs[0]}, &ctx.attrs[0]);        \
  }
DLARRAY_ELEMENTWISE_OPS(DLARRAY_CL_KERNEL_1, DLARRAY_CL_KERNEL_2, DLARRAY_CL_KERNEL_S)

}  // namespace

void RegisterTableKernels(Registry* registry) {
  auto register_one = [registry](const char* op, KernelFn fn) {
    registry->register_kernel(op, kDLArrayOpenCL, fn);
  };
  DLARRAY_ELEMENTWISE_REGISTER_ALL
}

}  // namespace dlarray::opencl
