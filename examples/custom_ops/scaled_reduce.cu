// scaled_reduce.cu: ScaledReduce on the GPU (see scaled_reduce.h): attributes and a workspace.
#include <cuda_runtime.h>

#include "scaled_reduce.h"

namespace {

__global__ void ScaleKernel(const float* x, float* tmp, float scale, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    tmp[i] = scale * x[i];
}

// One thread per output element, summing in double over the reduced axis.
__global__ void ReduceKernel(const float* tmp, float* out, int64_t rows, int64_t cols, int axis,
                             bool mean) {
  const int64_t outer = axis == 0 ? cols : rows, inner = axis == 0 ? rows : cols;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= outer) return;
  double sum = 0;
  for (int64_t k = 0; k < inner; ++k) sum += axis == 0 ? tmp[k * cols + o] : tmp[o * cols + k];
  out[o] = static_cast<float>(mean ? sum / static_cast<double>(inner) : sum);
}

}  // namespace

extern "C" int ScaledReduceInferShape(int* ndims, int64_t** shapes, DLArrayAotExtra* extra) {
  return scaled_reduce::InferShape(ndims, shapes, extra);
}

extern "C" int ScaledReduceInit(int* ndims, int64_t** shapes, const char** dtypes,
                                DLArrayAotExtra* extra) {
  return scaled_reduce::Init(ndims, shapes, dtypes, extra);
}

extern "C" int ScaledReduce(int nparam, void** params, int* /*ndims*/, int64_t** shapes,
                            const char** /*dtypes*/, void* stream, void* extra_ptr) {
  DLArrayAotExtra* extra = DLArrayAotExtraOf(extra_ptr);
  scaled_reduce::Attrs a;
  if (nparam != 2 || scaled_reduce::ReadAttrs(extra, &a) != 0) return 1;
  const int64_t rows = shapes[0][0], cols = shapes[0][1], n = rows * cols;
  auto* tmp = static_cast<float*>(extra->workspace);
  auto s = static_cast<cudaStream_t>(stream);
  if (n > 0) {
    const int64_t blocks = (n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096;
    ScaleKernel<<<static_cast<unsigned>(blocks), 256, 0, s>>>(static_cast<const float*>(params[0]),
                                                              tmp, static_cast<float>(a.scale), n);
  }
  const int64_t outer = a.axis == 0 ? cols : rows;
  if (outer > 0) {
    ReduceKernel<<<static_cast<unsigned>((outer + 127) / 128), 128, 0, s>>>(
        tmp, static_cast<float*>(params[1]), rows, cols, static_cast<int>(a.axis), a.mean);
  }
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return scaled_reduce::Fail(extra, cudaGetErrorName(err));
  return 0;
}
