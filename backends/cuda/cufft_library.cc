#include "cufft_library.h"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "dlarray/errors.h"
#include "lazy_library.h"

namespace dlarray {
namespace cuda {
namespace {

// cuFFT's soname follows its own major version (libcufft.so.11 in CUDA 12, .so.12 in CUDA 13),
// not CUDA's: that name first, then the places ToolkitLibraryCandidates lists for CUDA's.
std::vector<std::string> Candidates() {
  std::vector<std::string> out = ToolkitLibraryCandidates("DLARRAY_CUFFT", "cufft");
  const char* env = std::getenv("DLARRAY_CUFFT");
  if (env != nullptr && *env != '\0') return out;
  const std::string versioned = "libcufft.so." + std::to_string(CUFFT_VER_MAJOR);
  out.insert(out.begin(), versioned);
  for (size_t i = 1; i < out.size(); ++i) {  // the wheel and toolkit folders: cuFFT's name too
    const size_t slash = out[i].rfind('/');
    if (slash != std::string::npos) {
      out.insert(out.begin() + static_cast<std::ptrdiff_t>(i),
                 out[i].substr(0, slash + 1) + versioned);
      ++i;
    }
  }
  return out;
}

}  // namespace

const CufftLibrary& CufftLibrary::Get() {
  static const CufftLibrary library;  // C++11: initialised once, thread-safe
  return library;
}

const CufftLibrary& CufftLibrary::Require() {
  const CufftLibrary& lib = Get();
  if (!lib.ok) throw BackendError(lib.reason);
  return lib;
}

CufftLibrary::CufftLibrary() {
  LazyLibrary lib(Candidates());
  const std::string major = std::to_string(CUDART_VERSION / 1000);
  if (lib.handle() == nullptr) {
    const char* env = std::getenv("DLARRAY_CUFFT");
    reason = "cuFFT (dlarray.fft on the GPU) is not available: " + lib.error() +
             (env != nullptr && *env != '\0'
                  ? " (from DLARRAY_CUFFT)"
                  : "; install it with `pip install nvidia-cufft` (CUDA " + major +
                        ") or the CUDA toolkit, or set DLARRAY_CUFFT to libcufft.so." +
                        std::to_string(CUFFT_VER_MAJOR));
    return;
  }
  Bind(lib, Create, "cufftCreate");
  Bind(lib, Destroy, "cufftDestroy");
  Bind(lib, SetStream, "cufftSetStream");
  Bind(lib, MakePlanMany64, "cufftMakePlanMany64");
  Bind(lib, ExecC2C, "cufftExecC2C");
  Bind(lib, ExecZ2Z, "cufftExecZ2Z");
  Bind(lib, ExecR2C, "cufftExecR2C");
  Bind(lib, ExecD2Z, "cufftExecD2Z");
  Bind(lib, ExecC2R, "cufftExecC2R");
  Bind(lib, ExecZ2D, "cufftExecZ2D");
  path = lib.path();
  if (!lib.missing().empty()) {
    reason = "cuFFT at " + path + " lacks " + lib.missing();
    return;
  }
  ok = true;
}

const char* CufftStatusName(cufftResult status) {
  switch (status) {
    case CUFFT_SUCCESS:
      return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN:
      return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED:
      return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_VALUE:
      return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR:
      return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED:
      return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED:
      return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE:
      return "CUFFT_INVALID_SIZE";
    case CUFFT_NOT_SUPPORTED:
      return "CUFFT_NOT_SUPPORTED";
    default:
      return "cuFFT error";
  }
}

}  // namespace cuda
}  // namespace dlarray
