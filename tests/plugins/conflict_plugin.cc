// An op plugin that tries to replace the CPU backend's relu kernel: refused.
#include "dlarray/plugin.h"

static void Noop(const dlarray::KernelContext&) {}

static void Register(dlarray::Registry* r) { r->register_kernel("relu", kDLArrayCPU, &Noop); }

DLARRAY_PLUGIN_ENTRY {
  static const DLArrayPluginDescriptor d{DLARRAY_PLUGIN_ABI_VERSION, "conflict", 0, nullptr,
                                         &Register};
  return &d;
}
