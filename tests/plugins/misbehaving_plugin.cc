// A device plugin (type 27) that misbehaves without crashing anyone: its allocate() returns null
// without an error, and its kernel throws an exception that is not a std::exception.
#include "test_plugin_util.h"

namespace {

class NullAllocDevice final : public dlarray::Device {
 public:
  int device_type() const override { return 27; }
  int device_count() override { return 1; }
  std::string device_name(int) override { return "null-allocating test device"; }
  void* allocate(int, size_t) override { return nullptr; }
  void free(int, void*, size_t) noexcept override {}
  void copy(const void*, uint64_t, DLDevice, void*, uint64_t, DLDevice, size_t) override {}
  void synchronize(int) override {}
};

dlarray::Device* Create() { return new NullAllocDevice(); }

void ThrowsInt(const dlarray::KernelContext&) { throw 42; }

void Register(dlarray::Registry* r) {
  dlarray::OpSchema s;
  s.name = "misbehave";
  s.doc = "throws an int (test only)";
  r->declare_op(s);
  r->register_kernel("misbehave", kDLArrayCPU, &ThrowsInt);
}

}  // namespace

DLARRAY_DEFINE_PLUGIN("misbehaving", 27, &Create, &Register)
