// broadcast_to: out = numpy.broadcast_to(in, out.shape).
//
// Dims are first collapsed: out dims of extent 1 go, and neighbours that are both broadcast or
// both kept merge. What remains is usually a copy, a fill, or "rows": out (R, K) = in (K)
// repeated, which is done with each thread loading its column once and storing it in many rows.
// Anything else takes a generic index-mapping kernel.
#include <vector>

#include "dlarray/dtype_dispatch.h"
#include "dlarray/errors.h"
#include "dlarray/sdk_util.h"
#include "kernel_util.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxDims = 8;

struct Dim {
  int64_t extent;
  bool broadcast;
};

// out[i] = *in for i < n; 16-byte stores when out is aligned.
template <typename U>
__global__ void __launch_bounds__(kThreads)
    FillFromDeviceKernel(const U* in, U* out, int64_t n, bool vec) {
  constexpr int kCount = Vec16<U>::kCount;
  const U v = *in;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t done = 0;
  if (vec) {
    Vec16<U> vv;
#pragma unroll
    for (int c = 0; c < kCount; ++c) vv.v[c] = v;
    for (int64_t i = tid; i < n / kCount; i += stride) reinterpret_cast<Vec16<U>*>(out)[i] = vv;
    done = n / kCount * kCount;
  }
  for (int64_t i = done + tid; i < n; i += stride) out[i] = v;
}

// out (rows, cols) = in (cols) repeated; T is the element or its Vec16 (cols counted in T). Block
// (bx, by): bx threads across columns, by across rows; each thread loads its column once.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    BroadcastRowsKernel(const T* in, T* out, int64_t rows, int64_t cols) {
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  const T v = in[c];
  const int64_t row_stride = static_cast<int64_t>(gridDim.y) * blockDim.y;
  for (int64_t r = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; r < rows;
       r += row_stride) {
    out[r * cols + c] = v;
  }
}

// out[i] = in[i % cols] over T units: for rows too narrow to give a warp a row each.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    BroadcastNarrowRowsKernel(const T* in, T* out, int64_t n, int64_t cols) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = in[i % cols];
  }
}

struct GenericDims {
  int ndim;
  int64_t out_extent[kMaxDims];
  int64_t in_stride[kMaxDims];  // 0 for broadcast dims
};

template <typename U>
__global__ void __launch_bounds__(kThreads)
    BroadcastGenericKernel(const U* in, U* out, int64_t n, GenericDims dims) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t rest = i;
    int64_t offset = 0;
    for (int d = dims.ndim - 1; d >= 0; --d) {
      const int64_t extent = dims.out_extent[d];
      offset += (rest % extent) * dims.in_stride[d];
      rest /= extent;
    }
    out[i] = in[offset];
  }
}

// The collapsed dims of the broadcast in -> out (outermost first).
std::vector<Dim> CollapseDims(const DLArray* in, const DLArray* out) {
  std::vector<Dim> dims;
  const int lead = out->ndim - in->ndim;
  for (int d = 0; d < out->ndim; ++d) {
    const int64_t extent = out->shape[d];
    if (extent == 1) continue;
    const bool broadcast = d < lead || in->shape[d - lead] == 1;
    if (!dims.empty() && dims.back().broadcast == broadcast) {
      dims.back().extent *= extent;
    } else {
      dims.push_back({extent, broadcast});
    }
  }
  return dims;
}

template <typename U>
void LaunchRows(const LaunchEnv& env, const U* in, U* out, int64_t rows, int64_t cols) {
  using V = Vec16<U>;
  const bool vec = cols % V::kCount == 0 && Aligned16(in) && Aligned16(out);
  const int64_t units = vec ? cols / V::kCount : cols;
  const int64_t max_blocks = FullWaveBlocks(env, kThreads);
  if (units < 32) {
    const int64_t n = rows * units;
    const int blocks = GridSize(n, kThreads, max_blocks);
    if (vec) {
      BroadcastNarrowRowsKernel<V><<<blocks, kThreads, 0, env.stream>>>(
          reinterpret_cast<const V*>(in), reinterpret_cast<V*>(out), n, units);
    } else {
      BroadcastNarrowRowsKernel<U><<<blocks, kThreads, 0, env.stream>>>(in, out, n, units);
    }
    CHECK_LAUNCH("BroadcastNarrowRowsKernel");
    return;
  }
  int bx = 32;
  while (bx < kThreads && bx < units) bx *= 2;
  const dim3 block(bx, kThreads / bx);
  const int64_t grid_x = CeilDiv(units, bx);
  const int64_t grid_y =
      std::min<int64_t>({CeilDiv(rows, block.y), std::max<int64_t>(1, max_blocks / grid_x), 65535});
  const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y));
  if (vec) {
    BroadcastRowsKernel<V><<<grid, block, 0, env.stream>>>(reinterpret_cast<const V*>(in),
                                                           reinterpret_cast<V*>(out), rows, units);
  } else {
    BroadcastRowsKernel<U><<<grid, block, 0, env.stream>>>(in, out, rows, units);
  }
  CHECK_LAUNCH("BroadcastRowsKernel");
}

GenericDims ToGeneric(const std::vector<Dim>& dims, const DLArray* in_arr, const DLArray* out_arr) {
  if (dims.size() > kMaxDims) {
    throw BackendError("broadcast_to on cuda: " + ShapeToString(in_arr) + " -> " +
                       ShapeToString(out_arr) + " alternates broadcast and kept dims more than " +
                       std::to_string(kMaxDims) + " times");
  }
  GenericDims g{};
  g.ndim = static_cast<int>(dims.size());
  int64_t in_stride = 1;
  for (int d = g.ndim - 1; d >= 0; --d) {
    g.out_extent[d] = dims[d].extent;
    g.in_stride[d] = dims[d].broadcast ? 0 : in_stride;
    if (!dims[d].broadcast) in_stride *= dims[d].extent;
  }
  return g;
}

// Pure data movement: U is an element type of the dtype's size (float for 4 bytes).
template <typename U>
void Broadcast(const LaunchEnv& env, const DLArray* in_arr, const DLArray* out_arr,
               const std::vector<Dim>& dims) {
  const U* in = Data<const U>(in_arr);
  U* out = Data<U>(out_arr);
  const int64_t n = NumElements(out_arr);
  if (dims.empty() || (dims.size() == 1 && !dims[0].broadcast)) {
    if (static_cast<const void*>(in) != static_cast<void*>(out)) {
      CUDA_CALL(cudaMemcpyAsync(out, in, static_cast<size_t>(n) * sizeof(U),
                                cudaMemcpyDeviceToDevice, env.stream));
    }
    return;
  }
  if (dims.size() == 1) {
    const int64_t vectors = CeilDiv(n, Vec16<U>::kCount);
    const int blocks = GridSize(vectors, kThreads, FullWaveBlocks(env, kThreads));
    FillFromDeviceKernel<U><<<blocks, kThreads, 0, env.stream>>>(in, out, n, Aligned16(out));
    CHECK_LAUNCH("FillFromDeviceKernel");
    return;
  }
  if (dims.size() == 2 && dims[0].broadcast) {
    LaunchRows(env, in, out, dims[0].extent, dims[1].extent);
    return;
  }
  const GenericDims g = ToGeneric(dims, in_arr, out_arr);
  const int blocks = GridSize(n, kThreads, FullWaveBlocks(env, kThreads));
  BroadcastGenericKernel<U><<<blocks, kThreads, 0, env.stream>>>(in, out, n, g);
  CHECK_LAUNCH("BroadcastGenericKernel");
}

}  // namespace

void BroadcastToKernel(const KernelContext& ctx) {
  const DLArray* in_arr = ctx.inputs[0];
  const DLArray* out_arr = ctx.outputs[0];
  const std::vector<Dim> dims = CollapseDims(in_arr, out_arr);
  const LaunchEnv env = Prepare(ctx);
  switch ((out_arr->dtype.bits + 7) / 8) {
    case 1:
      return Broadcast<uint8_t>(env, in_arr, out_arr, dims);
    case 2:
      return Broadcast<uint16_t>(env, in_arr, out_arr, dims);
    case 4:
      return Broadcast<float>(env, in_arr, out_arr, dims);
    case 8:
      return Broadcast<uint64_t>(env, in_arr, out_arr, dims);
    case 16:
      return Broadcast<Bytes16>(env, in_arr, out_arr, dims);
    default:
      throw DTypeError("broadcast_to on cuda: no kernel for " + FormatDType(out_arr->dtype));
  }
}

}  // namespace cuda
}  // namespace dlarray
