/*!
 * \file cublas_library.h
 * \brief cuBLAS, loaded with dlopen at the first matrix product (or CUDA graph recording): the
 *        CUDA plugin does not link it, so `import dlarray` does not map cuBLAS and cuBLASLt
 *        (about 145 MB resident) on machines that never multiply matrices on a GPU, or have none.
 */
#ifndef DLARRAY_BACKENDS_CUDA_CUBLAS_LIBRARY_H_
#define DLARRAY_BACKENDS_CUDA_CUBLAS_LIBRARY_H_

#include <cublas_v2.h>

#include <cstdint>
#include <string>

namespace dlarray {
namespace cuda {

/*! \brief The cuBLAS functions the plugin uses, and what is known about the library. */
struct CublasLibrary {
  /*! \brief Loads cuBLAS once (thread-safe), from $DLARRAY_CUBLAS or the places
   *         ToolkitLibraryCandidates (lazy_library.h) lists. */
  static const CublasLibrary& Get();
  /*! \brief Get(), or a BackendError saying why cuBLAS cannot be used and how to get it. */
  static const CublasLibrary& Require();

  bool ok = false;     //!< every function below is set
  std::string reason;  //!< why not ok
  std::string path;    //!< the file loaded

  decltype(&cublasCreate_v2) Create = nullptr;
  decltype(&cublasDestroy_v2) Destroy = nullptr;
  decltype(&cublasSetStream_v2) SetStream = nullptr;
  decltype(&cublasSetWorkspace_v2) SetWorkspace = nullptr;
  // Spelled out: C++ builds of cublas_api.h overload these (a legacy cudaDataType compute type).
  cublasStatus_t (*GemmEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                           const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                           int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                           cublasGemmAlgo_t) = nullptr;
  cublasStatus_t (*GemmEx64)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t, int64_t,
                             int64_t, const void*, const void*, cudaDataType, int64_t, const void*,
                             cudaDataType, int64_t, const void*, void*, cudaDataType, int64_t,
                             cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  decltype(&cublasGetStatusName) GetStatusName = nullptr;
  decltype(&cublasGetStatusString) GetStatusString = nullptr;
  // Per type (S, D, C, Z): batched LU and solve for dlarray.linalg's stacks of small matrices,
  // and the triangular solves of a large matrix's solve (linalg.cu).
#define DLARRAY_CUBLAS_BATCHED(X) \
  X(getrfBatched)                 \
  X(getrsBatched)                 \
  X(trsm_v2)                      \
  X(trsv_v2)
#define DLARRAY_CUBLAS_MEMBER(name)           \
  decltype(&cublasS##name) S##name = nullptr; \
  decltype(&cublasD##name) D##name = nullptr; \
  decltype(&cublasC##name) C##name = nullptr; \
  decltype(&cublasZ##name) Z##name = nullptr;
  DLARRAY_CUBLAS_BATCHED(DLARRAY_CUBLAS_MEMBER)
#undef DLARRAY_CUBLAS_MEMBER

 private:
  CublasLibrary();
};

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_CUBLAS_LIBRARY_H_
