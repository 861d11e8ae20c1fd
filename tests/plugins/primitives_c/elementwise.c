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

/* ew_math.h once per compute type. */
#define CT uint8_t
#define CS b
#define EW_CLASS EW_BOOL
#include "ew_math.h"
#undef CT
#undef CS
#undef EW_CLASS
#define EW_CLASS EW_INT
#define CT int8_t
#define CS i8
#define EW_SIGNED 1
#define EW_BITS 8
#include "ew_math.h"
#undef CT
#undef CS
#undef EW_SIGNED
#undef EW_BITS
#define CT int16_t
#define CS i16
#define EW_SIGNED 1
#define EW_BITS 16
#include "ew_math.h"
#undef CT
#undef CS
#undef EW_SIGNED
#undef EW_BITS
#define CT int32_t
#define CS i32
#define EW_SIGNED 1
#define EW_BITS 32
#include "ew_math.h"
#undef CT
#undef CS
#undef EW_SIGNED
#undef EW_BITS
#define CT int64_t
#define CS i64
#define EW_SIGNED 1
#define EW_BITS 64
#include "ew_math.h"
#undef CT
#undef CS
#undef EW_SIGNED
#undef EW_BITS
#define CT uint8_t
#define CS u8
#define EW_SIGNED 0
#define EW_BITS 8
#include "ew_math.h"
#undef CT
#undef CS
#undef EW_SIGNED
#undef EW_BITS
#define CT uint16_t
#define CS u16
#define EW_SIGNED 0
#define EW_BITS 16
#include "ew_math.h"
#undef CT
#undef CS
#undef EW_SIGNED
#undef EW_BITS
#define CT uint32_t
#define CS u32
#define EW_SIGNED 0
#define EW_BITS 32
#include "ew_math.h"
#undef CT
#undef CS
#undef EW_SIGNED
#undef EW_BITS
#define CT uint64_t
#define CS u64
#define EW_SIGNED 0
#define EW_BITS 64
#include "ew_math.h"
#undef CT
#undef CS
#undef EW_SIGNED
#undef EW_BITS
#undef EW_CLASS
#define EW_CLASS EW_FLOAT
#define CT float
#define CS f
#define EW_LM(fn) fn##f
#include "ew_math.h"
#undef CT
#undef CS
#undef EW_LM
#define CT double
#define CS d
#define EW_LM(fn) fn
#include "ew_math.h"
#undef CT
#undef CS
#undef EW_LM
#undef EW_CLASS
#define EW_CLASS EW_COMPLEX
#define CT float _Complex
#define RT float
#define CS cf
#define EW_LM(fn) fn##f
#include "ew_math.h"
#undef CT
#undef RT
#undef CS
#undef EW_LM
#define CT double _Complex
#define RT double
#define CS cd
#define EW_LM(fn) fn
#include "ew_math.h"
#undef CT
#undef RT
#undef CS
#undef EW_LM
#undef EW_CLASS

/* ew_kernels.h once per storage dtype. */
#define IDENTITY(v) (v)
#define CAST_STORE(v) ((ST)(v))
#define INT_SCALAR(s) ((CT)(uint64_t)(int64_t)(s)) /* the core checked it fits int64 */

#define ST uint8_t
#define TS bool
#define TI DT_BOOL
#define CT uint8_t
#define CS b
#define EW_CLASS EW_BOOL
#define LOAD IDENTITY
#define STORE(v) ((ST)((v) != 0))
#define SCALAR(s) ((CT)((s) != 0))
#include "ew_kernels.h"
#undef ST
#undef TS
#undef TI
#undef CT
#undef CS
#undef EW_CLASS
#undef STORE
#undef SCALAR

#define EW_CLASS EW_INT
#define STORE CAST_STORE
#define SCALAR INT_SCALAR
#define ST int8_t
#define TS int8
#define TI DT_I8
#define CT int8_t
#define CS i8
#include "ew_kernels.h"
#undef ST
#undef TS
#undef TI
#undef CT
#undef CS
#define ST int16_t
#define TS int16
#define TI DT_I16
#define CT int16_t
#define CS i16
#include "ew_kernels.h"
#undef ST
#undef TS
#undef TI
#undef CT
#undef CS
#define ST int32_t
#define TS int32
#define TI DT_I32
#define CT int32_t
#define CS i32
#include "ew_kernels.h"
#undef ST
#undef TS
#undef TI
#undef CT
#undef CS
#define ST int64_t
#define TS int64
#define TI DT_I64
#define CT int64_t
#define CS i64
#include "ew_kernels.h"
#undef ST
#undef TS
#undef TI
#undef CT
#undef CS
#define ST uint8_t
#define TS uint8
#define TI DT_U8
#define CT uint8_t
#define CS u8
#include "ew_kernels.h"
#undef ST
#undef TS
#undef TI
#undef CT
#undef CS
#define ST uint16_t
#define TS uint16
#define TI DT_U16
#define CT uint16_t
#define CS u16
#include "ew_kernels.h"
#undef ST
#undef TS
#undef TI
#undef CT
#undef CS
#define ST uint32_t
#define TS uint32
#define TI DT_U32
#define CT uint32_t
#define CS u32
#include "ew_kernels.h"
#undef ST
#undef TS
#undef TI
#undef CT
#undef CS
#define ST uint64_t
#define TS uint64
#define TI DT_U64
#define CT uint64_t
#define CS u64
#include "ew_kernels.h"
#undef ST
#undef TS
#undef TI
#undef CT
#undef CS
#undef EW_CLASS
#undef LOAD
#undef STORE
#undef SCALAR

/* The floats; the 16-bit ones compute in float. */
#define EW_CLASS EW_FLOAT
#define ST uint16_t
#define TS float16
#define TI DT_F16
#define CT float
#define CS f

#define STORE(v) cprim_half_from_double((double)(v))
#define SCALAR(s) cprim_half_to_float(cprim_half_from_double(s))
#define LOAD(v) cprim_half_to_float(v)
#include "ew_kernels.h"
#undef ST
#undef TS
#undef TI
#undef LOAD
#undef STORE
#undef SCALAR
#define ST uint16_t
#define TS bfloat16
#define TI DT_BF16
#define LOAD(v) cprim_bf16_to_float(v)
#define STORE(v) cprim_bf16_from_float((float)(v))
#define SCALAR(s) cprim_bf16_to_float(cprim_bf16_from_float((float)(s)))
#include "ew_kernels.h"
#undef ST
#undef TS
#undef TI
#undef LOAD
#undef STORE
#undef SCALAR
#define LOAD IDENTITY
#define STORE CAST_STORE
#define ST float
#define TS float32
#define TI DT_F32
#define SCALAR(s) ((float)(s))
#include "ew_kernels.h"
#undef ST
#undef TS
#undef TI
#undef CT
#undef CS
#undef SCALAR
#define ST double
#define TS float64
#define TI DT_F64
#define CT double
#define CS d
#define SCALAR(s) (s)
#include "ew_kernels.h"
#undef ST
#undef TS
#undef TI
#undef CT
#undef CS
#undef SCALAR
#undef EW_CLASS

#define EW_CLASS EW_COMPLEX
#define SCALAR(s) ((CT)(s))
#define ST float _Complex
#define TS complex64
#define TI DT_C64
#define CT float _Complex
#define CS cf
#define RST float
#define EW_LM(fn) fn##f
#include "ew_kernels.h"
#undef ST
#undef TS
#undef TI
#undef CT
#undef CS
#undef RST
#undef EW_LM
#define ST double _Complex
#define TS complex128
#define TI DT_C128
#define CT double _Complex
#define CS cd
#define RST double
#define EW_LM(fn) fn
#include "ew_kernels.h"
#undef ST
#undef TS
#undef TI
#undef CT
#undef CS
#undef RST
#undef EW_LM
#undef EW_CLASS

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
