/* The kernels of every op of dlarray/elementwise_table.h, made from the table itself: its
 * expressions are C expressions over the functions of ew_math.h (one spelling per compute type),
 * and ew_kernels.h turns every entry into one loop per dtype of the entry's dtype set. No op is
 * written by hand here: a new entry in the SDK's table is a new kernel of this backend. */
#include <complex.h>
#include <math.h>
#include <stdint.h>

#include "dlarray/elementwise_table.h"
#include "prim.h"

/* Names with the current suffix: EWF(abs) is ew_abs_<CS>, EW_NAME(exp, TS) ew_exp_<TS>. */
#define EW_PASTE3(a, b, c) a##b##_##c
#define EW_NAME_(name, sfx) EW_PASTE3(ew_, name, sfx)
#define EW_NAME(name, sfx) EW_NAME_(name, sfx)
#define EWF(name) EW_NAME(name, CS)

/* The table's functions (the names its expressions use). */
#define Exp(v) EWF(exp)(v)
#define Log(v) EWF(log)(v)
#define Tanh(v) EWF(tanh)(v)
#define AddOf(p, q) EWF(add)(p, q)
#define MulOf(p, q) EWF(mul)(p, q)
#define SubOf(p, q) EWF(sub)(p, q)
#define Div(p, q) EWF(div)(p, q)
#define Equal(p, q) EWF(equal)(p, q)
#define Abs(v) EWF(abs)(v)
#define Neg(v) EWF(neg)(v)
#define Sign(v) EWF(sign)(v)
#define Conj(v) EWF(conj)(v)
#define Sqrt(v) EWF(sqrt)(v)
#define Reciprocal(v) EWF(reciprocal)(v)
#define Expm1(v) EWF(expm1)(v)
#define Log1p(v) EWF(log1p)(v)
#define Log2(v) EWF(log2)(v)
#define Log10(v) EWF(log10)(v)
#define Sin(v) EWF(sin)(v)
#define Cos(v) EWF(cos)(v)
#define Tan(v) EWF(tan)(v)
#define Asin(v) EWF(asin)(v)
#define Acos(v) EWF(acos)(v)
#define Atan(v) EWF(atan)(v)
#define Sinh(v) EWF(sinh)(v)
#define Cosh(v) EWF(cosh)(v)
#define Asinh(v) EWF(asinh)(v)
#define Acosh(v) EWF(acosh)(v)
#define Atanh(v) EWF(atanh)(v)
#define Floor(v) EWF(floor)(v)
#define Ceil(v) EWF(ceil)(v)
#define Trunc(v) EWF(trunc)(v)
#define Rint(v) EWF(rint)(v)
#define Pow(p, q) EWF(pow)(p, q)
#define FloorDivide(p, q) EWF(floor_divide)(p, q)
#define Remainder(p, q) EWF(remainder)(p, q)
#define Maximum(p, q) EWF(maximum)(p, q)
#define Minimum(p, q) EWF(minimum)(p, q)
#define Atan2(p, q) EWF(atan2)(p, q)
#define Hypot(p, q) EWF(hypot)(p, q)
#define CopySign(p, q) EWF(copysign)(p, q)
#define NextAfter(p, q) EWF(nextafter)(p, q)
#define LogAddExp(p, q) EWF(logaddexp)(p, q)
#define ShiftLeft(p, q) EWF(shift_left)(p, q)
#define ShiftRight(p, q) EWF(shift_right)(p, q)
#define IsNan(v) EWF(isnan)(v)
#define IsInf(v) EWF(isinf)(v)
#define IsFinite(v) EWF(isfinite)(v)
#define SignBit(v) EWF(signbit)(v)
#define Real(v) EWF(real)(v)
#define Imag(v) EWF(imag)(v)

/* Every op of the table's four X-macros, with one macro per kind of entry. */
#define EW_ALL_OPS(K1, K2, KS, P1, P2, R1) \
  DLARRAY_ELEMENTWISE_OPS(K1, K2, KS)      \
  DLARRAY_MATH_OPS(K1, K2)                 \
  DLARRAY_PREDICATE_OPS(P1, P2)            \
  DLARRAY_COMPLEX_PART_OPS(R1)

/* The ops' indices, and what the kernel needs to know of each: its name, inputs, attribute. */
#define EW_E1(name, ...) EW_OP_##name,
enum { EW_ALL_OPS(EW_E1, EW_E1, EW_E1, EW_E1, EW_E1, EW_E1) EW_NUM_OPS };
#undef EW_E1
typedef struct {
  const char* name;
  int inputs;
  int scalar; /* the attribute (XS entries) */
} EwOp;
#define EW_I1(name, ...) {#name, 1, 0},
#define EW_I2(name, ...) {#name, 2, 0},
#define EW_IS(name, ...) {#name, 1, 1},
static const EwOp ew_ops[EW_NUM_OPS] = {EW_ALL_OPS(EW_I1, EW_I2, EW_IS, EW_I1, EW_I2, EW_I1)};
#undef EW_I1
#undef EW_I2
#undef EW_IS

/* ew_fns[op][dtype]: the loop of op for that dtype, NULL outside the op's dtype set. */
typedef void (*EwFn)(const void* a, const void* b, void* out, int64_t n, double s);
static EwFn ew_fns[EW_NUM_OPS][DT_COUNT];

#define EW_KEEP(...) __VA_ARGS__
#define EW_DROP(...)
#define EW_WHEN(set) EW_IN_##set
#define EW_FLOAT 1
#define EW_INT 2
#define EW_BOOL 3
#define EW_COMPLEX 4

/* How elements load into their compute type, store back, and how a scalar attribute applies. */
#define EW_SAME(v) (v)
#define EW_CAST(v) ((ST)(v))
#define EW_TO_BOOL(v) ((ST)((v) != 0))
#define EW_TO_HALF(v) cprim_half_from_double((double)(v))
#define EW_TO_BF16(v) cprim_bf16_from_float((float)(v))
#define EW_SCALAR_CAST(s) ((CT)(s))
#define EW_SCALAR_BOOL(s) ((CT)((s) != 0))
#define EW_SCALAR_INT(s) ((CT)(uint64_t)(int64_t)(s)) /* the core checked it fits int64 */
#define EW_SCALAR_HALF(s) cprim_half_to_float(cprim_half_from_double(s))
#define EW_SCALAR_BF16(s) cprim_bf16_to_float(cprim_bf16_from_float((float)(s)))

/* One row per dtype (ew_dtype.h names the fields): storage type, name suffix, DT_ index,
 * compute type, its suffix, class, load, store, scalar, the C library's suffix for the compute
 * type (expf / exp), the type of a complex part, signed, bits, and whether the row brings a new
 * compute type (ew_math.h is included for it; float16 and bfloat16 compute in float32's). */
/* clang-format off */
#define EW_ROW (uint8_t, bool, DT_BOOL, uint8_t, b, EW_BOOL, \
  EW_SAME, EW_TO_BOOL, EW_SCALAR_BOOL,  , void, 0, 8, 1)
#include "ew_dtype.h"
#define EW_ROW (int8_t, int8, DT_I8, int8_t, i8, EW_INT, \
  EW_SAME, EW_CAST, EW_SCALAR_INT,  , void, 1, 8, 1)
#include "ew_dtype.h"
#define EW_ROW (int16_t, int16, DT_I16, int16_t, i16, EW_INT, \
  EW_SAME, EW_CAST, EW_SCALAR_INT,  , void, 1, 16, 1)
#include "ew_dtype.h"
#define EW_ROW (int32_t, int32, DT_I32, int32_t, i32, EW_INT, \
  EW_SAME, EW_CAST, EW_SCALAR_INT,  , void, 1, 32, 1)
#include "ew_dtype.h"
#define EW_ROW (int64_t, int64, DT_I64, int64_t, i64, EW_INT, \
  EW_SAME, EW_CAST, EW_SCALAR_INT,  , void, 1, 64, 1)
#include "ew_dtype.h"
#define EW_ROW (uint8_t, uint8, DT_U8, uint8_t, u8, EW_INT, \
  EW_SAME, EW_CAST, EW_SCALAR_INT,  , void, 0, 8, 1)
#include "ew_dtype.h"
#define EW_ROW (uint16_t, uint16, DT_U16, uint16_t, u16, EW_INT, \
  EW_SAME, EW_CAST, EW_SCALAR_INT,  , void, 0, 16, 1)
#include "ew_dtype.h"
#define EW_ROW (uint32_t, uint32, DT_U32, uint32_t, u32, EW_INT, \
  EW_SAME, EW_CAST, EW_SCALAR_INT,  , void, 0, 32, 1)
#include "ew_dtype.h"
#define EW_ROW (uint64_t, uint64, DT_U64, uint64_t, u64, EW_INT, \
  EW_SAME, EW_CAST, EW_SCALAR_INT,  , void, 0, 64, 1)
#include "ew_dtype.h"
#define EW_ROW (float, float32, DT_F32, float, f, EW_FLOAT, \
  EW_SAME, EW_CAST, EW_SCALAR_CAST, f, float, 0, 0, 1)
#include "ew_dtype.h"
#define EW_ROW (uint16_t, float16, DT_F16, float, f, EW_FLOAT, \
  cprim_half_to_float, EW_TO_HALF, EW_SCALAR_HALF, f, float, 0, 0, 0)
#include "ew_dtype.h"
#define EW_ROW (uint16_t, bfloat16, DT_BF16, float, f, EW_FLOAT, \
  cprim_bf16_to_float, EW_TO_BF16, EW_SCALAR_BF16, f, float, 0, 0, 0)
#include "ew_dtype.h"
#define EW_ROW (double, float64, DT_F64, double, d, EW_FLOAT, \
  EW_SAME, EW_CAST, EW_SCALAR_CAST,  , double, 0, 0, 1)
#include "ew_dtype.h"
#define EW_ROW (float _Complex, complex64, DT_C64, float _Complex, cf, EW_COMPLEX, \
  EW_SAME, EW_CAST, EW_SCALAR_CAST, f, float, 0, 0, 1)
#include "ew_dtype.h"
#define EW_ROW (double _Complex, complex128, DT_C128, double _Complex, cd, EW_COMPLEX, \
  EW_SAME, EW_CAST, EW_SCALAR_CAST,  , double, 0, 0, 1)
#include "ew_dtype.h"
/* clang-format on */

/* One kernel for every op of the table: data is the op's index. The core checked the dtypes
 * against the op's set and the shapes (every operand of one shape, compact). */
static int EwKernel(const DLArrayKernelCall* call, void* data) {
  const EwOp* op = &ew_ops[(intptr_t)data];
  const int dt = cprim_dtype_index(call->inputs[0]->dtype);
  EwFn fn = dt < 0 ? NULL : ew_fns[(intptr_t)data][dt];
  if (fn == NULL)
    return cprim_fail(kDLArrayErrType, "%s: no kernel for this dtype on " CPRIM_NAME, op->name);
  fn(cprim_ptr(call->inputs[0]), op->inputs > 1 ? cprim_ptr(call->inputs[1]) : NULL,
     cprim_ptr(call->outputs[0]), cprim_numel(call->outputs[0]), op->scalar ? call->attrs[0] : 0);
  return 0;
}

int cprim_register_elementwise(const DLArrayCoreApi* core, DLArrayRegistry* registry) {
  intptr_t i;
  ew_fill_bool();
  ew_fill_int8();
  ew_fill_int16();
  ew_fill_int32();
  ew_fill_int64();
  ew_fill_uint8();
  ew_fill_uint16();
  ew_fill_uint32();
  ew_fill_uint64();
  ew_fill_float16();
  ew_fill_bfloat16();
  ew_fill_float32();
  ew_fill_float64();
  ew_fill_complex64();
  ew_fill_complex128();
  for (i = 0; i < EW_NUM_OPS; ++i) {
    if (core->register_kernel(registry, ew_ops[i].name, CPRIM_DEVICE_TYPE, EwKernel, (void*)i) != 0)
      return -1;
  }
  return 0;
}
