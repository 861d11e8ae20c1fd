// The linalg_* kernels (runtime/src/linalg_ops.cc gives their shapes) through cuSOLVER, loaded at
// the first call (cusolver_library.h). As on the CPU, each stack is copied to column-major
// scratch (one launch for the whole batch), factored matrix by matrix on the device's stream and
// copied back row-major, the triangle that is not part of a factor zeroed on the way. cuSOLVER's
// int32 info codes and pivots are widened to the ops' int64 outputs on the device; Python reads
// them (docs/linalg.md). Every kernel runs for float, double, cuComplex and cuDoubleComplex (the
// C and Z routines; heevd and ungqr for syevd and orgqr). Stacks of small matrices run LU, solve
// and Cholesky as one batched call (cuBLAS getrfBatched + getrsBatched, cuSOLVER potrfBatched;
// Batched() says when); syevjBatched and gesvdjBatched for eigh and svd are a later step.
#include <cuComplex.h>

#include <climits>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "cublas_library.h"
#include "cuda_check.h"
#include "cusolver_library.h"
#include "kernel_util.cuh"
#include "linalg_kernels.h"

namespace dlarray {
namespace cuda {
namespace {

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

// Stacks of at least kBatchedMinCount matrices of at most kBatchedMaxN rows run LU, solve and
// Cholesky through the batched routines: one call for the stack, where the loop makes a few
// launches per matrix that cost more than the arithmetic of a small one. A first guess at the
// crossover, to be measured against the loop on the GPU (bench: solve 512 x 256 x 256).
constexpr int64_t kBatchedMinCount = 2;
constexpr int64_t kBatchedMaxN = 256;

bool Batched(int64_t batch, int64_t n) {
  return batch >= kBatchedMinCount && batch <= INT_MAX && n <= kBatchedMaxN;
}

// Which part of a column-major matrix a row-major copy keeps (the rest becomes 0).
enum Keep : int { kAll = 0, kLower = 1, kUpper = 2 };

// dst[b] (column-major, leading dimension ld, matrices dst_stride apart) = src[b] (row-major).
template <typename T>
__global__ void ToColumnMajorKernel(const T* src, T* dst, int64_t batch, int64_t rows, int64_t cols,
                                    int64_t ld, int64_t dst_stride) {
  const int64_t total = batch * rows * cols;
  for (int64_t idx = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; idx < total;
       idx += int64_t{gridDim.x} * blockDim.x) {
    const int64_t b = idx / (rows * cols), i = idx / cols % rows, j = idx % cols;
    dst[b * dst_stride + i + j * ld] = src[idx];
  }
}

// dst[b] (row-major rows x cols) = src[b] (column-major, ld, src_stride apart), masked by keep.
template <typename T>
__global__ void ToRowMajorKernel(const T* src, T* dst, int64_t batch, int64_t rows, int64_t cols,
                                 int64_t ld, int64_t src_stride, int keep) {
  const int64_t total = batch * rows * cols;
  for (int64_t idx = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; idx < total;
       idx += int64_t{gridDim.x} * blockDim.x) {
    const int64_t b = idx / (rows * cols), i = idx / cols % rows, j = idx % cols;
    const bool kept = keep == kAll || (keep == kLower ? j <= i : i <= j);
    dst[idx] = kept ? src[b * src_stride + i + j * ld] : T{};
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

__global__ void WidenKernel(const int* src, int64_t* dst, int64_t n) {
  for (int64_t idx = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; idx < n;
       idx += int64_t{gridDim.x} * blockDim.x) {
    dst[idx] = src[idx];
  }
}

int Blocks(const LaunchEnv& env, int64_t work) {
  return GridSize(work, kThreads, FullWaveBlocks(env, kThreads));
}

template <typename T>
void ToColumnMajor(const LaunchEnv& env, const T* src, T* dst, int64_t batch, int64_t rows,
                   int64_t cols, int64_t ld, int64_t dst_stride) {
  if (batch * rows * cols == 0) return;
  ToColumnMajorKernel<T><<<Blocks(env, batch * rows * cols), kThreads, 0, env.stream>>>(
      src, dst, batch, rows, cols, ld, dst_stride);
  CHECK_LAUNCH("linalg ToColumnMajorKernel");
}

template <typename T>
void ToRowMajor(const LaunchEnv& env, const T* src, T* dst, int64_t batch, int64_t rows,
                int64_t cols, int64_t ld, int64_t src_stride, Keep keep) {
  if (batch * rows * cols == 0) return;
  ToRowMajorKernel<T><<<Blocks(env, batch * rows * cols), kThreads, 0, env.stream>>>(
      src, dst, batch, rows, cols, ld, src_stride, keep);
  CHECK_LAUNCH("linalg ToRowMajorKernel");
}

template <typename T>
void Conjugate(const LaunchEnv& env, const T* src, T* dst, int64_t n) {
  if (n == 0) return;
  ConjugateKernel<T><<<Blocks(env, n), kThreads, 0, env.stream>>>(src, dst, n);
  CHECK_LAUNCH("linalg ConjugateKernel");
}

void Widen(const LaunchEnv& env, const int* src, int64_t* dst, int64_t n) {
  if (n == 0) return;
  WidenKernel<<<Blocks(env, n), kThreads, 0, env.stream>>>(src, dst, n);
  CHECK_LAUNCH("linalg WidenKernel");
}

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

void Check(cusolverStatus_t status, const char* what) {
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

// The cuSOLVER handle of a GPU (made at first use), bound to the device's stream.
cusolverDnHandle_t Handle(const LaunchEnv& env) {
  const CusolverLibrary& lib = CusolverLibrary::Require();
  static std::mutex mu;
  static std::vector<cusolverDnHandle_t> handles;
  std::lock_guard<std::mutex> lock(mu);
  if (handles.size() <= static_cast<size_t>(env.id)) handles.resize(env.id + 1, nullptr);
  cusolverDnHandle_t& h = handles[env.id];
  if (h == nullptr) Check(lib.Create(&h), "cusolverDnCreate");
  Check(lib.SetStream(h, env.stream), "cusolverDnSetStream");
  return h;
}

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

// The LU factors of the column-major stack a (n x n matrices, n * n apart) in place, pivots and
// info per matrix: one batched cuBLAS call for a stack of small matrices (on the device's cuBLAS
// handle, bound to its stream as matmul's), else cuSOLVER's getrf matrix by matrix.
template <typename T>
void LuFactor(const LaunchEnv& env, T* a, int64_t batch, int64_t n, int* ipiv, int* info) {
  const int ni = static_cast<int>(n);
  if (Batched(batch, n)) {
    cublasHandle_t blas_handle = env.device->cublas(env.id);  // loads cuBLAS
    const CublasLibrary& blas = CublasLibrary::Require();
    MatrixPointers<T> matrices(env, a, n * n, batch);
    CUBLAS_CALL(DLARRAY_SOLVER(blas, getrfBatched)(blas_handle, ni, matrices.get(), ni, ipiv, info,
                                                   static_cast<int>(batch)));
    return;
  }
  const CusolverLibrary& lib = CusolverLibrary::Require();
  cusolverDnHandle_t h = Handle(env);
  int lwork = 0;
  Check(DLARRAY_SOLVER(lib, getrf_bufferSize)(h, ni, ni, a, ni, &lwork), "getrf_bufferSize");
  Scratch<T> work(env, lwork);
  for (int64_t b = 0; b < batch; ++b) {
    Check(DLARRAY_SOLVER(lib, getrf)(h, ni, ni, a + b * n * n, ni, work.get(), ipiv + b * n,
                                     info + b),
          "getrf");
  }
}

template <typename T>
void Lu(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  const int64_t batch = ctx.inputs[0]->shape[0], n = ctx.inputs[0]->shape[1];
  Scratch<T> a(env, batch * n * n);
  Scratch<int> ipiv(env, batch * n), info(env, batch);
  ToColumnMajor(env, Data<const T>(ctx.inputs[0]), a.get(), batch, n, n, n, n * n);
  LuFactor(env, a.get(), batch, n, ipiv.get(), info.get());
  ToRowMajor(env, a.get(), Data<T>(ctx.outputs[0]), batch, n, n, n, n * n, kAll);
  Widen(env, ipiv.get(), Data<int64_t>(ctx.outputs[1]), batch * n);
  Widen(env, info.get(), Data<int64_t>(ctx.outputs[2]), batch);
}

template <typename T>
void Solve(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  const int64_t batch = ctx.inputs[0]->shape[0], n = ctx.inputs[0]->shape[1];
  const int64_t r = ctx.inputs[1]->shape[2];
  const int ni = static_cast<int>(n), ri = static_cast<int>(r);
  Scratch<T> a(env, batch * n * n), x(env, batch * n * r);
  Scratch<int> ipiv(env, batch * n), info(env, batch), solve_info(env, batch);
  ToColumnMajor(env, Data<const T>(ctx.inputs[0]), a.get(), batch, n, n, n, n * n);
  ToColumnMajor(env, Data<const T>(ctx.inputs[1]), x.get(), batch, n, r, n, n * r);
  LuFactor(env, a.get(), batch, n, ipiv.get(), info.get());
  // A singular matrix gives inf/NaN here; its info (> 0) makes Python raise.
  if (Batched(batch, n)) {
    cublasHandle_t blas_handle = env.device->cublas(env.id);
    const CublasLibrary& blas = CublasLibrary::Require();
    MatrixPointers<T> matrices(env, a.get(), n * n, batch), rhs(env, x.get(), n * r, batch);
    int bad_argument = 0;  // getrsBatched checks its arguments on the host, before the launch
    CUBLAS_CALL(DLARRAY_SOLVER(blas, getrsBatched)(blas_handle, CUBLAS_OP_N, ni, ri, matrices.get(),
                                                   ni, ipiv.get(), rhs.get(), ni, &bad_argument,
                                                   static_cast<int>(batch)));
    if (bad_argument != 0) {
      throw BackendError("cuBLAS getrsBatched refused argument " + std::to_string(-bad_argument));
    }
  } else {
    const CusolverLibrary& lib = CusolverLibrary::Require();
    cusolverDnHandle_t h = Handle(env);
    for (int64_t b = 0; b < batch; ++b) {
      Check(DLARRAY_SOLVER(lib, getrs)(h, CUBLAS_OP_N, ni, ri, a.get() + b * n * n, ni,
                                       ipiv.get() + b * n, x.get() + b * n * r, ni,
                                       solve_info.get() + b),
            "getrs");
    }
  }
  ToRowMajor(env, x.get(), Data<T>(ctx.outputs[0]), batch, n, r, n, n * r, kAll);
  Widen(env, info.get(), Data<int64_t>(ctx.outputs[1]), batch);
}

template <typename T>
void Cholesky(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  const CusolverLibrary& lib = CusolverLibrary::Require();
  cusolverDnHandle_t h = Handle(env);
  const int64_t batch = ctx.inputs[0]->shape[0], n = ctx.inputs[0]->shape[1];
  const int ni = static_cast<int>(n);
  const cublasFillMode_t lower = CUBLAS_FILL_MODE_LOWER;
  Scratch<T> a(env, batch * n * n);
  Scratch<int> info(env, batch);
  ToColumnMajor(env, Data<const T>(ctx.inputs[0]), a.get(), batch, n, n, n, n * n);
  if (Batched(batch, n)) {
    MatrixPointers<T> matrices(env, a.get(), n * n, batch);
    Check(DLARRAY_SOLVER(lib, potrfBatched)(h, lower, ni, matrices.get(), ni, info.get(),
                                            static_cast<int>(batch)),
          "potrfBatched");
  } else {
    int lwork = 0;
    Check(DLARRAY_SOLVER(lib, potrf_bufferSize)(h, lower, ni, a.get(), ni, &lwork),
          "potrf_bufferSize");
    Scratch<T> work(env, lwork);
    for (int64_t b = 0; b < batch; ++b) {
      Check(DLARRAY_SOLVER(lib, potrf)(h, lower, ni, a.get() + b * n * n, ni, work.get(), lwork,
                                       info.get() + b),
            "potrf");
    }
  }
  ToRowMajor(env, a.get(), Data<T>(ctx.outputs[0]), batch, n, n, n, n * n, kLower);
  Widen(env, info.get(), Data<int64_t>(ctx.outputs[1]), batch);
}

template <typename T>
void Eigh(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  const CusolverLibrary& lib = CusolverLibrary::Require();
  cusolverDnHandle_t h = Handle(env);
  const int64_t batch = ctx.inputs[0]->shape[0], n = ctx.inputs[0]->shape[1];
  const int ni = static_cast<int>(n);
  const bool vectors = ctx.attrs[0] != 0.0;
  const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const cublasFillMode_t lower = CUBLAS_FILL_MODE_LOWER;
  Real<T>* w = Data<Real<T>>(ctx.outputs[0]);
  Scratch<T> a(env, batch * n * n);
  Scratch<int> info(env, batch);
  ToColumnMajor(env, Data<const T>(ctx.inputs[0]), a.get(), batch, n, n, n, n * n);
  int lwork = 0;
  Check(DLARRAY_SOLVER2(lib, syevd_bufferSize, heevd_bufferSize)(h, jobz, lower, ni, a.get(), ni, w,
                                                                 &lwork),
        "syevd_bufferSize");
  Scratch<T> work(env, lwork);
  for (int64_t b = 0; b < batch; ++b) {
    Check(DLARRAY_SOLVER2(lib, syevd, heevd)(h, jobz, lower, ni, a.get() + b * n * n, ni, w + b * n,
                                             work.get(), lwork, info.get() + b),
          "syevd");
  }
  if (vectors) ToRowMajor(env, a.get(), Data<T>(ctx.outputs[1]), batch, n, n, n, n * n, kAll);
  Widen(env, info.get(), Data<int64_t>(ctx.outputs[2]), batch);
}

template <typename T>
void Svd(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  const CusolverLibrary& lib = CusolverLibrary::Require();
  cusolverDnHandle_t h = Handle(env);
  const int64_t batch = ctx.inputs[0]->shape[0], rows = ctx.inputs[0]->shape[1];
  const int64_t cols = ctx.inputs[0]->shape[2], k = std::min(rows, cols);
  const bool vectors = ctx.attrs[0] != 0.0, full = vectors && ctx.attrs[1] != 0.0;
  const int64_t ucols = full ? rows : k, vcols = full ? cols : k;
  const int mi = static_cast<int>(rows), ni = static_cast<int>(cols);
  const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const int econ = full ? 0 : 1;
  Real<T>* s = Data<Real<T>>(ctx.outputs[1]);
  Scratch<T> a(env, batch * rows * cols), u(env, batch * rows * ucols),
      v(env, batch * cols * vcols);
  Scratch<int> info(env, batch);
  ToColumnMajor(env, Data<const T>(ctx.inputs[0]), a.get(), batch, rows, cols, rows, rows * cols);
  gesvdjInfo_t params = nullptr;
  Check(lib.CreateGesvdjInfo(&params), "cusolverDnCreateGesvdjInfo");
  struct Params {
    const CusolverLibrary& lib;
    gesvdjInfo_t p;
    ~Params() { (void)lib.DestroyGesvdjInfo(p); }
  } destroy{lib, params};
  int lwork = 0;
  Check(DLARRAY_SOLVER(lib, gesvdj_bufferSize)(h, jobz, econ, mi, ni, a.get(), mi, s, u.get(), mi,
                                               v.get(), ni, &lwork, params),
        "gesvdj_bufferSize");
  Scratch<T> work(env, lwork);
  for (int64_t b = 0; b < batch; ++b) {
    Check(
        DLARRAY_SOLVER(lib, gesvdj)(h, jobz, econ, mi, ni, a.get() + b * rows * cols, mi, s + b * k,
                                    u.get() + b * rows * ucols, mi, v.get() + b * cols * vcols, ni,
                                    work.get(), lwork, info.get() + b, params),
        "gesvdj");
  }
  if (vectors) {
    ToRowMajor(env, u.get(), Data<T>(ctx.outputs[0]), batch, rows, ucols, rows, rows * ucols, kAll);
    // vh = V^H: V's column-major buffer (ld = cols) read row-major is V^T already; complex V^T
    // is conjugated on the way.
    T* vh = Data<T>(ctx.outputs[2]);
    if constexpr (kIsComplex<T>) {
      Conjugate(env, static_cast<const T*>(v.get()), vh, batch * cols * vcols);
    } else {
      CUDA_CALL(cudaMemcpyAsync(vh, v.get(), sizeof(T) * batch * cols * vcols,
                                cudaMemcpyDeviceToDevice, env.stream));
    }
  }
  Widen(env, info.get(), Data<int64_t>(ctx.outputs[3]), batch);
}

template <typename T>
void Qr(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  const CusolverLibrary& lib = CusolverLibrary::Require();
  cusolverDnHandle_t h = Handle(env);
  const int64_t batch = ctx.inputs[0]->shape[0], rows = ctx.inputs[0]->shape[1];
  const int64_t cols = ctx.inputs[0]->shape[2], k = std::min(rows, cols);
  const int64_t qcols = ctx.outputs[0]->shape[2];  // rows (complete) or k
  const int64_t width = std::max(cols, qcols), stride = rows * width;
  const int mi = static_cast<int>(rows), ni = static_cast<int>(cols);
  const int ki = static_cast<int>(k), qi = static_cast<int>(qcols);
  Scratch<T> a(env, batch * stride), tau(env, batch * k);
  Scratch<int> info(env, batch);
  ToColumnMajor(env, Data<const T>(ctx.inputs[0]), a.get(), batch, rows, cols, rows, stride);
  int lwork_qr = 0, lwork_q = 0;
  Check(DLARRAY_SOLVER(lib, geqrf_bufferSize)(h, mi, ni, a.get(), mi, &lwork_qr),
        "geqrf_bufferSize");
  Check(DLARRAY_SOLVER2(lib, orgqr_bufferSize, ungqr_bufferSize)(h, mi, qi, ki, a.get(), mi,
                                                                 tau.get(), &lwork_q),
        "orgqr_bufferSize");
  const int lwork = std::max(lwork_qr, lwork_q);
  Scratch<T> work(env, lwork);
  for (int64_t b = 0; b < batch; ++b) {
    Check(DLARRAY_SOLVER(lib, geqrf)(h, mi, ni, a.get() + b * stride, mi, tau.get() + b * k,
                                     work.get(), lwork, info.get() + b),
          "geqrf");
  }
  // R: the upper triangle of the first qcols rows, read before orgqr overwrites it.
  ToRowMajor(env, a.get(), Data<T>(ctx.outputs[1]), batch, qcols, cols, rows, stride, kUpper);
  for (int64_t b = 0; b < batch; ++b) {
    Check(DLARRAY_SOLVER2(lib, orgqr, ungqr)(h, mi, qi, ki, a.get() + b * stride, mi,
                                             tau.get() + b * k, work.get(), lwork, info.get() + b),
          "orgqr");
  }
  ToRowMajor(env, a.get(), Data<T>(ctx.outputs[0]), batch, rows, qcols, rows, stride, kAll);
}

#undef DLARRAY_SOLVER
#undef DLARRAY_SOLVER2

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

}  // namespace

#define DLARRAY_BY_DTYPE(fn) ByDType(ctx, [&ctx](auto t) { fn<decltype(t)>(ctx); })
void LinalgLuKernel(const KernelContext& ctx) { DLARRAY_BY_DTYPE(Lu); }
void LinalgSolveKernel(const KernelContext& ctx) { DLARRAY_BY_DTYPE(Solve); }
void LinalgCholeskyKernel(const KernelContext& ctx) { DLARRAY_BY_DTYPE(Cholesky); }
void LinalgEighKernel(const KernelContext& ctx) { DLARRAY_BY_DTYPE(Eigh); }
void LinalgSvdKernel(const KernelContext& ctx) { DLARRAY_BY_DTYPE(Svd); }
void LinalgQrKernel(const KernelContext& ctx) { DLARRAY_BY_DTYPE(Qr); }
#undef DLARRAY_BY_DTYPE

}  // namespace cuda
}  // namespace dlarray
