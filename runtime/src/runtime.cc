// Devices, arrays and copies: the routing half of the core.
#include "dlarray/runtime.h"

#include <array>
#include <atomic>
#include <cctype>
#include <cstring>
#include <limits>
#include <vector>

#include "dlarray/dlpack.h"
#include "dlarray/plugin_api.h"
#include "dlarray/sdk_util.h"
#include "runtime_state.h"
#include "validate.h"

namespace dlarray {

namespace {

// The name each device type's plugin gave itself (interned, never freed: a reader may hold it
// while another plugin loads). Lock-free, because the loader names types while holding its lock.
std::array<std::atomic<const std::string*>, DLARRAY_MAX_DEVICE_TYPES> g_plugin_names{};

bool IsIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

void NameDeviceType(int device_type, const std::string& plugin) {
  if (device_type <= 0 || device_type >= DLARRAY_MAX_DEVICE_TYPES || !IsIdentifier(plugin)) return;
  // A name that is already another type's (a plugin called "cpu" serving type 20) or one of the
  // fallback names would make device strings ambiguous: such a type keeps its built-in name.
  const std::string builtin = FormatDeviceType(device_type);
  if (plugin.rfind("device_type_", 0) == 0 || plugin == "gpu") return;
  for (int t = 1; t < DLARRAY_MAX_DEVICE_TYPES; ++t) {
    if (t != device_type && (FormatDeviceType(t) == plugin || DeviceTypeName(t) == plugin)) return;
  }
  const std::string* old = g_plugin_names[device_type].load(std::memory_order_acquire);
  if (old != nullptr && *old == plugin) return;
  // Interned: a plugin of the type that loaded with no devices may be followed by another.
  g_plugin_names[device_type].store(new std::string(plugin), std::memory_order_release);
}

// DLPack's names (dlarray/sdk_util.h, shared with plugins), unless a plugin named the type.
std::string DeviceTypeName(int device_type) {
  if (device_type > 0 && device_type < DLARRAY_MAX_DEVICE_TYPES) {
    if (const std::string* n = g_plugin_names[device_type].load(std::memory_order_acquire)) {
      return *n;
    }
  }
  return FormatDeviceType(device_type);
}

std::string ContextToString(DLContext ctx) {
  return DeviceTypeName(ctx.device_type) + "(" + std::to_string(ctx.device_id) + ")";
}

std::string DTypeToString(DLArrayDType t) { return FormatDType(t); }

// Where a device type's plugin comes from when it is not installed or cannot open (a library it
// links is missing): the CUDA plugin is its own package (dlarray-cuda), which brings NVIDIA's
// runtime wheels. Said in the error users meet, not only in `python -m dlarray`.
static std::string InstallHint(int device_type) {
  if (device_type != kDLArrayCUDA) return "";
  return "; `pip install dlarray[cuda]` installs the CUDA plugin (the dlarray-cuda package) with "
         "the NVIDIA runtime wheels it needs (nvidia-cuda-runtime, nvidia-cublas, "
         "nvidia-cuda-nvrtc)";
}

void RuntimeState::ThrowNoDevice(DLContext ctx) {
  const std::string where = ContextToString(ctx);
  if (ctx.device_type <= 0 || ctx.device_type >= DLARRAY_MAX_DEVICE_TYPES) {
    throw DeviceError(where + ": device type " + std::to_string(ctx.device_type) +
                      " is not a device type (cpu = 1, cuda = 2, ... up to " +
                      std::to_string(DLARRAY_MAX_DEVICE_TYPES - 1) + ")");
  }
  if (ctx.device_id < 0) {
    throw DeviceError(where + ": device ids start at 0");
  }
  {
    const int count = Count(ctx.device_type);  // 0 and no device: the plugin found none
    if (devices[ctx.device_type].device.load(std::memory_order_acquire) != nullptr) {
      std::string n = std::to_string(count);
      throw DeviceError(where + " does not exist: there " + (count == 1 ? "is " : "are ") + n +
                        " " + DeviceTypeName(ctx.device_type) + " device" +
                        (count == 1 ? "" : "s") + " (ids 0.." + std::to_string(count - 1) + ")");
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  const PluginSlot* best = nullptr;
  for (const auto& p : plugins_) {
    bool serves = (p->info.device_type == ctx.device_type && ctx.device_type != 0) ||
                  (p->info.device_type == 0 && p->info.name == DeviceTypeName(ctx.device_type) &&
                   p->info.status != PluginStatus::kLoaded);
    if (serves) best = p.get();
  }
  if (best != nullptr) {
    throw BackendError(
        where + ": the " + best->info.name + " plugin (" + best->info.path + ") that serves " +
        DeviceTypeName(ctx.device_type) + " devices is not usable: " +
        PluginStatusName(best->info.status) + ": " + best->info.reason +
        (best->info.status == PluginStatus::kOpenFailed ? InstallHint(ctx.device_type) : ""));
  }
  std::string dirs;
  for (const std::string& d : search_path) dirs += (dirs.empty() ? "" : ", ") + d;
  throw BackendError(where + ": no plugin serving " + DeviceTypeName(ctx.device_type) +
                     " devices is installed (looked for " + DeviceTypeName(ctx.device_type) +
                     "_backend.so in " + (dirs.empty() ? "no folder" : dirs) +
                     "; set DLARRAY_PLUGIN_PATH or call dlarray.load_plugin)" +
                     InstallHint(ctx.device_type));
}

std::vector<PluginInfo> Plugins() { return RuntimeState::Get().Records(); }

PluginInfo LoadPlugin(const std::string& path) {
  if (path.find('\0') != std::string::npos) {
    throw Error(ErrorKind::kValue, "load_plugin: the path contains a NUL byte: '" +
                                       path.substr(0, path.find('\0')) + "\\0...'");
  }
  if (path.empty()) throw Error(ErrorKind::kValue, "load_plugin: the path is empty");
  return RuntimeState::Get().Load(path, "load_plugin");
}

std::vector<std::string> PluginSearchPath() { return RuntimeState::Get().search_path; }

void CheckDevice(DLContext ctx) { RuntimeState::Get().DeviceFor(ctx); }

std::string DeviceName(DLContext ctx) {
  return RuntimeState::Get().DeviceFor(ctx)->device_name(ctx.device_id);
}

MemoryStats GetMemoryStats(DLContext ctx) {
  return RuntimeState::Get().DeviceFor(ctx)->memory_stats(ctx.device_id);
}

void EmptyCache(DLContext ctx) { RuntimeState::Get().DeviceFor(ctx)->empty_cache(ctx.device_id); }

void SetDeviceOption(DLContext ctx, const std::string& key, const std::string& value) {
  RuntimeState::Get().DeviceFor(ctx)->set_option(key, value);
}

std::string GetDeviceOption(DLContext ctx, const std::string& key) {
  return RuntimeState::Get().DeviceFor(ctx)->get_option(key);
}

void* DeviceStream(DLContext ctx) {
  return RuntimeState::Get().DeviceFor(ctx)->stream(ctx.device_id);
}

const void* DeviceExtension(int device_type, const std::string& name) {
  return RuntimeState::Get().DeviceFor(DLContext{device_type, 0})->extension(name);
}

const void* PluginExtension(int device_type, const std::string& name) {
  return RuntimeState::Get().DeviceEvenIfNone(device_type)->extension(name);
}

const void* FindExtension(const std::string& name, int* device_type) {
  RuntimeState& rt = RuntimeState::Get();
  *device_type = -1;
  for (int t = 1; t < DLARRAY_MAX_DEVICE_TYPES; ++t) {
    PluginDevice* d = rt.DeviceOrNull(t);
    if (d == nullptr) continue;
    if (const void* table = d->extension(name)) {
      *device_type = t;
      return table;
    }
  }
  return nullptr;
}

const void* RequireExtension(const std::string& name, const std::string& feature,
                             int* device_type) {
  if (const void* table = FindExtension(name, device_type)) return table;
  // The plugins that might have offered it: those that did not load (the others were asked).
  std::string unusable;
  for (const PluginInfo& p : Plugins()) {
    if (p.status == PluginStatus::kLoaded || p.status == PluginStatus::kNoDevices) continue;
    unusable += (unusable.empty() ? "" : "; ") + p.name + " (" + p.path +
                "): " + PluginStatusName(p.status) + ": " + p.reason;
  }
  throw BackendError(feature + " needs a device plugin offering " + name +
                     ", and no loaded one does" +
                     (unusable.empty() ? std::string(" (every plugin found loaded)")
                                       : " (plugins not usable: " + unusable + ")"));
}

int DeviceCount(int device_type) {
  if (device_type <= 0 || device_type >= DLARRAY_MAX_DEVICE_TYPES) return 0;
  return RuntimeState::Get().Count(device_type);
}

std::vector<DLContext> Devices() {
  std::vector<DLContext> out;
  for (int t = 1; t < DLARRAY_MAX_DEVICE_TYPES; ++t) {
    for (int i = 0; i < DeviceCount(t); ++i) out.push_back(DLContext{t, i});
  }
  return out;
}

uint64_t DeviceCapabilities(DLDevice device) {
  return RuntimeState::Get().DeviceFor(device)->capabilities();
}

void CopyFromTo(const DLArray* from, DLArray* to) {
  RuntimeState& rt = RuntimeState::Get();
  const int64_t count = CheckArrayFields(from, "copy source");
  CheckArrayFields(to, "copy target");
  CheckContext(from->device, "copy source");
  CheckContext(to->device, "copy target");
  if (from->ndim != to->ndim ||
      (from->ndim > 0 && std::memcmp(from->shape, to->shape, sizeof(int64_t) * from->ndim) != 0)) {
    throw ShapeError("copy: source shape " + ShapeToString(from) + " differs from target shape " +
                     ShapeToString(to));
  }
  if (from->dtype != to->dtype) {
    throw DTypeError("copy: source dtype " + DTypeToString(from->dtype) +
                     " differs from target dtype " + DTypeToString(to->dtype));
  }
  const size_t nbytes = static_cast<size_t>(count) * DTypeBytes(from->dtype);
  if (nbytes == 0) return;  // zero-size: nothing to move (data may be null)
  const DLDevice src = from->device, dst = to->device;
  // Buffers travel as (handle, byte offset) pairs: only the plugin knows what a handle is.
  const void* src_buf = from->data;
  void* dst_buf = to->data;
  const uint64_t src_off = from->byte_offset, dst_off = to->byte_offset;
  if (src == dst && src_buf == dst_buf && src_off == dst_off) return;
  if (src.device_type == kDLArrayCPU && dst.device_type == kDLArrayCPU &&
      DeviceCount(kDLArrayCPU) == 0) {
    // Host memory without the CPU plugin (the C API over caller memory): a plain memcpy.
    std::memcpy(static_cast<char*>(dst_buf) + dst_off, static_cast<const char*>(src_buf) + src_off,
                nbytes);
    return;
  }
  if (src.device_type == kDLArrayCPU || dst.device_type == kDLArrayCPU ||
      src.device_type == dst.device_type) {
    // The device side's plugin copies (the source's when both are devices of one type).
    PluginDevice* device = rt.DeviceFor(src.device_type == kDLArrayCPU ? dst : src);
    device->copy(src_buf, src_off, src, dst_buf, dst_off, dst, nbytes);
    return;
  }
  // Two device types: stage through host memory.
  std::vector<char> host(nbytes);
  const DLDevice cpu{kDLArrayCPU, 0};
  rt.DeviceFor(src)->copy(src_buf, src_off, src, host.data(), 0, cpu, nbytes);
  rt.DeviceFor(dst)->copy(host.data(), 0, cpu, dst_buf, dst_off, dst, nbytes);
}

void FillElements(DLArray* to, const void* element, size_t element_bytes) {
  const int64_t count = CheckArrayFields(to, "fill target");
  CheckContext(to->device, "fill target");
  const size_t bytes = DTypeBytes(to->dtype);
  if (element == nullptr || element_bytes != bytes) {
    throw Error(ErrorKind::kValue, "fill: the element has " + std::to_string(element_bytes) +
                                       " bytes, but one " + DTypeToString(to->dtype) + " has " +
                                       std::to_string(bytes));
  }
  if (count == 0) return;  // nothing to fill, whatever the dtype (an empty complex128 output)
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) {
    throw DTypeError("fill: no fill for " + DTypeToString(to->dtype) + " (elements of " +
                     std::to_string(bytes) + " bytes)");
  }
  if (to->byte_offset % bytes != 0) {
    throw Error(ErrorKind::kValue, "fill: byte_offset " + std::to_string(to->byte_offset) +
                                       " is not a multiple of the element size " +
                                       std::to_string(bytes));
  }
  if (to->device.device_type == kDLArrayCPU && DeviceCount(kDLArrayCPU) == 0) {
    // Host memory without the CPU plugin (the C API over caller memory), as CopyFromTo does.
    char* p = static_cast<char*>(to->data) + to->byte_offset;
    for (int64_t i = 0; i < count; ++i) std::memcpy(p + i * bytes, element, bytes);
    return;
  }
  RuntimeState::Get()
      .DeviceFor(to->device)
      ->fill(to->data, to->byte_offset, to->device, element, static_cast<uint32_t>(bytes),
             static_cast<size_t>(count) * bytes);
}

void Synchronize(DLContext ctx) { RuntimeState::Get().DeviceFor(ctx)->synchronize(ctx.device_id); }

}  // namespace dlarray
