#include "nccl_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "dlarray/errors.h"

namespace dlarray {
namespace cuda {
namespace nccl {
namespace {

constexpr const char* kSoname = "libnccl.so.2";

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// A folder stands for the libnccl.so.2 inside it.
std::string AsLibrary(const std::string& place) {
  if (!IsDirectory(place)) return place;
  return place + (place.back() == '/' ? "" : "/") + kSoname;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

void AddUnique(std::vector<std::string>& out, const std::string& place) {
  if (place.empty()) return;
  for (const std::string& p : out) {
    if (p == place) return;
  }
  out.push_back(place);
}

// Resolves one symbol; returns false and names it in why when it is missing.
template <typename F>
bool Resolve(void* handle, const char* name, F& fn, std::string& why) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  if (fn != nullptr) return true;
  why = std::string("not a usable NCCL: it has no ") + name;
  return false;
}

// Opens one place; fills lib and returns true, or says why not.
bool TryOpen(const std::string& place, Library& lib, std::string& why) {
  const bool by_name = place.find('/') == std::string::npos;
  if (!by_name && !Exists(place)) {
    why = "no such file";
    return false;
  }
  (void)dlerror();
  void* handle = dlopen(place.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    why = err != nullptr ? err : "dlopen failed";
    return false;
  }
  Library l;
  bool ok = Resolve(handle, "ncclGetVersion", l.GetVersion, why) &&
            Resolve(handle, "ncclGetErrorString", l.GetErrorString, why) &&
            Resolve(handle, "ncclGetLastError", l.GetLastError, why) &&
            Resolve(handle, "ncclGetUniqueId", l.GetUniqueId, why) &&
            Resolve(handle, "ncclCommInitRankConfig", l.CommInitRankConfig, why) &&
            Resolve(handle, "ncclCommFinalize", l.CommFinalize, why) &&
            Resolve(handle, "ncclCommDestroy", l.CommDestroy, why) &&
            Resolve(handle, "ncclCommAbort", l.CommAbort, why) &&
            Resolve(handle, "ncclCommGetAsyncError", l.CommGetAsyncError, why) &&
            Resolve(handle, "ncclAllReduce", l.AllReduce, why) &&
            Resolve(handle, "ncclBroadcast", l.Broadcast, why) &&
            Resolve(handle, "ncclAllGather", l.AllGather, why) &&
            Resolve(handle, "ncclReduceScatter", l.ReduceScatter, why) &&
            Resolve(handle, "ncclGroupStart", l.GroupStart, why) &&
            Resolve(handle, "ncclGroupEnd", l.GroupEnd, why);
  if (ok) {  // optional: a library without it keeps the non-blocking communicator
    l.CommSplit = reinterpret_cast<decltype(l.CommSplit)>(dlsym(handle, "ncclCommSplit"));
  }
  if (ok && l.GetVersion(&l.version) != kSuccess) {
    why = "ncclGetVersion failed";
    ok = false;
  }
  if (ok && l.version < kMinVersion) {
    why = "NCCL " + VersionText(l.version) + " is too old (dlarray needs " +
          VersionText(kMinVersion) + " or newer)";
    ok = false;
  }
  if (!ok) {
    dlclose(handle);
    return false;
  }
  // The file the loader picked (a name alone may resolve anywhere).
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(l.GetVersion), &info) != 0 && info.dli_fname != nullptr) {
    char resolved[PATH_MAX];
    l.path = realpath(info.dli_fname, resolved) != nullptr ? resolved : info.dli_fname;
  } else {
    l.path = place;
  }
  lib = std::move(l);
  return true;  // never closed: NCCL keeps threads and state for the process's lifetime
}

}  // namespace

std::vector<std::string> SearchPath(const std::vector<std::string>& candidates) {
  std::vector<std::string> out;
  const std::string forced = Env("DLARRAY_NCCL_LIBRARY");
  if (!forced.empty()) {
    out.push_back(AsLibrary(forced));
    return out;
  }
  for (const std::string& c : candidates) AddUnique(out, AsLibrary(c));
  AddUnique(out, kSoname);
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    const std::string root = Env(var);
    if (root.empty()) continue;
    AddUnique(out, root + "/lib64/" + kSoname);
    AddUnique(out, root + "/lib/" + kSoname);
  }
#ifdef DLARRAY_CUDA_LIBRARY_DIR
  AddUnique(out, std::string(DLARRAY_CUDA_LIBRARY_DIR) + "/" + kSoname);
#endif
  AddUnique(out, std::string("/usr/local/cuda/lib64/") + kSoname);
  AddUnique(out, std::string("/usr/local/cuda/lib/") + kSoname);
  return out;
}

Library Open(const std::vector<std::string>& candidates) {
  const std::vector<std::string> places = SearchPath(candidates);
  const bool forced = !Env("DLARRAY_NCCL_LIBRARY").empty();
  std::string tried;
  for (const std::string& place : places) {
    Library lib;
    std::string why;
    if (TryOpen(place, lib, why)) return lib;
    tried += (tried.empty() ? "" : "; ") + place + " (" + why + ")";
  }
  throw BackendError(
      std::string("NCCL was not found: tried ") + tried +
      (forced ? ". DLARRAY_NCCL_LIBRARY names the only place tried: unset it to search the "
                "nvidia-nccl wheel, the loader's path and the CUDA toolkit"
              : ". Install NCCL (pip install nvidia-nccl-cu12 or -cu13, or the libnccl2 "
                "package), or set DLARRAY_NCCL_LIBRARY to its libnccl.so.2"));
}

const Library& Load(const std::vector<std::string>& candidates) {
  static std::mutex mu;
  static std::unique_ptr<Library> loaded;
  std::lock_guard<std::mutex> lock(mu);
  if (!loaded) loaded = std::make_unique<Library>(Open(candidates));
  return *loaded;
}

std::string VersionText(int code) {
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? code % 10000 / 100 : code % 1000 / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

std::string ErrorText(const Library& lib, Result r) {
  static const char* const kNames[] = {
      "ncclSuccess",         "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
      "ncclInvalidArgument", "ncclInvalidUsage",       "ncclRemoteError", "ncclInProgress"};
  std::string name = r >= 0 && r < 8 ? kNames[r] : "ncclResult " + std::to_string(r);
  const char* text = lib.GetErrorString != nullptr ? lib.GetErrorString(r) : nullptr;
  return text != nullptr ? name + " (" + text + ")" : name;
}

}  // namespace nccl
}  // namespace cuda
}  // namespace dlarray
