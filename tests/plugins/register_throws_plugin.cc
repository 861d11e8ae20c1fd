// An op plugin whose registration throws half-way: nothing it registered may stay.
#include "dlarray/plugin.h"

static void Noop(const dlarray::KernelContext&) {}

static void Register(dlarray::Registry* r) {
  dlarray::OpSchema s;
  s.name = "half_registered_op";
  r->declare_op(s);
  r->register_kernel("half_registered_op", kDLArrayCPU, &Noop);
  throw dlarray::BackendError("simulated failure in register_kernels");
}

DLARRAY_DEFINE_PLUGIN("register_throws", 0, nullptr, &Register)
