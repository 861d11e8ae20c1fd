// argsort: a stable order of each row. Each element becomes an unsigned key of its order
// (floats sign-magnitude flipped, -0.0 as 0.0, NaN the largest, so NaN sorts last; descending
// inverts the key, which keeps equal elements in order and puts NaN first, as sorting the
// reversed row and reversing back does), paired with its position, and CUB (shipped with the
// CUDA toolkit) sorts the pairs stably: one row with its radix sort (keys of 32 bits for dtypes of
// 4 bytes or less, else 64), several with its segmented sort. (The segmented sort
// of one row of 10**7 took 150 ms on an H100, the radix sort well under a millisecond.)
// sort: the values themselves, by CUB's radix sort of keys alone (no positions): the elements' own
// bits in value order, which turn back into the values exactly (-0.0 kept, sorted just before
// 0.0; a NaN keeps its payload but not its sign, so every NaN sorts last).
#include <cmath>
#include <cstring>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <type_traits>

#include "dtype.cuh"
#include "kernel_util.cuh"
#include "kernels.h"

namespace dlarray {
namespace cuda {
namespace {

constexpr int kThreads = 256;

template <typename F, typename B>
__device__ __forceinline__ uint64_t FloatKey(F v) {
  if (isnan(v)) return ~uint64_t{0};
  if (v == F(0)) v = F(0);  // -0.0 == 0.0
  B bits;
  memcpy(&bits, &v, sizeof bits);
  constexpr B kSign = B{1} << (8 * sizeof(B) - 1);
  return static_cast<uint64_t>((bits & kSign) != 0 ? static_cast<B>(~bits) : (bits | kSign));
}

template <typename T>
__device__ __forceinline__ uint64_t SortKey(T x) {
  using C = Compute<T>;
  if constexpr (std::is_same_v<C, double>) {
    return FloatKey<double, uint64_t>(Load(x));
  } else if constexpr (std::is_same_v<C, float>) {
    return FloatKey<float, uint32_t>(Load(x));
  } else if constexpr (std::is_same_v<T, bool>) {
    return x ? 1 : 0;
  } else if constexpr (std::is_signed_v<T> && sizeof(T) == 8) {
    return static_cast<uint64_t>(x) ^ (uint64_t{1} << 63);
  } else if constexpr (std::is_signed_v<T>) {  // within 32 bits: the radix sort reads no more
    return static_cast<uint32_t>(static_cast<int32_t>(x)) ^ 0x80000000u;
  } else {
    return static_cast<uint64_t>(x);
  }
}

// K: the key's type, 32 bits for dtypes of 4 bytes or less (every radix pass moves the keys: 64-bit
// keys made argsort of 10**7 float32 1.19x torch's on an H100).
template <typename T, typename K>
__global__ void __launch_bounds__(kThreads)
    KeyKernel(const T* x, int64_t total, int64_t n, bool descending, K* key, int64_t* pos) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const uint64_t k = SortKey(x[i]);
    key[i] = static_cast<K>(descending ? ~k : k);
    pos[i] = n == total ? i : i % n;
  }
}

// sort's key: the element's own bits as an unsigned integer of its size, in the order of the
// values (floats, the half types included: sign-magnitude flipped, a NaN's sign dropped; signed
// integers: the sign bit flipped), so that it turns back into the value exactly.
template <typename T>
using ValueKeyOf =
    std::conditional_t<sizeof(T) == 1, uint8_t,
                       std::conditional_t<sizeof(T) == 2, uint16_t,
                                          std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;

template <typename T>
__device__ __forceinline__ ValueKeyOf<T> ToValueKey(T x) {
  using B = ValueKeyOf<T>;
  constexpr B kSign = static_cast<B>(B{1} << (8 * sizeof(B) - 1));
  B bits;
  memcpy(&bits, &x, sizeof bits);
  if constexpr (std::is_floating_point_v<Compute<T>>) {
    if (isnan(Load(x))) bits &= static_cast<B>(~kSign);
    return (bits & kSign) != 0 ? static_cast<B>(~bits) : static_cast<B>(bits | kSign);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<B>(bits ^ kSign);
  } else {
    return bits;
  }
}

template <typename T>
__device__ __forceinline__ T FromValueKey(ValueKeyOf<T> key) {
  using B = ValueKeyOf<T>;
  constexpr B kSign = static_cast<B>(B{1} << (8 * sizeof(B) - 1));
  B bits = key;
  if constexpr (std::is_floating_point_v<Compute<T>>) {
    bits = (key & kSign) != 0 ? static_cast<B>(key & ~kSign) : static_cast<B>(~key);
  } else if constexpr (std::is_signed_v<T>) {
    bits = static_cast<B>(key ^ kSign);
  }
  T v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    ValueKeyKernel(const T* x, int64_t total, bool descending, ValueKeyOf<T>* key) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const ValueKeyOf<T> k = ToValueKey(x[i]);
    key[i] = descending ? static_cast<ValueKeyOf<T>>(~k) : k;
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    FromValueKeyKernel(const ValueKeyOf<T>* key, int64_t total, bool descending, T* out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    out[i] = FromValueKey<T>(descending ? static_cast<ValueKeyOf<T>>(~key[i]) : key[i]);
  }
}

__global__ void OffsetsKernel(int64_t rows, int64_t n, int64_t* offsets) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r <= rows) offsets[r] = r * n;
}

// Device buffers of one call, given back (stream-ordered) however the call ends.
struct Buffers {
  LaunchEnv env;
  void* ptr[5] = {};
  size_t bytes[5] = {};
  void* get(int i, size_t nbytes) {
    bytes[i] = nbytes;
    return ptr[i] = env.device->allocate(env.id, nbytes);
  }
  ~Buffers() {
    for (int i = 0; i < 5; ++i) {
      if (ptr[i] != nullptr) env.device->free(env.id, ptr[i], bytes[i]);
    }
  }
};

}  // namespace

namespace {

// argsort with keys of type K: CUB's radix sort of the (key, position) pairs for one row, its
// stable segmented sort for several.
template <typename K>
void SortPositions(const KernelContext& ctx, const LaunchEnv& env, Buffers* buf) {
  const DLArray* x = ctx.inputs[0];
  const int64_t rows = x->shape[0], n = x->shape[1];
  const int64_t total = rows * n;
  const size_t key_bytes = static_cast<size_t>(total) * sizeof(K);
  K* keys = static_cast<K*>(buf->get(0, key_bytes));
  K* sorted_keys = static_cast<K*>(buf->get(1, key_bytes));
  int64_t* pos = static_cast<int64_t*>(buf->get(2, static_cast<size_t>(total) * sizeof(int64_t)));
  int64_t* offsets = static_cast<int64_t*>(buf->get(3, static_cast<size_t>(rows + 1) * 8));
  const bool descending = ctx.attrs[0] != 0.0;
  const int blocks = GridSize(total, kThreads, FullWaveBlocks(env, kThreads) * 4);
  Dispatch<kAllTypes>(x->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    KeyKernel<T, K>
        <<<blocks, kThreads, 0, env.stream>>>(Data<const T>(x), total, n, descending, keys, pos);
  });
  CHECK_LAUNCH("argsort keys");
  int64_t* out = Data<int64_t>(ctx.outputs[0]);
  size_t temp_bytes = 0;
  if (rows == 1) {
    CUDA_CALL(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys, sorted_keys, pos, out,
                                              total, 0, 8 * sizeof(K), env.stream));
    void* temp = buf->get(4, temp_bytes == 0 ? 1 : temp_bytes);
    CUDA_CALL(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, sorted_keys, pos, out, total,
                                              0, 8 * sizeof(K), env.stream));
    return;
  }
  OffsetsKernel<<<RowGrid(CeilDiv(rows + 1, kThreads), ctx.op_name), kThreads, 0, env.stream>>>(
      rows, n, offsets);
  CHECK_LAUNCH("argsort offsets");
  CUDA_CALL(cub::DeviceSegmentedSort::StableSortPairs(nullptr, temp_bytes, keys, sorted_keys, pos,
                                                      out, total, rows, offsets, offsets + 1,
                                                      env.stream));
  void* temp = buf->get(4, temp_bytes == 0 ? 1 : temp_bytes);
  CUDA_CALL(cub::DeviceSegmentedSort::StableSortPairs(temp, temp_bytes, keys, sorted_keys, pos, out,
                                                      total, rows, offsets, offsets + 1,
                                                      env.stream));
}

}  // namespace

void ArgsortKernel(const KernelContext& ctx) {
  const DLArray* x = ctx.inputs[0];
  if (x->shape[0] * x->shape[1] == 0) return;
  const LaunchEnv env = Prepare(ctx);
  Buffers buf{env};
  if (x->dtype.bits > 32) {
    SortPositions<uint64_t>(ctx, env, &buf);
  } else {
    SortPositions<uint32_t>(ctx, env, &buf);
  }
}

void SortKernel(const KernelContext& ctx) {
  const DLArray* x = ctx.inputs[0];
  const int64_t rows = x->shape[0], n = x->shape[1];
  const int64_t total = rows * n;
  if (total == 0) return;
  const LaunchEnv env = Prepare(ctx);
  Buffers buf{env};
  const bool descending = ctx.attrs[0] != 0.0;
  const int blocks = GridSize(total, kThreads, FullWaveBlocks(env, kThreads) * 4);
  int64_t* offsets = static_cast<int64_t*>(buf.get(3, static_cast<size_t>(rows + 1) * 8));
  OffsetsKernel<<<RowGrid(CeilDiv(rows + 1, kThreads), ctx.op_name), kThreads, 0, env.stream>>>(
      rows, n, offsets);
  Dispatch<kAllTypes>(x->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using K = ValueKeyOf<T>;
    const size_t key_bytes = static_cast<size_t>(total) * sizeof(K);
    K* keys = static_cast<K*>(buf.get(0, key_bytes));
    K* sorted = static_cast<K*>(buf.get(1, key_bytes));
    ValueKeyKernel<T>
        <<<blocks, kThreads, 0, env.stream>>>(Data<const T>(x), total, descending, keys);
    CHECK_LAUNCH("sort keys");
    const int end_bit = 8 * sizeof(K);
    size_t temp_bytes = 0;
    if (rows == 1) {
      CUDA_CALL(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, keys, sorted, total, 0, end_bit,
                                               env.stream));
      void* temp = buf.get(4, temp_bytes == 0 ? 1 : temp_bytes);
      CUDA_CALL(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys, sorted, total, 0, end_bit,
                                               env.stream));
    } else {
      CUDA_CALL(cub::DeviceSegmentedSort::SortKeys(nullptr, temp_bytes, keys, sorted, total, rows,
                                                   offsets, offsets + 1, env.stream));
      void* temp = buf.get(4, temp_bytes == 0 ? 1 : temp_bytes);
      CUDA_CALL(cub::DeviceSegmentedSort::SortKeys(temp, temp_bytes, keys, sorted, total, rows,
                                                   offsets, offsets + 1, env.stream));
    }
    FromValueKeyKernel<T>
        <<<blocks, kThreads, 0, env.stream>>>(sorted, total, descending, Data<T>(ctx.outputs[0]));
    CHECK_LAUNCH("sort values");
  });
}

}  // namespace cuda
}  // namespace dlarray
