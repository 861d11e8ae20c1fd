// fault.cu: an AOT op whose kernel writes through a null pointer (tests: the CUDA error surfaces
// at the next synchronizing call).
#include <cuda_runtime.h>

#include <cstdint>

__global__ void WriteNull(float* p) { p[threadIdx.x] = 1.f; }

extern "C" int Fault(int, void**, int*, int64_t**, const char**, void* stream, void*) {
  WriteNull<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>(nullptr);
  return 0;
}
