#include "cublas_library.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdlib>
#include <vector>

#include "dlarray/errors.h"
#include "lazy_library.h"

namespace dlarray {
namespace cuda {
namespace {

// The folder of this plugin's file (for the NVIDIA wheel next to the installed package).
std::string PluginFolder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&PluginFolder), &info) == 0 || info.dli_fname == nullptr) {
    return "";
  }
  const std::string file = info.dli_fname;
  const size_t slash = file.rfind('/');
  return slash == std::string::npos ? "" : file.substr(0, slash);
}

std::vector<std::string> Candidates() {
  const char* env = std::getenv("DLARRAY_CUBLAS");
  if (env != nullptr && *env != '\0') return {env};
  const std::string major = std::to_string(CUDART_VERSION / 1000);
  const std::string versioned = "libcublas.so." + major;
  std::vector<std::string> out{versioned};
  const std::string here = PluginFolder();  // site-packages/dlarray/plugins
  if (!here.empty()) out.push_back(here + "/../../nvidia/cu" + major + "/lib/" + versioned);
#ifdef DLARRAY_CUDA_LIBRARY_DIR
  out.push_back(std::string(DLARRAY_CUDA_LIBRARY_DIR) + "/" + versioned);
#endif
  return out;
}

template <typename Fn>
void Bind(LazyLibrary& lib, Fn& fn, const char* name) {
  fn = reinterpret_cast<Fn>(lib.Symbol(name));
}

}  // namespace

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
  LazyLibrary lib(Candidates());
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
