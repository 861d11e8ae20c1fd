/*!
 * \file cpu_plugin.cc
 * \brief cpu_backend.so's entry point: the CpuDevice and a kernel for every core op.
 */
#include "cpu_device.h"
#include "cpu_kernels.h"
#include "dlarray/plugin.h"

namespace {

dlarray::Device* CreateDevice() { return new dlarray::cpu::CpuDevice(); }

void RegisterKernels(dlarray::Registry* registry) {
  namespace cpu = dlarray::cpu;
  struct Entry {
    const char* op;
    dlarray::KernelFn kernel;
  };
  static const Entry kKernels[] = {
      {"array_set", &cpu::ArraySetKernel},
      {"broadcast_to", &cpu::BroadcastToKernel},
      {"reduce_sum_axis_zero", &cpu::ReduceSumAxisZeroKernel},
      {"matrix_elementwise_add", &cpu::MatrixElementwiseAddKernel},
      {"matrix_elementwise_add_by_const", &cpu::MatrixElementwiseAddByConstKernel},
      {"matrix_elementwise_multiply", &cpu::MatrixElementwiseMultiplyKernel},
      {"matrix_elementwise_multiply_by_const", &cpu::MatrixElementwiseMultiplyByConstKernel},
      {"matrix_multiply", &cpu::MatrixMultiplyKernel},
      {"relu", &cpu::ReluKernel},
      {"relu_gradient", &cpu::ReluGradientKernel},
      {"softmax", &cpu::SoftmaxKernel},
      {"softmax_cross_entropy", &cpu::SoftmaxCrossEntropyKernel},
      {"copy", &cpu::CopyKernel},
  };
  for (const Entry& entry : kKernels)
    registry->register_kernel(entry.op, kDLArrayCPU, entry.kernel);
}

}  // namespace

DLARRAY_DEFINE_PLUGIN("cpu", kDLArrayCPU, &CreateDevice, &RegisterKernels)
