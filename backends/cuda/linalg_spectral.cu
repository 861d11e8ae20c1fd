// The linalg_eigh and linalg_svd kernels (runtime/src/linalg_ops.cc gives their shapes) through
// cuSOLVER; what they share with the other linalg kernels is in linalg_util.cuh.
//   - eigh: the row-major buffer copied as it is is A^T = conj(A) column-major (A is Hermitian),
//     whose lower triangle cuSOLVER reads as uplo upper; its eigenvalues are A's and its
//     eigenvectors conj(V), so they are conjugated on the way out (complex only).
//   - svd: the input is transposed to column-major; V comes back column-major, which read
//     row-major is V^T, so vh = V^H costs a copy (a conjugation for complex).
// A stack of at least two matrices of at most kJacobiMaxN rows and columns runs as one batched
// Jacobi call (syevjBatched / heevjBatched, gesvdjBatched: cuSOLVER's limit is 32), as
// torch.linalg does: the per-matrix loop costs a few launches and a host round trip per matrix.
// The batched routines report a matrix that did not converge in its info, as the loop's do, and
// Python raises LinAlgError naming its batch index (docs/linalg.md).
#include <cuComplex.h>

#include <algorithm>
#include <climits>
#include <string>

#include "cuda_check.h"
#include "cusolver_library.h"
#include "kernel_util.cuh"
#include "linalg_kernels.h"
#include "linalg_util.cuh"

namespace dlarray {
namespace cuda {
namespace linalg {
namespace {

constexpr int64_t kJacobiMaxN = 32;  // cuSOLVER's limit for syevjBatched and gesvdjBatched

bool JacobiBatched(int64_t batch, int64_t rows, int64_t cols) {
  return batch >= 2 && batch <= INT_MAX && rows <= kJacobiMaxN && cols <= kJacobiMaxN;
}

// An info object of cuSOLVER's Jacobi routines (syevjInfo_t or gesvdjInfo_t), destroyed with its
// scope; the defaults (tolerance: machine precision, 100 sweeps, sorted values) are NumPy's
// answers.
template <typename Info, typename Create, typename Destroy>
class JacobiInfo {
 public:
  JacobiInfo(Create create, Destroy destroy, const char* what) : destroy_(destroy) {
    Check(create(&info_), what);
  }
  ~JacobiInfo() { (void)destroy_(info_); }
  JacobiInfo(const JacobiInfo&) = delete;
  JacobiInfo& operator=(const JacobiInfo&) = delete;
  Info get() const { return info_; }

 private:
  Destroy destroy_;
  Info info_ = nullptr;
};

// Whether v is NaN (either part of a complex value).
template <typename T>
__device__ bool IsNaN(T v) {
  if constexpr (kIsComplex<T>) {
    return isnan(v.x) || isnan(v.y);
  } else {
    return isnan(v);
  }
}

// A block per matrix of the row-major input a: where its lower triangle (the one eigh reads)
// holds a NaN, the matrix's eigenvalues w and vectors v (when given) become NaN, as the loop's
// syevd gives and NumPy returns. syevjBatched returned finite values for such a matrix.
template <typename T>
__global__ void NaNInNaNOutKernel(const T* a, Real<T>* w, T* v, int64_t n) {
  __shared__ int bad;
  if (threadIdx.x == 0) bad = 0;
  __syncthreads();
  const int64_t b = blockIdx.x;
  const T* m = a + b * n * n;
  for (int64_t k = threadIdx.x; k < n * n; k += blockDim.x) {
    if (k % n <= k / n && IsNaN(m[k])) bad = 1;
  }
  __syncthreads();
  if (bad == 0) return;
  const Real<T> nan = Real<T>(NAN);
  for (int64_t k = threadIdx.x; k < n; k += blockDim.x) w[b * n + k] = nan;
  for (int64_t k = threadIdx.x; v != nullptr && k < n * n; k += blockDim.x) {
    if constexpr (kIsComplex<T>) {
      v[b * n * n + k] = T{nan, nan};
    } else {
      v[b * n * n + k] = nan;
    }
  }
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
  const cublasFillMode_t upper = CUBLAS_FILL_MODE_UPPER;  // A's lower triangle (see the top)
  Real<T>* w = Data<Real<T>>(ctx.outputs[0]);
  Scratch<T> a(env, batch * n * n);
  Scratch<int> info(env, batch);
  CopyAsync(env, Data<const T>(ctx.inputs[0]), a.get(), batch * n * n);
  int lwork = 0;
  if (JacobiBatched(batch, n, n)) {
    JacobiInfo<syevjInfo_t, decltype(lib.CreateSyevjInfo), decltype(lib.DestroySyevjInfo)> params(
        lib.CreateSyevjInfo, lib.DestroySyevjInfo, "cusolverDnCreateSyevjInfo");
    const int count = static_cast<int>(batch);
    Check(DLARRAY_SOLVER2(lib, syevjBatched_bufferSize, heevjBatched_bufferSize)(
              h, jobz, upper, ni, a.get(), ni, w, &lwork, params.get(), count),
          "syevjBatched_bufferSize");
    Scratch<T> work(env, lwork);
    Check(
        DLARRAY_SOLVER2(lib, syevjBatched, heevjBatched)(
            h, jobz, upper, ni, a.get(), ni, w, work.get(), lwork, info.get(), params.get(), count),
        "syevjBatched");
  } else {
    Check(DLARRAY_SOLVER2(lib, syevd_bufferSize, heevd_bufferSize)(h, jobz, upper, ni, a.get(), ni,
                                                                   w, &lwork),
          "syevd_bufferSize");
    Scratch<T> work(env, lwork);
    for (int64_t b = 0; b < batch; ++b) {
      Check(DLARRAY_SOLVER2(lib, syevd, heevd)(h, jobz, upper, ni, a.get() + b * n * n, ni,
                                               w + b * n, work.get(), lwork, info.get() + b),
            "syevd");
    }
  }
  T* v = vectors ? Data<T>(ctx.outputs[1]) : nullptr;
  if (vectors) {
    ToRowMajor(env, static_cast<const T*>(a.get()), v, batch, n, n, n, n * n, kAll);
    if constexpr (kIsComplex<T>) Conjugate(env, static_cast<const T*>(v), v, batch * n * n);
  }
  if (JacobiBatched(batch, n, n)) {
    NaNInNaNOutKernel<T><<<static_cast<unsigned>(batch), 128, 0, env.stream>>>(
        Data<const T>(ctx.inputs[0]), w, v, n);
    CUDA_CALL(cudaGetLastError());
  }
  Widen(env, info.get(), Data<int64_t>(ctx.outputs[2]), batch);
}

// vh (row-major, batch x vcols x cols) = V^H of the column-major V (cols x cols used, ld cols,
// v_stride apart; its first vcols columns): V's storage read row-major is V^T.
template <typename T>
void WriteVh(const LaunchEnv& env, const T* v, T* vh, int64_t batch, int64_t cols, int64_t vcols,
             int64_t v_stride) {
  const size_t row_bytes = sizeof(T) * static_cast<size_t>(cols * vcols);
  if (batch == 0 || row_bytes == 0) return;
  CUDA_CALL(cudaMemcpy2DAsync(vh, row_bytes, v, sizeof(T) * static_cast<size_t>(v_stride),
                              row_bytes, static_cast<size_t>(batch), cudaMemcpyDeviceToDevice,
                              env.stream));
  if constexpr (kIsComplex<T>) Conjugate(env, static_cast<const T*>(vh), vh, batch * cols * vcols);
}

// A block per matrix of the input a (count elements each): a NaN anywhere in it sets the
// matrix's info to "did not converge" (1), as the loop's gesvdj reports it; gesvdjBatched
// returned converged values for such a matrix.
template <typename T>
__global__ void NaNNotConvergedKernel(const T* a, int64_t count, int* info) {
  __shared__ int bad;
  if (threadIdx.x == 0) bad = 0;
  __syncthreads();
  const T* m = a + static_cast<int64_t>(blockIdx.x) * count;
  for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
    if (IsNaN(m[k])) bad = 1;
  }
  __syncthreads();
  if (threadIdx.x == 0 && bad != 0 && info[blockIdx.x] == 0) info[blockIdx.x] = 1;
}

// The stack of small matrices in one gesvdjBatched call. It has no economy mode: U (rows x rows)
// and V (cols x cols) are computed whole and their first k columns kept for the reduced SVD.
template <typename T>
void SvdBatched(const LaunchEnv& env, const KernelContext& ctx, const T* a_col, int* info) {
  const CusolverLibrary& lib = CusolverLibrary::Require();
  cusolverDnHandle_t h = Handle(env);
  const int64_t batch = ctx.inputs[0]->shape[0], rows = ctx.inputs[0]->shape[1];
  const int64_t cols = ctx.inputs[0]->shape[2];
  const bool vectors = ctx.attrs[0] != 0.0;
  const int mi = static_cast<int>(rows), ni = static_cast<int>(cols);
  const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  Real<T>* s = Data<Real<T>>(ctx.outputs[1]);
  T* a = const_cast<T*>(a_col);  // the caller's scratch, which gesvdjBatched overwrites
  Scratch<T> u(env, batch * rows * rows), v(env, batch * cols * cols);
  JacobiInfo<gesvdjInfo_t, decltype(lib.CreateGesvdjInfo), decltype(lib.DestroyGesvdjInfo)> params(
      lib.CreateGesvdjInfo, lib.DestroyGesvdjInfo, "cusolverDnCreateGesvdjInfo");
  const int count = static_cast<int>(batch);
  int lwork = 0;
  Check(DLARRAY_SOLVER(lib, gesvdjBatched_bufferSize)(h, jobz, mi, ni, a, mi, s, u.get(), mi,
                                                      v.get(), ni, &lwork, params.get(), count),
        "gesvdjBatched_bufferSize");
  Scratch<T> work(env, lwork);
  Check(DLARRAY_SOLVER(lib, gesvdjBatched)(h, jobz, mi, ni, a, mi, s, u.get(), mi, v.get(), ni,
                                           work.get(), lwork, info, params.get(), count),
        "gesvdjBatched");
  if (!vectors) return;
  const int64_t ucols = ctx.outputs[0]->shape[2], vcols = ctx.outputs[2]->shape[1];
  ToRowMajor(env, static_cast<const T*>(u.get()), Data<T>(ctx.outputs[0]), batch, rows, ucols, rows,
             rows * rows, kAll);
  WriteVh(env, static_cast<const T*>(v.get()), Data<T>(ctx.outputs[2]), batch, cols, vcols,
          cols * cols);
}

template <typename T>
void Svd(const KernelContext& ctx) {
  const LaunchEnv env = Prepare(ctx);
  const int64_t batch = ctx.inputs[0]->shape[0], rows = ctx.inputs[0]->shape[1];
  const int64_t cols = ctx.inputs[0]->shape[2], k = std::min(rows, cols);
  Scratch<T> a(env, batch * rows * cols);
  Scratch<int> info(env, batch);
  ToColumnMajor(env, Data<const T>(ctx.inputs[0]), a.get(), batch, rows, cols, rows, rows * cols);
  if (JacobiBatched(batch, rows, cols)) {
    SvdBatched<T>(env, ctx, a.get(), info.get());
    NaNNotConvergedKernel<T><<<static_cast<unsigned>(batch), 128, 0, env.stream>>>(
        Data<const T>(ctx.inputs[0]), rows * cols, info.get());
    CUDA_CALL(cudaGetLastError());
    Widen(env, info.get(), Data<int64_t>(ctx.outputs[3]), batch);
    return;
  }
  const CusolverLibrary& lib = CusolverLibrary::Require();
  cusolverDnHandle_t h = Handle(env);
  const bool vectors = ctx.attrs[0] != 0.0, full = vectors && ctx.attrs[1] != 0.0;
  const int64_t ucols = full ? rows : k, vcols = full ? cols : k;
  const int mi = static_cast<int>(rows), ni = static_cast<int>(cols);
  const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const int econ = full ? 0 : 1;
  Real<T>* s = Data<Real<T>>(ctx.outputs[1]);
  Scratch<T> u(env, batch * rows * ucols), v(env, batch * cols * vcols);
  JacobiInfo<gesvdjInfo_t, decltype(lib.CreateGesvdjInfo), decltype(lib.DestroyGesvdjInfo)> params(
      lib.CreateGesvdjInfo, lib.DestroyGesvdjInfo, "cusolverDnCreateGesvdjInfo");
  int lwork = 0;
  Check(DLARRAY_SOLVER(lib, gesvdj_bufferSize)(h, jobz, econ, mi, ni, a.get(), mi, s, u.get(), mi,
                                               v.get(), ni, &lwork, params.get()),
        "gesvdj_bufferSize");
  Scratch<T> work(env, lwork);
  for (int64_t b = 0; b < batch; ++b) {
    Check(
        DLARRAY_SOLVER(lib, gesvdj)(h, jobz, econ, mi, ni, a.get() + b * rows * cols, mi, s + b * k,
                                    u.get() + b * rows * ucols, mi, v.get() + b * cols * vcols, ni,
                                    work.get(), lwork, info.get() + b, params.get()),
        "gesvdj");
  }
  if (vectors) {
    ToRowMajor(env, static_cast<const T*>(u.get()), Data<T>(ctx.outputs[0]), batch, rows, ucols,
               rows, rows * ucols, kAll);
    WriteVh(env, static_cast<const T*>(v.get()), Data<T>(ctx.outputs[2]), batch, cols, vcols,
            cols * vcols);
  }
  Widen(env, info.get(), Data<int64_t>(ctx.outputs[3]), batch);
}

}  // namespace
}  // namespace linalg

#define DLARRAY_BY_DTYPE(fn) linalg::ByDType(ctx, [&ctx](auto t) { linalg::fn<decltype(t)>(ctx); })
void LinalgEighKernel(const KernelContext& ctx) { DLARRAY_BY_DTYPE(Eigh); }
void LinalgSvdKernel(const KernelContext& ctx) { DLARRAY_BY_DTYPE(Svd); }
#undef DLARRAY_BY_DTYPE

}  // namespace cuda
}  // namespace dlarray
