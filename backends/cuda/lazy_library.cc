#include "lazy_library.h"

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

}  // namespace

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
