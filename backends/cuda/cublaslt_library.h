/*!
 * \file cublaslt_library.h
 * \brief cuBLASLt, loaded with dlopen at the first fused product (linear, linear_weight_grad),
 *        as cuBLAS is (cublas_library.h): the plugin does not link it.
 */
#ifndef DLARRAY_BACKENDS_CUDA_CUBLASLT_LIBRARY_H_
#define DLARRAY_BACKENDS_CUDA_CUBLASLT_LIBRARY_H_

#include <cublasLt.h>

#include <string>

namespace dlarray {
namespace cuda {

/*! \brief The cuBLASLt functions the plugin uses, and what is known about the library. */
struct CublasLtLibrary {
  /*! \brief Loads cuBLASLt once (thread-safe), from $DLARRAY_CUBLASLT or the places
   *         ToolkitLibraryCandidates (lazy_library.h) lists. */
  static const CublasLtLibrary& Get();

  bool ok = false;     //!< every function below is set
  std::string reason;  //!< why not ok
  std::string path;    //!< the file loaded

  decltype(&cublasLtCreate) Create = nullptr;
  decltype(&cublasLtMatmul) Matmul = nullptr;
  decltype(&cublasLtMatmulDescCreate) MatmulDescCreate = nullptr;
  decltype(&cublasLtMatmulDescDestroy) MatmulDescDestroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) MatmulDescSetAttribute = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) MatrixLayoutCreate = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) MatrixLayoutDestroy = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) MatmulPreferenceCreate = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) MatmulPreferenceDestroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) MatmulPreferenceSetAttribute = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) MatmulAlgoGetHeuristic = nullptr;
  // split-k variants of the heuristic's algorithms, to time (cublaslt_tune.cc)
  decltype(&cublasLtMatmulAlgoCheck) MatmulAlgoCheck = nullptr;
  decltype(&cublasLtMatmulAlgoConfigSetAttribute) MatmulAlgoConfigSetAttribute = nullptr;
  decltype(&cublasLtMatmulAlgoConfigGetAttribute) MatmulAlgoConfigGetAttribute = nullptr;

 private:
  CublasLtLibrary();
};

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_CUBLASLT_LIBRARY_H_
