/*!
 * \file elementwise_table.cc
 * \brief The OpenCL kernels of every op of dlarray/elementwise_table.h: one program made of the
 *        table's expressions as OpenCL C text (the vector form and the scalar form are the same
 *        expression; OpenCL's built-in functions take both).
 */
#include "dlarray/elementwise_table.h"

#include <cmath>
#include <string>
#include <vector>

#include "dlarray/plugin.h"
#include "elementwise.h"
#include "elementwise_complex.h"
#include "kernels.h"

namespace dlarray::opencl {
namespace {

// The table's functions in OpenCL C (correctly rounded to within the spec's few ulp); AddOf and
// MulOf are parameters of each entry's expression macro (below), as their vector and scalar forms
// differ for integers. DL_IN_<set>: whether the program's dtype T is in a dtype set of the table
// (an entry outside it is left out: exp has no integer form to compile, nor add a bool one).
constexpr const char* kTableFunctions = R"CLC(
#define Exp(v) exp(v)
#define Log(v) log(v)
#define Tanh(v) tanh(v)
#if defined(T_FLOAT)
#define DL_IN_kFloatTypes 1
#define DL_IN_kInts 0
#elif defined(T_INT)
#define DL_IN_kFloatTypes 0
#define DL_IN_kInts 1
#else
#define DL_IN_kFloatTypes 0
#define DL_IN_kInts 0
#endif
#ifdef T_COMPLEX
#define DL_IN_kComplexTypes 1
#define DL_IN_kRealTypes 0
#else
#define DL_IN_kComplexTypes 0
#define DL_IN_kRealTypes 1
#endif
#define DL_IN_kStorageTypes 1
#define DL_IN_kIntegerTypes DL_IN_kInts
#define DL_IN_kRealNumericTypes (DL_IN_kFloatTypes || DL_IN_kInts)
#define DL_IN_kIntegralTypes (!DL_IN_kFloatTypes && !DL_IN_kComplexTypes)
#define DL_IN_kFloatComplexTypes (DL_IN_kFloatTypes || DL_IN_kComplexTypes)
#define DL_IN_kNumericComplexTypes (DL_IN_kRealNumericTypes || DL_IN_kComplexTypes)
// The table's integer types of old: int8 to int64 and uint8.
#define DL_IN_kNumericTypes (DL_IN_kFloatTypes || (DL_IN_kInts && (T_BITS < 16 || T_SIGNED)))
// dlarray/elementwise_math.h's functions on CT scalars (dlf_: the kernels are dl_<op>).
#define Sqrt(v) sqrt(v)
#define Expm1(v) expm1(v)
#define Log1p(v) log1p(v)
#define Log2(v) log2(v)
#define Log10(v) log10(v)
#define Sin(v) sin(v)
#define Cos(v) cos(v)
#define Tan(v) tan(v)
#define Asin(v) asin(v)
#define Acos(v) acos(v)
#define Atan(v) atan(v)
#define Sinh(v) sinh(v)
#define Cosh(v) cosh(v)
#define Asinh(v) asinh(v)
#define Acosh(v) acosh(v)
#define Atanh(v) atanh(v)
#define Floor(v) floor(v)
#define Ceil(v) ceil(v)
#define Trunc(v) trunc(v)
#define Rint(v) rint(v)
#define Atan2(a, b) atan2(a, b)
#define Hypot(a, b) hypot(a, b)
#define CopySign(a, b) copysign(a, b)
#define NextAfter(a, b) nextafter(a, b)
#define Abs dlf_abs
#define Neg dlf_neg
#define Sign dlf_sign
#define SubOf dlf_sub
#define Pow dlf_pow
#define FloorDivide dlf_floor_divide
#define Remainder dlf_remainder
#define Maximum dlf_maximum
#define Minimum dlf_minimum
#define LogAddExp dlf_logaddexp
#define ShiftLeft dlf_shift_left
#define ShiftRight dlf_shift_right
#define SignBit(v) signbit(v)
#define Div(a, b) ((a) / (b))
#define Equal(a, b) ((a) == (b))
#define Reciprocal(v) (1 / (v))
#ifdef T_FLOAT
#define IsNan(v) isnan(v)
#define IsInf(v) isinf(v)
#define IsFinite(v) isfinite(v)
CT dlf_abs(CT x) { return fabs(x); }
CT dlf_neg(CT x) { return -x; }
CT dlf_sign(CT x) { return x > 0 ? (CT)1 : x < 0 ? (CT)-1 : x == 0 ? (CT)0 : x; }
CT dlf_sub(CT a, CT b) { return a - b; }
CT dlf_pow(CT a, CT b) { return pow(a, b); }
CT dlf_remainder(CT a, CT b) {
  CT r = fmod(a, b);
  if (r != 0) {
    if ((r < 0) != (b < 0)) r += b;
  } else {
    r = copysign((CT)0, b);
  }
  return r;
}
CT dlf_floor_divide(CT a, CT b) {
  const CT q = a / b;
  if (b == 0) return q;
  if (!isfinite(a)) return a - a;
  const CT mod = fmod(a, b);
  CT div = (a - mod) / b;
  if (mod != 0 && ((mod < 0) != (b < 0))) div -= 1;
  CT whole = floor(div);
  if (div - whole > (CT)0.5) whole += 1;
  return whole == 0 ? copysign((CT)0, q) : whole;
}
CT dlf_maximum(CT a, CT b) { return isnan(a) ? a : a >= b ? a : b; }
CT dlf_minimum(CT a, CT b) { return isnan(a) ? a : a <= b ? a : b; }
CT dlf_logaddexp(CT a, CT b) {
  if (a == b) return a + (CT)0.693147180559945309417232121458176568;
  const CT d = a - b;
  if (d > 0) return a + log1p(exp(-d));
  if (d <= 0) return b + log1p(exp(d));
  return d;
}
#else
#define IsNan(v) 0
#define IsInf(v) 0
#define IsFinite(v) 1
#endif
#ifdef T_INT
// Integers wrap around (through UT), and never trap: x // 0 and x % 0 are 0, as NumPy's.
#define DL_NEGATIVE(v) (T_SIGNED && (v) < 0)
CT dlf_sub(CT a, CT b) { return (CT)((UT)a - (UT)b); }
CT dlf_neg(CT x) { return (CT)((UT)0 - (UT)x); }
CT dlf_abs(CT x) { return DL_NEGATIVE(x) ? dlf_neg(x) : x; }
CT dlf_sign(CT x) { return x > 0 ? (CT)1 : DL_NEGATIVE(x) ? (CT)-1 : (CT)0; }
CT dlf_maximum(CT a, CT b) { return a >= b ? a : b; }
CT dlf_minimum(CT a, CT b) { return a <= b ? a : b; }
CT dlf_remainder(CT a, CT b) {
  if (b == 0 || (T_SIGNED && b == (CT)-1)) return 0;
  CT r = a % b;
  if (r != 0 && (DL_NEGATIVE(r) != DL_NEGATIVE(b))) r += b;
  return r;
}
CT dlf_floor_divide(CT a, CT b) {
  if (b == 0) return 0;
  if (T_SIGNED && b == (CT)-1) return dlf_neg(a);
  CT q = a / b;
  if (a % b != 0 && (DL_NEGATIVE(a) != DL_NEGATIVE(b))) q -= 1;
  return q;
}
CT dlf_pow(CT a, CT b) {
  if (DL_NEGATIVE(b)) return a == 1 ? (CT)1 : a == (CT)-1 ? ((b & 1) ? (CT)-1 : (CT)1) : (CT)0;
  CT r = 1;
  for (UT e = (UT)b; e != 0; e >>= 1) {
    if (e & 1) r = DL_MULS(r, a);
    a = DL_MULS(a, a);
  }
  return r;
}
#define DL_SHIFT_OUT(b) (DL_NEGATIVE(b) || (ulong)(b) >= T_BITS)
CT dlf_shift_left(CT a, CT b) { return DL_SHIFT_OUT(b) ? (CT)0 : (CT)((UT)a << (UT)b); }
CT dlf_shift_right(CT a, CT b) {
  return DL_SHIFT_OUT(b) ? (DL_NEGATIVE(a) ? (CT)-1 : (CT)0) : (CT)(a >> b);
}
#endif
// The array API's functions and predicates: one element at a time, inputs of type T read as CT;
// STORE writes element i of yp (of type YT): T through CT, or a bool (uchar 0/1).
#define DL_ONE_AT_A_TIME(LOADS, STORE)                                         \
  yp += yo;                                                                    \
  ulong i = get_global_id(0) * chunk;                                          \
  if (i >= n) return;                                                          \
  const ulong end = min(i + chunk, n);                                         \
  for (; i < end; ++i) { LOADS(S) STORE; }
#define DL_ONE1(name, YT, STORE)                                                             \
  __kernel void name(__global const T* xp, ulong xo, __global YT* yp, ulong yo, uint nt,     \
                     ulong n, ulong chunk) {                                                 \
    xp += xo;                                                                                \
    DL_ONE_AT_A_TIME(DL_LOAD1, STORE)                                                        \
  }
#define DL_ONE2(name, YT, STORE)                                                             \
  __kernel void name(__global const T* ap, ulong ao, __global const T* bp, ulong bo,         \
                     __global YT* yp, ulong yo, uint nt, ulong n, ulong chunk) {             \
    ap += ao;                                                                                \
    bp += bo;                                                                                \
    DL_ONE_AT_A_TIME(DL_LOAD2, STORE)                                                        \
  }
#define DL_SMAP1(name, OPS) DL_ONE1(name, T, ST(yp, i, OPS))
#define DL_SMAP2(name, OPS) DL_ONE2(name, T, ST(yp, i, OPS))
#define DL_PRED1(name, OPS) DL_ONE1(name, uchar, yp[i] = (OPS) ? 1 : 0)
#define DL_PRED2(name, OPS) DL_ONE2(name, uchar, yp[i] = (OPS) ? 1 : 0)
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

// compare_by_const's rows: one kernel per cmp, x the element as KT (double, or with no
// cl_khr_fp64 the element's own float / long / ulong, s then rewritten by the host: below), a
// result the host fixed in advance when fixed >= 0.
#define DLARRAY_CL_COMPARE_BY_CONST(cmp, x, s, expr)             \
  "__kernel void dl_compare_by_const_" #cmp                      \
  "(__global const T* xp, ulong xo, __global uchar* "            \
  "yp, ulong yo, KT " #s                                         \
  ", int fixed, uint nt, ulong n, ulong chunk) {\n  xp += xo;\n" \
  "  DL_ONE_AT_A_TIME(DL_LOAD_NONE, const KT " #x                \
  " = (KT)LD(xp, i);"                                            \
  " yp[i] = fixed >= 0 ? fixed : (" #expr ") ? 1 : 0)\n}\n"

// A complex part op: its expression on the complex CT, stored as the part type (T_REAL).
#define DLARRAY_CL_PART(name, x, expr, doc)                                          \
  "#ifdef T_COMPLEX\n#define DL_F_" #name "(" #x ") (" #expr ")\nDL_PART1(dl_" #name \
  ", DL_F_" #name "(x))\n#endif\n"

// An entry of DLARRAY_MATH_OPS or a predicate: its expression on CT scalars (AddOf and MulOf as
// the scalar forms).
#define DLARRAY_CL_PREDICATE(name, params, map, args, dtypes, expr)                           \
  "#if DL_IN_" #dtypes "\n#define DL_F_" #name "(AddOf, MulOf, " params ") (" #expr ")\n" map \
  "(dl_" #name ", DL_F_" #name "(DL_ADDS, DL_MULS, " args "))\n#endif\n"
#define DLARRAY_CL_MATH_1(name, x, dtypes, expr, grads, doc) \
  DLARRAY_CL_PREDICATE(name, #x, "DL_SMAP1", "x", dtypes, expr)
#define DLARRAY_CL_MATH_2(name, a, b, dtypes, expr, grads, doc) \
  DLARRAY_CL_PREDICATE(name, #a ", " #b, "DL_SMAP2", "a, b", dtypes, expr)
#define DLARRAY_CL_PREDICATE_1(name, x, dtypes, expr, doc) \
  DLARRAY_CL_PREDICATE(name, #x, "DL_PRED1", "x", dtypes, expr)
#define DLARRAY_CL_PREDICATE_2(name, a, b, dtypes, expr, doc) \
  DLARRAY_CL_PREDICATE(name, #a ", " #b, "DL_PRED2", "a, b", dtypes, expr)

const std::string kSource =
    std::string(kElementwiseMacros) + kTableFunctions + kComplexFunctions +
    DLARRAY_ELEMENTWISE_OPS(DLARRAY_CL_SOURCE_1, DLARRAY_CL_SOURCE_2, DLARRAY_CL_SOURCE_S) +
    DLARRAY_MATH_OPS(DLARRAY_CL_MATH_1, DLARRAY_CL_MATH_2) +
    DLARRAY_PREDICATE_OPS(DLARRAY_CL_PREDICATE_1, DLARRAY_CL_PREDICATE_2) +
    DLARRAY_COMPLEX_PART_OPS(DLARRAY_CL_PART) + "#if DL_IN_kRealTypes\n#define DL_LOAD_NONE(S)\n" +
    DLARRAY_COMPARE_BY_CONST_OPS(DLARRAY_CL_COMPARE_BY_CONST) + "#endif\n";
const ProgramSource kProgram{"elementwise_table", kSource.c_str()};

// compare_by_const's comparison type KT: double, or without cl_khr_fp64 the element's compute
// type (float, long, ulong for uint64), the constant then rewritten into an exact comparison in
// it (below).
std::string CompareType(const DeviceInfo& info, DLArrayDType t) {
  if (info.fp64) return "double";
  if (t.code == kDLArrayUInt && t.bits == 64) return "ulong";
  if (t.code == kDLArrayInt || t.code == kDLArrayUInt || t.code == kDLArrayBool) return "long";
  return "float";
}

// The program's options beyond the dtype's: KT (above), T_BITS and T_SIGNED (the integer functions'
// width and sign), T_REAL_BITS (a complex dtype's part width), and correctly rounded division where
// the device has it (the divide ops). One program per dtype serves every entry.
std::string TableOptions(const KernelContext& ctx, DLArrayDType t) {
  const DeviceInfo& info = DeviceOf(ctx).info(ctx.device_id);
  return CorrectDivision(info) + " -DKT=" + CompareType(info, t) +
         " -DT_BITS=" + std::to_string(t.bits) +
         " -DT_SIGNED=" + (t.code == kDLArrayInt ? "1" : "0") +
         " -DT_REAL_BITS=" + std::to_string(t.code == kDLArrayComplex ? t.bits / 2 : 0);
}

void Run(const KernelContext& ctx, const char* kernel, const std::vector<const DLArray*>& inputs,
         const double* scalar) {
  const DLArrayDType t = ctx.outputs[0]->dtype;
  RunElementwise(ctx, kProgram, kernel, inputs, ctx.outputs[0], scalar, ElementMode::kTyped,
                 TableOptions(ctx, t));
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
DLARRAY_MATH_OPS(DLARRAY_CL_KERNEL_1, DLARRAY_CL_KERNEL_2)

// A predicate's program is built for the inputs' dtype (the output is bool), as a complex part
// op's (the output is the parts' real type). The core has checked the dtypes against the row's.
void RunPredicate(const KernelContext& ctx, const char* kernel,
                  const std::vector<const DLArray*>& inputs) {
  const DLArrayDType t = inputs[0]->dtype;
  const std::string options =
      BuildOptions(t, DeviceOf(ctx).info(ctx.device_id), TableOptions(ctx, t));
  RunMap(ctx, kProgram, kernel, inputs, ctx.outputs[0], options, nullptr);
}
#define DLARRAY_CL_PREDICATE_KERNEL_1(name, x, dtypes, expr, doc) \
  void name##_kernel(const KernelContext& ctx) { RunPredicate(ctx, "dl_" #name, {ctx.inputs[0]}); }
#define DLARRAY_CL_PREDICATE_KERNEL_2(name, a, b, dtypes, expr, doc) \
  void name##_kernel(const KernelContext& ctx) {                     \
    RunPredicate(ctx, "dl_" #name, {ctx.inputs[0], ctx.inputs[1]});  \
  }
DLARRAY_PREDICATE_OPS(DLARRAY_CL_PREDICATE_KERNEL_1, DLARRAY_CL_PREDICATE_KERNEL_2)
#define DLARRAY_CL_PART_KERNEL(name, x, expr, doc) \
  void name##_kernel(const KernelContext& ctx) { RunPredicate(ctx, "dl_" #name, {ctx.inputs[0]}); }
DLARRAY_COMPLEX_PART_OPS(DLARRAY_CL_PART_KERNEL)

// where: a select moves elements, so T is the unsigned type of the element size (ulong2 for
// complex128's 16 bytes).
constexpr const char* kWhereSource = R"CLC(
__kernel void dl_where(__global const uchar* cp, ulong co, __global const T* ap, ulong ao,
                       __global const T* bp, ulong bo, __global T* yp, ulong yo, uint nt,
                       ulong n, ulong chunk) {
  cp += co;
  ap += ao;
  bp += bo;
  yp += yo;
  ulong i = get_global_id(0) * chunk;
  if (i >= n) return;
  const ulong end = min(i + chunk, n);
  for (; i < end; ++i) yp[i] = cp[i] ? ap[i] : bp[i];
}
)CLC";
const ProgramSource kWhereProgram{"where", kWhereSource};

void where_kernel(const KernelContext& ctx) {
  const DeviceInfo& info = DeviceOf(ctx).info(ctx.device_id);
  const size_t elem = ElementBytes(ctx.outputs[0]->dtype);
  const std::string options =
      elem == 16 ? CommonOptions(info, "-DT=ulong2") : StorageOptions(elem, info);
  RunMap(ctx, kWhereProgram, "dl_where", {ctx.inputs[0], ctx.inputs[1], ctx.inputs[2]},
         ctx.outputs[0], options, nullptr);
}

// compare (cmp 0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >=, checked by the core): the six comparison
// predicates under the seed's one name.
void compare_kernel(const KernelContext& ctx) {
  static constexpr KernelFn kByKind[] = {&equal_kernel,   &not_equal_kernel,
                                         &less_kernel,    &less_equal_kernel,
                                         &greater_kernel, &greater_equal_kernel};
  kByKind[static_cast<int>(ctx.attrs[0])](ctx);
}

// Without cl_khr_fp64, `x <cmp> value` becomes `x <cmp'> bound` in KT or a constant result
// (constant -1: none): a value between two representable ones turns `x < v` into
// `x <= below(v)` and so on.
struct Rewritten {
  int cmp;
  double bound;
  int constant;
};

// lo < value < hi: the float neighbours of a value float does not hold.
Rewritten Between(int cmp, float lo, float hi) {
  switch (cmp) {
    case 0:
      return {cmp, 0, 0};
    case 1:
      return {cmp, 0, 1};
    case 2:
    case 3:  // x < v and x <= v: x <= lo
      return {3, lo, -1};
    default:  // x > v and x >= v: x >= hi
      return {5, hi, -1};
  }
}

Rewritten RewriteFloat(int cmp, double v) {
  if (std::isnan(v)) return {cmp, 0, cmp == 1 ? 1 : 0};
  const float f = static_cast<float>(v);
  if (static_cast<double>(f) == v) return {cmp, v, -1};
  const bool above = static_cast<double>(f) > v;
  const float lo = above ? std::nextafter(f, -INFINITY) : f;
  const float hi = above ? f : std::nextafter(f, INFINITY);
  return Between(cmp, lo, hi);
}

// Integers mn <= x < top (powers of two, exact in double).
Rewritten RewriteInt(int cmp, double v, double mn, double top) {
  if (std::isnan(v)) return {cmp, 0, cmp == 1 ? 1 : 0};
  const double fl = std::floor(v), ce = std::ceil(v);
  if (fl == v && v >= mn && v < top) return {cmp, v, -1};
  switch (cmp) {
    case 0:
      return {cmp, 0, 0};
    case 1:
      return {cmp, 0, 1};
    case 2:
    case 3:  // x < v and x <= v: x <= floor(v)
      if (fl < mn) return {cmp, 0, 0};
      if (fl >= top) return {cmp, 0, 1};
      return {3, fl, -1};
    default:  // x > v and x >= v: x >= ceil(v)
      if (ce >= top) return {cmp, 0, 0};
      if (ce < mn) return {cmp, 0, 1};
      return {5, ce, -1};
  }
}

Rewritten Rewrite(const std::string& kt, DLArrayDType t, int cmp, double value) {
  if (kt == "float") return RewriteFloat(cmp, value);
  if (kt == "ulong") return RewriteInt(cmp, value, 0.0, std::ldexp(1.0, 64));
  if (t.code == kDLArrayBool) return RewriteInt(cmp, value, 0.0, 2.0);
  const bool u = t.code == kDLArrayUInt;
  const double top = std::ldexp(1.0, u ? t.bits : t.bits - 1);
  return RewriteInt(cmp, value, u ? 0.0 : -top, top);
}

// compare_by_const (cmp checked by the core): the kernel of the row cmp names (or, rewritten
// without cl_khr_fp64, of the rewritten comparison).
void compare_by_const_kernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  const DLArrayDType t = in->dtype;
  RequireReal(ctx, t);
  const std::string kt = CompareType(DeviceOf(ctx).info(ctx.device_id), t);
  const double value = ctx.attrs[0];
  const int cmp = static_cast<int>(ctx.attrs[1]);
  const Rewritten r = kt == "double" ? Rewritten{cmp, value, -1} : Rewrite(kt, t, cmp, value);
  const std::string kernel = "dl_compare_by_const_" + std::to_string(r.cmp);
  const std::string options =
      BuildOptions(t, DeviceOf(ctx).info(ctx.device_id), TableOptions(ctx, t));
  RunMap(ctx, kProgram, kernel.c_str(), {in}, ctx.outputs[0], options, [&](Launch& launch) {
    if (kt == "double") {
      launch.scalar<cl_double>(r.bound);
    } else if (kt == "float") {
      launch.scalar<cl_float>(static_cast<cl_float>(r.bound));
    } else if (kt == "ulong") {
      launch.scalar<cl_ulong>(r.constant < 0 ? static_cast<cl_ulong>(r.bound) : 0);
    } else {
      launch.scalar<cl_long>(r.constant < 0 ? static_cast<cl_long>(r.bound) : 0);
    }
    launch.scalar<cl_int>(r.constant);
  });
}

}  // namespace

void RegisterTableKernels(Registry* registry) {
  auto register_one = [registry](const char* op, KernelFn fn) {
    registry->register_kernel(op, kDLArrayOpenCL, fn);
  };
  DLARRAY_ELEMENTWISE_REGISTER_ALL
  register_one("where", &where_kernel);
  register_one("compare", &compare_kernel);
  register_one("compare_by_const", &compare_by_const_kernel);
}

}  // namespace dlarray::opencl
