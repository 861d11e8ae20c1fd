/*!
 * \file linalg_kernels.h
 * \brief The linalg_* kernels (linalg.cc, LAPACK); apart from cpu_kernels.h so that the kernels
 *        compiled per instruction set do not recompile when these change.
 */
#ifndef DLARRAY_BACKENDS_CPU_LINALG_KERNELS_H_
#define DLARRAY_BACKENDS_CPU_LINALG_KERNELS_H_

#include "dlarray/kernel.h"

namespace dlarray::cpu {

void LinalgLuKernel(const KernelContext& ctx);
void LinalgSolveKernel(const KernelContext& ctx);
void LinalgCholeskyKernel(const KernelContext& ctx);
void LinalgEighKernel(const KernelContext& ctx);
void LinalgSvdKernel(const KernelContext& ctx);
void LinalgQrKernel(const KernelContext& ctx);

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_LINALG_KERNELS_H_
