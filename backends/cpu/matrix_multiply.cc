/*!
 * \file matrix_multiply.cc
 * \brief matrix_multiply: c = op(a) @ op(b). Tiny products run as plain loops; larger ones go to
 *        CBLAS (when the build found one) or to the own blocked SGEMM.
 *
 * With OpenBLAS, its own thread pool is switched off and the product is cut into slabs of C that
 * the backend's pool (thread_pool.cc) computes with single-threaded sgemm calls: two pools on the
 * same cores made every op after a matrix product wait for a time slice (measured: a 256^3 product
 * 20x slower, the elementwise op after it 2x), and one pool means one thread count
 * (dlarray.set_num_threads) and one wait policy for every op.
 */
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "blas.h"
#include "cpu_kernels.h"
#include "dtype.h"
#include "parallel.h"

namespace dlarray::cpu {
namespace {

// Up to 16^3 multiply-adds, library call overhead would dominate.
constexpr double kNaiveMacs = 4096.0;

#ifdef DLARRAY_HAVE_CBLAS
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
          const float* b, int64_t ldb, float* c, int64_t ldc) {
  DLARRAY_BLAS(cblas_sgemm)
  (CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
   static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b,
   static_cast<int>(ldb), 0.0f, c, static_cast<int>(ldc));
}

void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
          const double* b, int64_t ldb, double* c, int64_t ldc) {
  DLARRAY_BLAS(cblas_dgemm)
  (CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
   static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0, a, static_cast<int>(lda), b,
   static_cast<int>(ldb), 0.0, c, static_cast<int>(ldc));
}

// Slabs of C per thread (DLARRAY_GEMM_SLABS, default 1). Each slab packs the shared operand
// again. Measured on a 2-core Xeon (scipy-openblas32 0.3.34, median of 15): two slabs per thread
// took 4-11% longer than one at 500x700x1000 and 1024^3 idle, and with one core kept busy by
// another process the products were 1.9-2.0x slower either way (the spare slabs a running
// thread can take over did not pay for their packing).
int SlabsPerThread() {
  static const int n = [] {
    const char* text = std::getenv("DLARRAY_GEMM_SLABS");
    return text ? std::max(1, std::atoi(text)) : 1;
  }();
  return n;
}

// Slabs of rows of C (or of columns, for wide products), computed by the pool's threads with
// single-threaded BLAS calls (OpenBLAS's own pool is kept at one thread; see the top).
template <typename T>
void GemmSlabs(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
               const T* b, int64_t ldb, T* c, int64_t ldc) {
#ifndef DLARRAY_HAVE_OPENBLAS
  // A BLAS whose threads we cannot switch off splits the product itself.
  Gemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
#else
  SingleThreadedBlas();
  const int64_t work = static_cast<int64_t>(
      std::min(static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / 8.0,
               static_cast<double>(INT64_MAX / 2)));
  const int threads = ThreadsFor(work);
  const int64_t split = std::max(m, n);
  const int64_t units = (split + kElementAlign - 1) / kElementAlign;
  const int64_t slabs = threads <= 1 ? 1 : std::min<int64_t>(units, threads * SlabsPerThread());
  ParallelTasks(slabs, threads, [&](int64_t s, int) {
    const int64_t p0 = ChunkBegin(split, kElementAlign, s, slabs);
    const int64_t p1 = ChunkBegin(split, kElementAlign, s + 1, slabs);
    if (p0 >= p1) return;
    if (m >= n) {
      Gemm(trans_a, trans_b, p1 - p0, n, k, trans_a ? a + p0 : a + p0 * lda, lda, b, ldb,
           c + p0 * ldc, ldc);
    } else {
      Gemm(trans_a, trans_b, m, p1 - p0, k, a, lda, trans_b ? b + p0 * ldb : b + p0, ldb, c + p0,
           ldc);
    }
  });
#endif
}
#endif

}  // namespace

void SgemmNaive(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  const int64_t a_row = trans_a ? 1 : lda, a_col = trans_a ? lda : 1;
  const int64_t b_row = trans_b ? 1 : ldb, b_col = trans_b ? ldb : 1;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p) sum += a[i * a_row + p * a_col] * b[p * b_row + j * b_col];
      c[i * ldc + j] = sum;
    }
  }
}

const char* GemmImplementation() {
#ifdef DLARRAY_HAVE_CBLAS
  return "cblas";
#else
  return "blocked";
#endif
}

namespace {

// c (m x n) = op(a) @ op(b) in float32: naive loops, CBLAS or the own SGEMM by size.
void MultiplyF32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  if (static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) <= kNaiveMacs) {
    SgemmNaive(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
#ifdef DLARRAY_HAVE_CBLAS
  // CBLAS takes int sizes; larger matrices fall through to the own SGEMM.
  if (std::max({m, n, k, lda, ldb}) <= INT_MAX) {
    GemmSlabs(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
#endif
  SgemmBlocked(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
}

// float64: CBLAS dgemm when available, else rows of c in parallel (i-p-j loops, c row in cache).
void MultiplyF64(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const double* a,
                 int64_t lda, const double* b, int64_t ldb, double* c, int64_t ldc) {
#ifdef DLARRAY_HAVE_CBLAS
  if (std::max({m, n, k, lda, ldb}) <= INT_MAX) {
    GemmSlabs(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
#endif
  const int64_t a_row = trans_a ? 1 : lda, a_col = trans_a ? lda : 1;
  const int64_t b_row = trans_b ? 1 : ldb, b_col = trans_b ? ldb : 1;
  ParallelFor(m, m * n * k, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      double* row = c + i * ldc;
      std::fill(row, row + n, 0.0);
      for (int64_t p = 0; p < k; ++p) {
        const double av = a[i * a_row + p * a_col];
        for (int64_t j = 0; j < n; ++j) row[j] += av * b[p * b_row + j * b_col];
      }
    }
  });
}

// float16 / bfloat16: the operands are widened to float32, multiplied with float32 accumulation,
// and the product rounded back once.
template <typename T>
void MultiplyHalf(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const DLArray* a,
                  const DLArray* b, DLArray* c) {
  auto widen = [](const DLArray* x) {
    const int64_t count = NumElements(x);
    std::vector<float> w(static_cast<size_t>(count));
    const T* p = Data<const T>(x);
    ParallelFor(count, count, kElementAlign, [&](int64_t b0, int64_t b1) {
      for (int64_t i = b0; i < b1; ++i) w[i] = Load(p[i]);
    });
    return w;
  };
  const std::vector<float> fa = widen(a), fb = widen(b);
  std::vector<float> fc(static_cast<size_t>(m * n));
  MultiplyF32(trans_a, trans_b, m, n, k, fa.data(), a->shape[1], fb.data(), b->shape[1], fc.data(),
              n);
  T* out = Data<T>(c);
  ParallelFor(m * n, m * n, kElementAlign, [&](int64_t b0, int64_t b1) {
    for (int64_t i = b0; i < b1; ++i) out[i] = Store<T>(fc[i]);
  });
}

}  // namespace

void MatrixMultiplyKernel(const KernelContext& ctx) {
  const DLArray* a = ctx.inputs[0];
  const DLArray* b = ctx.inputs[1];
  DLArray* c = ctx.outputs[0];
  const bool trans_a = ctx.attrs[0] != 0.0;
  const bool trans_b = ctx.attrs[1] != 0.0;
  const int64_t m = trans_a ? a->shape[1] : a->shape[0];
  const int64_t k = trans_a ? a->shape[0] : a->shape[1];
  const int64_t n = trans_b ? b->shape[0] : b->shape[1];
  const int64_t lda = a->shape[1], ldb = b->shape[1], ldc = n;
  Dispatch<kFloatTypes>(c->dtype, ctx.op_name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float>) {
      MultiplyF32(trans_a, trans_b, m, n, k, InData(a), lda, InData(b), ldb, OutData(c), ldc);
    } else if constexpr (std::is_same_v<T, double>) {
      MultiplyF64(trans_a, trans_b, m, n, k, Data<const double>(a), lda, Data<const double>(b), ldb,
                  Data<double>(c), ldc);
    } else {
      MultiplyHalf<T>(trans_a, trans_b, m, n, k, a, b, c);
    }
  });
}

}  // namespace dlarray::cpu
