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
 *     float32, float64) or kNumericTypes (those and int8, int16, int32, int64, uint8);
 *   - expr is an expression over those names, evaluated in the compute type (float for the
 *     16-bit types, the dtype itself otherwise). It may use + - * /, comparisons with ?: (both
 *     branches of the compute type or a literal), and the functions Exp(v), Log(v), Tanh(v)
 *     (float dtypes; IEEE results for NaN, infinities and zeros, as NumPy's) and AddOf(p, q),
 *     MulOf(p, q) (+ and *, wrapping around for integers), which every backend defines for its
 *     compute types; integer literals are converted to the compute type;
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
  X2(matrix_elementwise_add, a, b, kNumericTypes, AddOf(a, b), "a=copy(dout) b=copy(dout)",      \
     "out = a + b")                                                                             \
  XS(matrix_elementwise_add_by_const, x, value, kNumericTypes, AddOf(x, value), "x=copy(dout)",  \
     "out = x + value")                                                                         \
  X2(matrix_elementwise_multiply, a, b, kNumericTypes, MulOf(a, b),                              \
     "a=matrix_elementwise_multiply(dout,b) b=matrix_elementwise_multiply(dout,a)",              \
     "out = a * b")                                                                             \
  XS(matrix_elementwise_multiply_by_const, x, value, kNumericTypes, MulOf(x, value),             \
     "x=matrix_elementwise_multiply_by_const(dout)", "out = x * value")                         \
  X2(matrix_elementwise_divide, a, b, kFloatTypes, a / b, "", "out = a / b")                     \
  XS(matrix_elementwise_divide_by_const, x, value, kFloatTypes, x / value,                       \
     "x=matrix_elementwise_divide_by_const(dout)", "out = x / value")                           \
  X1(relu, x, kFloatTypes, x < 0 ? 0 : x, "x=relu_gradient(x,dout)", "out = max(x, 0)")         \
  X2(relu_gradient, x, grad, kFloatTypes, x > 0 ? grad : 0 * grad, "grad=relu_gradient(x,dout)", \
     "out = grad * (x > 0)")                                                                    \
  X1(exp, x, kFloatTypes, Exp(x), "x=matrix_elementwise_multiply(out,dout)",                     \
     "out = e ** x, elementwise")                                                               \
  X1(log, x, kFloatTypes, Log(x), "x=matrix_elementwise_divide(dout,x)",                         \
     "out = the natural logarithm of x, elementwise (nan below 0, -inf at 0)")                  \
  X1(tanh, x, kFloatTypes, Tanh(x), "x=tanh_gradient(out,dout)",                                 \
     "out = the hyperbolic tangent of x, elementwise")                                          \
  X2(tanh_gradient, y, dy, kFloatTypes, dy * (1 - y * y), "",                                    \
     "out = dy * (1 - y ** 2): the gradient of tanh, given its result y and the gradient dy")
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
#define DLARRAY_ELEMENTWISE_REGISTER_ALL                                                  \
  DLARRAY_ELEMENTWISE_OPS(DLARRAY_ELEMENTWISE_REGISTER_1, DLARRAY_ELEMENTWISE_REGISTER_2, \
                          DLARRAY_ELEMENTWISE_REGISTER_S)

#endif  // DLARRAY_ELEMENTWISE_TABLE_H_
