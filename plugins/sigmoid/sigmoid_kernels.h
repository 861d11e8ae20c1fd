// The sigmoid plugin's kernels: CPU (on the CPU plugin's pool) always, CUDA where the plugin was
// built with nvcc.
#ifndef DLARRAY_PLUGINS_SIGMOID_SIGMOID_KERNELS_H_
#define DLARRAY_PLUGINS_SIGMOID_SIGMOID_KERNELS_H_

#include "dlarray/kernel.h"

namespace sigmoid {

/*! \brief y = 1 / (1 + exp(-x)) on the CPU. */
void SigmoidCpu(const dlarray::KernelContext& ctx);
/*! \brief dx = dy * y * (1 - y) on the CPU, from the forward output y. */
void SigmoidGradientCpu(const dlarray::KernelContext& ctx);

#ifdef DLARRAY_SIGMOID_CUDA
/*! \brief The same on a GPU, launched on the stream the core hands the kernel. */
void SigmoidCuda(const dlarray::KernelContext& ctx);
void SigmoidGradientCuda(const dlarray::KernelContext& ctx);
#endif

}  // namespace sigmoid

#endif  // DLARRAY_PLUGINS_SIGMOID_SIGMOID_KERNELS_H_
