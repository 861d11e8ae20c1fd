/*!
 * \file cusolver_library.h
 * \brief cuSOLVER (dense), loaded with dlopen at the first linalg_* op on a GPU, as cuBLAS is
 *        (cublas_library.h): importing dlarray maps none of it.
 */
#ifndef DLARRAY_BACKENDS_CUDA_CUSOLVER_LIBRARY_H_
#define DLARRAY_BACKENDS_CUDA_CUSOLVER_LIBRARY_H_

#include <cusolverDn.h>

#include <string>

namespace dlarray {
namespace cuda {

/*! \brief The cuSOLVER functions the linalg_* kernels use: per real type (S and D) and per
 *         complex type (C and Z; heevd and ungqr are the complex forms of syevd and orgqr). */
struct CusolverLibrary {
  /*! \brief Loads cuSOLVER once (thread-safe), from $DLARRAY_CUSOLVER or the places
   *         ToolkitLibraryCandidates (lazy_library.h) lists. */
  static const CusolverLibrary& Get();
  /*! \brief Get(), or a BackendError saying why cuSOLVER cannot be used and how to get it. */
  static const CusolverLibrary& Require();

  bool ok = false;     //!< every function below is set
  std::string reason;  //!< why not ok
  std::string path;    //!< the file loaded

  decltype(&cusolverDnCreate) Create = nullptr;
  decltype(&cusolverDnSetStream) SetStream = nullptr;
  decltype(&cusolverDnCreateGesvdjInfo) CreateGesvdjInfo = nullptr;
  decltype(&cusolverDnDestroyGesvdjInfo) DestroyGesvdjInfo = nullptr;
  decltype(&cusolverDnCreateSyevjInfo) CreateSyevjInfo = nullptr;
  decltype(&cusolverDnDestroySyevjInfo) DestroySyevjInfo = nullptr;
  decltype(&cusolverDnCreateParams) CreateParams = nullptr;
  decltype(&cusolverDnXpotrf_bufferSize) Xpotrf_bufferSize = nullptr;
  decltype(&cusolverDnXpotrf) Xpotrf = nullptr;
#define DLARRAY_CUSOLVER_TYPED(X) \
  X(getrf_bufferSize)             \
  X(getrf)                        \
  X(getrs)                        \
  X(potrf_bufferSize)             \
  X(potrf)                        \
  X(potrfBatched)                 \
  X(syevd_bufferSize)             \
  X(syevd)                        \
  X(syevjBatched_bufferSize)      \
  X(syevjBatched)                 \
  X(gesvdj_bufferSize)            \
  X(gesvdj)                       \
  X(gesvdjBatched_bufferSize)     \
  X(gesvdjBatched)                \
  X(geqrf_bufferSize)             \
  X(geqrf)                        \
  X(orgqr_bufferSize)             \
  X(orgqr)
#define DLARRAY_CUSOLVER_COMPLEX(X) \
  X(getrf_bufferSize)               \
  X(getrf)                          \
  X(getrs)                          \
  X(potrf_bufferSize)               \
  X(potrf)                          \
  X(potrfBatched)                   \
  X(heevd_bufferSize)               \
  X(heevd)                          \
  X(heevjBatched_bufferSize)        \
  X(heevjBatched)                   \
  X(gesvdj_bufferSize)              \
  X(gesvdj)                         \
  X(gesvdjBatched_bufferSize)       \
  X(gesvdjBatched)                  \
  X(geqrf_bufferSize)               \
  X(geqrf)                          \
  X(ungqr_bufferSize)               \
  X(ungqr)
#define DLARRAY_CUSOLVER_MEMBER(name)             \
  decltype(&cusolverDnS##name) S##name = nullptr; \
  decltype(&cusolverDnD##name) D##name = nullptr;
  DLARRAY_CUSOLVER_TYPED(DLARRAY_CUSOLVER_MEMBER)
#undef DLARRAY_CUSOLVER_MEMBER
#define DLARRAY_CUSOLVER_COMPLEX_MEMBER(name)     \
  decltype(&cusolverDnC##name) C##name = nullptr; \
  decltype(&cusolverDnZ##name) Z##name = nullptr;
  DLARRAY_CUSOLVER_COMPLEX(DLARRAY_CUSOLVER_COMPLEX_MEMBER)
#undef DLARRAY_CUSOLVER_COMPLEX_MEMBER

 private:
  CusolverLibrary();
};

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_CUSOLVER_LIBRARY_H_
