/*!
 * \file opencl_plugin.cc
 * \brief opencl_backend.so: the entry point. Finding devices waits for the first device_count(),
 *        and a machine without an OpenCL implementation gets a plugin with zero devices and the
 *        reason.
 */
#include "dlarray/plugin.h"
#include "kernels.h"
#include "opencl_device.h"
#include "opencl_extension.h"

namespace {

dlarray::Device* CreateDevice() { return new dlarray::opencl::OpenclDevice(); }

void RegisterKernels(dlarray::Registry* registry) {
  using namespace dlarray::opencl;  // NOLINT(build/namespaces)
  SetExtensionCore(registry->core());
  struct Entry {
    const char* op;
    dlarray::KernelFn fn;
  };
  static const Entry kKernels[] = {
      {"array_set", &ArraySetKernel},
      {"broadcast_to", &BroadcastToKernel},
      {"reduce_sum_axis_zero", &ReduceSumAxisZeroKernel},
      {"matrix_multiply", &MatrixMultiplyKernel},
      {"softmax", &SoftmaxKernel},
      {"softmax_cross_entropy", &SoftmaxCrossEntropyKernel},
      {"copy", &CopyKernel},
      {"astype", &AstypeKernel},
      {"gather", &GatherKernel},
      {"scatter", &ScatterKernel},
      {"nonzero", &NonzeroKernel},
      {"argsort", &ArgsortKernel},
      {"reduce", &ReduceKernel},
      {"scan", &ScanKernel},
  };
  for (const Entry& e : kKernels) registry->register_kernel(e.op, kDLArrayOpenCL, e.fn);
  RegisterTableKernels(registry);
}

}  // namespace

DLARRAY_DEFINE_PLUGIN("opencl", dlarray::opencl::kDLOpenCL, &CreateDevice, &RegisterKernels)
