// Shared bits of the test plugins: a host-memory Device with a configurable count.
#ifndef DLARRAY_TESTS_PLUGINS_TEST_PLUGIN_UTIL_H_
#define DLARRAY_TESTS_PLUGINS_TEST_PLUGIN_UTIL_H_

#include <cstdlib>
#include <cstring>
#include <string>

#include "dlarray/plugin.h"

/*! \brief Test device type (unused by DLPack's numbering here). */
constexpr int kTestDeviceType = 20;

/*! \brief The extension every test device offers: its name, as the table. */
constexpr char kTestExtension[] = "dlarray.test_extension.v1";

class HostMemoryDevice : public dlarray::Device {
 public:
  HostMemoryDevice(int count, std::string reason, int type = kTestDeviceType)
      : count_(count), reason_(std::move(reason)), type_(type) {}
  int device_type() const override { return type_; }
  int device_count() override { return count_; }
  std::string unavailable_reason() override { return reason_; }
  std::string device_name(int id) override { return "test device " + std::to_string(id); }
  void* allocate(int, size_t nbytes) override {
    void* p = std::malloc(nbytes);
    if (p == nullptr) throw dlarray::OutOfMemoryError("test device: out of memory");
    return p;
  }
  void free(int, void* ptr, size_t) noexcept override { std::free(ptr); }
  // Host memory: the core may offset the pointers, kernels read them on the host.
  uint64_t capabilities() const override { return DLARRAY_DEVICE_HOST_ADDRESSABLE; }
  void copy(const void* src, uint64_t src_offset, DLDevice, void* dst, uint64_t dst_offset,
            DLDevice, size_t nbytes) override {
    std::memcpy(static_cast<char*>(dst) + dst_offset, static_cast<const char*>(src) + src_offset,
                nbytes);
  }
  void synchronize(int) override {}
  const void* extension(const std::string& name) override {
    return name == kTestExtension ? kTestExtension : nullptr;
  }

 private:
  int count_;
  std::string reason_;
  int type_;
};

#endif  // DLARRAY_TESTS_PLUGINS_TEST_PLUGIN_UTIL_H_
