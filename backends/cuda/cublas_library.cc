#include "cublas_library.h"

#include <cuda_runtime_api.h>

#include <cstdlib>

#include "dlarray/errors.h"
#include "lazy_library.h"

namespace dlarray {
namespace cuda {

const CublasLibrary& CublasLibrary::Get() {
  static const CublasLibrary library;  // C++11: initialised once, thread-safe
  return library;
}

const CublasLibrary& CublasLibrary::Require() {
  const CublasLibrary& lib = Get();
  if (!lib.ok) throw BackendError(lib.reason);
  return lib;
}

CublasLibrary::CublasLibrary() {
  LazyLibrary lib(ToolkitLibraryCandidates("DLARRAY_CUBLAS", "cublas"));
  const std::string major = std::to_string(CUDART_VERSION / 1000);
  if (lib.handle() == nullptr) {
    const char* env = std::getenv("DLARRAY_CUBLAS");
    reason = "cuBLAS (matrix products on the GPU) is not available: " + lib.error() +
             (env != nullptr && *env != '\0'
                  ? " (from DLARRAY_CUBLAS)"
                  : "; install it with `pip install nvidia-cublas` (CUDA " + major +
                        ") or the CUDA toolkit, or set DLARRAY_CUBLAS to libcublas.so." + major);
    return;
  }
  // The exported names: cublas_v2.h maps cublasCreate and friends to these by macro.
  Bind(lib, Create, "cublasCreate_v2");
  Bind(lib, Destroy, "cublasDestroy_v2");
  Bind(lib, SetStream, "cublasSetStream_v2");
  Bind(lib, SetWorkspace, "cublasSetWorkspace_v2");
  Bind(lib, GemmEx, "cublasGemmEx");
  Bind(lib, GemmEx64, "cublasGemmEx_64");
  Bind(lib, GetStatusName, "cublasGetStatusName");
  Bind(lib, GetStatusString, "cublasGetStatusString");
#define DLARRAY_CUBLAS_BIND(name)      \
  Bind(lib, S##name, "cublasS" #name); \
  Bind(lib, D##name, "cublasD" #name); \
  Bind(lib, C##name, "cublasC" #name); \
  Bind(lib, Z##name, "cublasZ" #name);
  DLARRAY_CUBLAS_BATCHED(DLARRAY_CUBLAS_BIND)
#undef DLARRAY_CUBLAS_BIND
  path = lib.path();
  if (!lib.missing().empty()) {
    reason = "cuBLAS at " + path +
             " is too old for dlarray (CUDA 12 or newer is needed): it lacks " + lib.missing();
    return;
  }
  ok = true;
}

}  // namespace cuda
}  // namespace dlarray
