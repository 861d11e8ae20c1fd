/* The dtypes of the cprim backend: their indices, the 16-bit float conversions, and one generic
 * element value (Value) with NumPy's casts, which every kernel outside the elementwise table
 * reads and writes elements through. */
#include <complex.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "prim.h"

const DLArrayCoreApi* cprim_core;

int cprim_dtype_index(DLArrayDType t) {
  switch (t.code) {
    case kDLArrayBool:
      return t.bits == 8 ? DT_BOOL : -1;
    case kDLArrayInt:
      return t.bits == 8    ? DT_I8
             : t.bits == 16 ? DT_I16
             : t.bits == 32 ? DT_I32
             : t.bits == 64 ? DT_I64
                            : -1;
    case kDLArrayUInt:
      return t.bits == 8    ? DT_U8
             : t.bits == 16 ? DT_U16
             : t.bits == 32 ? DT_U32
             : t.bits == 64 ? DT_U64
                            : -1;
    case kDLArrayFloat:
      return t.bits == 16 ? DT_F16 : t.bits == 32 ? DT_F32 : t.bits == 64 ? DT_F64 : -1;
    case kDLArrayBfloat:
      return t.bits == 16 ? DT_BF16 : -1;
    case kDLArrayComplex:
      return t.bits == 64 ? DT_C64 : t.bits == 128 ? DT_C128 : -1;
    default:
      return -1;
  }
}

int cprim_fail(int kind, const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  cprim_core->set_error(kind, message);
  return -1;
}

int64_t cprim_numel(const DLArray* a) {
  int64_t n = 1;
  int d;
  for (d = 0; d < a->ndim; ++d) n *= a->shape[d];
  return n;
}

char* cprim_ptr(const DLArray* a) { return (char*)a->data + a->byte_offset; }

int cprim_item(const DLArray* a) { return (a->dtype.bits + 7) / 8; }

float cprim_half_to_float(uint16_t h) {
  const int e = (h >> 10) & 0x1f;
  const uint32_t m = h & 0x3ffu;
  float f;
  if (e == 31) { /* infinity or NaN: the payload moves to float's mantissa */
    const uint32_t bits = ((uint32_t)(h >> 15) << 31) | 0x7f800000u | (m << 13);
    memcpy(&f, &bits, sizeof f);
    return f;
  }
  f = e == 0 ? ldexpf((float)m, -24) : ldexpf((float)(m | 0x400u), e - 25);
  return (h >> 15) ? -f : f;
}

/* Directly from double (never through float: that would round twice). */
uint16_t cprim_half_from_double(double v) {
  const uint16_t sign = signbit(v) ? 0x8000u : 0u;
  double a = fabs(v), q;
  int e;
  if (isnan(v)) return (uint16_t)(sign | 0x7e00u);
  if (a >= 65520.0) return (uint16_t)(sign | 0x7c00u); /* rounds to infinity */
  if (a < ldexp(1.0, -14)) /* subnormal: whole units of 2^-24 (1024 of them is the least normal) */
    return (uint16_t)(sign | (uint16_t)rint(a * 16777216.0));
  frexp(a, &e);               /* a = f * 2^e, f in [0.5, 1): the half's exponent is e - 1 */
  q = rint(ldexp(a, 11 - e)); /* 11 significant bits, in [1024, 2048], to nearest even */
  if (q >= 2048.0) {
    q = 1024.0;
    ++e;
  }
  return (uint16_t)(sign | ((uint32_t)(e - 1 + 15) << 10) | ((uint32_t)q - 1024u));
}

float cprim_bf16_to_float(uint16_t h) {
  const uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t cprim_bf16_from_float(float v) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  if (isnan(v)) return (uint16_t)((bits >> 16) | 0x40u); /* stays a (quiet) NaN */
  return (uint16_t)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

Value cprim_real(double v) {
  Value r;
  memset(&r, 0, sizeof r);
  r.cls = V_REAL;
  r.re = v;
  return r;
}

static Value Int(int64_t i) {
  Value r;
  memset(&r, 0, sizeof r);
  r.cls = V_INT;
  r.i = i;
  return r;
}

static Value UInt(uint64_t u) {
  Value r;
  memset(&r, 0, sizeof r);
  r.cls = V_UINT;
  r.u = u;
  return r;
}

Value cprim_load(const char* base, int64_t index, int dt) {
  const char* p;
  Value r;
  switch (dt) {
#define LOAD_CASE(DT, T, MAKE)             \
  case DT: {                               \
    T x;                                   \
    p = base + index * (int64_t)sizeof(T); \
    memcpy(&x, p, sizeof x);               \
    return MAKE;                           \
  }
    LOAD_CASE(DT_BOOL, uint8_t, Int(x != 0))
    LOAD_CASE(DT_I8, int8_t, Int(x))
    LOAD_CASE(DT_I16, int16_t, Int(x))
    LOAD_CASE(DT_I32, int32_t, Int(x))
    LOAD_CASE(DT_I64, int64_t, Int(x))
    LOAD_CASE(DT_U8, uint8_t, UInt(x))
    LOAD_CASE(DT_U16, uint16_t, UInt(x))
    LOAD_CASE(DT_U32, uint32_t, UInt(x))
    LOAD_CASE(DT_U64, uint64_t, UInt(x))
    LOAD_CASE(DT_F16, uint16_t, cprim_real(cprim_half_to_float(x)))
    LOAD_CASE(DT_BF16, uint16_t, cprim_real(cprim_bf16_to_float(x)))
    LOAD_CASE(DT_F32, float, cprim_real(x))
    LOAD_CASE(DT_F64, double, cprim_real(x))
#undef LOAD_CASE
    case DT_C64: {
      float x[2];
      memcpy(x, base + index * 8, sizeof x);
      r = cprim_real(x[0]);
      r.im = x[1];
      r.cls = V_COMPLEX;
      return r;
    }
    default: {
      double x[2];
      memcpy(x, base + index * 16, sizeof x);
      r = cprim_real(x[0]);
      r.im = x[1];
      r.cls = V_COMPLEX;
      return r;
    }
  }
}

/* A double as an integer: truncated, NaN 0, saturating at [lo, hi]. */
static int64_t Saturate(double v, double lo, double hi, int64_t ilo, int64_t ihi) {
  if (v != v) return 0;
  if (v <= lo) return ilo;
  if (v >= hi) return ihi;
  return (int64_t)v;
}

static uint64_t SaturateU(double v, double hi, uint64_t uhi) {
  if (v != v || v <= 0) return 0;
  if (v >= hi) return uhi;
  return (uint64_t)v;
}

/* The value's integer bits (wrapping), or its double saturated to the type's range. */
#define SIGNED_OF(v, BITS)                                                                   \
  ((v).cls == V_INT    ? (v).i                                                               \
   : (v).cls == V_UINT ? (int64_t)(v).u                                                      \
                       : Saturate((v).re, -ldexp(1.0, BITS - 1), ldexp(1.0, BITS - 1) - 1.0, \
                                  (int64_t)(-(INT64_C(1) << (BITS - 2)) * 2),                \
                                  (int64_t)((UINT64_C(1) << (BITS - 1)) - 1)))
#define UNSIGNED_OF(v, BITS)             \
  ((v).cls == V_INT    ? (uint64_t)(v).i \
   : (v).cls == V_UINT ? (v).u           \
                       : SaturateU((v).re, ldexp(1.0, BITS) - 1.0, UINT64_MAX >> (64 - BITS)))

static double AsDouble(Value v) {
  return v.cls == V_INT ? (double)v.i : v.cls == V_UINT ? (double)v.u : v.re;
}

static float AsFloat(Value v) {
  return v.cls == V_INT ? (float)v.i : v.cls == V_UINT ? (float)v.u : (float)v.re;
}

void cprim_store(char* base, int64_t index, int dt, Value v) {
  switch (dt) {
#define STORE_CASE(DT, T, EXPR)                              \
  case DT: {                                                 \
    const T x = (T)(EXPR);                                   \
    memcpy(base + index * (int64_t)sizeof(T), &x, sizeof x); \
    return;                                                  \
  }
    STORE_CASE(DT_BOOL, uint8_t, cprim_truthy(v))
    STORE_CASE(DT_I8, int8_t, SIGNED_OF(v, 8))
    STORE_CASE(DT_I16, int16_t, SIGNED_OF(v, 16))
    STORE_CASE(DT_I32, int32_t, SIGNED_OF(v, 32))
    STORE_CASE(DT_I64, int64_t, SIGNED_OF(v, 64))
    STORE_CASE(DT_U8, uint8_t, UNSIGNED_OF(v, 8))
    STORE_CASE(DT_U16, uint16_t, UNSIGNED_OF(v, 16))
    STORE_CASE(DT_U32, uint32_t, UNSIGNED_OF(v, 32))
    STORE_CASE(DT_U64, uint64_t, UNSIGNED_OF(v, 64))
    STORE_CASE(DT_F16, uint16_t, cprim_half_from_double(AsDouble(v)))
    STORE_CASE(DT_BF16, uint16_t, cprim_bf16_from_float(AsFloat(v)))
    STORE_CASE(DT_F32, float, AsFloat(v))
    STORE_CASE(DT_F64, double, AsDouble(v))
#undef STORE_CASE
    case DT_C64: {
      const float x[2] = {AsFloat(v), v.cls == V_COMPLEX ? (float)v.im : 0.0f};
      memcpy(base + index * 8, x, sizeof x);
      return;
    }
    default: {
      const double x[2] = {AsDouble(v), v.cls == V_COMPLEX ? v.im : 0.0};
      memcpy(base + index * 16, x, sizeof x);
      return;
    }
  }
}

int cprim_is_nan(Value v) {
  return (v.cls == V_REAL || v.cls == V_COMPLEX) && (v.re != v.re || v.im != v.im);
}

int cprim_truthy(Value v) {
  switch (v.cls) {
    case V_INT:
      return v.i != 0;
    case V_UINT:
      return v.u != 0;
    default:
      return v.re != 0 || v.im != 0;
  }
}

int cprim_order(Value a, Value b, int* unordered) {
  *unordered = 0;
  switch (a.cls) {
    case V_INT:
      return a.i < b.i ? -1 : a.i > b.i;
    case V_UINT:
      return a.u < b.u ? -1 : a.u > b.u;
    default:
      if (cprim_is_nan(a) || cprim_is_nan(b)) {
        *unordered = 1;
        return 0;
      }
      if (a.re != b.re) return a.re < b.re ? -1 : 1;
      return a.im < b.im ? -1 : a.im > b.im;
  }
}
