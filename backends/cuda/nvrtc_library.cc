#include "nvrtc_library.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>

#include "lazy_library.h"

namespace dlarray {
namespace cuda {

const NvrtcLibrary& NvrtcLibrary::Get() {
  static const NvrtcLibrary library;  // C++11: initialised once, thread-safe
  return library;
}

NvrtcLibrary::NvrtcLibrary() {
  LazyLibrary lib(ToolkitLibraryCandidates("DLARRAY_NVRTC", "nvrtc"));
  if (lib.handle() == nullptr) {
    const char* env = std::getenv("DLARRAY_NVRTC");
    reason = "NVRTC is not available: " + lib.error() +
             (env != nullptr && *env != '\0'
                  ? " (from DLARRAY_NVRTC)"
                  : "; install the CUDA toolkit's NVRTC library or set DLARRAY_NVRTC to its path");
    return;
  }
  Bind(lib, GetErrorString, "nvrtcGetErrorString");
  Bind(lib, Version, "nvrtcVersion");
  Bind(lib, GetNumSupportedArchs, "nvrtcGetNumSupportedArchs");
  Bind(lib, GetSupportedArchs, "nvrtcGetSupportedArchs");
  Bind(lib, CreateProgram, "nvrtcCreateProgram");
  Bind(lib, DestroyProgram, "nvrtcDestroyProgram");
  Bind(lib, CompileProgram, "nvrtcCompileProgram");
  Bind(lib, GetPTXSize, "nvrtcGetPTXSize");
  Bind(lib, GetPTX, "nvrtcGetPTX");
  Bind(lib, GetCUBINSize, "nvrtcGetCUBINSize");
  Bind(lib, GetCUBIN, "nvrtcGetCUBIN");
  Bind(lib, GetProgramLogSize, "nvrtcGetProgramLogSize");
  Bind(lib, GetProgramLog, "nvrtcGetProgramLog");
  Bind(lib, AddNameExpression, "nvrtcAddNameExpression");
  Bind(lib, GetLoweredName, "nvrtcGetLoweredName");
  path = lib.path();
  if (!lib.missing().empty()) {
    reason = "NVRTC at " + path +
             " is too old for dlarray.rtc (CUDA 11.2 or newer is needed): it "
             "lacks " +
             lib.missing();
    return;
  }
  if (Version(&major, &minor) != NVRTC_SUCCESS) {
    reason = "NVRTC at " + path + " does not work: nvrtcVersion failed";
    return;
  }
  int n = 0;
  if (GetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0) {
    archs.resize(static_cast<size_t>(n));
    if (GetSupportedArchs(archs.data()) != NVRTC_SUCCESS) archs.clear();
    std::sort(archs.begin(), archs.end());
  }
  if (archs.empty()) {
    reason = "NVRTC at " + path + " does not work: it lists no supported architecture";
    return;
  }
  ok = true;
}

std::string NvrtcLibrary::ErrorText(nvrtcResult r) const {
  const char* text = GetErrorString != nullptr ? GetErrorString(r) : nullptr;
  return text != nullptr ? text : "NVRTC error " + std::to_string(static_cast<int>(r));
}

}  // namespace cuda
}  // namespace dlarray
