#include "cublaslt_library.h"

#include <cstdlib>

#include "lazy_library.h"

namespace dlarray {
namespace cuda {

const CublasLtLibrary& CublasLtLibrary::Get() {
  static const CublasLtLibrary library;  // C++11: initialised once, thread-safe
  return library;
}

CublasLtLibrary::CublasLtLibrary() {
  LazyLibrary lib(ToolkitLibraryCandidates("DLARRAY_CUBLASLT", "cublasLt"));
  if (lib.handle() == nullptr) {
    // Not an error anywhere: the fused products then run as their composites.
    const char* env = std::getenv("DLARRAY_CUBLASLT");
    reason = "cuBLASLt is not available: " + lib.error() +
             (env != nullptr && *env != '\0' ? " (from DLARRAY_CUBLASLT)" : "");
    return;
  }
  Bind(lib, Create, "cublasLtCreate");
  Bind(lib, Matmul, "cublasLtMatmul");
  Bind(lib, MatmulDescCreate, "cublasLtMatmulDescCreate");
  Bind(lib, MatmulDescDestroy, "cublasLtMatmulDescDestroy");
  Bind(lib, MatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
  Bind(lib, MatrixLayoutCreate, "cublasLtMatrixLayoutCreate");
  Bind(lib, MatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
  Bind(lib, MatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate");
  Bind(lib, MatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy");
  Bind(lib, MatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
  Bind(lib, MatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
  Bind(lib, MatmulAlgoCheck, "cublasLtMatmulAlgoCheck");
  Bind(lib, MatmulAlgoConfigSetAttribute, "cublasLtMatmulAlgoConfigSetAttribute");
  Bind(lib, MatmulAlgoConfigGetAttribute, "cublasLtMatmulAlgoConfigGetAttribute");
  path = lib.path();
  if (!lib.missing().empty()) {
    reason = "cuBLASLt at " + path + " lacks " + lib.missing();
    return;
  }
  ok = true;
}

}  // namespace cuda
}  // namespace dlarray
