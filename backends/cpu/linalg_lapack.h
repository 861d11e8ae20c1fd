/*!
 * \file linalg_lapack.h
 * \brief The LAPACK routines behind the linalg_* ops, found at the first call (never at load): in
 *        the BLAS library matrix_multiply uses (scipy-openblas32 prefixes them with "scipy_"),
 *        else in liblapack.so.3. Fortran interface, 32-bit integers, column-major matrices;
 *        std::complex has Fortran's COMPLEX layout (real part, then imaginary).
 */
#ifndef DLARRAY_BACKENDS_CPU_LINALG_LAPACK_H_
#define DLARRAY_BACKENDS_CPU_LINALG_LAPACK_H_

#include <complex>
#include <cstddef>
#include <type_traits>

namespace dlarray::cpu {

/*! \brief The real type of T's precision: T itself, or R for std::complex<R>. */
template <typename T>
struct RealOf {
  using type = T;
};
template <typename R>
struct RealOf<std::complex<R>> {
  using type = R;
};
template <typename T>
using Real = typename RealOf<T>::type;
template <typename T>
constexpr bool kIsComplex = !std::is_same_v<T, Real<T>>;

/*! \brief The routines of one type T: s* (float), d* (double), c* (complex<float>), z*
 *         (complex<double>). The symmetric/Hermitian and SVD drivers differ in form between real
 *         and complex (the complex ones take a real workspace, rwork): each T has one of each pair
 *         set, the other null. The trailing size_t arguments are gfortran's hidden lengths of the
 *         character arguments. */
template <typename T>
struct LapackRoutines {
  using R = Real<T>;
  void (*getrf)(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info);
  /*! \brief Solves op(A) X = B with getrf's factors; trans "N" or "T". */
  void (*getrs)(const char* trans, const int* n, const int* nrhs, const T* a, const int* lda,
                const int* ipiv, T* b, const int* ldb, int* info, size_t);
  void (*potrf)(const char* uplo, const int* n, T* a, const int* lda, int* info, size_t);
  /*! \brief ssyevd/dsyevd (real T). */
  void (*syevd)(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, R* w,
                T* work, const int* lwork, int* iwork, const int* liwork, int* info, size_t,
                size_t);
  /*! \brief cheevd/zheevd (complex T). */
  void (*heevd)(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, R* w,
                T* work, const int* lwork, R* rwork, const int* lrwork, int* iwork,
                const int* liwork, int* info, size_t, size_t);
  /*! \brief sgesdd/dgesdd (real T). */
  void (*gesdd)(const char* jobz, const int* m, const int* n, T* a, const int* lda, R* s, T* u,
                const int* ldu, T* vt, const int* ldvt, T* work, const int* lwork, int* iwork,
                int* info, size_t);
  /*! \brief cgesdd/zgesdd (complex T): vt is V^H. */
  void (*gesdd_complex)(const char* jobz, const int* m, const int* n, T* a, const int* lda, R* s,
                        T* u, const int* ldu, T* vt, const int* ldvt, T* work, const int* lwork,
                        R* rwork, int* iwork, int* info, size_t);
  void (*geqrf)(const int* m, const int* n, T* a, const int* lda, T* tau, T* work, const int* lwork,
                int* info);
  /*! \brief orgqr (real T) or ungqr (complex T): the same form. */
  void (*orgqr)(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau,
                T* work, const int* lwork, int* info);
  /*! \brief OpenBLAS's openblas_set_num_threads, or null (another LAPACK). */
  void (*set_threads)(int threads);
};

/*! \brief The routines for T (float, double, std::complex<float> or std::complex<double>);
 *         throws a BackendError naming the libraries tried when no LAPACK is found. */
template <typename T>
const LapackRoutines<T>& Lapack();

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_LINALG_LAPACK_H_
