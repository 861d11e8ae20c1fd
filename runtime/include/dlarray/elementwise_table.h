/*!
 * \file elementwise_table.h
 * \brief The elementwise ops defined once, as data: each entry gives the op's name, its input
 *        names, the dtypes it takes, the scalar expression of its result, its gradients and a doc
 *        line. The core declares the ops from it; every backend makes its kernels from the same
 *        expressions (C++ on the CPU, CUDA, OpenCL C as text), so a new elementwise op is one
 *        line here.
 *
 * The table is an X-macro: DLARRAY_ELEMENTWISE_OPS(X1, X2) calls
 *   X1(name, x, dtypes, expr, gradient, doc)        for ops of one input,
 *   X2(name, a, b, dtypes, expr, gradients, doc)    for ops of two inputs,
 * where
 *   - x (or a, b) are the inputs' names: Python keywords, and the expression's variables;
 *   - dtypes is a token the includer maps to a dtype set: kFloatTypes (float16, bfloat16,
 *     float32, float64);
 *   - expr is an expression over the input names, evaluated in the compute type (float for the
 *     16-bit types, the dtype itself otherwise). It may use + - * / and the functions
 *     Exp(v), Log(v), Tanh(v), which every backend defines for its compute types (IEEE results
 *     for NaN, infinities and zeros, as NumPy's); integer literals are converted to the compute
 *     type;
 *   - gradient is a string literal as the core's op table writes gradients: "input=op(args)" per
 *     differentiable input, separated by spaces ("" when none is), args (no spaces) drawn from
 *     the input names, "out" (the op's result) and "dout" (the gradient arriving at it).
 * An includer that needs the expression as text (OpenCL C, the docs) stringizes it.
 */
#ifndef DLARRAY_ELEMENTWISE_TABLE_H_
#define DLARRAY_ELEMENTWISE_TABLE_H_

// clang-format off
#define DLARRAY_ELEMENTWISE_OPS(X1, X2)                                                          \
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
 *        DLARRAY_ELEMENTWISE_REGISTER_2) calls it for each op of the table.
 */
#define DLARRAY_ELEMENTWISE_REGISTER_1(name, x, dtypes, expr, grads, doc) \
  register_one(#name, &name##_kernel);
#define DLARRAY_ELEMENTWISE_REGISTER_2(name, a, b, dtypes, expr, grads, doc) \
  register_one(#name, &name##_kernel);

#endif  // DLARRAY_ELEMENTWISE_TABLE_H_
