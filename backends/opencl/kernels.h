/*!
 * \file kernels.h
 * \brief The op kernels of the OpenCL plugin: one entry per op, one op per file.
 */
#ifndef DLARRAY_BACKENDS_OPENCL_KERNELS_H_
#define DLARRAY_BACKENDS_OPENCL_KERNELS_H_

#include "dlarray/kernel.h"

namespace dlarray {
class Registry;
}  // namespace dlarray

namespace dlarray::opencl {

void ArraySetKernel(const KernelContext& ctx);
void BroadcastToKernel(const KernelContext& ctx);
void ReduceSumAxisZeroKernel(const KernelContext& ctx);
void MatrixMultiplyKernel(const KernelContext& ctx);
void SoftmaxKernel(const KernelContext& ctx);
void SoftmaxCrossEntropyKernel(const KernelContext& ctx);
void CopyKernel(const KernelContext& ctx);
void AstypeKernel(const KernelContext& ctx);
void GatherKernel(const KernelContext& ctx);
void ScatterKernel(const KernelContext& ctx);
void NonzeroKernel(const KernelContext& ctx);
void ArgsortKernel(const KernelContext& ctx);
void ReduceKernel(const KernelContext& ctx);
void ScanKernel(const KernelContext& ctx);
void ReduceComplexKernel(const KernelContext& ctx);  // reduce_complex.cc: complex sum, prod
void ScanComplexKernel(const KernelContext& ctx);    // reduce_complex.cc: cumulative sum, prod

/*! \brief Registers the kernels of every op of dlarray/elementwise_table.h. */
void RegisterTableKernels(Registry* registry);

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_KERNELS_H_
