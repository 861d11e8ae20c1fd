#include "cusolver_library.h"

#include <cuda_runtime_api.h>

#include <cstdlib>

#include "dlarray/errors.h"
#include "lazy_library.h"

namespace dlarray {
namespace cuda {

const CusolverLibrary& CusolverLibrary::Get() {
  static const CusolverLibrary library;  // C++11: initialised once, thread-safe
  return library;
}

const CusolverLibrary& CusolverLibrary::Require() {
  const CusolverLibrary& lib = Get();
  if (!lib.ok) throw BackendError(lib.reason);
  return lib;
}

CusolverLibrary::CusolverLibrary() {
  LazyLibrary lib(ToolkitLibraryCandidates("DLARRAY_CUSOLVER", "cusolver"));
  const std::string major = std::to_string(CUDART_VERSION / 1000);
  if (lib.handle() == nullptr) {
    const char* env = std::getenv("DLARRAY_CUSOLVER");
    reason =
        "cuSOLVER (dlarray.linalg on the GPU) is not available: " + lib.error() +
        (env != nullptr && *env != '\0'
             ? " (from DLARRAY_CUSOLVER)"
             : "; install it with `pip install nvidia-cusolver` (CUDA " + major +
                   ") or the CUDA toolkit, or set DLARRAY_CUSOLVER to libcusolver.so." + major);
    return;
  }
  Bind(lib, Create, "cusolverDnCreate");
  Bind(lib, SetStream, "cusolverDnSetStream");
  Bind(lib, CreateGesvdjInfo, "cusolverDnCreateGesvdjInfo");
  Bind(lib, DestroyGesvdjInfo, "cusolverDnDestroyGesvdjInfo");
  Bind(lib, CreateSyevjInfo, "cusolverDnCreateSyevjInfo");
  Bind(lib, DestroySyevjInfo, "cusolverDnDestroySyevjInfo");
  Bind(lib, CreateParams, "cusolverDnCreateParams");
  Bind(lib, Xpotrf_bufferSize, "cusolverDnXpotrf_bufferSize");
  Bind(lib, Xpotrf, "cusolverDnXpotrf");
#define DLARRAY_CUSOLVER_BIND(name)        \
  Bind(lib, S##name, "cusolverDnS" #name); \
  Bind(lib, D##name, "cusolverDnD" #name);
  DLARRAY_CUSOLVER_TYPED(DLARRAY_CUSOLVER_BIND)
#undef DLARRAY_CUSOLVER_BIND
#define DLARRAY_CUSOLVER_COMPLEX_BIND(name) \
  Bind(lib, C##name, "cusolverDnC" #name);  \
  Bind(lib, Z##name, "cusolverDnZ" #name);
  DLARRAY_CUSOLVER_COMPLEX(DLARRAY_CUSOLVER_COMPLEX_BIND)
#undef DLARRAY_CUSOLVER_COMPLEX_BIND
  path = lib.path();
  if (!lib.missing().empty()) {
    reason = "cuSOLVER at " + path + " lacks " + lib.missing();
    return;
  }
  ok = true;
}

}  // namespace cuda
}  // namespace dlarray
