/* The functions the expressions of dlarray/elementwise_table.h call, spelled in C for one
 * compute type, with the semantics of dlarray/elementwise_math.h (NumPy's): included by
 * ew_dtype.h once per compute type, with
 *   CT      the compute type, CS its suffix in function names (EWF(abs) is ew_abs_<CS>),
 *   EW_CLASS one of EW_FLOAT, EW_INT, EW_BOOL, EW_COMPLEX,
 *   EW_LM(fn) the C library's name of fn for CT (expf or exp; cexpf or cexp for complex),
 *   for EW_INT: EW_SIGNED (0 or 1) and EW_BITS; for EW_COMPLEX: RT, the type of a part.
 * No include guard: that is the point. Every function is static inline, so that the ones an
 * expression never calls for a type cost nothing and draw no warning. */

/* Every type: equality, and the predicates that are constant for integers. */
static inline int EWF(equal)(CT a, CT b) { return a == b; }

#if EW_CLASS == EW_FLOAT
#define EW_LIBM1(name) \
  static inline CT EWF(name)(CT x) { return EW_LM(name)(x); }
#define EW_LIBM2(name) \
  static inline CT EWF(name)(CT a, CT b) { return EW_LM(name)(a, b); }
/* clang-format off */
EW_LIBM1(exp) EW_LIBM1(log) EW_LIBM1(tanh) EW_LIBM1(sqrt) EW_LIBM1(expm1) EW_LIBM1(log1p)
EW_LIBM1(log2) EW_LIBM1(log10) EW_LIBM1(sin) EW_LIBM1(cos) EW_LIBM1(tan) EW_LIBM1(asin)
EW_LIBM1(acos) EW_LIBM1(atan) EW_LIBM1(sinh) EW_LIBM1(cosh) EW_LIBM1(asinh) EW_LIBM1(acosh)
EW_LIBM1(atanh) EW_LIBM1(floor) EW_LIBM1(ceil) EW_LIBM1(trunc) EW_LIBM1(rint)
EW_LIBM2(atan2) EW_LIBM2(hypot) EW_LIBM2(copysign) EW_LIBM2(nextafter) EW_LIBM2(pow)
#undef EW_LIBM1
#undef EW_LIBM2
static inline CT EWF(add)(CT a, CT b) { return a + b; }
/* clang-format on */
static inline CT EWF(sub)(CT a, CT b) { return a - b; }
static inline CT EWF(mul)(CT a, CT b) { return a * b; }
static inline CT EWF(div)(CT a, CT b) { return a / b; }
static inline CT EWF(neg)(CT x) { return -x; }
static inline CT EWF(abs)(CT x) { return EW_LM(fabs)(x); }
static inline CT EWF(reciprocal)(CT x) { return (CT)1 / x; }
static inline CT EWF(sign)(CT x) { return x > 0 ? (CT)1 : x < 0 ? (CT)-1 : x == 0 ? (CT)0 : x; }
static inline CT EWF(maximum)(CT a, CT b) { return a != a ? a : a >= b ? a : b; }
static inline CT EWF(minimum)(CT a, CT b) { return a != a ? a : a <= b ? a : b; }
static inline int EWF(isnan)(CT x) { return isnan(x); }
static inline int EWF(isinf)(CT x) { return isinf(x); }
static inline int EWF(isfinite)(CT x) { return isfinite(x); }
static inline int EWF(signbit)(CT x) { return signbit(x) != 0; }
/* Python's %: fmod moved into b's sign; an exact zero takes b's sign. */
static inline CT EWF(remainder)(CT a, CT b) {
  CT r = EW_LM(fmod)(a, b);
  if (r != 0) {
    if ((r < 0) != (b < 0)) r += b;
  } else {
    r = EW_LM(copysign)((CT)0, b);
  }
  return r;
}
/* Python's //: (a - a % b) / b rounded to the integer it stands for. */
static inline CT EWF(floor_divide)(CT a, CT b) {
  const CT q = a / b;
  CT mod, div, whole;
  if (b == 0) return q;
  if (!isfinite(a)) return a - a;
  mod = EW_LM(fmod)(a, b);
  div = (a - mod) / b;
  if (mod != 0 && ((mod < 0) != (b < 0))) div -= 1;
  whole = EW_LM(floor)(div);
  if (div - whole > (CT)0.5) whole += 1;
  return whole == 0 ? EW_LM(copysign)((CT)0, q) : whole;
}
static inline CT EWF(logaddexp)(CT a, CT b) {
  CT d;
  if (a == b) return a + (CT)0.693147180559945309417232121458176568;
  d = a - b;
  if (d > 0) return a + EW_LM(log1p)(EW_LM(exp)(-d));
  if (d <= 0) return b + EW_LM(log1p)(EW_LM(exp)(d));
  return d; /* NaN */
}
#endif

#if EW_CLASS == EW_INT || EW_CLASS == EW_BOOL
static inline int EWF(isnan)(CT x) { return (void)x, 0; }
static inline int EWF(isinf)(CT x) { return (void)x, 0; }
static inline int EWF(isfinite)(CT x) { return (void)x, 1; }
#endif

#if EW_CLASS == EW_INT
/* Integers wrap around (computed in uint64_t, never a signed overflow) and never trap. */
#if EW_SIGNED
#define EW_NEG(v) ((v) < 0)
#else
#define EW_NEG(v) 0 /* no comparison: it would be always false (-Wtype-limits) */
#endif
static inline CT EWF(add)(CT a, CT b) { return (CT)((uint64_t)a + (uint64_t)b); }
static inline CT EWF(sub)(CT a, CT b) { return (CT)((uint64_t)a - (uint64_t)b); }
static inline CT EWF(mul)(CT a, CT b) { return (CT)((uint64_t)a * (uint64_t)b); }
static inline CT EWF(neg)(CT x) { return (CT)(UINT64_C(0) - (uint64_t)x); }
static inline CT EWF(abs)(CT x) { return EW_NEG(x) ? EWF(neg)(x) : x; }
static inline CT EWF(sign)(CT x) { return x > 0 ? (CT)1 : EW_NEG(x) ? (CT)-1 : (CT)0; }
static inline CT EWF(maximum)(CT a, CT b) { return a >= b ? a : b; }
static inline CT EWF(minimum)(CT a, CT b) { return a <= b ? a : b; }
static inline CT EWF(remainder)(CT a, CT b) {
  CT r;
  if (b == 0 || (EW_SIGNED && b == (CT)-1)) return 0; /* -1: MIN % -1 overflows */
  r = (CT)(a % b);
  if (r != 0 && (EW_NEG(r) != EW_NEG(b))) r = (CT)(r + b);
  return r;
}
static inline CT EWF(floor_divide)(CT a, CT b) {
  CT q;
  if (b == 0) return 0;
  if (EW_SIGNED && b == (CT)-1) return EWF(neg)(a);
  q = (CT)(a / b);
  if (a % b != 0 && (EW_NEG(a) != EW_NEG(b))) q = (CT)(q - 1);
  return q;
}
/* By repeated squaring, wrapping; a negative exponent gives 0 (1 and -1 exactly). */
static inline CT EWF(pow)(CT a, CT b) {
  CT r = 1;
  uint64_t e;
  if (EW_NEG(b))
    return a == 1 ? (CT)1 : (EW_SIGNED && a == (CT)-1) ? ((b & 1) ? (CT)-1 : (CT)1) : (CT)0;
  for (e = (uint64_t)b; e != 0; e >>= 1) {
    if (e & 1u) r = EWF(mul)(r, a);
    a = EWF(mul)(a, a);
  }
  return r;
}
#define EW_SHIFT_OUT(b) (EW_NEG(b) || (uint64_t)(b) >= EW_BITS)
static inline CT EWF(shift_left)(CT a, CT b) {
  return EW_SHIFT_OUT(b) ? (CT)0 : (CT)((uint64_t)a << (uint64_t)b);
}
static inline CT EWF(shift_right)(CT a, CT b) {
  return EW_SHIFT_OUT(b) ? (EW_NEG(a) ? (CT)-1 : (CT)0) : (CT)(a >> b);
}
#undef EW_SHIFT_OUT
#undef EW_NEG
#endif

#if EW_CLASS == EW_COMPLEX
#define EW_CLIBM1(name) \
  static inline CT EWF(name)(CT x) { return EW_LM(c##name)(x); }
/* clang-format off */
EW_CLIBM1(exp) EW_CLIBM1(log) EW_CLIBM1(sqrt) EW_CLIBM1(sin) EW_CLIBM1(cos) EW_CLIBM1(tan)
EW_CLIBM1(asin) EW_CLIBM1(acos) EW_CLIBM1(atan) EW_CLIBM1(sinh) EW_CLIBM1(cosh)
EW_CLIBM1(asinh) EW_CLIBM1(acosh) EW_CLIBM1(atanh)
#undef EW_CLIBM1
static inline CT EWF(conj)(CT x) { return EW_LM(conj)(x); }
/* clang-format on */
#define EW_RE(x) EW_LM(creal)(x)
#define EW_IM(x) EW_LM(cimag)(x)
/* re + im * i without the multiplication (which would turn an infinite part into NaN). */
static inline CT EWF(make)(RT re, RT im) {
  CT z;
  RT* parts = (RT*)&z;
  parts[0] = re;
  parts[1] = im;
  return z;
}
static inline CT EWF(add)(CT a, CT b) { return a + b; }
static inline CT EWF(sub)(CT a, CT b) { return a - b; }
static inline CT EWF(mul)(CT a, CT b) { return a * b; }
static inline CT EWF(div)(CT a, CT b) { return a / b; }
static inline CT EWF(neg)(CT x) { return -x; }
static inline CT EWF(reciprocal)(CT x) { return (CT)1 / x; }
static inline RT EWF(real)(CT x) { return EW_RE(x); }
static inline RT EWF(imag)(CT x) { return EW_IM(x); }
static inline RT EWF(abs)(CT x) { return EW_LM(cabs)(x); }
static inline int EWF(isnan)(CT x) { return isnan(EW_RE(x)) || isnan(EW_IM(x)); }
static inline int EWF(isinf)(CT x) { return isinf(EW_RE(x)) || isinf(EW_IM(x)); }
static inline int EWF(isfinite)(CT x) { return isfinite(EW_RE(x)) && isfinite(EW_IM(x)); }
/* x / |x| (NumPy 2's sign), 0 at 0; NaN parts give NaN. */
static inline CT EWF(sign)(CT x) {
  const RT r = EW_LM(cabs)(x);
  if (EWF(isnan)(x)) return EWF(make)((RT)NAN, (RT)NAN);
  if (r == 0) return EWF(make)(0, 0);
  if (isinf(r)) { /* the direction of the infinite part(s) */
    const RT re = isinf(EW_RE(x)) ? EW_LM(copysign)(1, EW_RE(x)) : 0;
    const RT im = isinf(EW_IM(x)) ? EW_LM(copysign)(1, EW_IM(x)) : 0;
    const RT n = EW_LM(hypot)(re, im);
    return EWF(make)(re / n, im / n);
  }
  return EWF(make)(EW_RE(x) / r, EW_IM(x) / r);
}
static inline CT EWF(rint)(CT x) { return EWF(make)(EW_LM(rint)(EW_RE(x)), EW_LM(rint)(EW_IM(x))); }
/* exp(x) - 1 accurate near 0: re = expm1(a) cos b - 2 sin^2(b / 2), im = e^a sin b. */
static inline CT EWF(expm1)(CT x) {
  const RT a = EW_RE(x), b = EW_IM(x), h = EW_LM(sin)(b / 2);
  if (!isfinite(a) || !isfinite(b)) return EW_LM(cexp)(x) - 1;
  /* + 0: an exact zero is +0 (expm1(-0 + 0j) is 0 + 0j, the standard's special case) */
  return EWF(make)(EW_LM(expm1)(a) * EW_LM(cos)(b) - 2 * h * h + 0, EW_LM(exp)(a) * EW_LM(sin)(b));
}
/* C99's ctanh but for +-inf + yj (y finite), which the array API standard makes +-1 + 0j with
 * the zero of y's sign (C99: the sign of sin(2y)). */
static inline CT EWF(tanh)(CT x) {
  if (isinf(EW_RE(x)) && isfinite(EW_IM(x)))
    return EWF(make)(EW_LM(copysign)(1, EW_RE(x)), EW_LM(copysign)(0, EW_IM(x)));
  return EW_LM(ctanh)(x);
}
/* log(1 + x) accurate near 0: |1 + x|^2 = 1 + (2a + a^2 + b^2). */
static inline CT EWF(log1p)(CT x) {
  const RT a = EW_RE(x), b = EW_IM(x);
  if (EW_LM(fabs)(a) < (RT)0.5 && EW_LM(fabs)(b) < (RT)0.5)
    return EWF(make)(EW_LM(log1p)(a * (2 + a) + b * b) / 2, EW_LM(atan2)(b, 1 + a));
  return EW_LM(clog)(1 + x);
}
static inline CT EWF(log2)(CT x) {
  const CT l = EW_LM(clog)(x);
  const RT k = (RT)1.442695040888963407359924681001892137;
  return EWF(make)(EW_RE(l) * k, EW_IM(l) * k);
}
static inline CT EWF(log10)(CT x) {
  const CT l = EW_LM(clog)(x);
  const RT k = (RT)0.434294481903251827651128918916605082;
  return EWF(make)(EW_RE(l) * k, EW_IM(l) * k);
}
/* a ** b: 1 for b == 0 and 0 for a == 0 with b real and positive (cpow leaves those NaN). */
static inline CT EWF(pow)(CT a, CT b) {
  if (b == 0) return EWF(make)(1, 0);
  if (a == 0 && EW_IM(b) == 0 && EW_RE(b) > 0) return EWF(make)(0, 0);
  return EW_LM(cpow)(a, b);
}
#undef EW_RE
#undef EW_IM
#endif
