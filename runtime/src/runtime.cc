// Devices, arrays and copies: the routing half of the core.
#include "dlarray/runtime.h"

#include <cstring>
#include <limits>
#include <vector>

#include "dlarray/dlpack.h"
#include "dlarray/plugin_api.h"
#include "dlarray/sdk_util.h"
#include "runtime_state.h"
#include "validate.h"

namespace dlarray {

// The names live in the SDK header, so that plugins print them as the core does.
std::string DeviceTypeName(int device_type) { return FormatDeviceType(device_type); }

std::string ContextToString(DLContext ctx) { return FormatDevice(ctx); }

std::string DTypeToString(DLArrayDType t) { return FormatDType(t); }

namespace {
// The plugin name that conventionally serves a device type ("cuda" for gpu).
std::string ConventionalPlugin(int device_type) {
  return device_type == kDLArrayCUDA ? "cuda" : DeviceTypeName(device_type);
}
}  // namespace

void RuntimeState::ThrowNoDevice(DLContext ctx) {
  const std::string where = ContextToString(ctx);
  if (ctx.device_type <= 0 || ctx.device_type >= DLARRAY_MAX_DEVICE_TYPES) {
    throw DeviceError(where + ": device type " + std::to_string(ctx.device_type) +
                      " is not a device type (cpu = 1, gpu = 2, ... up to " +
                      std::to_string(DLARRAY_MAX_DEVICE_TYPES - 1) + ")");
  }
  if (ctx.device_id < 0) {
    throw DeviceError(where + ": device ids start at 0");
  }
  {
    DeviceSlot& slot = devices[ctx.device_type];
    if (slot.device.load(std::memory_order_acquire) != nullptr) {
      std::string n = std::to_string(slot.count);
      throw DeviceError(where + " does not exist: there " + (slot.count == 1 ? "is " : "are ") + n +
                        " " + DeviceTypeName(ctx.device_type) + " device" +
                        (slot.count == 1 ? "" : "s") + " (ids 0.." +
                        std::to_string(slot.count - 1) + ")");
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  const PluginSlot* best = nullptr;
  for (const auto& p : plugins_) {
    bool serves =
        (p->info.device_type == ctx.device_type && ctx.device_type != 0) ||
        (p->info.device_type == 0 && p->info.name == ConventionalPlugin(ctx.device_type) &&
         p->info.status != PluginStatus::kLoaded);
    if (serves) best = p.get();
  }
  if (best != nullptr) {
    throw BackendError(where + ": the " + best->info.name + " plugin (" + best->info.path +
                       ") that serves " + DeviceTypeName(ctx.device_type) +
                       " devices is not usable: " + PluginStatusName(best->info.status) + ": " +
                       best->info.reason);
  }
  std::string dirs;
  for (const std::string& d : search_path) dirs += (dirs.empty() ? "" : ", ") + d;
  throw BackendError(where + ": no plugin serving " + DeviceTypeName(ctx.device_type) +
                     " devices is installed (looked for " + ConventionalPlugin(ctx.device_type) +
                     "_backend.so in " + (dirs.empty() ? "no folder" : dirs) +
                     "; set DLARRAY_PLUGIN_PATH or call dlarray.load_plugin)");
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

int DeviceCount(int device_type) {
  if (device_type <= 0 || device_type >= DLARRAY_MAX_DEVICE_TYPES) return 0;
  DeviceSlot& slot = RuntimeState::Get().devices[device_type];
  return slot.device.load(std::memory_order_acquire) ? slot.count : 0;
}

std::vector<DLContext> Devices() {
  std::vector<DLContext> out;
  for (int t = 1; t < DLARRAY_MAX_DEVICE_TYPES; ++t) {
    for (int i = 0; i < DeviceCount(t); ++i) out.push_back(DLContext{t, i});
  }
  return out;
}

namespace {

const char* Data(const DLArray* a) { return static_cast<const char*>(a->data) + a->byte_offset; }

}  // namespace

void CopyFromTo(const DLArray* from, DLArray* to) {
  RuntimeState& rt = RuntimeState::Get();
  const int64_t count = CheckArrayFields(from, "copy source");
  CheckArrayFields(to, "copy target");
  CheckContext(from->ctx, "copy source");
  CheckContext(to->ctx, "copy target");
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
  const DLContext src = from->ctx, dst = to->ctx;
  void* dst_ptr = static_cast<char*>(to->data) + to->byte_offset;
  if (src == dst && Data(from) == dst_ptr) return;
  if (src.device_type == kDLArrayCPU && dst.device_type == kDLArrayCPU) {
    if (DeviceCount(kDLArrayCPU) > 0) {
      rt.DeviceFor(src)->copy(Data(from), src, dst_ptr, dst, nbytes);
    } else {
      std::memcpy(dst_ptr, Data(from), nbytes);
    }
    return;
  }
  if (src.device_type == kDLArrayCPU) {
    rt.DeviceFor(dst)->copy(Data(from), src, dst_ptr, dst, nbytes);
  } else if (dst.device_type == kDLArrayCPU || src.device_type == dst.device_type) {
    rt.DeviceFor(src)->copy(Data(from), src, dst_ptr, dst, nbytes);
  } else {
    // Two device types: stage through host memory.
    std::vector<char> host(nbytes);
    DLContext cpu{kDLArrayCPU, 0};
    rt.DeviceFor(src)->copy(Data(from), src, host.data(), cpu, nbytes);
    rt.DeviceFor(dst)->copy(host.data(), cpu, dst_ptr, dst, nbytes);
  }
}

void Synchronize(DLContext ctx) { RuntimeState::Get().DeviceFor(ctx)->synchronize(ctx.device_id); }

}  // namespace dlarray
