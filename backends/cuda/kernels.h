/*!
 * \file kernels.h
 * \brief Entry functions of the CUDA kernels, one per op (one op per .cu file).
 */
#ifndef DLARRAY_BACKENDS_CUDA_KERNELS_H_
#define DLARRAY_BACKENDS_CUDA_KERNELS_H_

#include "dlarray/kernel.h"

namespace dlarray {
class Registry;

namespace cuda {

void ArraySetKernel(const KernelContext& ctx);
void BroadcastToKernel(const KernelContext& ctx);
void ReduceSumAxisZeroKernel(const KernelContext& ctx);
void MatrixMultiplyKernel(const KernelContext& ctx);
// cuBLASLt with epilogues (cublaslt_matmul.cu); they throw "cuBLASLt ..." where they cannot run.
void LinearKernel(const KernelContext& ctx);
void LinearWeightGradKernel(const KernelContext& ctx);
void SoftmaxKernel(const KernelContext& ctx);
void SoftmaxCrossEntropyKernel(const KernelContext& ctx);
void CopyKernel(const KernelContext& ctx);
void AstypeKernel(const KernelContext& ctx);
void GatherKernel(const KernelContext& ctx);
void GatherAlongKernel(const KernelContext& ctx);
void ScatterKernel(const KernelContext& ctx);
void NonzeroKernel(const KernelContext& ctx);
void CompressKernel(const KernelContext& ctx);
void ArgsortKernel(const KernelContext& ctx);
void SortKernel(const KernelContext& ctx);
void ReduceKernel(const KernelContext& ctx);
void ReduceMeanKernel(const KernelContext& ctx);
void ScanKernel(const KernelContext& ctx);

/*! \brief Registers the kernels of every op of dlarray/elementwise_table.h. */
void RegisterTableKernels(Registry* registry);

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_KERNELS_H_
