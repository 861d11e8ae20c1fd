// cuda_backend.so: the plugin entry point. The device object is made without touching the
// driver, so the plugin opens on machines without a GPU and reports zero devices with a reason.
#include "cuda_device.h"
#include "dlarray/ext/mem_info.h"
#include "dlarray/ext/streams.h"
#include "dlarray/plugin.h"
#include "fft.h"
#include "kernels.h"
#include "linalg_kernels.h"
#include "rtc_ext.h"

namespace {

dlarray::cuda::CudaDevice* Cuda(void* self) {
  return static_cast<dlarray::cuda::CudaDevice*>(self);
}

int CudaMemInfo(void* self, int32_t id, uint64_t* free_bytes, uint64_t* total_bytes) {
  return dlarray::Guard("mem_info", [&] { Cuda(self)->mem_info(id, free_bytes, total_bytes); });
}

int CudaWaitStream(void* self, int32_t id, void* waiter, void* signaller) {
  return dlarray::Guard("wait_stream", [&] {
    Cuda(self)->wait_stream(id, static_cast<cudaStream_t>(waiter),
                            static_cast<cudaStream_t>(signaller));
  });
}

// The device object is the plugin's single CudaDevice (self is filled at first use).
DLArrayMemInfoExtV1 mem_info_table{sizeof(DLArrayMemInfoExtV1), nullptr, &CudaMemInfo};
DLArrayStreamsExtV1 streams_table{sizeof(DLArrayStreamsExtV1), nullptr, &CudaWaitStream};
dlarray::cuda::CudaDevice* the_device = nullptr;

dlarray::Device* CreateDevice() {
  dlarray::cuda::SetRtcCoreApi(dlarray::PluginCoreApi());  // dlarray.rtc reports errors through it
  the_device =
      new dlarray::cuda::CudaDevice(dlarray::PluginCoreApi());  // extensions report errors to it
  mem_info_table.self = the_device;
  streams_table.self = the_device;
  return the_device;
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
      {"matrix_multiply", &MatrixMultiplyKernel},
      {"linear", &LinearKernel},
      {"linear_weight_grad", &LinearWeightGradKernel},
      {"softmax", &SoftmaxKernel},
      {"softmax_cross_entropy", &SoftmaxCrossEntropyKernel},
      {"copy", &CopyKernel},
      {"astype", &AstypeKernel},
      {"gather", &GatherKernel},
      {"gather_along", &GatherAlongKernel},
      {"scatter", &ScatterKernel},
      {"nonzero", &NonzeroKernel},
      {"compress", &CompressKernel},
      {"argsort", &ArgsortKernel},
      {"sort", &SortKernel},
      {"fft_c2c", &FftC2CKernel},
      {"fft_r2c", &FftR2CKernel},
      {"fft_c2r", &FftC2RKernel},
      {"fft_c2c_nd", &FftC2CKernel},  // the same kernels: they read the rank
      {"fft_r2c_nd", &FftR2CKernel},
      {"fft_c2r_nd", &FftC2RKernel},
      {"reduce", &ReduceKernel},
      {"reduce_mean", &ReduceMeanKernel},
      {"scan", &ScanKernel},
      {"linalg_lu", &LinalgLuKernel},
      {"linalg_solve", &LinalgSolveKernel},
      {"linalg_cholesky", &LinalgCholeskyKernel},
      {"linalg_eigh", &LinalgEighKernel},
      {"linalg_svd", &LinalgSvdKernel},
      {"linalg_qr", &LinalgQrKernel},
  };
  for (const Entry& e : kKernels) registry->register_kernel(e.op, kDLArrayCUDA, e.fn);
  RegisterTableKernels(registry);
}

}  // namespace

const void* dlarray::cuda::FindExtension(const std::string& name) {
  if (name == DLARRAY_EXT_MEM_INFO_V1) return &mem_info_table;
  if (name == DLARRAY_EXT_STREAMS_V1) return &streams_table;
  return nullptr;
}

DLARRAY_DEFINE_PLUGIN("cuda", kDLArrayCUDA, &CreateDevice, &RegisterKernels)
