/*!
 * \file elementwise_complex.h
 * \brief The complex64/complex128 kernels of the elementwise table's ops
 *        (elementwise_complex.cu): <name>_complex for every op of the table, which the table's
 *        kernels (elementwise_table.cu) call for complex operands. A translation unit of its own
 *        so that the complex instantiations compile in parallel with the real ones.
 */
#ifndef DLARRAY_BACKENDS_CUDA_ELEMENTWISE_COMPLEX_H_
#define DLARRAY_BACKENDS_CUDA_ELEMENTWISE_COMPLEX_H_

#include "dlarray/dtype_dispatch.h"
#include "dlarray/elementwise_table.h"
#include "dlarray/kernel.h"

namespace dlarray {
namespace cuda {

DLARRAY_COMPLEX_DECLARE_ALL

/*! \brief reduce's sum and prod (kinds 0, 1) of a complex input whose data is off its element
 *         alignment (reduce_complex.cu; reduce.cu reduces aligned complex data itself). */
void ReduceComplexKernel(const KernelContext& ctx);
/*! \brief scan's cumulative sum and product of a complex input (reduce_complex.cu). */
void ScanComplexKernel(const KernelContext& ctx);

/*! \brief Whether a table kernel of dtype set kSet is called on complex operands. */
template <int kSet>
inline bool IsComplexCall(const KernelContext& ctx) {
  return (kSet & kComplexTypes) != 0 && ctx.inputs[0]->dtype.code == kDLArrayComplex;
}

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_ELEMENTWISE_COMPLEX_H_
