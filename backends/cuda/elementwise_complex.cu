// The CUDA kernels of the elementwise table for complex64/complex128 (see elementwise_complex.h):
// the table's expressions as device functors on dlarray::Complex compute values, whose operators
// and functions are dlarray/elementwise_complex.h's (dlarray/complex_math.h's functions, the
// CPU's too, with C99 Annex G special values), run by the elementwise launcher. Only the complex
// dtypes of each row are instantiated.
#include "dlarray/elementwise_complex.h"
#include "dlarray/elementwise_table.h"
#include "dlarray/plugin.h"
#include "elementwise.cuh"
#include "elementwise_complex.h"

namespace dlarray {
namespace cuda {
namespace {

// out (bool, or the parts' real type R when kRealOut) = f(inputs...), inputs of one complex dtype.
template <int kSet, bool kRealOut, int kNumInputs, typename F>
void LaunchComplexTo(const KernelContext& ctx, F f) {
  DLArray* out = ctx.outputs[0];
  Dispatch<kSet & kComplexTypes>(ctx.inputs[0]->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using O = std::conditional_t<kRealOut, decltype(T::re), bool>;
    const LaunchEnv env = Prepare(ctx);
    if constexpr (kNumInputs == 1) {
      LaunchMap(env, Data<O>(out), NumElements(out), f, Data<const T>(ctx.inputs[0]));
    } else {
      LaunchMap(env, Data<O>(out), NumElements(out), f, Data<const T>(ctx.inputs[0]),
                Data<const T>(ctx.inputs[1]));
    }
  });
}

#define DLARRAY_CUDA_COMPLEX_FN_1(name, x, dtypes, expr, grads, doc) \
  struct name##_fn {                                                 \
    template <typename C>                                            \
    __device__ C operator()(C x) const {                             \
      return expr;                                                   \
    }                                                                \
  };
#define DLARRAY_CUDA_COMPLEX_FN_2(name, a, b, dtypes, expr, grads, doc) \
  struct name##_fn {                                                    \
    template <typename C>                                               \
    __device__ C operator()(C a, C b) const {                           \
      return expr;                                                      \
    }                                                                   \
  };
// The scalar ops have no complex form (Python passes a complex scalar as a 0-d array).
#define DLARRAY_CUDA_COMPLEX_FN_S(name, x, s, dtypes, expr, grads, doc) \
  struct name##_fn {                                                    \
    template <typename C>                                               \
    __device__ C operator()(C x) const {                                \
      return x;                                                         \
    }                                                                   \
  };
#define DLARRAY_CUDA_COMPLEX_PRED_1(name, x, dtypes, expr, doc) \
  struct name##_fn {                                            \
    template <typename C>                                       \
    __device__ bool operator()(C x) const {                     \
      return expr;                                              \
    }                                                           \
  };
#define DLARRAY_CUDA_COMPLEX_PRED_2(name, a, b, dtypes, expr, doc) \
  struct name##_fn {                                               \
    template <typename C>                                          \
    __device__ bool operator()(C a, C b) const {                   \
      return expr;                                                 \
    }                                                              \
  };
#define DLARRAY_CUDA_COMPLEX_PART_FN(name, x, expr, doc) \
  struct name##_fn {                                     \
    template <typename C>                                \
    __device__ auto operator()(C x) const {              \
      return expr;                                       \
    }                                                    \
  };
DLARRAY_ELEMENTWISE_OPS(DLARRAY_CUDA_COMPLEX_FN_1, DLARRAY_CUDA_COMPLEX_FN_2,
                        DLARRAY_CUDA_COMPLEX_FN_S)
DLARRAY_MATH_OPS(DLARRAY_CUDA_COMPLEX_FN_1, DLARRAY_CUDA_COMPLEX_FN_2)
DLARRAY_PREDICATE_OPS(DLARRAY_CUDA_COMPLEX_PRED_1, DLARRAY_CUDA_COMPLEX_PRED_2)
DLARRAY_COMPLEX_PART_OPS(DLARRAY_CUDA_COMPLEX_PART_FN)

}  // namespace

#define DLARRAY_CUDA_COMPLEX_1(name, x, dtypes, expr, grads, doc)                     \
  void name##_complex(const KernelContext& ctx) {                                     \
    LaunchSameType<dtypes & kComplexTypes, 1>(ctx, [](auto) { return name##_fn{}; }); \
  }
#define DLARRAY_CUDA_COMPLEX_2(name, a, b, dtypes, expr, grads, doc)                  \
  void name##_complex(const KernelContext& ctx) {                                     \
    LaunchSameType<dtypes & kComplexTypes, 2>(ctx, [](auto) { return name##_fn{}; }); \
  }
#define DLARRAY_CUDA_COMPLEX_S(name, x, s, dtypes, expr, grads, doc) \
  void name##_complex(const KernelContext& ctx) {                    \
    LaunchSameType<0, 1>(ctx, [](auto) { return name##_fn{}; });     \
  }
#define DLARRAY_CUDA_COMPLEX_P1(name, x, dtypes, expr, doc) \
  void name##_complex(const KernelContext& ctx) {           \
    LaunchComplexTo<dtypes, false, 1>(ctx, name##_fn{});    \
  }
#define DLARRAY_CUDA_COMPLEX_P2(name, a, b, dtypes, expr, doc) \
  void name##_complex(const KernelContext& ctx) {              \
    LaunchComplexTo<dtypes, false, 2>(ctx, name##_fn{});       \
  }
#define DLARRAY_CUDA_COMPLEX_R(name, x, expr, doc)             \
  void name##_complex(const KernelContext& ctx) {              \
    LaunchComplexTo<kComplexTypes, true, 1>(ctx, name##_fn{}); \
  }
DLARRAY_ELEMENTWISE_OPS(DLARRAY_CUDA_COMPLEX_1, DLARRAY_CUDA_COMPLEX_2, DLARRAY_CUDA_COMPLEX_S)
DLARRAY_MATH_OPS(DLARRAY_CUDA_COMPLEX_1, DLARRAY_CUDA_COMPLEX_2)
DLARRAY_PREDICATE_OPS(DLARRAY_CUDA_COMPLEX_P1, DLARRAY_CUDA_COMPLEX_P2)
DLARRAY_COMPLEX_PART_OPS(DLARRAY_CUDA_COMPLEX_R)

}  // namespace cuda
}  // namespace dlarray
