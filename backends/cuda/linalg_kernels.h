/*!
 * \file linalg_kernels.h
 * \brief Entry functions of the linalg_* kernels (linalg.cu, cuSOLVER); apart from kernels.h so
 *        that the other kernels do not recompile when these change.
 */
#ifndef DLARRAY_BACKENDS_CUDA_LINALG_KERNELS_H_
#define DLARRAY_BACKENDS_CUDA_LINALG_KERNELS_H_

#include "dlarray/kernel.h"

namespace dlarray {
namespace cuda {

void LinalgLuKernel(const KernelContext& ctx);
void LinalgSolveKernel(const KernelContext& ctx);
void LinalgCholeskyKernel(const KernelContext& ctx);
void LinalgEighKernel(const KernelContext& ctx);
void LinalgSvdKernel(const KernelContext& ctx);
void LinalgQrKernel(const KernelContext& ctx);

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_LINALG_KERNELS_H_
