// leaky_relu and its gradient: the kernels of this example plugin.
#ifndef LEAKY_RELU_H_
#define LEAKY_RELU_H_

#include "dlarray/kernel.h"

void LeakyReluCpu(const dlarray::KernelContext& ctx);
void LeakyReluGradientCpu(const dlarray::KernelContext& ctx);
#ifdef WITH_CUDA_KERNELS
void LeakyReluCuda(const dlarray::KernelContext& ctx);
void LeakyReluGradientCuda(const dlarray::KernelContext& ctx);
#endif
#ifdef WITH_OPENCL_KERNELS
void LeakyReluOpencl(const dlarray::KernelContext& ctx);
void LeakyReluGradientOpencl(const dlarray::KernelContext& ctx);
#endif

#endif  // LEAKY_RELU_H_
