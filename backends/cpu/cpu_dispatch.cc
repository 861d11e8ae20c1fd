/*!
 * \file cpu_dispatch.cc
 * \brief cpu_backend.so's entry point in the portable build: picks the instruction set path for
 *        this CPU (or the one DLARRAY_CPU_ISA names), opens <pkg>/lib/cpu_backend_<path>.so and
 *        hands the core that library's descriptor. Built for the baseline x86-64 alone.
 *
 * Paths: avx512 (x86-64-v4), avx2 (x86-64-v3), baseline (x86-64). DLARRAY_CPU_ISA may force a
 * lower one (or the one picked anyway); a path the CPU cannot run, or an unknown name, makes the
 * plugin fail to initialise with a message naming the CPU's best path, never a crash (SIGILL).
 */
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cpu_isa_level.h"
#include "dlarray/plugin_api.h"

namespace {

const char* const kPaths[] = {"baseline", "avx2", "avx512"};
constexpr int kNumPaths = 3;

// The best path this CPU (and its OS: the checks include the saved vector state) runs.
int BestPath() { return dlarray::cpu::CpuIsaLevel(); }

std::string g_error;  // why no path could be opened (reported by the fallback descriptor)

// The folder of this library (cpu_backend.so), found from its own address.
std::string OwnFolder() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&BestPath), &info) == 0 || info.dli_fname == nullptr)
    return "";
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

const DLArrayPluginDescriptor* OpenPath() {
  const int best = BestPath();
  int chosen = best;
  if (const char* forced = std::getenv("DLARRAY_CPU_ISA"); forced != nullptr && *forced) {
    chosen = -1;
    for (int i = 0; i < kNumPaths; ++i) {
      if (std::strcmp(forced, kPaths[i]) == 0) chosen = i;
    }
    if (chosen < 0) {
      g_error = std::string("DLARRAY_CPU_ISA=") + forced +
                " is not a path: use baseline, avx2 or avx512 (this CPU runs up to " +
                kPaths[best] + ")";
      return nullptr;
    }
    if (chosen > best) {
      g_error = std::string("DLARRAY_CPU_ISA=") + forced + ": this CPU runs up to " + kPaths[best] +
                ", not " + forced;
      return nullptr;
    }
  }
  const std::string library = OwnFolder() + "/../lib/cpu_backend_" + kPaths[chosen] + ".so";
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    g_error = "cannot open the " + std::string(kPaths[chosen]) + " path " + library + ": " +
              (why != nullptr ? why : "unknown error");
    return nullptr;
  }
  auto entry = reinterpret_cast<DLArrayPluginEntryFn>(dlsym(handle, DLARRAY_PLUGIN_ENTRY_SYMBOL));
  if (entry == nullptr) {
    g_error = library + " has no " DLARRAY_PLUGIN_ENTRY_SYMBOL;
    return nullptr;
  }
  return entry();  // the library stays open: the core uses its descriptor until exit
}

int FailCreateDevice(const DLArrayCoreApi* core, const DLArrayDeviceApi** out) {
  *out = nullptr;
  core->set_error(0, ("cpu: " + g_error).c_str());
  return -1;
}

int FailRegister(const DLArrayCoreApi* core, DLArrayRegistry* registry) {
  (void)registry;
  core->set_error(0, ("cpu: " + g_error).c_str());
  return -1;
}

const DLArrayPluginDescriptor kFailed = {DLARRAY_PLUGIN_ABI_MAJOR,
                                         DLARRAY_PLUGIN_ABI_MINOR,
                                         sizeof(DLArrayPluginDescriptor),
                                         "cpu",
                                         nullptr,
                                         kDLArrayCPU,
                                         0,
                                         &FailCreateDevice,
                                         &FailRegister};

}  // namespace

DLARRAY_PLUGIN_ENTRY {
  static const DLArrayPluginDescriptor* descriptor = OpenPath();
  return descriptor != nullptr ? descriptor : &kFailed;
}
