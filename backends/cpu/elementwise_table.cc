/*!
 * \file elementwise_table.cc
 * \brief The CPU kernels of every op of dlarray/elementwise_table.h: the table's expression as a
 *        generic lambda, called on VecF and float for float32 (the vectorised loop) and on the
 *        compute type (float, double or the integer itself) for the other dtypes. Complex
 *        operands go to the kernels of elementwise_complex.cc (compiled once, not per ISA): the
 *        dispatch here leaves the complex dtypes out.
 */
#include "dlarray/elementwise_table.h"

#include "cpu_kernels.h"
#include "dlarray/elementwise_math.h"
#include "dlarray/plugin.h"
#include "elementwise.h"
#include "elementwise_complex.h"
#include "table_math.h"
#include "vector_math.h"

namespace dlarray::cpu {
namespace {

constexpr bool SameName(const char* a, const char* b) {
  return *a == *b && (*a == '\0' || SameName(a + 1, b + 1));
}

// float64 tanh through libmvec's vector tanh (vector_math.h): the C library's scalar tanh took
// 10x NumPy's SIMD loop. float32 keeps table_math.h's own vector form.
#define DLARRAY_CPU_KERNEL_1(name, x, dtypes, expr, grads, doc)                                  \
  void name##_kernel(const KernelContext& ctx) {                                                 \
    if (IsComplexCall<dtypes>(ctx)) return name##_complex(ctx);                                  \
    if constexpr (SameName(#name, "tanh")) {                                                     \
      if (!IsFloat32(ctx.outputs[0]->dtype) && RunVectorMath(ctx)) return;                       \
    }                                                                                            \
    DispatchElementwise<1, dtypes & ~kComplexTypes>(ctx,                                         \
                                                    [](auto x) -> decltype(x) { return expr; }); \
  }
#define DLARRAY_CPU_KERNEL_2(name, a, b, dtypes, expr, grads, doc)       \
  void name##_kernel(const KernelContext& ctx) {                         \
    if (IsComplexCall<dtypes>(ctx)) return name##_complex(ctx);          \
    DispatchElementwise<2, dtypes & ~kComplexTypes>(                     \
        ctx, [](auto a, decltype(a) b) -> decltype(a) { return expr; }); \
  }
#define DLARRAY_CPU_KERNEL_S(name, x, s, dtypes, expr, grads, doc)                                \
  void name##_kernel(const KernelContext& ctx) {                                                  \
    DispatchElementwiseScalar<dtypes>(ctx,                                                        \
                                      [](auto x, decltype(x) s) -> decltype(x) { return expr; }); \
  }
DLARRAY_ELEMENTWISE_OPS(DLARRAY_CPU_KERNEL_1, DLARRAY_CPU_KERNEL_2, DLARRAY_CPU_KERNEL_S)

// The rows whose expression also runs on float32 vectors (VecF): the rounding functions, sqrt
// and remainder (table_math.h gives them VecF forms; the C library's are scalar calls here) and
// the comparisons (their VecF form is a lane mask).
constexpr const char* kVectorRows[] = {
    "floor", "ceil",      "trunc", "round",      "sqrt",    "remainder",    "logical_not",
    "equal", "not_equal", "less",  "less_equal", "greater", "greater_equal"};
constexpr bool HasVectorForm(const char* name) {
  for (const char* row : kVectorRows) {
    if (SameName(row, name)) return true;
  }
  return false;
}

// The array API's functions: float32 through the vectorised Map where the row has a VecF form,
// float32 and float64 through libmvec's vector functions where it has the row's (vector_math.h),
// else every dtype through the typed loop, one compute value at a time.
template <int kSet, int kNumInputs, bool kVector, typename Op>
void MathKernel(const KernelContext& ctx, Op op) {
  if constexpr (kVector) {
    if (IsFloat32(ctx.outputs[0]->dtype)) return ElementwiseKernel<kNumInputs>(ctx, op);
  }
  if (RunVectorMath(ctx)) return;
  Dispatch<kSet & ~kComplexTypes>(ctx.outputs[0]->dtype, ctx.op_name, [&](auto tag) {
    TypedKernelImpl<typename decltype(tag)::type, kNumInputs>(
        ctx, op, std::make_integer_sequence<int, kNumInputs>{});
  });
}
#define DLARRAY_CPU_MATH_1(name, x, dtypes, expr, grads, doc)                                     \
  void name##_kernel(const KernelContext& ctx) {                                                  \
    if (IsComplexCall<dtypes>(ctx)) return name##_complex(ctx);                                   \
    MathKernel<dtypes, 1, HasVectorForm(#name)>(ctx, [](auto x) -> decltype(x) { return expr; }); \
  }
#define DLARRAY_CPU_MATH_2(name, a, b, dtypes, expr, grads, doc)         \
  void name##_kernel(const KernelContext& ctx) {                         \
    if (IsComplexCall<dtypes>(ctx)) return name##_complex(ctx);          \
    MathKernel<dtypes, 2, HasVectorForm(#name)>(                         \
        ctx, [](auto a, decltype(a) b) -> decltype(a) { return expr; }); \
  }
DLARRAY_MATH_OPS(DLARRAY_CPU_MATH_1, DLARRAY_CPU_MATH_2)
#undef DLARRAY_CPU_MATH_1
#undef DLARRAY_CPU_MATH_2

// Predicates: inputs of one dtype of the set, a bool output. float32 inputs of a row with a
// vector form: lane masks of kVecWidth elements stored as bytes; bool inputs: read as the bytes
// 0 and 1 they hold (a bool load is a scalar test per element; the bytes vectorise); the rest
// through the typed loop.
template <int kSet, int kNumInputs, bool kVector, typename Pred, typename VecPred>
void PredicateKernel(const KernelContext& ctx, Pred pred, VecPred vec_pred) {
  DLArray* out = ctx.outputs[0];
  const int64_t n = NumElements(out);
  bool* y = Data<bool>(out);
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kNumInputs == 1) {
      MapTyped(n, y, pred, Data<const T>(ctx.inputs[0]));
    } else {
      MapTyped(n, y, pred, Data<const T>(ctx.inputs[0]), Data<const T>(ctx.inputs[1]));
    }
  };
  const DLArrayDType t = ctx.inputs[0]->dtype;
  if constexpr (kVector) {
    if (IsFloat32(t)) {
      if constexpr (kNumInputs == 1) {
        return MapMask(n, y, vec_pred, InData(ctx.inputs[0]));
      } else {
        return MapMask(n, y, vec_pred, InData(ctx.inputs[0]), InData(ctx.inputs[1]));
      }
    }
  }
  if (t.code == kDLArrayBool) {
    const uint8_t* x0 = Data<const uint8_t>(ctx.inputs[0]);
    const uint8_t* x1 = Data<const uint8_t>(ctx.inputs[kNumInputs - 1]);
    return ParallelFor(n, n, 64, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if constexpr (kNumInputs == 1) {
          y[i] = pred(x0[i]);
        } else {
          y[i] = pred(x0[i], x1[i]);
        }
      }
    });
  }
  Dispatch<kSet & ~kComplexTypes>(t, ctx.op_name, run);
}
#define DLARRAY_CPU_PREDICATE_1(name, x, dtypes, expr, doc)                     \
  void name##_kernel(const KernelContext& ctx) {                                \
    if (IsComplexCall<dtypes>(ctx)) return name##_complex(ctx);                 \
    PredicateKernel<dtypes, 1, HasVectorForm(#name)>(                           \
        ctx, [](auto x) -> bool { return expr; }, [](auto x) { return expr; }); \
  }
#define DLARRAY_CPU_PREDICATE_2(name, a, b, dtypes, expr, doc)   \
  void name##_kernel(const KernelContext& ctx) {                 \
    if (IsComplexCall<dtypes>(ctx)) return name##_complex(ctx);  \
    PredicateKernel<dtypes, 2, HasVectorForm(#name)>(            \
        ctx, [](auto a, decltype(a) b) -> bool { return expr; }, \
        [](auto a, decltype(a) b) { return expr; });             \
  }
DLARRAY_PREDICATE_OPS(DLARRAY_CPU_PREDICATE_1, DLARRAY_CPU_PREDICATE_2)
#undef DLARRAY_CPU_PREDICATE_1
#undef DLARRAY_CPU_PREDICATE_2
#undef DLARRAY_CPU_KERNEL_1
#undef DLARRAY_CPU_KERNEL_2
#undef DLARRAY_CPU_KERNEL_S
// The complex part ops (real, imag, complex_abs) have complex inputs only.
#define DLARRAY_CPU_PART(name, x, expr, doc) \
  void name##_kernel(const KernelContext& ctx) { name##_complex(ctx); }
DLARRAY_COMPLEX_PART_OPS(DLARRAY_CPU_PART)
#undef DLARRAY_CPU_PART

// where: a select moves elements, so it runs on the storage type of the element size (complex
// included).
void where_kernel(const KernelContext& ctx) {
  DLArray* out = ctx.outputs[0];
  VisitElementSize(out->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    MapTyped(
        NumElements(out), Data<T>(out), [](bool c, T a, T b) { return c ? a : b; },
        Data<const bool>(ctx.inputs[0]), Data<const T>(ctx.inputs[1]),
        Data<const T>(ctx.inputs[2]));
  });
}

// masked_fill: out = value where the condition holds, out itself elsewhere (x[mask] = scalar in
// one pass; where() with an array of the value read and wrote that array too).
void masked_fill_kernel(const KernelContext& ctx) {
  DLArray* out = ctx.outputs[0];
  Dispatch<kAllTypes>(out->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto value = ScalarFor<T>(ctx.attrs[0]);
    T* data = Data<T>(out);
    MapTyped(
        NumElements(out), data, [value](bool c, auto old) { return c ? value : old; },
        Data<const bool>(ctx.inputs[0]), static_cast<const T*>(data));
  });
}

// compare (cmp 0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >=, checked by the core): the six comparison
// predicates under the seed's one name.
void compare_kernel(const KernelContext& ctx) {
  static constexpr KernelFn kByKind[] = {&equal_kernel,   &not_equal_kernel,
                                         &less_kernel,    &less_equal_kernel,
                                         &greater_kernel, &greater_equal_kernel};
  kByKind[static_cast<int>(ctx.attrs[0])](ctx);
}

// compare_by_const (cmp checked by the core): the element converted to double against the
// attribute, by the row of DLARRAY_COMPARE_BY_CONST_OPS that cmp names.
template <typename Pred>
void CompareByConst(const KernelContext& ctx, Pred pred) {
  DLArray* out = ctx.outputs[0];
  const double s = ctx.attrs[0];
  Dispatch<kAllTypes>(ctx.inputs[0]->dtype, ctx.op_name, [&](auto tag) {
    MapTyped(
        NumElements(out), Data<bool>(out),
        [pred, s](auto x) { return pred(static_cast<double>(x), s); },
        Data<const typename decltype(tag)::type>(ctx.inputs[0]));
  });
}
void compare_by_const_kernel(const KernelContext& ctx) {
#define DLARRAY_CPU_COMPARE_BY_CONST(cmp, x, s, expr) \
  case cmp:                                           \
    return CompareByConst(ctx, [](double x, double s) { return expr; });
  switch (static_cast<int>(ctx.attrs[1])) {
    DLARRAY_COMPARE_BY_CONST_OPS(DLARRAY_CPU_COMPARE_BY_CONST)
  }
#undef DLARRAY_CPU_COMPARE_BY_CONST
}

}  // namespace

void RegisterTableKernels(Registry* registry) {
  auto register_one = [registry](const char* op, KernelFn fn) {
    registry->register_kernel(op, kDLArrayCPU, fn);
  };
  DLARRAY_ELEMENTWISE_REGISTER_ALL
  register_one("where", &where_kernel);
  register_one("masked_fill", &masked_fill_kernel);
  register_one("compare", &compare_kernel);
  register_one("compare_by_const", &compare_by_const_kernel);
}

}  // namespace dlarray::cpu
