// The linalg_* kernels for LU, solve, Cholesky and QR (runtime/src/linalg_ops.cc gives their
// shapes) through cuSOLVER, loaded at the first call (cusolver_library.h); eigh and svd are in
// linalg_spectral.cu, what both share in linalg_util.cuh. cuSOLVER is column-major and the ops are
// row-major: a row-major buffer read column-major is the transpose, so
//   - Cholesky factors the buffer as it is (A^T, or conj(A) for a Hermitian A) with uplo upper:
//     A^T = U^H U gives A = U^T conj(U), and U^T, read row-major from U's column-major storage,
//     is the lower factor L (no transpose either way, the other triangle zeroed in place);
//   - solve factors A^T as it is (P A^T = L U) and solves with trans = T (A = (A^T)^T): the
//     triangular solves by cuBLAS, the pivots undone by a kernel of our own (SolveFactored); the
//     right-hand sides are transposed only when there are several (one column is the same either
//     way);
//   - LU and QR, whose outputs are the factors of A itself, transpose in and out (one launch
//     for the whole stack).
// cuSOLVER's int32 info codes and pivots are widened to the ops' int64 outputs on the device;
// Python reads them (docs/linalg.md). Every kernel runs for float, double, cuComplex and
// cuDoubleComplex (the C and Z routines; ungqr for orgqr). Stacks of small matrices run LU, solve
// and Cholesky as one batched call (cuBLAS getrfBatched + getrsBatched, cuSOLVER potrfBatched;
// Batched() says when).
#include <cuComplex.h>

#include <climits>
#include <mutex>
#include <string>
#include <vector>

#include "cublas_library.h"
#include "cuda_check.h"
#include "cusolver_library.h"
#include "kernel_util.cuh"
#include "linalg_kernels.h"
#include "linalg_util.cuh"

namespace dlarray {
namespace cuda {
namespace linalg {
namespace {

__global__ void WidenKernel(const int* src, int64_t* dst, int64_t n) {
  for (int64_t idx = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; idx < n;
       idx += int64_t{gridDim.x} * blockDim.x) {
    dst[idx] = src[idx];
  }
}

}  // namespace

void Widen(const LaunchEnv& env, const int* src, int64_t* dst, int64_t n) {
  if (n == 0) return;
  WidenKernel<<<Blocks(env, n), kThreads, 0, env.stream>>>(src, dst, n);
  CHECK_LAUNCH("linalg WidenKernel");
}

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

namespace {

// cuSOLVER's options for the 64-bit routines (Xpotrf) of a GPU: the defaults, made at first use.
cusolverDnParams_t Params(const LaunchEnv& env) {
  const CusolverLibrary& lib = CusolverLibrary::Require();
  static std::mutex mu;
  static std::vector<cusolverDnParams_t> params;
  std::lock_guard<std::mutex> lock(mu);
  if (params.size() <= static_cast<size_t>(env.id)) params.resize(env.id + 1, nullptr);
  cusolverDnParams_t& p = params[env.id];
  if (p == nullptr) Check(lib.CreateParams(&p), "cusolverDnCreateParams");
  return p;
}

// T's cudaDataType, for the 64-bit routines.
template <typename T>
cudaDataType DataType() {
  return Pick<T>(CUDA_R_32F, CUDA_R_64F, CUDA_C_32F, CUDA_C_64F);
}

// Stacks of at least kBatchedMinCount matrices of at most kBatchedMaxN rows run LU, solve and
// Cholesky through the batched routines: one call for the stack, where the loop makes a few
// launches per matrix that cost more than the arithmetic of a small one. A first guess at the
// crossover, to be measured against the loop on the GPU (bench: solve 512 x 256 x 256).
constexpr int64_t kBatchedMinCount = 2;
constexpr int64_t kBatchedMaxN = 256;

bool Batched(int64_t batch, int64_t n) {
  return batch >= kBatchedMinCount && batch <= INT_MAX && n <= kBatchedMaxN;
}

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

// x = P^T v, gathered into the row-major out (n x r) from the column-major v, for P's swaps
// (getrf's 1-based ipiv, row i swapped with ipiv[i] - 1, i = 0, 1, ...) undone in reverse order:
// one thread undoes them on an index array in shared memory (the same swaps on the indices as on
// the rows), then the block gathers every row once. cuSOLVER's getrs undoes them with laswp on the
// rows in global memory: 0.52 ms of a 14.2 ms solve of 4096 x 4096 on an H200, where
// torch.linalg.solve took 13.98 ms. A block per matrix of the stack.
template <typename T>
__global__ void __launch_bounds__(1024)
    UnpivotKernel(const int* ipiv, const T* v, T* out, int n, int r) {
  extern __shared__ int unpivot_shared[];  // idx[n], then pivot[n]
  int* idx = unpivot_shared;
  int* pivot = unpivot_shared + n;
  const int64_t b = blockIdx.x;
  ipiv += b * n;
  v += b * n * r;
  out += b * n * r;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    idx[i] = i;
    pivot[i] = ipiv[i] - 1;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = n - 1; i >= 0; --i) {
      const int p = pivot[i];
      if (p != i) {
        const int t = idx[i];
        idx[i] = idx[p];
        idx[p] = t;
      }
    }
  }
  __syncthreads();
  for (int64_t e = threadIdx.x; e < int64_t{n} * r; e += blockDim.x) {
    const int64_t k = e / r, c = e % r;
    out[e] = v[c * n + idx[k]];
  }
}

template <typename T>
T One() {
  if constexpr (kIsComplex<T>) {
    T one;
    one.x = 1;
    one.y = 0;
    return one;
  } else {
    return T(1);
  }
}

// The shared memory UnpivotKernel needs for n rows, or 0 when it exceeds what a block of this
// device may have (the solve then keeps cuSOLVER's getrs).
size_t UnpivotSharedBytes(const LaunchEnv& env, int64_t n) {
  const size_t bytes = static_cast<size_t>(2 * n) * sizeof(int);
  int optin = 0;
  if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, env.id) !=
      cudaSuccess) {
    (void)cudaGetLastError();
    return bytes <= 48 * 1024 ? bytes : 0;
  }
  return bytes <= static_cast<size_t>(optin) ? bytes : 0;
}

// getrs's work for the factors of A^T (the copy a, pivots ipiv) in x (n x r column-major, each
// matrix of the stack n * r apart), the result into the row-major out: the two triangular
// solves with trans = T (U^T, then the unit L^T) by cuBLAS, then UnpivotKernel.
template <typename T>
void SolveFactored(const LaunchEnv& env, const T* a, const int* ipiv, T* x, T* out, int64_t batch,
                   int64_t n, int64_t r, size_t shared_bytes) {
  if (batch == 0) return;
  cublasHandle_t h = env.device->cublas(env.id);
  const CublasLibrary& blas = CublasLibrary::Require();
  const int ni = static_cast<int>(n), ri = static_cast<int>(r);
  const T one = One<T>();
  for (int64_t b = 0; b < batch; ++b) {
    const T* ab = a + b * n * n;
    T* xb = x + b * n * r;
    if (r == 1) {
      CUBLAS_CALL(DLARRAY_SOLVER(blas, trsv_v2)(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T,
                                                CUBLAS_DIAG_NON_UNIT, ni, ab, ni, xb, 1));
      CUBLAS_CALL(DLARRAY_SOLVER(blas, trsv_v2)(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                                                CUBLAS_DIAG_UNIT, ni, ab, ni, xb, 1));
    } else {
      CUBLAS_CALL(DLARRAY_SOLVER(blas, trsm_v2)(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER,
                                                CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, ni, ri, &one, ab,
                                                ni, xb, ni));
      CUBLAS_CALL(DLARRAY_SOLVER(blas, trsm_v2)(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER,
                                                CUBLAS_OP_T, CUBLAS_DIAG_UNIT, ni, ri, &one, ab, ni,
                                                xb, ni));
    }
  }
  auto kernel = UnpivotKernel<T>;
  if (shared_bytes > 48 * 1024) {
    CUDA_CALL(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   static_cast<int>(shared_bytes)));
  }
  kernel<<<static_cast<unsigned>(batch), 1024, shared_bytes, env.stream>>>(ipiv, x, out, ni, ri);
  CHECK_LAUNCH("linalg UnpivotKernel");
}

// x = A^-1 b: A's row-major buffer copied as it is is A^T column-major; its LU factors and a
// solve with trans = T give A x = b (for complex A too: the buffer is A^T, not A^H). Stacks of
// small matrices: cuBLAS's batched getrs. Otherwise the triangular solves and the unpivoting of
// SolveFactored (cuSOLVER's getrs where n is too large for its shared memory).
template <typename T>
void Solve(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  const int64_t batch = ctx.inputs[0]->shape[0], n = ctx.inputs[0]->shape[1];
  const int64_t r = ctx.inputs[1]->shape[2];
  const int ni = static_cast<int>(n), ri = static_cast<int>(r);
  const cublasOperation_t trans = CUBLAS_OP_T;
  const bool batched = Batched(batch, n);
  const size_t shared_bytes = batched ? 0 : UnpivotSharedBytes(env, n);
  Scratch<T> a(env, batch * n * n);
  Scratch<int> ipiv(env, batch * n), info(env, batch);
  CopyAsync(env, Data<const T>(ctx.inputs[0]), a.get(), batch * n * n);
  T* out = Data<T>(ctx.outputs[0]);
  // One right-hand side is the same row-major and column-major: getrs solves it in the output
  // itself; the unpivoting gathers from a column-major copy into the output.
  const bool in_place = r == 1 && shared_bytes == 0;
  Scratch<T> columns(env, in_place ? 0 : batch * n * r);
  T* x = in_place ? out : columns.get();
  if (r == 1) {
    CopyAsync(env, Data<const T>(ctx.inputs[1]), x, batch * n);
  } else {
    ToColumnMajor(env, Data<const T>(ctx.inputs[1]), x, batch, n, r, n, n * r);
  }
  LuFactor(env, a.get(), batch, n, ipiv.get(), info.get());
  // A singular matrix gives inf/NaN here; its info (> 0) makes Python raise.
  if (batched) {
    cublasHandle_t blas_handle = env.device->cublas(env.id);
    const CublasLibrary& blas = CublasLibrary::Require();
    MatrixPointers<T> matrices(env, a.get(), n * n, batch), rhs(env, x, n * r, batch);
    int bad_argument = 0;  // getrsBatched checks its arguments on the host, before the launch
    CUBLAS_CALL(DLARRAY_SOLVER(blas, getrsBatched)(blas_handle, trans, ni, ri, matrices.get(), ni,
                                                   ipiv.get(), rhs.get(), ni, &bad_argument,
                                                   static_cast<int>(batch)));
    if (bad_argument != 0) {
      throw BackendError("cuBLAS getrsBatched refused argument " + std::to_string(-bad_argument));
    }
  } else if (shared_bytes != 0) {
    SolveFactored(env, static_cast<const T*>(a.get()), ipiv.get(), x, out, batch, n, r,
                  shared_bytes);
    Widen(env, info.get(), Data<int64_t>(ctx.outputs[1]), batch);
    return;
  } else {
    const CusolverLibrary& lib = CusolverLibrary::Require();
    cusolverDnHandle_t h = Handle(env);
    Scratch<int> solve_info(env, batch);
    for (int64_t b = 0; b < batch; ++b) {
      Check(DLARRAY_SOLVER(lib, getrs)(h, trans, ni, ri, a.get() + b * n * n, ni,
                                       ipiv.get() + b * n, x + b * n * r, ni, solve_info.get() + b),
            "getrs");
    }
  }
  if (!in_place) ToRowMajor(env, static_cast<const T*>(x), out, batch, n, r, n, n * r, kAll);
  Widen(env, info.get(), Data<int64_t>(ctx.outputs[1]), batch);
}

// The lower Cholesky factor. One matrix: transposed to column-major, factored by the 64-bit
// Xpotrf with uplo lower (as torch.linalg.cholesky does: cuSOLVER's upper variant on the
// untransposed input took 1.7x its time at 8192 x 8192), transposed back with the upper triangle
// zeroed. Stacks: the input copied as it is (A^T column-major) and factored with uplo upper (which
// reads A's lower triangle, as NumPy does), A's upper triangle then zeroed; a stack of small
// matrices in one potrfBatched call, else potrf matrix by matrix.
template <typename T>
void Cholesky(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  const CusolverLibrary& lib = CusolverLibrary::Require();
  cusolverDnHandle_t h = Handle(env);
  const int64_t batch = ctx.inputs[0]->shape[0], n = ctx.inputs[0]->shape[1];
  const int ni = static_cast<int>(n);
  const cublasFillMode_t upper = CUBLAS_FILL_MODE_UPPER;
  T* a = Data<T>(ctx.outputs[0]);
  Scratch<int> info(env, batch);
  if (batch == 1) {
    Scratch<T> col(env, n * n);
    ToColumnMajor(env, Data<const T>(ctx.inputs[0]), col.get(), 1, n, n, n, n * n);
    const cublasFillMode_t lower = CUBLAS_FILL_MODE_LOWER;
    cusolverDnParams_t params = Params(env);
    size_t device_bytes = 0, host_bytes = 0;
    Check(lib.Xpotrf_bufferSize(h, params, lower, n, DataType<T>(), col.get(), n, DataType<T>(),
                                &device_bytes, &host_bytes),
          "Xpotrf_bufferSize");
    Scratch<char> work(env, static_cast<int64_t>(device_bytes));
    std::vector<char> host_work(host_bytes);
    Check(lib.Xpotrf(h, params, lower, n, DataType<T>(), col.get(), n, DataType<T>(), work.get(),
                     device_bytes, host_bytes ? host_work.data() : nullptr, host_bytes, info.get()),
          "Xpotrf");
    // A host workspace may be read by the work the call queued: it lives until that finished.
    if (host_bytes != 0) CUDA_CALL(cudaStreamSynchronize(env.stream));
    ToRowMajor(env, col.get(), a, 1, n, n, n, n * n, kLower);
    Widen(env, info.get(), Data<int64_t>(ctx.outputs[1]), batch);
    return;
  }
  CopyAsync(env, Data<const T>(ctx.inputs[0]), a, batch * n * n);
  if (Batched(batch, n)) {
    MatrixPointers<T> matrices(env, a, n * n, batch);
    Check(DLARRAY_SOLVER(lib, potrfBatched)(h, upper, ni, matrices.get(), ni, info.get(),
                                            static_cast<int>(batch)),
          "potrfBatched");
  } else {
    int lwork = 0;
    Check(DLARRAY_SOLVER(lib, potrf_bufferSize)(h, upper, ni, a, ni, &lwork), "potrf_bufferSize");
    Scratch<T> work(env, lwork);
    for (int64_t b = 0; b < batch; ++b) {
      Check(DLARRAY_SOLVER(lib, potrf)(h, upper, ni, a + b * n * n, ni, work.get(), lwork,
                                       info.get() + b),
            "potrf");
    }
  }
  MaskTriangle(env, a, batch, n, n, kLower);
  Widen(env, info.get(), Data<int64_t>(ctx.outputs[1]), batch);
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

}  // namespace
}  // namespace linalg

#define DLARRAY_BY_DTYPE(fn) linalg::ByDType(ctx, [&ctx](auto t) { linalg::fn<decltype(t)>(ctx); })
void LinalgLuKernel(const KernelContext& ctx) { DLARRAY_BY_DTYPE(Lu); }
void LinalgSolveKernel(const KernelContext& ctx) { DLARRAY_BY_DTYPE(Solve); }
void LinalgCholeskyKernel(const KernelContext& ctx) { DLARRAY_BY_DTYPE(Cholesky); }
void LinalgQrKernel(const KernelContext& ctx) { DLARRAY_BY_DTYPE(Qr); }
#undef DLARRAY_BY_DTYPE

}  // namespace cuda
}  // namespace dlarray
