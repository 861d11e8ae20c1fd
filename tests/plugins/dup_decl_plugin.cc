// An op plugin that declares one new op twice with different signatures: refused at load, and
// nothing of it is registered (its kernel would otherwise read operands it does not have).
#include "dlarray/plugin.h"

static void Noop(const dlarray::KernelContext&) {}

static void Register(dlarray::Registry* r) {
  dlarray::OpSchema one;
  one.name = "dup_decl_op";
  one.num_inputs = 1;
  r->declare_op(one);
  dlarray::OpSchema two = one;
  two.num_inputs = 3;
  r->declare_op(two);
  r->register_kernel("dup_decl_op", kDLArrayCPU, &Noop);
}

DLARRAY_DEFINE_PLUGIN("dup_decl", 0, nullptr, &Register)
