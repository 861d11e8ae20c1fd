/*!
 * \file elementwise_complex.h
 * \brief The complex64/complex128 kernels of the elementwise table's ops
 *        (elementwise_complex.cc): <name>_complex for every op of the four X-macros, which the
 *        table's kernels (elementwise_table.cc) call for complex operands. The complex code is a
 *        translation unit of its own, compiled once for every instruction set path (std::complex
 *        functions gain nothing from wider vectors, and the ISA paths compile 3x): an op whose
 *        row has no complex dtype gets a function that only reports the dtype error.
 */
#ifndef DLARRAY_BACKENDS_CPU_ELEMENTWISE_COMPLEX_H_
#define DLARRAY_BACKENDS_CPU_ELEMENTWISE_COMPLEX_H_

#include "dlarray/dtype_dispatch.h"
#include "dlarray/elementwise_table.h"
#include "dlarray/kernel.h"

namespace dlarray::cpu {

DLARRAY_COMPLEX_DECLARE_ALL

/*! \brief reduce's sum and prod (kinds 0, 1) of a complex input (reduce_complex.cc). */
void ReduceComplexKernel(const KernelContext& ctx);
/*! \brief scan's cumulative sum and product of a complex input (reduce_complex.cc). */
void ScanComplexKernel(const KernelContext& ctx);

/*! \brief Whether a table kernel of dtype set kSet is called on complex operands. */
template <int kSet>
inline bool IsComplexCall(const KernelContext& ctx) {
  return (kSet & kComplexTypes) != 0 && ctx.inputs[0]->dtype.code == kDLArrayComplex;
}

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_ELEMENTWISE_COMPLEX_H_
