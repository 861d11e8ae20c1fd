// A CUDA op plugin whose kernel writes through a bad pointer: the launch succeeds, the fault
// surfaces asynchronously, and the runtime must report it at the next synchronizing call.
#include <cuda_runtime_api.h>

#include "dlarray/plugin.h"

namespace {

__global__ void WriteThroughBadPointer(float* p) { p[threadIdx.x] = 1.0f; }

void FaultKernel(const dlarray::KernelContext& c) {
  WriteThroughBadPointer<<<1, 32, 0, static_cast<cudaStream_t>(c.stream)>>>(
      reinterpret_cast<float*>(0x10));
  if (cudaGetLastError() != cudaSuccess) throw dlarray::BackendError("launch failed");
}

void Register(dlarray::Registry* r) {
  dlarray::OpSchema s;
  s.name = "test_fault";
  s.num_inputs = 0;
  s.doc = "writes through a bad device pointer (test only)";
  r->declare_op(s);
  r->register_kernel("test_fault", kDLArrayCUDA, &FaultKernel);
}

}  // namespace

DLARRAY_DEFINE_PLUGIN("cuda_fault", 0, nullptr, &Register)
