/*!
 * \file vector_math.h
 * \brief The C library's math functions on whole vectors: glibc's libmvec (the vector forms GCC
 *        calls under -ffast-math), found at run time, for the table's float32 and float64 rows
 *        that have one (sin, cos, tan, their inverses and hyperbolics, expm1, log1p, log2, log10,
 *        atan2, hypot) and for float64 tanh (float32 tanh has its own form, table_math.h).
 */
#ifndef DLARRAY_BACKENDS_CPU_VECTOR_MATH_H_
#define DLARRAY_BACKENDS_CPU_VECTOR_MATH_H_

#include "cpu_kernels.h"

namespace dlarray::cpu {

/*!
 * \brief Runs the elementwise op of ctx (compact inputs of the output's shape and dtype) through
 *        libmvec when it has the function for the op and dtype, or through our own vector forms
 *        (float32 pow; float64 remainder on AVX2 and AVX-512); false (nothing done) otherwise.
 *        DLARRAY_VECTOR_MATH=0 turns libmvec off (the scalar functions then run).
 */
bool RunVectorMath(const KernelContext& ctx);

/*!
 * \brief float32 pow of ctx's compact inputs (x ** y, elementwise) through our own vector form
 *        (pow_f32.cc): within 1 ulp, special values as the C library's powf.
 */
void RunPowF32(const KernelContext& ctx);

/*! \brief "libmvec (<library>, <n> functions, <lanes> lanes)" or why it is not used. */
const char* VectorMathStatus();

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_VECTOR_MATH_H_
