// cuda_backend.so: the plugin entry point. The device object is made without touching the
// driver, so the plugin opens on machines without a GPU and reports zero devices with a reason.
#include "cuda_device.h"
#include "dlarray/plugin.h"
#include "kernels.h"
#include "rtc_ext.h"

namespace {

dlarray::Device* CreateDevice() {
  dlarray::cuda::SetRtcCoreApi(dlarray::PluginCoreApi());  // dlarray.rtc reports errors through it
  // dlarray.nccl reports errors through the same table, handed to the device.
  return new dlarray::cuda::CudaDevice(dlarray::PluginCoreApi());
}

void RegisterKernels(dlarray::Registry* registry) {
  using namespace dlarray::cuda;  // NOLINT(build/namespaces)
  struct Entry {
    const char* op;
    dlarray::KernelFn fn;
  };
  static const Entry kKernels[] = {
      {"array_set", &ArraySetKernel},
      {"broadcast_to", &BroadcastToKernel},
      {"reduce_sum_axis_zero", &ReduceSumAxisZeroKernel},
      {"matrix_elementwise_add", &MatrixElementwiseAddKernel},
      {"matrix_elementwise_add_by_const", &MatrixElementwiseAddByConstKernel},
      {"matrix_elementwise_multiply", &MatrixElementwiseMultiplyKernel},
      {"matrix_elementwise_multiply_by_const", &MatrixElementwiseMultiplyByConstKernel},
      {"matrix_multiply", &MatrixMultiplyKernel},
      {"relu", &ReluKernel},
      {"relu_gradient", &ReluGradientKernel},
      {"softmax", &SoftmaxKernel},
      {"softmax_cross_entropy", &SoftmaxCrossEntropyKernel},
      {"copy", &CopyKernel},
  };
  for (const Entry& e : kKernels) registry->register_kernel(e.op, kDLArrayCUDA, e.fn);
}

}  // namespace

DLARRAY_DEFINE_PLUGIN("cuda", kDLArrayCUDA, &CreateDevice, &RegisterKernels)
