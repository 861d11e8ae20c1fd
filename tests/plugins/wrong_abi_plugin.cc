// A plugin built for another ABI version; the loader must not touch anything past abi_version.
#include "dlarray/plugin.h"

DLARRAY_PLUGIN_ENTRY {
  static const DLArrayPluginDescriptor d{999u, "wrong_abi", 1, nullptr, nullptr};
  return &d;
}
