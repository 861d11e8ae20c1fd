/*!
 * \file linalg_lapack.h
 * \brief The LAPACK routines behind the linalg_* ops, found at the first call (never at load): in
 *        the BLAS library matrix_multiply uses (scipy-openblas32 prefixes them with "scipy_"),
 *        else in liblapack.so.3. Fortran interface, 32-bit integers, column-major matrices.
 */
#ifndef DLARRAY_BACKENDS_CPU_LINALG_LAPACK_H_
#define DLARRAY_BACKENDS_CPU_LINALG_LAPACK_H_

#include <cstddef>

namespace dlarray::cpu {

/*! \brief The routines of one real type T (s* for float, d* for double). The trailing size_t
 *         arguments are gfortran's hidden lengths of the character arguments. */
template <typename T>
struct LapackRoutines {
  void (*getrf)(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info);
  void (*gesv)(const int* n, const int* nrhs, T* a, const int* lda, int* ipiv, T* b, const int* ldb,
               int* info);
  void (*potrf)(const char* uplo, const int* n, T* a, const int* lda, int* info, size_t);
  void (*syevd)(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, T* w,
                T* work, const int* lwork, int* iwork, const int* liwork, int* info, size_t,
                size_t);
  void (*gesdd)(const char* jobz, const int* m, const int* n, T* a, const int* lda, T* s, T* u,
                const int* ldu, T* vt, const int* ldvt, T* work, const int* lwork, int* iwork,
                int* info, size_t);
  void (*geqrf)(const int* m, const int* n, T* a, const int* lda, T* tau, T* work, const int* lwork,
                int* info);
  void (*orgqr)(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau,
                T* work, const int* lwork, int* info);
  /*! \brief OpenBLAS's openblas_set_num_threads, or null (another LAPACK). */
  void (*set_threads)(int threads);
};

/*! \brief The routines for T (float or double); throws a BackendError naming the libraries
 *         tried when no LAPACK is found. */
template <typename T>
const LapackRoutines<T>& Lapack();

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_LINALG_LAPACK_H_
