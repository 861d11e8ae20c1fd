#include "cuda_driver_library.h"

#include "lazy_library.h"

namespace dlarray {
namespace cuda {
const CudaDriverLibrary& CudaDriverLibrary::Get() {
  static const CudaDriverLibrary library;
  return library;
}

CudaDriverLibrary::CudaDriverLibrary() {
  LazyLibrary lib({"libcuda.so.1"});
  if (lib.handle() == nullptr) {
    reason = "no CUDA driver: " + lib.error();
    return;
  }
  Bind(lib, GetErrorName, "cuGetErrorName");
  Bind(lib, GetErrorString, "cuGetErrorString");
  Bind(lib, CtxGetCurrent, "cuCtxGetCurrent");
  Bind(lib, ModuleLoadData, "cuModuleLoadData");
  Bind(lib, ModuleLoadDataEx, "cuModuleLoadDataEx");
  Bind(lib, ModuleUnload, "cuModuleUnload");
  Bind(lib, ModuleGetFunction, "cuModuleGetFunction");
  Bind(lib, FuncGetAttribute, "cuFuncGetAttribute");
  Bind(lib, FuncSetAttribute, "cuFuncSetAttribute");
  Bind(lib, LaunchKernel, "cuLaunchKernel");
  Bind(lib, FuncGetParamCount, "cuFuncGetParamCount", false);
  if (!lib.missing().empty()) {
    reason = "the CUDA driver at " + lib.path() + " is too old for dlarray.rtc: it lacks " +
             lib.missing();
    return;
  }
  ok = true;
}

std::string CudaDriverLibrary::ErrorText(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (GetErrorName == nullptr || GetErrorName(r, &name) != CUDA_SUCCESS || name == nullptr) {
    return "CUDA driver error " + std::to_string(static_cast<int>(r));
  }
  if (GetErrorString != nullptr && GetErrorString(r, &text) == CUDA_SUCCESS && text != nullptr) {
    return std::string(name) + " (" + text + ")";
  }
  return name;
}

}  // namespace cuda
}  // namespace dlarray
