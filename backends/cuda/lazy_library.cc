#include "lazy_library.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

namespace dlarray {
namespace cuda {
namespace {

// The file behind an opened library: the path the loader mapped, with links resolved.
std::string LoadedPath(void* symbol, const std::string& fallback) {
  Dl_info info{};
  if (symbol == nullptr || dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return fallback;
  char resolved[PATH_MAX];
  if (realpath(info.dli_fname, resolved) != nullptr) return resolved;
  return info.dli_fname;
}

// The folder of this plugin's file.
std::string PluginFolder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&PluginFolder), &info) == 0 || info.dli_fname == nullptr) {
    return "";
  }
  const std::string file = info.dli_fname;
  const size_t slash = file.rfind('/');
  return slash == std::string::npos ? "" : file.substr(0, slash);
}

}  // namespace

std::vector<std::string> ToolkitLibraryCandidates(const char* env_var, const std::string& stem) {
  const char* env = getenv(env_var);
  if (env != nullptr && *env != '\0') return {env};
  const std::string major = std::to_string(CUDART_VERSION / 1000);
  const std::string versioned = "lib" + stem + ".so." + major;
  std::vector<std::string> out{versioned};
  const std::string here = PluginFolder();  // site-packages/dlarray/plugins when installed
  if (!here.empty()) out.push_back(here + "/../../nvidia/cu" + major + "/lib/" + versioned);
#ifdef DLARRAY_CUDA_LIBRARY_DIR
  out.push_back(std::string(DLARRAY_CUDA_LIBRARY_DIR) + "/" + versioned);
#endif
  out.push_back("lib" + stem + ".so");
  return out;
}

LazyLibrary::LazyLibrary(const std::vector<std::string>& candidates) {
  for (const std::string& name : candidates) {
    dlerror();
    void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (h != nullptr) {
      handle_ = h;
      path_ = name;
      return;
    }
    const char* err = dlerror();
    error_ += (error_.empty() ? "" : "; ") + std::string(err != nullptr ? err : name.c_str());
  }
  if (candidates.empty()) error_ = "no library to try";
}

void* LazyLibrary::Symbol(const char* name, bool required) {
  if (handle_ == nullptr) return nullptr;
  dlerror();
  void* p = dlsym(handle_, name);
  if (p == nullptr) {
    if (!required) return nullptr;
    missing_ += (missing_.empty() ? "" : ", ") + std::string(name);
  } else if (!resolved_) {
    path_ = LoadedPath(p, path_);  // the first symbol found tells which file was mapped
    resolved_ = true;
  }
  return p;
}

}  // namespace cuda
}  // namespace dlarray
