/*!
 * \file elementwise_table.h
 * \brief The elementwise ops defined once, as data: each entry gives the op's name, its input
 *        names, the dtypes it takes, the scalar expression of its result, its gradients and a doc
 *        line. The core declares the ops from it; every backend makes its kernels from the same
 *        expressions (C++ on the CPU, CUDA, OpenCL C as text), so a new elementwise op is one
 *        line here.
 *
 * The table is an X-macro: DLARRAY_ELEMENTWISE_OPS(X1, X2, XS) calls
 *   X1(name, x, dtypes, expr, gradient, doc)        for ops of one input,
 *   X2(name, a, b, dtypes, expr, gradients, doc)    for ops of two inputs,
 *   XS(name, x, s, dtypes, expr, gradient, doc)     for ops of one input and a scalar attribute s,
 * where
 *   - x (or a, b) are the inputs' names and s the attribute's: Python keywords, and the
 *     expression's variables. The core checks s as every scalar applied to an array (finite
 *     values that overflow a float dtype, or with no int64 value for an integer one, are
 *     refused); the kernels see it in the compute type, rounded to the dtype first (NumPy's
 *     x + scalar), integers truncated and wrapped;
 *   - dtypes is a token the includer maps to a dtype set: kFloatTypes (float16, bfloat16,
 *     float32, float64) or kRealNumericTypes (those and every integer type), and with complex64
 *     and complex128 too kFloatComplexTypes and kNumericComplexTypes (the complex compute
 *     value is dlarray::Complex, with the operators and functions of
 *     dlarray/elementwise_complex.h; the CPU and CUDA backends compile those in translation
 *     units of their own);
 *   - expr is an expression over those names, evaluated in the compute type (float for the
 *     16-bit types, the dtype itself otherwise). It may use + - * /, comparisons with ?: (both
 *     branches of the compute type or a literal), and the functions Exp(v), Log(v), Tanh(v)
 *     (float dtypes; IEEE results for NaN, infinities and zeros, as NumPy's) and AddOf(p, q),
 *     MulOf(p, q) (+ and *, wrapping around for integers), Div(p, q) (/) and Equal(p, q) (==),
 *     which every backend defines for its compute types (functions rather than operators where
 *     complex values need them: OpenCL C has no operators on float2); integer literals are
 *     converted to the compute type;
 *   - gradient is a string literal as the core's op table writes gradients: "input=op(args)" per
 *     differentiable input, separated by spaces ("" when none is), args (no spaces) drawn from
 *     the input names, "out" (the op's result) and "dout" (the gradient arriving at it); an op
 *     named in it receives the attributes of the same names (s).
 * An includer that needs the expression as text (OpenCL C, the docs) stringizes it.
 */
#ifndef DLARRAY_ELEMENTWISE_TABLE_H_
#define DLARRAY_ELEMENTWISE_TABLE_H_

// relu keeps NaN and -0.0 (numpy.maximum's x < 0 test); relu_gradient selects instead of
// multiplying by (x > 0), with the same result: grad where x > 0, else 0 * grad (NaN for an
// infinite or NaN grad, -0.0 for a negative one).
// clang-format off
#define DLARRAY_ELEMENTWISE_OPS(X1, X2, XS)                                                      \
  X2(matrix_elementwise_add, a, b, kNumericComplexTypes, AddOf(a, b), "a=copy(dout) b=copy(dout)",      \
     "out = a + b")                                                                             \
  XS(matrix_elementwise_add_by_const, x, value, kRealNumericTypes, AddOf(x, value), "x=copy(dout)",  \
     "out = x + value")                                                                         \
  X2(matrix_elementwise_multiply, a, b, kNumericComplexTypes, MulOf(a, b),                              \
     "a=matrix_elementwise_multiply(dout,b) b=matrix_elementwise_multiply(dout,a)",              \
     "out = a * b")                                                                             \
  XS(matrix_elementwise_multiply_by_const, x, value, kRealNumericTypes, MulOf(x, value),             \
     "x=matrix_elementwise_multiply_by_const(dout)", "out = x * value")                         \
  X2(matrix_elementwise_divide, a, b, kFloatComplexTypes, Div(a, b), "", "out = a / b")                     \
  XS(matrix_elementwise_divide_by_const, x, value, kFloatTypes, x / value,                       \
     "x=matrix_elementwise_divide_by_const(dout)", "out = x / value")                           \
  X1(relu, x, kFloatTypes, x < 0 ? 0 : x, "x=relu_gradient(x,dout)", "out = max(x, 0)")         \
  X2(relu_gradient, x, grad, kFloatTypes, x > 0 ? grad : 0 * grad, "grad=relu_gradient(x,dout)", \
     "out = grad * (x > 0)")                                                                    \
  X1(exp, x, kFloatComplexTypes, Exp(x), "x=matrix_elementwise_multiply(out,dout)",                     \
     "out = e ** x, elementwise")                                                               \
  X1(log, x, kFloatComplexTypes, Log(x), "x=matrix_elementwise_divide(dout,x)",                         \
     "out = the natural logarithm of x, elementwise (nan below 0, -inf at 0)")                  \
  X1(tanh, x, kFloatComplexTypes, Tanh(x), "x=tanh_gradient(out,dout)",                                 \
     "out = the hyperbolic tangent of x, elementwise")                                          \
  X2(tanh_gradient, y, dy, kFloatTypes, dy * (1 - y * y), "",                                    \
     "out = dy * (1 - y ** 2): the gradient of tanh, given its result y and the gradient dy")
// clang-format on

/*!
 * \brief The array API's functions, as a second X-macro of the same shape,
 *        DLARRAY_MATH_OPS(X1, X2), whose expressions are only ever evaluated on one compute
 *        value at a time (never on a CPU vector: they call the C library's functions and
 *        dlarray/elementwise_math.h's). Besides the above, dtypes may be kComplexTypes (complex
 *        only), kRealNumericTypes
 *        (the floats and every integer type), kIntegerTypes (every integer type) and
 *        kIntegralTypes (those and bool); the expressions may call the functions of
 *        dlarray/elementwise_math.h, which the OpenCL backend spells again in OpenCL C.
 */
// clang-format off
#define DLARRAY_MATH_OPS(X1, X2)                                                                \
  X1(abs, x, kRealNumericTypes, Abs(x), "", "out = |x|")                                        \
  X1(negative, x, kNumericComplexTypes, Neg(x), "", "out = -x (integers wrap around)")             \
  X1(sign, x, kNumericComplexTypes, Sign(x), "", "out = -1, 0 or 1 by the sign of x (NaN kept)")   \
  X1(conj, x, kComplexTypes, Conj(x), "", "out = the complex conjugate of x")                  \
  X1(square, x, kNumericComplexTypes, MulOf(x, x), "", "out = x * x")                              \
  X1(sqrt, x, kFloatComplexTypes, Sqrt(x), "", "out = the square root of x")                           \
  X1(reciprocal, x, kFloatComplexTypes, Reciprocal(x), "", "out = 1 / x")                                      \
  X1(expm1, x, kFloatComplexTypes, Expm1(x), "", "out = e ** x - 1, accurate near 0")                  \
  X1(log1p, x, kFloatComplexTypes, Log1p(x), "", "out = log(1 + x), accurate near 0")                  \
  X1(log2, x, kFloatComplexTypes, Log2(x), "", "out = the base-2 logarithm of x")                      \
  X1(log10, x, kFloatComplexTypes, Log10(x), "", "out = the base-10 logarithm of x")                   \
  X1(sin, x, kFloatComplexTypes, Sin(x), "", "out = sin x (radians)")                                  \
  X1(cos, x, kFloatComplexTypes, Cos(x), "", "out = cos x (radians)")                                  \
  X1(tan, x, kFloatComplexTypes, Tan(x), "", "out = tan x (radians)")                                  \
  X1(asin, x, kFloatComplexTypes, Asin(x), "", "out = the inverse sine of x")                          \
  X1(acos, x, kFloatComplexTypes, Acos(x), "", "out = the inverse cosine of x")                        \
  X1(atan, x, kFloatComplexTypes, Atan(x), "", "out = the inverse tangent of x")                       \
  X1(sinh, x, kFloatComplexTypes, Sinh(x), "", "out = the hyperbolic sine of x")                       \
  X1(cosh, x, kFloatComplexTypes, Cosh(x), "", "out = the hyperbolic cosine of x")                     \
  X1(asinh, x, kFloatComplexTypes, Asinh(x), "", "out = the inverse hyperbolic sine of x")             \
  X1(acosh, x, kFloatComplexTypes, Acosh(x), "", "out = the inverse hyperbolic cosine of x")           \
  X1(atanh, x, kFloatComplexTypes, Atanh(x), "", "out = the inverse hyperbolic tangent of x")          \
  X1(floor, x, kFloatTypes, Floor(x), "", "out = the largest integer <= x")                     \
  X1(ceil, x, kFloatTypes, Ceil(x), "", "out = the smallest integer >= x")                      \
  X1(trunc, x, kFloatTypes, Trunc(x), "", "out = x rounded toward 0")                           \
  X1(round, x, kFloatComplexTypes, Rint(x), "",                                                \
     "out = x rounded to the nearest integer, half to even (complex: each part)")                \
  X1(bitwise_invert, x, kIntegerTypes, ~x, "", "out = ~x, every bit flipped")                   \
  X2(subtract, a, b, kNumericComplexTypes, SubOf(a, b), "", "out = a - b (integers wrap around)")  \
  X2(pow, a, b, kNumericComplexTypes, Pow(a, b), "",                                               \
     "out = a ** b (integers wrap around; a negative integer exponent gives 0)")                \
  X2(floor_divide, a, b, kRealNumericTypes, FloorDivide(a, b), "",                              \
     "out = floor(a / b) (integer division by 0 gives 0)")                                      \
  X2(remainder, a, b, kRealNumericTypes, Remainder(a, b), "",                                   \
     "out = a - floor(a / b) * b, the sign of b (integer division by 0 gives 0)")               \
  X2(maximum, a, b, kRealNumericTypes, Maximum(a, b), "", "out = the larger of a and b (NaN wins)") \
  X2(minimum, a, b, kRealNumericTypes, Minimum(a, b), "", "out = the smaller of a and b (NaN wins)") \
  X2(atan2, a, b, kFloatTypes, Atan2(a, b), "", "out = the angle of the point (b, a)")          \
  X2(hypot, a, b, kFloatTypes, Hypot(a, b), "", "out = sqrt(a * a + b * b), without overflow")  \
  X2(copysign, a, b, kFloatTypes, CopySign(a, b), "", "out = |a| with the sign of b")           \
  X2(nextafter, a, b, kFloatTypes, NextAfter(a, b), "",                                         \
     "out = the next representable value after a toward b")                                     \
  X2(logaddexp, a, b, kFloatTypes, LogAddExp(a, b), "", "out = log(e ** a + e ** b)")           \
  X2(bitwise_and, a, b, kIntegralTypes, a & b, "", "out = a & b")                               \
  X2(bitwise_or, a, b, kIntegralTypes, a | b, "", "out = a | b")                                \
  X2(bitwise_xor, a, b, kIntegralTypes, a ^ b, "", "out = a ^ b")                               \
  X2(bitwise_left_shift, a, b, kIntegerTypes, ShiftLeft(a, b), "",                              \
     "out = a << b (0 once b reaches the width)")                                               \
  X2(bitwise_right_shift, a, b, kIntegerTypes, ShiftRight(a, b), "",                            \
     "out = a >> b, arithmetic for signed types")
// clang-format on

/*!
 * \brief The predicates: elementwise ops whose result is bool, as a third X-macro,
 *        DLARRAY_PREDICATE_OPS(P1, P2), which calls
 *   P1(name, x, dtypes, expr, doc)      for predicates of one input,
 *   P2(name, a, b, dtypes, expr, doc)   for predicates of two inputs (of one dtype),
 * with the names and expr as in DLARRAY_MATH_OPS (evaluated in the inputs' compute type, its
 * value a truth value: the output holds 1 where it is true, 0 elsewhere) and dtypes also
 * kRealTypes (every dtype but complex) or kStorageTypes (every dtype). The expressions may also
 * call IsNan(v), IsInf(v), IsFinite(v) (false, false and true for integers and bool) and
 * SignBit(v). No predicate has a gradient.
 */
// clang-format off
#define DLARRAY_PREDICATE_OPS(P1, P2)                                                          \
  P1(isnan, x, kStorageTypes, IsNan(x), "out = x is NaN")                                         \
  P1(isinf, x, kStorageTypes, IsInf(x), "out = x is +inf or -inf")                                \
  P1(isfinite, x, kStorageTypes, IsFinite(x), "out = x is neither infinite nor NaN")              \
  P1(signbit, x, kFloatTypes, SignBit(x), "out = the sign bit of x is set (-0.0 included)")    \
  P1(logical_not, x, kRealTypes, x == 0, "out = not x")                                        \
  P2(equal, a, b, kStorageTypes, Equal(a, b), "out = a == b")                                          \
  P2(not_equal, a, b, kStorageTypes, !Equal(a, b), "out = a != b")                                      \
  P2(less, a, b, kRealTypes, a < b, "out = a < b")                                             \
  P2(less_equal, a, b, kRealTypes, a <= b, "out = a <= b")                                     \
  P2(greater, a, b, kRealTypes, a > b, "out = a > b")                                          \
  P2(greater_equal, a, b, kRealTypes, a >= b, "out = a >= b")                                  \
  P2(logical_and, a, b, kRealTypes, a != 0 && b != 0, "out = a and b")                         \
  P2(logical_or, a, b, kRealTypes, a != 0 || b != 0, "out = a or b")                           \
  P2(logical_xor, a, b, kRealTypes, (a != 0) != (b != 0), "out = a xor b")
// clang-format on

/*!
 * \brief The parts of a complex number: ops of one complex input whose result has the real dtype
 *        of its parts (complex64 -> float32, complex128 -> float64), as a fourth X-macro,
 *        DLARRAY_COMPLEX_PART_OPS(R1), which calls R1(name, x, expr, doc), expr as in
 *        DLARRAY_MATH_OPS (evaluated on the complex compute value; Real, Imag and Abs are
 *        dlarray/elementwise_complex.h's). No gradients.
 */
// clang-format off
#define DLARRAY_COMPLEX_PART_OPS(R1)                                                             \
  R1(real, x, Real(x), "out = the real part of x")                                              \
  R1(imag, x, Imag(x), "out = the imaginary part of x")                                         \
  R1(complex_abs, x, Abs(x), "out = |x| = hypot(real, imag), inf if either part is infinite")
// clang-format on

/*!
 * \brief The comparisons with a constant: compare_by_const (one input x, a scalar attribute s,
 *        a bool output), whose integer attribute cmp picks a row of a fifth X-macro,
 *        DLARRAY_COMPARE_BY_CONST_OPS(PC), which calls PC(cmp, x, s, expr) for cmp 0 ==, 1 !=,
 *        2 <, 3 <=, 4 >, 5 >=. expr is evaluated with x the element converted to double and s
 *        the attribute as the core passes it (a double): the constant is compared exactly, not
 *        rounded to the array's dtype first (NumPy's rule for a Python float against an integer
 *        or float32 array; Python brings integers beyond double's 2^53 as arrays). Every real
 *        dtype and bool; NaN compares unequal to everything. A backend without double arithmetic
 *        (OpenCL without cl_khr_fp64) rewrites the comparison of x with s into an exact one in
 *        the element's own type.
 */
// clang-format off
#define DLARRAY_COMPARE_BY_CONST_OPS(PC)                                                          \
  PC(0, x, s, x == s)                                                                           \
  PC(1, x, s, x != s)                                                                           \
  PC(2, x, s, x < s)                                                                            \
  PC(3, x, s, x <= s)                                                                           \
  PC(4, x, s, x > s)                                                                            \
  PC(5, x, s, x >= s)
// clang-format on

/*!
 * \brief Registration of a backend's table kernels: where a function or lambda
 *        `register_one(const char* op, KernelFn fn)` is in scope and the backend has defined
 *        `<name>_kernel` for every op, DLARRAY_ELEMENTWISE_OPS(DLARRAY_ELEMENTWISE_REGISTER_1,
 *        DLARRAY_ELEMENTWISE_REGISTER_2, DLARRAY_ELEMENTWISE_REGISTER_S) calls it for each op of
 *        the table.
 */
#define DLARRAY_ELEMENTWISE_REGISTER_1(name, x, dtypes, expr, grads, doc) \
  register_one(#name, &name##_kernel);
#define DLARRAY_ELEMENTWISE_REGISTER_2(name, a, b, dtypes, expr, grads, doc) \
  register_one(#name, &name##_kernel);
#define DLARRAY_ELEMENTWISE_REGISTER_S(name, x, s, dtypes, expr, grads, doc) \
  register_one(#name, &name##_kernel);
/*! \brief The three registration macros, as DLARRAY_ELEMENTWISE_OPS's arguments. */
#define DLARRAY_PREDICATE_REGISTER_1(name, x, dtypes, expr, doc) \
  register_one(#name, &name##_kernel);
#define DLARRAY_PREDICATE_REGISTER_2(name, a, b, dtypes, expr, doc) \
  register_one(#name, &name##_kernel);
/*! \brief The registration macro of DLARRAY_COMPLEX_PART_OPS. */
#define DLARRAY_COMPLEX_PART_REGISTER(name, x, expr, doc) register_one(#name, &name##_kernel);
/*! \brief The registration of every op of the four tables. */
#define DLARRAY_ELEMENTWISE_REGISTER_ALL                                                  \
  DLARRAY_ELEMENTWISE_OPS(DLARRAY_ELEMENTWISE_REGISTER_1, DLARRAY_ELEMENTWISE_REGISTER_2, \
                          DLARRAY_ELEMENTWISE_REGISTER_S)                                 \
  DLARRAY_MATH_OPS(DLARRAY_ELEMENTWISE_REGISTER_1, DLARRAY_ELEMENTWISE_REGISTER_2)        \
  DLARRAY_PREDICATE_OPS(DLARRAY_PREDICATE_REGISTER_1, DLARRAY_PREDICATE_REGISTER_2)       \
  DLARRAY_COMPLEX_PART_OPS(DLARRAY_COMPLEX_PART_REGISTER)

/*!
 * \brief Declarations of a backend's complex kernels: DLARRAY_COMPLEX_DECLARE_ALL declares
 *        `void <name>_complex(const KernelContext&)` for every op of the four tables, which a
 *        backend that compiles its complex kernels apart (the CPU's and CUDA's
 *        elementwise_complex translation units) defines for each (an op without complex dtypes
 *        only reports the dtype error) and calls from `<name>_kernel` for complex operands.
 */
#define DLARRAY_COMPLEX_DECLARE_1(name, x, dtypes, expr, grads, doc) \
  void name##_complex(const KernelContext& ctx);
/*! \brief (see DLARRAY_COMPLEX_DECLARE_1) */
#define DLARRAY_COMPLEX_DECLARE_2(name, a, b, dtypes, expr, grads, doc) \
  void name##_complex(const KernelContext& ctx);
/*! \brief (see DLARRAY_COMPLEX_DECLARE_1) */
#define DLARRAY_COMPLEX_DECLARE_P1(name, x, dtypes, expr, doc) \
  void name##_complex(const KernelContext& ctx);
/*! \brief (see DLARRAY_COMPLEX_DECLARE_1) */
#define DLARRAY_COMPLEX_DECLARE_P2(name, a, b, dtypes, expr, doc) \
  void name##_complex(const KernelContext& ctx);
/*! \brief (see DLARRAY_COMPLEX_DECLARE_1) */
#define DLARRAY_COMPLEX_DECLARE_R(name, x, expr, doc) void name##_complex(const KernelContext& ctx);
/*! \brief The declarations of every op's complex kernel. */
#define DLARRAY_COMPLEX_DECLARE_ALL                                             \
  DLARRAY_ELEMENTWISE_OPS(DLARRAY_COMPLEX_DECLARE_1, DLARRAY_COMPLEX_DECLARE_2, \
                          DLARRAY_COMPLEX_DECLARE_2)                            \
  DLARRAY_MATH_OPS(DLARRAY_COMPLEX_DECLARE_1, DLARRAY_COMPLEX_DECLARE_2)        \
  DLARRAY_PREDICATE_OPS(DLARRAY_COMPLEX_DECLARE_P1, DLARRAY_COMPLEX_DECLARE_P2) \
  DLARRAY_COMPLEX_PART_OPS(DLARRAY_COMPLEX_DECLARE_R)

#endif  // DLARRAY_ELEMENTWISE_TABLE_H_
