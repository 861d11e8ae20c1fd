// bias_add.cu: the MLP's bias-add as AOT ops on the GPU (bias_add.cc is the CPU twin).
//   BiasAdd(x (n, k), b (k,)) -> x + b on every row;   BiasAddGrad(dy (n, k)) -> column sums (k,)
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "dlarray/aot.h"

namespace {

int Fail(void* extra, const char* message) {
  DLArrayAotSetError(DLArrayAotExtraOf(extra), message);
  return 1;
}

bool AllFloat32(int nparam, const char** dtypes) {
  for (int i = 0; i < nparam; ++i) {
    if (std::strcmp(dtypes[i], "float32") != 0) return false;
  }
  return true;
}

int Launched(void* extra) {
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? 0 : Fail(extra, cudaGetErrorName(err));
}

__global__ void BiasAddKernel(const float* x, const float* b, float* y, int64_t n, int64_t k) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n * k;
       i += stride) {
    y[i] = x[i] + b[i % k];
  }
}

// One thread per column; consecutive threads read consecutive columns of a row (coalesced).
__global__ void ColumnSumKernel(const float* dy, float* db, int64_t n, int64_t k) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= k) return;
  float sum = 0.f;
  for (int64_t i = 0; i < n; ++i) sum += dy[i * k + j];
  db[j] = sum;
}

}  // namespace

extern "C" int BiasAdd(int nparam, void** params, int* ndims, int64_t** shapes, const char** dtypes,
                       void* stream, void* extra) {
  if (nparam != 3 || ndims[0] != 2 || ndims[1] != 1 || shapes[1][0] != shapes[0][1] ||
      !AllFloat32(nparam, dtypes)) {
    return Fail(extra, "BiasAdd takes float32 x (n, k) and b (k,)");
  }
  const int64_t n = shapes[0][0], k = shapes[0][1];
  if (n * k == 0) return 0;
  const int64_t blocks = (n * k + 255) / 256 < 8192 ? (n * k + 255) / 256 : 8192;
  BiasAddKernel<<<static_cast<unsigned>(blocks), 256, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float*>(params[0]), static_cast<const float*>(params[1]),
      static_cast<float*>(params[2]), n, k);
  return Launched(extra);
}

extern "C" int BiasAddGradInferShape(int* ndims, int64_t** shapes, DLArrayAotExtra* extra) {
  if (ndims[0] != 2) return Fail(extra, "BiasAddGrad takes a 2-D gradient");
  ndims[1] = 1;
  shapes[1][0] = shapes[0][1];
  return 0;
}

extern "C" int BiasAddGrad(int nparam, void** params, int* ndims, int64_t** shapes,
                           const char** dtypes, void* stream, void* extra) {
  if (nparam != 2 || ndims[0] != 2 || !AllFloat32(nparam, dtypes)) {
    return Fail(extra, "BiasAddGrad takes a float32 (n, k) gradient");
  }
  const int64_t n = shapes[0][0], k = shapes[0][1];
  if (k == 0) return 0;
  ColumnSumKernel<<<static_cast<unsigned>((k + 127) / 128), 128, 0,
                    static_cast<cudaStream_t>(stream)>>>(static_cast<const float*>(params[0]),
                                                         static_cast<float*>(params[1]), n, k);
  return Launched(extra);
}
