// dlarray._core's side of dlarray.rtc: the "dlarray.rtc.v1" extension of the device plugin that
// offers it (status, compile, load); rtc_kernel.cc has the launch path.
#include <pybind11/stl.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "rtc_binding.h"

namespace dlarray {
namespace rtc_binding {
namespace {

// Set at interpreter exit: modules are then left to the process's end (the driver may be gone).
std::atomic<bool> g_exiting{false};

}  // namespace

bool Exiting() { return g_exiting.load(std::memory_order_relaxed); }

void MarkExiting() { g_exiting.store(true); }

namespace {
std::atomic<int> g_rtc_device_type{-1};  // the device type whose plugin gave Rtc()'s table
}  // namespace

const DLArrayRtcExtV1* Rtc() {
  static std::atomic<const DLArrayRtcExtV1*> table{nullptr};
  if (const DLArrayRtcExtV1* t = table.load(std::memory_order_acquire)) return t;
  // Whichever device plugin offers the extension (the CUDA plugin does, through NVRTC).
  int device_type = -1;
  const auto* t = static_cast<const DLArrayRtcExtV1*>(
      RequireExtension(DLARRAY_EXT_RTC_V1, "dlarray.rtc", &device_type));
  if (t->struct_size < sizeof(DLArrayRtcExtV1)) {
    throw BackendError("dlarray.rtc: the " + DeviceTypeName(device_type) +
                       " plugin's " DLARRAY_EXT_RTC_V1
                       " table is incomplete (a plugin from an older "
                       "dlarray?)");
  }
  g_rtc_device_type.store(device_type, std::memory_order_relaxed);
  table.store(t, std::memory_order_release);
  return t;
}

int RtcDeviceType() {
  (void)Rtc();
  return g_rtc_device_type.load(std::memory_order_relaxed);
}

}  // namespace rtc_binding

namespace {

using rtc_binding::Call;
using rtc_binding::FunctionHandle;
using rtc_binding::ModuleHandle;
using rtc_binding::Rtc;

std::shared_ptr<ModuleHandle> LoadModule(int device_id, const py::bytes& code, int kind) {
  const DLArrayRtcExtV1* ext = Rtc();
  const std::string data = code;  // bytes -> owned copy; the driver copies it again
  auto handle = std::make_shared<ModuleHandle>();
  handle->device_id = device_id;
  py::gil_scoped_release release;
  Call("module_load", [&] {
    return ext->module_load(device_id, data.data(), data.size(), kind, &handle->module);
  });
  return handle;
}

std::shared_ptr<FunctionHandle> GetFunction(const std::shared_ptr<ModuleHandle>& module,
                                            const std::string& name) {
  const DLArrayRtcExtV1* ext = Rtc();
  auto f = std::make_shared<FunctionHandle>();
  f->module = module;
  f->name = name;
  Call("get_function",
       [&] { return ext->get_function(module->module, name.c_str(), &f->function); });
  f->info.struct_size = sizeof(DLArrayRtcFunctionInfo);
  Call("function_info", [&] { return ext->function_info(f->function, &f->info); });
  return f;
}

py::dict Status() {
  const DLArrayRtcExtV1* ext = Rtc();
  py::dict d;
  const char* compile = "";
  const char* launch = "";
  Call("unavailable_reason",
       [&] { return ext->unavailable_reason(kDLArrayRtcCompiling, &compile); });
  Call("unavailable_reason",
       [&] { return ext->unavailable_reason(kDLArrayRtcLaunching, &launch); });
  d["compile"] = std::string(compile);
  d["launch"] = std::string(launch);
  d["nvrtc_version"] = py::none();
  d["nvrtc_library"] = "";
  d["archs"] = py::list();
  if (*compile == '\0') {
    int32_t major = 0;
    int32_t minor = 0;
    const char* path = "";
    Call("nvrtc_version", [&] { return ext->nvrtc_version(&major, &minor, &path); });
    const int32_t* archs = nullptr;
    int32_t n = 0;
    Call("supported_archs", [&] { return ext->supported_archs(&archs, &n); });
    d["nvrtc_version"] = py::make_tuple(major, minor);
    d["nvrtc_library"] = std::string(path);
    d["archs"] = std::vector<int32_t>(archs, archs + n);
  }
  return d;
}

py::tuple Compile(const std::string& source, const std::string& name,
                  const std::vector<std::string>& options,
                  const std::vector<std::string>& name_expressions, int arch) {
  const DLArrayRtcExtV1* ext = Rtc();
  std::vector<const char*> opts;
  for (const std::string& o : options) opts.push_back(o.c_str());
  std::vector<const char*> names;
  for (const std::string& n : name_expressions) names.push_back(n.c_str());
  DLArrayRtcProgram* raw = nullptr;
  {
    py::gil_scoped_release release;
    Call("compile", [&] {
      return ext->compile(source.c_str(), name.c_str(), opts.data(),
                          static_cast<int32_t>(opts.size()), names.data(),
                          static_cast<int32_t>(names.size()), arch, &raw);
    });
  }
  std::unique_ptr<DLArrayRtcProgram, void (*)(DLArrayRtcProgram*)> program(raw, ext->program_free);
  const bool compiled = ext->program_compiled(program.get()) != 0;
  uint64_t size = 0;
  int32_t kind = 0;
  const void* code = ext->program_code(program.get(), &size, &kind);
  py::object code_bytes = py::none();
  if (compiled && code != nullptr) {
    code_bytes = py::bytes(static_cast<const char*>(code), static_cast<size_t>(size));
  }
  std::vector<std::string> lowered;
  for (size_t i = 0; compiled && i < name_expressions.size(); ++i) {
    const char* l = ext->program_lowered_name(program.get(), static_cast<int32_t>(i));
    lowered.emplace_back(l != nullptr ? l : "");
  }
  return py::make_tuple(compiled, code_bytes, kind, std::string(ext->program_log(program.get())),
                        lowered);
}

int DeviceArch(int device_id) {
  const DLArrayRtcExtV1* ext = Rtc();
  int32_t arch = 0;
  Call("device_arch", [&] { return ext->device_arch(device_id, &arch); });
  return arch;
}

}  // namespace

void BindRtc(py::module_& m) {
  m.def("_rtc_status", &Status,
        "dlarray.rtc's state: why compiling / launching cannot work (\"\" when they can), "
        "NVRTC's version, library and architectures.");
  m.def("_rtc_compile", &Compile, py::arg("source"), py::arg("name"), py::arg("options"),
        py::arg("name_expressions"), py::arg("arch"),
        "NVRTC: (compiled, code bytes or None, code kind, log, lowered names).");
  m.def(
      "_rtc_launch_reason",
      [] {
        const DLArrayRtcExtV1* ext = Rtc();
        const char* launch = "";
        Call("unavailable_reason",
             [&] { return ext->unavailable_reason(kDLArrayRtcLaunching, &launch); });
        return std::string(launch);
      },
      "Why dlarray.rtc cannot launch (empty when it can), without loading NVRTC as _rtc_status "
      "does: a program read from the disk cache needs no compiler.");
  m.def(
      "_rtc_device_type",
      [] {
        int device_type = -1;
        (void)FindExtension(DLARRAY_EXT_RTC_V1, &device_type);
        return device_type;
      },
      "The device type whose plugin offers dlarray.rtc.v1 (its arrays are the kernels'), or -1.");
  m.def("_rtc_device_arch", &DeviceArch, py::arg("device_id"),
        "Compute capability of a GPU as 10 * major + minor.");
  m.def(
      "_rtc_shutdown", [] { rtc_binding::MarkExiting(); },
      "Leaves loaded modules to the process's end (called at interpreter exit).");
  m.def(
      "_rtc_span",
      [](const NDArray& a) {
        const DLArray* dl = a.dl();
        const uintptr_t lo = reinterpret_cast<uintptr_t>(dl->data) + dl->byte_offset;
        return py::make_tuple(lo, lo + NumElements(dl) * DTypeBytes(dl->dtype));
      },
      py::arg("array"), "(first, end) addresses of an array's elements.");
  m.attr("_RTC_CUBIN") = static_cast<int>(kDLArrayRtcCubin);
  m.attr("_RTC_PTX") = static_cast<int>(kDLArrayRtcPtx);

  py::class_<ModuleHandle, std::shared_ptr<ModuleHandle>>(m, "_RtcModule",
                                                          "Compiled code loaded on one GPU.")
      .def(py::init(&LoadModule), py::arg("device_id"), py::arg("code"), py::arg("kind"))
      .def_readonly("device_id", &ModuleHandle::device_id)
      .def("get_function", &GetFunction, py::arg("name"), "The kernel with this symbol name.");

  py::class_<FunctionHandle, std::shared_ptr<FunctionHandle>>(m, "_RtcFunction",
                                                              "A kernel of a loaded module.")
      .def_readonly("name", &FunctionHandle::name)
      .def_property_readonly(
          "attributes",
          [](const FunctionHandle& f) {
            py::dict d;
            d["device_id"] = f.info.device_id;
            d["max_threads_per_block"] = f.info.max_threads_per_block;
            d["static_shared_bytes"] = f.info.static_shared_bytes;
            d["max_dynamic_shared_bytes"] = f.info.max_dynamic_shared_bytes;
            d["num_registers"] = f.info.num_registers;
            d["num_params"] = f.info.num_params;
            return d;
          },
          "What the driver says about the kernel.");

  rtc_binding::BindRtcKernel(m);
}

}  // namespace dlarray
