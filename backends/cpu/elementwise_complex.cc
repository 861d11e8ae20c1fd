/*!
 * \file elementwise_complex.cc
 * \brief The CPU's complex64/complex128 kernels of the elementwise table (see
 *        elementwise_complex.h): the table's expressions on dlarray::Complex compute values
 *        (dlarray/elementwise_complex.h), one element at a time through the typed loop. Only the
 *        complex dtypes of each row are instantiated.
 */
#include "elementwise_complex.h"

#include "cpu_kernels.h"
#include "dlarray/elementwise_complex.h"
#include "dlarray/plugin.h"
#include "elementwise.h"

namespace dlarray::cpu {
namespace {

// out = op(inputs...), inputs and output of one complex dtype of kSet.
template <int kSet, int kNumInputs, typename Op>
void ComplexMap(const KernelContext& ctx, Op op) {
  Dispatch<kSet & kComplexTypes>(ctx.inputs[0]->dtype, ctx.op_name, [&](auto tag) {
    TypedKernelImpl<typename decltype(tag)::type, kNumInputs>(
        ctx, op, std::make_integer_sequence<int, kNumInputs>{});
  });
}

// out (bool or the parts' real type R) = op(inputs...), inputs of one complex dtype of kSet.
template <int kSet, bool kRealOut, int kNumInputs, typename Op>
void ComplexTo(const KernelContext& ctx, Op op) {
  DLArray* out = ctx.outputs[0];
  Dispatch<kSet & kComplexTypes>(ctx.inputs[0]->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using O = std::conditional_t<kRealOut, decltype(T::re), bool>;
    if constexpr (kNumInputs == 1) {
      MapTyped(NumElements(out), Data<O>(out), op, Data<const T>(ctx.inputs[0]));
    } else {
      MapTyped(NumElements(out), Data<O>(out), op, Data<const T>(ctx.inputs[0]),
               Data<const T>(ctx.inputs[1]));
    }
  });
}

}  // namespace

/// \cond
#define DLARRAY_CPU_COMPLEX_1(name, x, dtypes, expr, grads, doc)            \
  void name##_complex(const KernelContext& ctx) {                           \
    ComplexMap<dtypes, 1>(ctx, [](auto x) -> decltype(x) { return expr; }); \
  }
#define DLARRAY_CPU_COMPLEX_2(name, a, b, dtypes, expr, grads, doc)                        \
  void name##_complex(const KernelContext& ctx) {                                          \
    ComplexMap<dtypes, 2>(ctx, [](auto a, decltype(a) b) -> decltype(a) { return expr; }); \
  }
// The scalar ops have no complex form (Python passes a complex scalar as a 0-d array).
#define DLARRAY_CPU_COMPLEX_S(name, x, s, dtypes, expr, grads, doc) \
  void name##_complex(const KernelContext& ctx) {                   \
    ComplexMap<0, 1>(ctx, [](auto v) { return v; });                \
  }
#define DLARRAY_CPU_COMPLEX_P1(name, x, dtypes, expr, doc)                 \
  void name##_complex(const KernelContext& ctx) {                          \
    ComplexTo<dtypes, false, 1>(ctx, [](auto x) -> bool { return expr; }); \
  }
#define DLARRAY_CPU_COMPLEX_P2(name, a, b, dtypes, expr, doc)                             \
  void name##_complex(const KernelContext& ctx) {                                         \
    ComplexTo<dtypes, false, 2>(ctx, [](auto a, decltype(a) b) -> bool { return expr; }); \
  }
#define DLARRAY_CPU_COMPLEX_R(name, x, expr, doc)                                          \
  void name##_complex(const KernelContext& ctx) {                                          \
    ComplexTo<kComplexTypes, true, 1>(ctx, [](auto x) -> decltype(x.re) { return expr; }); \
  }
DLARRAY_ELEMENTWISE_OPS(DLARRAY_CPU_COMPLEX_1, DLARRAY_CPU_COMPLEX_2, DLARRAY_CPU_COMPLEX_S)
DLARRAY_MATH_OPS(DLARRAY_CPU_COMPLEX_1, DLARRAY_CPU_COMPLEX_2)
DLARRAY_PREDICATE_OPS(DLARRAY_CPU_COMPLEX_P1, DLARRAY_CPU_COMPLEX_P2)
DLARRAY_COMPLEX_PART_OPS(DLARRAY_CPU_COMPLEX_R)
#undef DLARRAY_CPU_COMPLEX_1
#undef DLARRAY_CPU_COMPLEX_2
#undef DLARRAY_CPU_COMPLEX_S
#undef DLARRAY_CPU_COMPLEX_P1
#undef DLARRAY_CPU_COMPLEX_P2
#undef DLARRAY_CPU_COMPLEX_R
/// \endcond

}  // namespace dlarray::cpu
