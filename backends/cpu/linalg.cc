/*!
 * \file linalg.cc
 * \brief The linalg_* kernels (runtime/src/linalg_ops.cc gives their shapes): each matrix of the
 *        batch is copied to a column-major buffer, factored by LAPACK (linalg_lapack.h) and copied
 *        back row-major; the copies cost O(n^2) next to the O(n^3) factorization. Matrices of a
 *        batch run in parallel on the backend's threads, each through the single-threaded LAPACK.
 *        Compiled once, not per instruction set: the time is spent inside LAPACK. Each kernel is
 *        instantiated for float, double, std::complex<float> and std::complex<double>.
 */
#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "dlarray/errors.h"
#include "linalg_kernels.h"
#include "linalg_lapack.h"
#include "parallel.h"

namespace dlarray::cpu {
namespace {

// dst(i, j) = src(i, j) for i < rows, j < cols, where element (i, j) sits at i * row stride +
// j * column stride: in tiles of kTile x kTile, so that the reads and the writes of a transposing
// copy both stay in cache (an element-by-element transpose of a 1024 x 1024 matrix of doubles
// cost about a third of solve's time, every write a cache miss).
template <typename T>
void CopyTiled(const T* src, int64_t src_row, int64_t src_col, int64_t rows, int64_t cols, T* dst,
               int64_t dst_row, int64_t dst_col) {
  constexpr int64_t kTile = 32;
  for (int64_t i0 = 0; i0 < rows; i0 += kTile) {
    const int64_t i1 = std::min(rows, i0 + kTile);
    for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
      const int64_t j1 = std::min(cols, j0 + kTile);
      for (int64_t i = i0; i < i1; ++i) {
        for (int64_t j = j0; j < j1; ++j)
          dst[i * dst_row + j * dst_col] = src[i * src_row + j * src_col];
      }
    }
  }
}

// Row-major src (rows x cols, row stride cols) to column-major dst (leading dimension ld >= rows).
template <typename T>
void ToColumnMajor(const T* src, int64_t rows, int64_t cols, T* dst, int64_t ld) {
  CopyTiled(src, cols, 1, rows, cols, dst, 1, ld);
}

template <typename T>
void ToRowMajor(const T* src, int64_t ld, int64_t rows, int64_t cols, T* dst) {
  CopyTiled(src, 1, ld, rows, cols, dst, cols, 1);
}

// LAPACK's workspace query: the optimal size it returns in work[0] (its real part for complex).
template <typename T>
int WorkSize(T query) {
  return std::max(1, static_cast<int>(std::real(query)));
}

// OpenBLAS runs single-threaded (matrix_multiply splits products over the pool itself); one large
// matrix alone gets the pool's thread count for the call, then 1 again. A concurrent product on
// another Python thread may meanwhile run multithreaded: slower, never wrong.
class BlasThreadsForOneMatrix {
 public:
  BlasThreadsForOneMatrix(void (*set_threads)(int), bool large)
      : set_threads_(large && ParallelThreads() > 1 ? set_threads : nullptr) {
    if (set_threads_ != nullptr) set_threads_(ParallelThreads());
  }
  ~BlasThreadsForOneMatrix() {
    if (set_threads_ != nullptr) set_threads_(1);
  }
  BlasThreadsForOneMatrix(const BlasThreadsForOneMatrix&) = delete;
  BlasThreadsForOneMatrix& operator=(const BlasThreadsForOneMatrix&) = delete;

 private:
  void (*set_threads_)(int);
};

// Runs body(matrix index) over the batch: matrices in parallel on the pool, or one large matrix
// on OpenBLAS's threads. An argument LAPACK refuses (info < 0) is a bug of the kernel, reported
// after the loop rather than thrown from a pool thread.
template <typename T, typename Body>
void ForEachMatrix(const KernelContext& ctx, int64_t batch, int64_t flops, Body&& body) {
  std::vector<int> bad(static_cast<size_t>(batch), 0);
  const int threads = batch > 1 ? ThreadsFor(batch * flops) : 1;
  BlasThreadsForOneMatrix blas_threads(Lapack<T>().set_threads,
                                       batch == 1 && flops >= (int64_t{1} << 24));
  ParallelTasks(batch, threads, [&](int64_t b, int) { bad[static_cast<size_t>(b)] = body(b); });
  for (int64_t b = 0; b < batch; ++b) {
    if (bad[static_cast<size_t>(b)] < 0) {
      throw BackendError(std::string(ctx.op_name) + ": LAPACK refused argument " +
                         std::to_string(-bad[static_cast<size_t>(b)]) + " for matrix " +
                         std::to_string(b));
    }
  }
}

template <typename T>
void Lu(const KernelContext& ctx) {
  const auto& la = Lapack<T>();
  const int64_t batch = ctx.inputs[0]->shape[0], n = ctx.inputs[0]->shape[1];
  const T* a = Data<const T>(ctx.inputs[0]);
  T* lu = Data<T>(ctx.outputs[0]);
  int64_t* pivots = Data<int64_t>(ctx.outputs[1]);
  int64_t* info = Data<int64_t>(ctx.outputs[2]);
  ForEachMatrix<T>(ctx, batch, n * n * n, [&](int64_t b) {
    std::vector<T> m(static_cast<size_t>(n * n));
    std::vector<int> ipiv(static_cast<size_t>(n));
    ToColumnMajor(a + b * n * n, n, n, m.data(), n);
    const int ni = static_cast<int>(n), ld = std::max(ni, 1);
    int code = 0;
    la.getrf(&ni, &ni, m.data(), &ld, ipiv.data(), &code);
    ToRowMajor(m.data(), n, n, n, lu + b * n * n);
    for (int64_t i = 0; i < n; ++i) pivots[b * n + i] = ipiv[static_cast<size_t>(i)];
    info[b] = code;
    return std::min(code, 0);
  });
}

// A row-major A is A^T column-major: getrf factors A^T as it is (a plain copy, no transpose),
// and getrs with "T" then solves (A^T)^T X = A X = B.
template <typename T>
void Solve(const KernelContext& ctx) {
  const auto& la = Lapack<T>();
  const int64_t batch = ctx.inputs[0]->shape[0], n = ctx.inputs[0]->shape[1];
  const int64_t r = ctx.inputs[1]->shape[2];
  const T* a = Data<const T>(ctx.inputs[0]);
  const T* rhs = Data<const T>(ctx.inputs[1]);
  T* x = Data<T>(ctx.outputs[0]);
  int64_t* info = Data<int64_t>(ctx.outputs[1]);
  ForEachMatrix<T>(ctx, batch, n * n * (n + r), [&](int64_t b) {
    std::vector<T> m(a + b * n * n, a + (b + 1) * n * n), v(static_cast<size_t>(n * r));
    std::vector<int> ipiv(static_cast<size_t>(n));
    ToColumnMajor(rhs + b * n * r, n, r, v.data(), n);
    const int ni = static_cast<int>(n), ri = static_cast<int>(r), ld = std::max(ni, 1);
    int code = 0;
    la.getrf(&ni, &ni, m.data(), &ld, ipiv.data(), &code);
    if (code == 0) la.getrs("T", &ni, &ri, m.data(), &ld, ipiv.data(), v.data(), &ld, &code, 1);
    ToRowMajor(v.data(), n, n, r, x + b * n * r);
    info[b] = code;
    return std::min(code, 0);
  });
}

template <typename T>
void Cholesky(const KernelContext& ctx) {
  const auto& la = Lapack<T>();
  const int64_t batch = ctx.inputs[0]->shape[0], n = ctx.inputs[0]->shape[1];
  const T* a = Data<const T>(ctx.inputs[0]);
  T* l = Data<T>(ctx.outputs[0]);
  int64_t* info = Data<int64_t>(ctx.outputs[1]);
  ForEachMatrix<T>(ctx, batch, n * n * n / 3, [&](int64_t b) {
    std::vector<T> m(static_cast<size_t>(n * n));
    ToColumnMajor(a + b * n * n, n, n, m.data(), n);
    const int ni = static_cast<int>(n), ld = std::max(ni, 1);
    int code = 0;
    la.potrf("L", &ni, m.data(), &ld, &code, 1);
    T* out = l + b * n * n;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) out[i * n + j] = j <= i ? m[i + j * n] : T(0);
    }
    info[b] = code;
    return std::min(code, 0);
  });
}

// syevd (real T) or heevd (complex T, with its real workspace) on the lower triangle of the
// column-major a, workspaces sized by LAPACK's query; returns info.
template <typename T>
int EighDriver(const LapackRoutines<T>& la, const char* jobz, int n, T* a, Real<T>* w) {
  const int ld = std::max(n, 1), minus_one = -1;
  int code = 0, iquery = 0;
  T query = 0;
  Real<T> rquery = 0;
  if constexpr (kIsComplex<T>) {
    la.heevd(jobz, "L", &n, a, &ld, w, &query, &minus_one, &rquery, &minus_one, &iquery, &minus_one,
             &code, 1, 1);
  } else {
    la.syevd(jobz, "L", &n, a, &ld, w, &query, &minus_one, &iquery, &minus_one, &code, 1, 1);
  }
  if (code != 0) return code;
  const int lwork = WorkSize(query), liwork = std::max(1, iquery), lrwork = WorkSize(rquery);
  std::vector<T> work(static_cast<size_t>(lwork));
  std::vector<int> iwork(static_cast<size_t>(liwork));
  if constexpr (kIsComplex<T>) {
    std::vector<Real<T>> rwork(static_cast<size_t>(lrwork));
    la.heevd(jobz, "L", &n, a, &ld, w, work.data(), &lwork, rwork.data(), &lrwork, iwork.data(),
             &liwork, &code, 1, 1);
  } else {
    la.syevd(jobz, "L", &n, a, &ld, w, work.data(), &lwork, iwork.data(), &liwork, &code, 1, 1);
  }
  return code;
}

template <typename T>
void Eigh(const KernelContext& ctx) {
  const auto& la = Lapack<T>();
  const int64_t batch = ctx.inputs[0]->shape[0], n = ctx.inputs[0]->shape[1];
  const bool vectors = ctx.attrs[0] != 0.0;
  const T* a = Data<const T>(ctx.inputs[0]);
  Real<T>* w = Data<Real<T>>(ctx.outputs[0]);
  T* v = Data<T>(ctx.outputs[1]);
  int64_t* info = Data<int64_t>(ctx.outputs[2]);
  ForEachMatrix<T>(ctx, batch, 9 * n * n * n, [&](int64_t b) {
    std::vector<T> m(static_cast<size_t>(n * n));
    ToColumnMajor(a + b * n * n, n, n, m.data(), n);
    const int code = EighDriver(la, vectors ? "V" : "N", static_cast<int>(n), m.data(), w + b * n);
    if (vectors) ToRowMajor(m.data(), n, n, n, v + b * n * n);
    info[b] = code;
    return std::min(code, 0);
  });
}

// The real workspace cgesdd/zgesdd need (LAPACK 3.7+'s bounds; the query does not report it).
int64_t SvdRealWorkSize(bool vectors, int64_t rows, int64_t cols) {
  const int64_t mn = std::min(rows, cols), mx = std::max(rows, cols);
  if (!vectors) return std::max<int64_t>(7 * mn, 1);
  return std::max<int64_t>({5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn, 1});
}

// One gesdd call of either form: the complex one also takes rwork.
template <typename T>
void Gesdd(const LapackRoutines<T>& la, const char* jobz, int m, int n, T* a, Real<T>* s, T* u,
           int ldu, T* vt, int ldvt, T* work, int lwork, Real<T>* rwork, int* iwork, int* code) {
  const int lda = std::max(m, 1);
  if constexpr (kIsComplex<T>) {
    la.gesdd_complex(jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, code,
                     1);
  } else {
    (void)rwork;
    la.gesdd(jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, code, 1);
  }
}

template <typename T>
void Svd(const KernelContext& ctx) {
  const auto& la = Lapack<T>();
  const int64_t batch = ctx.inputs[0]->shape[0], rows = ctx.inputs[0]->shape[1];
  const int64_t cols = ctx.inputs[0]->shape[2], k = std::min(rows, cols);
  const bool vectors = ctx.attrs[0] != 0.0, full = ctx.attrs[1] != 0.0;
  const int64_t ucols = !vectors ? 0 : full ? rows : k, vrows = !vectors ? 0 : full ? cols : k;
  const T* a = Data<const T>(ctx.inputs[0]);
  T* u = Data<T>(ctx.outputs[0]);
  Real<T>* s = Data<Real<T>>(ctx.outputs[1]);
  T* vh = Data<T>(ctx.outputs[2]);
  int64_t* info = Data<int64_t>(ctx.outputs[3]);
  const int64_t rwork_size = kIsComplex<T> ? SvdRealWorkSize(vectors, rows, cols) : 1;
  ForEachMatrix<T>(ctx, batch, 12 * rows * cols * std::max<int64_t>(k, 1), [&](int64_t b) {
    std::vector<T> m(static_cast<size_t>(rows * cols));
    std::vector<T> um(static_cast<size_t>(std::max<int64_t>(rows * ucols, 1)));
    std::vector<T> vm(static_cast<size_t>(std::max<int64_t>(vrows * cols, 1)));
    std::vector<Real<T>> rwork(static_cast<size_t>(rwork_size));
    std::vector<int> iwork(static_cast<size_t>(8 * std::max<int64_t>(k, 1)));
    ToColumnMajor(a + b * rows * cols, rows, cols, m.data(), rows);
    const int mi = static_cast<int>(rows), ni = static_cast<int>(cols);
    const int ldu = std::max(mi, 1), ldvt = std::max(static_cast<int>(vrows), 1);
    const char* jobz = !vectors ? "N" : full ? "A" : "S";
    int code = 0;
    T query = 0;
    Gesdd(la, jobz, mi, ni, m.data(), s + b * k, um.data(), ldu, vm.data(), ldvt, &query, -1,
          rwork.data(), iwork.data(), &code);
    if (code != 0) return std::min(code, 0);
    const int lwork = WorkSize(query);
    std::vector<T> work(static_cast<size_t>(lwork));
    Gesdd(la, jobz, mi, ni, m.data(), s + b * k, um.data(), ldu, vm.data(), ldvt, work.data(),
          lwork, rwork.data(), iwork.data(), &code);
    if (vectors) {
      ToRowMajor(um.data(), rows, rows, ucols, u + b * rows * ucols);
      ToRowMajor(vm.data(), vrows, vrows, cols, vh + b * vrows * cols);
    }
    info[b] = code;
    // LAPACK 3.10+ answers a NaN in a with info = -4: that is "did not converge" for the caller.
    return code == -4 ? (info[b] = k + 1, 0) : std::min(code, 0);
  });
}

template <typename T>
void Qr(const KernelContext& ctx) {
  const auto& la = Lapack<T>();
  const int64_t batch = ctx.inputs[0]->shape[0], rows = ctx.inputs[0]->shape[1];
  const int64_t cols = ctx.inputs[0]->shape[2], k = std::min(rows, cols);
  const int64_t qcols = ctx.outputs[0]->shape[2];  // rows (complete) or k
  const T* a = Data<const T>(ctx.inputs[0]);
  T* q = Data<T>(ctx.outputs[0]);
  T* r = Data<T>(ctx.outputs[1]);
  ForEachMatrix<T>(ctx, batch, 4 * rows * cols * std::max<int64_t>(k, 1), [&](int64_t b) {
    // Room for q's columns past a's when a complete q of a tall a is asked for.
    const int64_t width = std::max(cols, qcols);
    std::vector<T> m(static_cast<size_t>(std::max<int64_t>(rows * width, 1)));
    std::vector<T> tau(static_cast<size_t>(std::max<int64_t>(k, 1)));
    ToColumnMajor(a + b * rows * cols, rows, cols, m.data(), rows);
    const int mi = static_cast<int>(rows), ni = static_cast<int>(cols);
    const int ki = static_cast<int>(k), qi = static_cast<int>(qcols), lda = std::max(mi, 1);
    int code = 0, lwork = -1;
    T query[2] = {0, 0};
    la.geqrf(&mi, &ni, m.data(), &lda, tau.data(), &query[0], &lwork, &code);
    if (code != 0) return std::min(code, 0);
    la.orgqr(&mi, &qi, &ki, m.data(), &lda, tau.data(), &query[1], &lwork, &code);
    if (code != 0) return std::min(code, 0);
    lwork = std::max(WorkSize(query[0]), WorkSize(query[1]));
    std::vector<T> work(static_cast<size_t>(lwork));
    la.geqrf(&mi, &ni, m.data(), &lda, tau.data(), work.data(), &lwork, &code);
    if (code != 0) return std::min(code, 0);
    T* rb = r + b * qcols * cols;
    for (int64_t i = 0; i < qcols; ++i) {
      for (int64_t j = 0; j < cols; ++j) rb[i * cols + j] = i <= j ? m[i + j * rows] : T(0);
    }
    la.orgqr(&mi, &qi, &ki, m.data(), &lda, tau.data(), work.data(), &lwork, &code);
    ToRowMajor(m.data(), rows, rows, qcols, q + b * rows * qcols);
    return std::min(code, 0);
  });
}

// Calls run(T{}) for the matrices' dtype: float32, float64, complex64 or complex128.
template <typename Run>
void ByDType(const KernelContext& ctx, Run&& run) {
  const DLArrayDType t = ctx.inputs[0]->dtype;
  if (t.code == kDLArrayComplex) {
    t.bits == 64 ? run(std::complex<float>{}) : run(std::complex<double>{});
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

}  // namespace dlarray::cpu
