/*!
 * \file linalg_util.cuh
 * \brief What the linalg_* kernels share (linalg.cu: LU, solve, Cholesky, QR; linalg_spectral.cu:
 *        eigh, svd): the row-major <-> column-major copies, scratch memory from the caching
 *        allocator, the cuSOLVER handle and the pick of a routine by element type.
 *
 * The ops' matrices are row-major; cuSOLVER's are column-major. A row-major buffer read as
 * column-major is the transpose, so a kernel that can use A^T (Cholesky, solve, eigh: see
 * each) copies the buffer as it is instead of transposing it.
 */
#ifndef DLARRAY_BACKENDS_CUDA_LINALG_UTIL_CUH_
#define DLARRAY_BACKENDS_CUDA_LINALG_UTIL_CUH_

#include <cuComplex.h>

#include <string>
#include <type_traits>

#include "cuda_check.h"
#include "cusolver_library.h"
#include "kernel_util.cuh"

namespace dlarray {
namespace cuda {
namespace linalg {

constexpr int kThreads = 256;

// The real type of T's precision (eigenvalues, singular values): T, or the part of a complex T.
template <typename T>
struct RealOf {
  using type = T;
};
template <>
struct RealOf<cuComplex> {
  using type = float;
};
template <>
struct RealOf<cuDoubleComplex> {
  using type = double;
};
template <typename T>
using Real = typename RealOf<T>::type;
template <typename T>
constexpr bool kIsComplex = !std::is_same<T, Real<T>>::value;

// Which part of a column-major matrix a row-major copy keeps (the rest becomes 0).
enum Keep : int { kAll = 0, kLower = 1, kUpper = 2 };

// The layout changes between NumPy's row-major matrices and LAPACK's column-major ones are
// transposes: dst[b] (cols x rows, row stride dst_ld) = src[b]^T (rows x cols, row stride src_ld),
// the element that lands at dst row c, column r kept by keep (kLower: r <= c) or set to 0. Through
// a 32 x 32 tile in shared memory (one padding column against bank conflicts), so that both the
// reads and the writes are coalesced: an element-per-thread transpose wrote one element per 32-byte
// sector, and two of them cost more than a tenth of an 8192 x 8192 Cholesky. A block of 32 x 8
// threads walks over the tiles of the whole batch.
constexpr int kTile = 32, kTileRowsPerPass = 8;

template <typename T>
__global__ void TransposeKernel(const T* src, int64_t src_ld, int64_t src_stride, T* dst,
                                int64_t dst_ld, int64_t dst_stride, int64_t batch, int64_t rows,
                                int64_t cols, int keep) {
  __shared__ T tile[kTile][kTile + 1];
  const int64_t row_tiles = (rows + kTile - 1) / kTile, col_tiles = (cols + kTile - 1) / kTile;
  const int64_t tiles = batch * row_tiles * col_tiles;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t b = t / (row_tiles * col_tiles);
    const int64_t r0 = t / col_tiles % row_tiles * kTile, c0 = t % col_tiles * kTile;
    for (int k = threadIdx.y; k < kTile; k += kTileRowsPerPass) {
      const int64_t r = r0 + k, c = c0 + threadIdx.x;
      if (r < rows && c < cols) tile[k][threadIdx.x] = src[b * src_stride + r * src_ld + c];
    }
    __syncthreads();
    for (int k = threadIdx.y; k < kTile; k += kTileRowsPerPass) {
      const int64_t c = c0 + k, r = r0 + threadIdx.x;
      if (r < rows && c < cols) {
        const bool kept = keep == kAll || (keep == kLower ? r <= c : c <= r);
        dst[b * dst_stride + c * dst_ld + r] = kept ? tile[threadIdx.x][k] : T{};
      }
    }
    __syncthreads();
  }
}

// dst = conj(src) for complex T (cuComplex or cuDoubleComplex: x real, y imaginary).
template <typename T>
__global__ void ConjugateKernel(const T* src, T* dst, int64_t n) {
  for (int64_t idx = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; idx < n;
       idx += int64_t{gridDim.x} * blockDim.x) {
    dst[idx] = T{src[idx].x, -src[idx].y};
  }
}

// out[b] = base + b * stride: the arrays of matrix pointers the batched routines take.
template <typename T>
__global__ void PointersKernel(T* base, int64_t stride, int64_t batch, T** out) {
  for (int64_t idx = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; idx < batch;
       idx += int64_t{gridDim.x} * blockDim.x) {
    out[idx] = base + idx * stride;
  }
}

// dst[b] (row-major rows x cols) = dst[b] with the strictly upper triangle (keep kLower) or the
// strictly lower one (kUpper) set to 0: the other triangle of a factor computed in place.
template <typename T>
__global__ void MaskTriangleKernel(T* dst, int64_t batch, int64_t rows, int64_t cols, int keep) {
  const int64_t total = batch * rows * cols;
  for (int64_t idx = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; idx < total;
       idx += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = idx / cols % rows, j = idx % cols;
    if (keep == kLower ? j > i : i > j) dst[idx] = T{};
  }
}

inline int Blocks(const LaunchEnv& env, int64_t work) {
  return GridSize(work, kThreads, FullWaveBlocks(env, kThreads));
}

template <typename T>
void Transpose(const LaunchEnv& env, const T* src, int64_t src_ld, int64_t src_stride, T* dst,
               int64_t dst_ld, int64_t dst_stride, int64_t batch, int64_t rows, int64_t cols,
               Keep keep) {
  const int64_t tiles = batch * ((rows + kTile - 1) / kTile) * ((cols + kTile - 1) / kTile);
  if (tiles == 0) return;
  TransposeKernel<T><<<GridSize(tiles, 1, FullWaveBlocks(env, kTile * kTileRowsPerPass)),
                       dim3(kTile, kTileRowsPerPass), 0, env.stream>>>(
      src, src_ld, src_stride, dst, dst_ld, dst_stride, batch, rows, cols, keep);
  CHECK_LAUNCH("linalg TransposeKernel");
}

// dst[b] (column-major, leading dimension ld, matrices dst_stride apart) = src[b] (row-major).
template <typename T>
void ToColumnMajor(const LaunchEnv& env, const T* src, T* dst, int64_t batch, int64_t rows,
                   int64_t cols, int64_t ld, int64_t dst_stride) {
  Transpose(env, src, cols, rows * cols, dst, ld, dst_stride, batch, rows, cols, kAll);
}

// dst[b] (row-major rows x cols) = src[b] (column-major, ld, src_stride apart), masked by keep.
template <typename T>
void ToRowMajor(const LaunchEnv& env, const T* src, T* dst, int64_t batch, int64_t rows,
                int64_t cols, int64_t ld, int64_t src_stride, Keep keep) {
  Transpose(env, src, ld, src_stride, dst, cols, rows * cols, batch, cols, rows, keep);
}

template <typename T>
void Conjugate(const LaunchEnv& env, const T* src, T* dst, int64_t n) {
  if (n == 0) return;
  ConjugateKernel<T><<<Blocks(env, n), kThreads, 0, env.stream>>>(src, dst, n);
  CHECK_LAUNCH("linalg ConjugateKernel");
}

template <typename T>
void MaskTriangle(const LaunchEnv& env, T* dst, int64_t batch, int64_t rows, int64_t cols,
                  Keep keep) {
  if (batch * rows * cols == 0 || keep == kAll) return;
  MaskTriangleKernel<T>
      <<<Blocks(env, batch * rows * cols), kThreads, 0, env.stream>>>(dst, batch, rows, cols, keep);
  CHECK_LAUNCH("linalg MaskTriangleKernel");
}

// dst = src, `count` elements on the device's stream (the copy that replaces a transpose).
template <typename T>
void CopyAsync(const LaunchEnv& env, const T* src, T* dst, int64_t count) {
  if (count == 0 || src == dst) return;
  CUDA_CALL(cudaMemcpyAsync(dst, src, sizeof(T) * static_cast<size_t>(count),
                            cudaMemcpyDeviceToDevice, env.stream));
}

/*! \brief dst[i] = src[i] widened: cuSOLVER's int32 info codes and pivots to the ops' int64. */
void Widen(const LaunchEnv& env, const int* src, int64_t* dst, int64_t n);

// Device memory from the device's caching allocator for the duration of one kernel call; blocks
// are reused only by later work on the same stream, so freeing before that work ran is safe.
template <typename T>
class Scratch {
 public:
  Scratch(const LaunchEnv& env, int64_t count)
      : env_(env), bytes_(sizeof(T) * static_cast<size_t>(count > 0 ? count : 1)) {
    ptr_ = static_cast<T*>(env_.device->allocate(env_.id, bytes_));
  }
  ~Scratch() { env_.device->free(env_.id, ptr_, bytes_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  T* get() const { return ptr_; }

 private:
  LaunchEnv env_;
  size_t bytes_;
  T* ptr_ = nullptr;
};

inline void Check(cusolverStatus_t status, const char* what) {
  if (status != CUSOLVER_STATUS_SUCCESS) {
    throw BackendError(std::string("cuSOLVER ") + what + " failed with status " +
                       std::to_string(static_cast<int>(status)));
  }
}

// The device array of pointers to the matrices of a compact stack (stride elements apart).
template <typename T>
class MatrixPointers {
 public:
  MatrixPointers(const LaunchEnv& env, T* base, int64_t stride, int64_t batch)
      : pointers_(env, batch) {
    PointersKernel<T>
        <<<Blocks(env, batch), kThreads, 0, env.stream>>>(base, stride, batch, pointers_.get());
    CHECK_LAUNCH("linalg PointersKernel");
  }
  T** get() const { return pointers_.get(); }

 private:
  Scratch<T*> pointers_;
};

/*! \brief The cuSOLVER handle of a GPU (made at first use), bound to the device's stream. */
cusolverDnHandle_t Handle(const LaunchEnv& env);

// The S (float), D (double), C (cuComplex) or Z (cuDoubleComplex) routine of cuSOLVER's or
// cuBLAS's table.
template <typename T, typename S, typename D, typename C, typename Z>
auto Pick(S s, D d, C c, Z z) {
  if constexpr (std::is_same<T, float>::value) {
    return s;
  } else if constexpr (std::is_same<T, double>::value) {
    return d;
  } else if constexpr (std::is_same<T, cuComplex>::value) {
    return c;
  } else {
    static_assert(std::is_same<T, cuDoubleComplex>::value, "linalg: float, double or complex");
    return z;
  }
}
// The routine `name` of T; `complex_name` where the complex one has another name (heevd, ungqr).
#define DLARRAY_SOLVER2(lib, name, complex_name) \
  Pick<T>((lib).S##name, (lib).D##name, (lib).C##complex_name, (lib).Z##complex_name)
#define DLARRAY_SOLVER(lib, name) DLARRAY_SOLVER2(lib, name, name)

// Calls run(T{}) for the matrices' dtype: float32, float64, complex64 or complex128.
template <typename Run>
void ByDType(const KernelContext& ctx, Run&& run) {
  const DLArrayDType t = ctx.inputs[0]->dtype;
  if (t.code == kDLArrayComplex) {
    t.bits == 64 ? run(cuComplex{}) : run(cuDoubleComplex{});
  } else {
    t.bits == 32 ? run(float{}) : run(double{});
  }
}

}  // namespace linalg
}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_LINALG_UTIL_CUH_
