// An op plugin that tries to replace the CPU backend's relu kernel: refused.
#include "dlarray/plugin.h"

static void Noop(const dlarray::KernelContext&) {}

static void Register(dlarray::Registry* r) { r->register_kernel("relu", kDLArrayCPU, &Noop); }

DLARRAY_DEFINE_PLUGIN("conflict", 0, nullptr, &Register)
