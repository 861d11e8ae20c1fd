// A plugin built for a newer major ABI (3.0): the loader must refuse it after reading abi_major,
// without touching anything else (every other field here is garbage on purpose).
#include <cstdint>

#include "dlarray/plugin_api.h"

namespace {

struct FutureDescriptor {
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* poison[8];
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const void* dlarray_plugin_entry(void) {
  static const FutureDescriptor d{DLARRAY_PLUGIN_ABI_MAJOR + 1,
                                  0,
                                  {reinterpret_cast<const char*>(0x1), nullptr, nullptr, nullptr,
                                   nullptr, nullptr, nullptr, nullptr}};
  return &d;
}
