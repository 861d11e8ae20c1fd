// copy: out = in, for any dtype and any strides on either side (how views become compact).
// Compact pairs are one device-to-device memcpy on the stream; strided ones a gather/scatter
// kernel over the dimensions that remain after merging those both sides store contiguously.
#include <string>
#include <vector>

#include "dlarray/dtype_dispatch.h"
#include "kernel_util.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxDims = DLARRAY_MAX_NDIM;

struct StridedDims {
  int ndim;
  int64_t extent[kMaxDims];
  int64_t in_step[kMaxDims];   // in elements
  int64_t out_step[kMaxDims];  // in elements
};

template <typename U>
__global__ void __launch_bounds__(kThreads)
    StridedCopyKernel(const U* in, U* out, int64_t n, StridedDims dims) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t rest = i, src = 0, dst = 0;
    for (int d = dims.ndim - 1; d >= 0; --d) {
      const int64_t idx = rest % dims.extent[d];
      rest /= dims.extent[d];
      src += idx * dims.in_step[d];
      dst += idx * dims.out_step[d];
    }
    out[dst] = in[src];
  }
}

// Dimensions of extent > 1, outermost first, neighbours merged when both sides allow it.
StridedDims Merge(const DLArray* in, const DLArray* out) {
  StridedDims dims{};
  int64_t in_compact = 1, out_compact = 1;
  std::vector<int64_t> ext(out->ndim), is(out->ndim), os(out->ndim);
  for (int d = out->ndim - 1; d >= 0; --d) {
    ext[d] = out->shape[d];
    is[d] = in->strides != nullptr ? in->strides[d] : in_compact;
    os[d] = out->strides != nullptr ? out->strides[d] : out_compact;
    in_compact *= in->shape[d];
    out_compact *= out->shape[d];
  }
  for (int d = 0; d < out->ndim; ++d) {
    if (ext[d] == 1) continue;
    if (dims.ndim > 0) {
      const int k = dims.ndim - 1;
      if (dims.in_step[k] == is[d] * ext[d] && dims.out_step[k] == os[d] * ext[d]) {
        dims.extent[k] *= ext[d];
        dims.in_step[k] = is[d];
        dims.out_step[k] = os[d];
        continue;
      }
    }
    dims.extent[dims.ndim] = ext[d];
    dims.in_step[dims.ndim] = is[d];
    dims.out_step[dims.ndim] = os[d];
    ++dims.ndim;
  }
  if (dims.ndim == 0) {
    dims.ndim = 1;
    dims.extent[0] = 1;
    dims.in_step[0] = dims.out_step[0] = 1;
  }
  return dims;
}

template <typename U>
void LaunchStrided(const LaunchEnv& env, const DLArray* in, DLArray* out) {
  const StridedDims dims = Merge(in, out);
  const int64_t n = NumElements(out);
  const int blocks = GridSize(n, kThreads, FullWaveBlocks(env, kThreads) * 4);
  StridedCopyKernel<U>
      <<<blocks, kThreads, 0, env.stream>>>(Data<const U>(in), Data<U>(out), n, dims);
  CHECK_LAUNCH("StridedCopyKernel");
}

}  // namespace

void CopyKernel(const KernelContext& ctx) {
  const DLArray* in = ctx.inputs[0];
  DLArray* out = ctx.outputs[0];
  const void* src = Data<const char>(in);
  void* dst = Data<char>(out);
  const bool compact = in->strides == nullptr && out->strides == nullptr;
  if (compact && src == dst) return;
  const LaunchEnv env = Prepare(ctx);
  const size_t item = (out->dtype.bits + 7) / 8;
  if (compact) {
    const size_t nbytes = static_cast<size_t>(NumElements(out)) * item;
    CUDA_CALL(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, env.stream));
    return;
  }
  switch (item) {
    case 1:
      return LaunchStrided<uint8_t>(env, in, out);
    case 2:
      return LaunchStrided<uint16_t>(env, in, out);
    case 4:
      return LaunchStrided<uint32_t>(env, in, out);
    case 8:
      return LaunchStrided<uint64_t>(env, in, out);
    case 16:
      return LaunchStrided<Bytes16>(env, in, out);
    default:
      throw DTypeError("copy on cuda: no kernel for " + std::to_string(out->dtype.bits) +
                       "-bit elements");
  }
}

}  // namespace cuda
}  // namespace dlarray
