// dlarray/sdk_util.h: the one exception guard and the dtype/device names every plugin and
// extension uses (no private copies in the backends).
#include <doctest/doctest.h>

#include <new>
#include <stdexcept>
#include <string>

#include "dlarray/sdk_util.h"

namespace {

int32_t g_kind = -1;
std::string g_message;

void RecordError(int32_t kind, const char* message) {
  g_kind = kind;
  g_message = message;
}

DLArrayCoreApi FakeCore() {
  DLArrayCoreApi core{};
  core.struct_size = sizeof core;
  core.set_error = &RecordError;
  return core;
}

}  // namespace

TEST_CASE("sdk_util names every storage dtype and device as the core prints them") {
  using dlarray::FormatDType;
  CHECK(FormatDType({kDLArrayFloat, 32, 1}) == "float32");
  CHECK(FormatDType({kDLArrayBfloat, 16, 1}) == "bfloat16");
  CHECK(FormatDType({kDLArrayBool, 8, 1}) == "bool");
  CHECK(FormatDType({kDLArrayComplex, 64, 1}) == "complex64");
  CHECK(FormatDType({kDLArrayComplex, 128, 1}) == "complex128");
  CHECK(FormatDType({kDLArrayUInt, 64, 1}) == "uint64");
  CHECK(FormatDType({kDLArrayFloat, 32, 4}) == "float32x4");
  CHECK(dlarray::FormatDevice({kDLArrayCPU, 0}) == "cpu(0)");
  CHECK(dlarray::FormatDevice({kDLArrayCUDA, 3}) == "cuda(3)");
  CHECK(dlarray::FormatDevice({kDLArrayOpenCL, 1}) == "opencl(1)");
  CHECK(dlarray::FormatDevice({27, 0}) == "device_type_27(0)");
}

TEST_CASE("GuardCall turns every exception into -1 and one recorded error") {
  const DLArrayCoreApi core = FakeCore();
  CHECK(dlarray::GuardCall(&core, "f", [] {}) == 0);
  struct Case {
    void (*fn)();
    int32_t kind;
    const char* text;
  };
  const Case cases[] = {
      {[] { throw dlarray::Error(dlarray::ErrorKind::kValue, "bad value"); }, kDLArrayErrValue,
       "bad value"},
      {[] { throw std::bad_alloc(); }, kDLArrayErrMemory, "f: out of host memory (plugin 'p')"},
      {[] { throw std::runtime_error("plain"); }, kDLArrayErrRuntime, "plain"},
      {[] { throw 42; }, kDLArrayErrRuntime,
       "f: plugin 'p' threw an exception that is not a std::exception"},
  };
  for (const Case& c : cases) {
    g_kind = -1;
    g_message.clear();
    CHECK(dlarray::GuardCall(&core, "f", c.fn, "p") == -1);
    CHECK(g_kind == c.kind);
    CHECK(g_message == c.text);
  }
  g_kind = -1;  // the core recorded this one itself: nothing is recorded again
  CHECK(dlarray::GuardCall(&core, "f", [] { throw dlarray::CoreCallFailed(); }) == -1);
  CHECK(g_kind == -1);
  CHECK(dlarray::GuardCall(nullptr, "f", [] { throw 1; }) == -1);  // before the core is known
}
