// custom_add.cu: c = a + b for float32 arrays of any shape, as a MindSpore-style AOT op for the
// GPU.
//   nvcc --shared -Xcompiler -fPIC -O3 -o custom_add.so custom_add.cu
// or let dlarray.custom compile it: Custom("custom_add.cu:CustomAdd", out_shape=..., ...).
//
// A grid-stride loop over float4 (two per thread and step, so that four loads are in flight),
// on a grid of a few waves of the GPU; scalar loops for unaligned pointers and the tail.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#include "dlarray/aot.h"

namespace {

constexpr int kThreads = 256;
constexpr int kWaves = 4;  // blocks per SM slot: enough work in flight to hide the tail

__global__ void __launch_bounds__(kThreads)
    AddVec4Kernel(const float4* __restrict__ a, const float4* __restrict__ b,
                  float4* __restrict__ c, int64_t n4) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  for (; i + stride < n4; i += 2 * stride) {
    const float4 x0 = a[i], y0 = b[i], x1 = a[i + stride], y1 = b[i + stride];
    c[i] = make_float4(x0.x + y0.x, x0.y + y0.y, x0.z + y0.z, x0.w + y0.w);
    c[i + stride] = make_float4(x1.x + y1.x, x1.y + y1.y, x1.z + y1.z, x1.w + y1.w);
  }
  if (i < n4) {
    const float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}

__global__ void __launch_bounds__(kThreads)
    AddScalarKernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                    int64_t begin, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = begin + static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += stride) {
    c[i] = a[i] + b[i];
  }
}

int Fail(void* extra, const char* message) {
  DLArrayAotSetError(DLArrayAotExtraOf(extra), message);
  return 1;
}

bool Aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Multiprocessors of the current GPU, asked once per GPU.
int SmCount() {
  static std::atomic<int> counts[64] = {};
  int device = 0, count = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= 64) return 80;
  if ((count = counts[device].load(std::memory_order_relaxed)) == 0) {
    if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
      return 80;
    }
    counts[device].store(count, std::memory_order_relaxed);
  }
  return count;
}

}  // namespace

extern "C" int CustomAdd(int nparam, void** params, int* ndims, int64_t** shapes,
                         const char** dtypes, void* stream, void* extra) {
  if (nparam != 3) return Fail(extra, "CustomAdd takes 2 inputs and 1 output");
  int64_t n = 1;
  for (int d = 0; d < ndims[2]; ++d) n *= shapes[2][d];
  for (int i = 0; i < 3; ++i) {
    if (std::strcmp(dtypes[i], "float32") != 0) return Fail(extra, "CustomAdd takes float32");
    int64_t m = 1;
    for (int d = 0; d < ndims[i]; ++d) m *= shapes[i][d];
    if (m != n) return Fail(extra, "CustomAdd: the arrays differ in size");
  }
  if (n == 0) return 0;
  const auto* a = static_cast<const float*>(params[0]);
  const auto* b = static_cast<const float*>(params[1]);
  auto* c = static_cast<float*>(params[2]);
  auto s = static_cast<cudaStream_t>(stream);

  const int64_t max_blocks = static_cast<int64_t>(SmCount()) * (2048 / kThreads) * kWaves;
  int64_t done = 0;
  if (Aligned16(a) && Aligned16(b) && Aligned16(c)) {
    const int64_t n4 = n / 4;
    if (n4 > 0) {
      const int64_t blocks = std::min<int64_t>(max_blocks, (n4 + kThreads - 1) / kThreads);
      AddVec4Kernel<<<static_cast<unsigned>(blocks), kThreads, 0, s>>>(
          reinterpret_cast<const float4*>(a), reinterpret_cast<const float4*>(b),
          reinterpret_cast<float4*>(c), n4);
    }
    done = n4 * 4;
  }
  if (done < n) {
    const int64_t blocks = std::min<int64_t>(max_blocks, (n - done + kThreads - 1) / kThreads);
    AddScalarKernel<<<static_cast<unsigned>(blocks), kThreads, 0, s>>>(a, b, c, done, n);
  }
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? 0 : Fail(extra, cudaGetErrorName(err));
}
