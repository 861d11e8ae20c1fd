/*!
 * \file cpu_plugin.cc
 * \brief cpu_backend.so's entry point: the CpuDevice and a kernel for every core op (those of
 *        the elementwise table from elementwise_table.cc).
 */
#include "cpu_device.h"
#include "cpu_kernels.h"
#include "dlarray/ext/mem_info.h"
#include "dlarray/ext/parallel.h"
#include "dlarray/plugin.h"
#include "fft.h"
#include "linalg_kernels.h"
#include "mpi_ext.h"
#include "parallel.h"

namespace {

int CpuMemInfo(void* /*self*/, int32_t /*device_id*/, uint64_t* free_bytes, uint64_t* total_bytes) {
  return dlarray::Guard("mem_info",
                        [&] { dlarray::cpu::CpuDevice::MemInfo(free_bytes, total_bytes); });
}

const DLArrayMemInfoExtV1 kMemInfo{sizeof(DLArrayMemInfoExtV1), nullptr, &CpuMemInfo};

// The pool for other plugins' CPU kernels (dlarray/ext/parallel.h).
int PoolParallelFor(void* /*self*/, int64_t n, int64_t work, int64_t align,
                    DLArrayParallelBody body, void* context) {
  return dlarray::Guard("dlarray.parallel.v1: parallel_for", [&] {
    if (n < 0 || align < 1 || body == nullptr) {
      throw dlarray::Error(dlarray::ErrorKind::kValue,
                           "dlarray.parallel.v1: parallel_for needs n >= 0, align >= 1 and a "
                           "body, got n=" +
                               std::to_string(n) + ", align=" + std::to_string(align));
    }
    if (n == 0) return;
    dlarray::cpu::ParallelFor(n, work, align,
                              [&](int64_t begin, int64_t end) { body(context, begin, end); });
  });
}

int32_t PoolThreads(void* /*self*/) { return dlarray::cpu::ParallelThreads(); }

const DLArrayParallelExtV1 kParallel{sizeof(DLArrayParallelExtV1), nullptr, &PoolParallelFor,
                                     &PoolThreads};

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
      {"matrix_multiply", &cpu::MatrixMultiplyKernel},
      {"softmax", &cpu::SoftmaxKernel},
      {"softmax_cross_entropy", &cpu::SoftmaxCrossEntropyKernel},
      {"copy", &cpu::CopyKernel},
      {"astype", &cpu::AstypeKernel},
      {"gather", &cpu::GatherKernel},
      {"gather_along", &cpu::GatherAlongKernel},
      {"scatter", &cpu::ScatterKernel},
      {"nonzero", &cpu::NonzeroKernel},
      {"compress", &cpu::CompressKernel},
      {"argsort", &cpu::ArgsortKernel},
      {"sort", &cpu::SortKernel},
      {"reduce", &cpu::ReduceKernel},
      {"reduce_mean", &cpu::ReduceMeanKernel},
      {"scan", &cpu::ScanKernel},
      {"linalg_lu", &cpu::LinalgLuKernel},
      {"linalg_solve", &cpu::LinalgSolveKernel},
      {"linalg_cholesky", &cpu::LinalgCholeskyKernel},
      {"linalg_eigh", &cpu::LinalgEighKernel},
      {"linalg_svd", &cpu::LinalgSvdKernel},
      {"linalg_qr", &cpu::LinalgQrKernel},
      {"fft_c2c", &cpu::FftC2CKernel},
      {"fft_r2c", &cpu::FftR2CKernel},
      {"fft_c2r", &cpu::FftC2RKernel},
      {"fft_c2c_nd", &cpu::FftC2CKernel},  // the same kernels: they read the rank
      {"fft_r2c_nd", &cpu::FftR2CKernel},
      {"fft_c2r_nd", &cpu::FftC2RKernel},
  };
  for (const Entry& entry : kKernels)
    registry->register_kernel(entry.op, kDLArrayCPU, entry.kernel);
  cpu::RegisterTableKernels(registry);
}

}  // namespace

const void* dlarray::cpu::FindExtension(const std::string& name) {
  if (name == DLARRAY_EXT_MEM_INFO_V1) return &kMemInfo;
  if (name == DLARRAY_EXT_MPI_V1) return dlarray::cpu::MpiExtension();
  return name == DLARRAY_EXT_PARALLEL_V1 ? &kParallel : nullptr;
}

DLARRAY_DEFINE_PLUGIN("cpu", kDLArrayCPU, &CreateDevice, &RegisterKernels)
