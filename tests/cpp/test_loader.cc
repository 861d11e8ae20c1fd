// The plugin loader: every kind of broken plugin is recorded with its reason and breaks nothing.
#include <doctest/doctest.h>

#include <string>

#include "dlarray/plugin_api.h"
#include "dlarray/runtime.h"
#include "test_helpers.h"

using dltest::Contains;
using dltest::Make;
using dltest::TryInvoke;

namespace {

dlarray::PluginInfo Load(const std::string& file) {
  return dlarray::LoadPlugin(std::string(DLARRAY_TEST_PLUGIN_DIR) + "/" + file);
}

// The CPU backend still computes after whatever was loaded.
void CheckCpuStillWorks() {
  auto a = Make({3}, {-1, 0, 2});
  auto b = dlarray::Array::Empty({3}, dltest::Cpu());
  CHECK(TryInvoke("relu", {a->dl()}, {b->dl()}).empty());
  CHECK(dltest::Read(*b) == std::vector<float>{0, 0, 2});
}

}  // namespace

TEST_CASE("a file that is not a library: open failed, with the loader's text") {
  auto p = Load("not_a_library.so");
  CHECK(p.status == dlarray::PluginStatus::kOpenFailed);
  CHECK(Contains(p.reason, "not_a_library.so"));
  CHECK((Contains(p.reason, "ELF") || Contains(p.reason, "too short")));
  CheckCpuStillWorks();
}

TEST_CASE("a missing file: open failed") {
  auto p = Load("does_not_exist.so");
  CHECK(p.status == dlarray::PluginStatus::kOpenFailed);
  CHECK(Contains(p.reason, "no such file"));
}

TEST_CASE("a missing dependency: open failed, naming the dependency") {
  auto p = Load("missing_dep_plugin.so");
  CHECK(p.status == dlarray::PluginStatus::kOpenFailed);
  CHECK(Contains(p.reason, "libdlarray_test_missing_dep.so"));
  CheckCpuStillWorks();
}

TEST_CASE("no entry symbol") {
  auto p = Load("no_entry_plugin.so");
  CHECK(p.status == dlarray::PluginStatus::kMissingEntry);
  CHECK(Contains(p.reason, DLARRAY_PLUGIN_ENTRY_SYMBOL));
  CheckCpuStillWorks();
}

TEST_CASE("a newer major ABI version: refused, both versions in the reason") {
  auto p = Load("wrong_abi_plugin.so");
  CHECK(p.status == dlarray::PluginStatus::kAbiMismatch);
  CHECK(p.abi_version == DLARRAY_PLUGIN_ABI_MAJOR + 1);
  CHECK(Contains(p.reason,
                 "built for plugin ABI " + std::to_string(DLARRAY_PLUGIN_ABI_MAJOR + 1) + ".0"));
  CHECK(Contains(p.reason, "this runtime has plugin ABI " +
                               std::to_string(DLARRAY_PLUGIN_ABI_MAJOR) + "." +
                               std::to_string(DLARRAY_PLUGIN_ABI_MINOR)));
  CheckCpuStillWorks();
}

TEST_CASE("init that throws: the message is kept") {
  auto p = Load("init_throws_plugin.so");
  CHECK(p.status == dlarray::PluginStatus::kInitFailed);
  CHECK(Contains(p.reason, "simulated failure while opening the test device"));
  CheckCpuStillWorks();
}

TEST_CASE("register_kernels that throws half-way leaves nothing registered") {
  auto p = Load("register_throws_plugin.so");
  CHECK(p.status == dlarray::PluginStatus::kInitFailed);
  CHECK(Contains(p.reason, "simulated failure in register_kernels"));
  CHECK(dlarray::FindOp("half_registered_op") == -1);
}

TEST_CASE("a plugin may not replace another plugin's kernel") {
  auto p = Load("conflict_plugin.so");
  CHECK(p.status == dlarray::PluginStatus::kInitFailed);
  CHECK(Contains(p.reason, "already has a kernel (from plugin 'cpu')"));
  CheckCpuStillWorks();
}

TEST_CASE("zero devices: recorded with the plugin's reason, and using it raises that reason") {
  auto p = Load("zero_devices_plugin.so");
  CHECK(p.status == dlarray::PluginStatus::kNoDevices);
  CHECK(Contains(p.reason, "simulated: no test hardware present"));
  CheckCpuStillWorks();
}

TEST_CASE("extensions of a plugin without devices: PluginExtension reaches them") {
  auto p = Load("zero_devices_plugin.so");
  REQUIRE(p.status == dlarray::PluginStatus::kNoDevices);
  const int type = p.device_type;
  const char* name = "dlarray.test_extension.v1";
  const void* ext = dlarray::PluginExtension(type, name);
  REQUIRE(ext != nullptr);
  CHECK(std::string(static_cast<const char*>(ext)) == name);
  CHECK(dlarray::PluginExtension(type, "dlarray.no_such.v1") == nullptr);
  CHECK_THROWS_WITH(dlarray::DeviceExtension(type, name),
                    doctest::Contains("simulated: no test hardware present"));
  CHECK_THROWS_WITH(dlarray::PluginExtension(31, name), doctest::Contains("no plugin serving"));
}

TEST_CASE("extensions by name: found on whichever device type offers them, else a clear error") {
  auto p = Load("zero_devices_plugin.so");
  REQUIRE(p.status == dlarray::PluginStatus::kNoDevices);
  int type = 0;
  // The zero-device plugin offers the test extension, so some type (maybe a lower one) does.
  const void* ext = dlarray::FindExtension("dlarray.test_extension.v1", &type);
  REQUIRE(ext != nullptr);
  CHECK(type > 0);
  CHECK(ext == dlarray::PluginExtension(type, "dlarray.test_extension.v1"));
  CHECK(dlarray::FindExtension("dlarray.no_such.v1", &type) == nullptr);
  CHECK(type == -1);
  CHECK_THROWS_WITH(dlarray::RequireExtension("dlarray.no_such.v1", "a test feature", &type),
                    doctest::Contains("a test feature needs a device plugin offering "
                                      "dlarray.no_such.v1, and no loaded one does"));
}

TEST_CASE("device capabilities: the CPU's pointers are host addresses, a fake device's too") {
  const uint64_t cpu = dlarray::DeviceCapabilities(DLDevice{kDLArrayCPU, 0});
  CHECK((cpu & DLARRAY_DEVICE_HOST_ADDRESSABLE) != 0);
  CHECK((cpu & DLARRAY_DEVICE_POINTER_ARITHMETIC) != 0);  // implied by host-addressable
  auto p = Load("fake_device_plugin.so");
  REQUIRE(p.status == dlarray::PluginStatus::kLoaded);
  CHECK((dlarray::DeviceCapabilities(DLDevice{p.device_type, 1}) &
         DLARRAY_DEVICE_POINTER_ARITHMETIC) != 0);
  CHECK_THROWS_WITH(dlarray::DeviceCapabilities(DLDevice{30, 0}),
                    doctest::Contains("no plugin serving device_type_30"));
}

TEST_CASE("the plugin error helpers: a recorded error is thrown once, typed") {
  dlarray::ClearPluginError();
  CHECK_THROWS_WITH(dlarray::ThrowPluginError("an extension call"),
                    "an extension call failed without saying why");
  auto p = Load("fake_device_plugin.so");
  REQUIRE(p.status == dlarray::PluginStatus::kLoaded);
  // A device call that fails records its error with set_error; the core rethrows it typed.
  try {
    dlarray::SetDeviceOption(DLContext{p.device_type, 0}, "no_such_key", "1");
    FAIL("an unknown option was accepted");
  } catch (const dlarray::Error& e) {
    CHECK(e.kind() == dlarray::ErrorKind::kValue);
    CHECK(Contains(e.what(), "unknown option 'no_such_key'"));
  }
  CHECK_THROWS_WITH(dlarray::ThrowPluginError("again"), "again failed without saying why");
}

TEST_CASE("loading the same file twice gives one record") {
  size_t before = dlarray::Plugins().size();
  Load("no_entry_plugin.so");
  Load("no_entry_plugin.so");
  CHECK(dlarray::Plugins().size() <= before + 1);
}

TEST_CASE("a second device type routes ops and copies, and mixing devices is refused") {
  auto p = Load("fake_device_plugin.so");
  REQUIRE(p.status == dlarray::PluginStatus::kLoaded);
  CHECK(p.device_count == 2);
  DLContext dev0{20, 0}, dev1{20, 1};
  auto host = Make({4}, {-1, 2, -3, 4});
  auto a = dlarray::Array::Empty({4}, dev0);
  auto b = dlarray::Array::Empty({4}, dev1);
  dlarray::CopyFromTo(host->dl(), a->dl());  // cpu -> device
  dlarray::CopyFromTo(a->dl(), b->dl());     // device 0 -> device 1
  auto out = dlarray::Array::Empty({4}, dev1);
  CHECK(TryInvoke("relu", {b->dl()}, {out->dl()}).empty());
  CHECK(dltest::Read(*out) == std::vector<float>{0, 2, 0, 4});
  std::string mixed = TryInvoke("relu", {host->dl()}, {out->dl()});
  CHECK(Contains(mixed, "different devices"));
  CHECK(Contains(mixed, "cpu(0)"));
  CHECK(Contains(mixed, "fake_device(1)"));
  std::string mixed_ids = TryInvoke("relu", {a->dl()}, {out->dl()});
  CHECK(Contains(mixed_ids, "fake_device(0)"));
  CHECK(Contains(TryInvoke("softmax", {a->dl()}, {a->dl()}), "no kernel is registered"));
  CHECK_THROWS_WITH(dlarray::Array::Empty({1}, DLContext{20, 2}),
                    doctest::Contains("there are 2 fake_device devices"));
}

TEST_CASE("an op plugin adds an op without a core change") {
  int id = dlarray::FindOp("sigmoid");
  REQUIRE(id >= 0);
  auto x = Make({3}, {0.0f, 2.0f, -2.0f});
  auto y = dlarray::Array::Empty({3}, dltest::Cpu());
  CHECK(TryInvoke("sigmoid", {x->dl()}, {y->dl()}).empty());
  auto v = dltest::Read(*y);
  CHECK(v[0] == doctest::Approx(0.5f));
  CHECK(v[1] == doctest::Approx(0.880797f));
  CHECK(v[2] == doctest::Approx(0.119203f));
}
