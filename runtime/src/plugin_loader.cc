// Plugin discovery and loading with Boost.DLL. A plugin that fails at any step is recorded with
// the exact reason and never stops the others; a failed library is unloaded again, so a fixed file
// at the same path can be loaded later.
#define BOOST_DLL_USE_STD_FS
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "core_api.h"
#include "dlarray/plugin_api.h"
#include "elf_check.h"
#include "env_list.h"
#include "runtime_state.h"

namespace fs = std::filesystem;

namespace dlarray {
namespace {

// Failed records kept from load_plugin calls; older ones are forgotten.
constexpr size_t kMaxFailedRecords = 256;

// Paths are taken as written (a folder name may start with a blank).
std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) {
    if (!item.empty()) parts.push_back(item);
  }
  return parts;
}

// "cuda_backend.so" -> "cuda", "libfoo.so" -> "foo".
std::string NameFromPath(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  if (name.rfind("lib", 0) == 0) name = name.substr(3);
  auto dot = name.find('.');
  if (dot != std::string::npos) name = name.substr(0, dot);
  const std::string suffix = "_backend";
  if (name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    name = name.substr(0, name.size() - suffix.size());
  }
  return name;
}

bool IsDisabled(const std::vector<std::string>& disabled, const std::string& name) {
  for (const std::string& d : disabled) {
    if (d == name || d == name + "_backend" || d == "all") return true;
  }
  return false;
}

// Regular files named *.so in dir (symlinks followed); FIFOs, sockets and devices are skipped.
std::vector<std::string> LibrariesIn(const fs::path& dir) {
  std::vector<std::string> libs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::error_code type_ec;
    if (entry.path().extension() == ".so" && entry.is_regular_file(type_ec))
      libs.push_back(entry.path().string());
  }
  std::sort(libs.begin(), libs.end());
  return libs;
}

std::string AbiText(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

bool Failed(PluginStatus s) {
  return s == PluginStatus::kOpenFailed || s == PluginStatus::kMissingEntry ||
         s == PluginStatus::kAbiMismatch || s == PluginStatus::kInitFailed;
}

}  // namespace

std::string CoreLibraryPath() {
  std::error_code ec;
  fs::path core = boost::dll::this_line_location(ec);
  return ec ? std::string() : core.string();
}

RuntimeState* RuntimeState::Create() {
  auto* state = new RuntimeState();
  state->Discover();
  return state;
}

void RuntimeState::Discover() {
  if (const char* d = std::getenv("DLARRAY_DISABLE_PLUGINS")) disabled_ = SplitEnvList(d, ',');
  std::error_code ec;
  fs::path core = boost::dll::this_line_location(ec);
  std::vector<std::string> own;
  if (!ec) {
    // The wheel keeps plugins in dlarray/plugins next to the core; an installed SDK in
    // <libdir>/dlarray/plugins.
    own.push_back((core.parent_path() / "plugins").string());
    const fs::path installed = core.parent_path() / "dlarray" / "plugins";
    std::error_code dir_ec;
    if (fs::is_directory(installed, dir_ec)) own.push_back(installed.string());
  }
  search_path = own;
  std::vector<std::string> from_env;
  if (const char* p = std::getenv("DLARRAY_PLUGIN_PATH")) from_env = Split(p, ':');
  search_path.insert(search_path.end(), from_env.begin(), from_env.end());

  // Devices are counted at their first use unless DLARRAY_EAGER_PLUGINS=1 (see DeviceSlot).
  const char* eager_env = std::getenv("DLARRAY_EAGER_PLUGINS");
  const bool eager = eager_env != nullptr && std::string(eager_env) == "1";
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& dir : own) {
    for (const std::string& lib : LibrariesIn(dir)) LoadLocked(lib, "plugins folder", eager);
  }
  for (const std::string& entry : from_env) {
    if (fs::is_directory(entry, ec)) {
      for (const std::string& lib : LibrariesIn(entry)) {
        LoadLocked(lib, "DLARRAY_PLUGIN_PATH", eager);
      }
    } else {
      LoadLocked(entry, "DLARRAY_PLUGIN_PATH", eager);
    }
  }
}

PluginInfo RuntimeState::Load(const std::string& path, const std::string& origin) {
  std::lock_guard<std::mutex> lock(mu_);
  return LoadLocked(path, origin).info;
}

std::vector<PluginInfo> RuntimeState::Records() {
  std::lock_guard<std::mutex> lock(mu_);
  // Asking for the records is asking for the device counts they show.
  for (int t = 1; t < DLARRAY_MAX_DEVICE_TYPES; ++t) {
    if (devices[t].device.load(std::memory_order_acquire) != nullptr) CountLocked(t);
  }
  std::vector<PluginInfo> out;
  for (const auto& p : plugins_) out.push_back(p->info);
  return out;
}

PluginDevice* RuntimeState::DeviceOrNull(int device_type) {
  if (device_type <= 0 || device_type >= DLARRAY_MAX_DEVICE_TYPES) return nullptr;
  if (PluginDevice* d = devices[device_type].device.load(std::memory_order_acquire)) return d;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& p : plugins_) {
    // Slots of plugins with no devices are never erased, and their device is kept.
    if (p->info.status == PluginStatus::kNoDevices && p->info.device_type == device_type &&
        p->device) {
      return p->device.get();
    }
  }
  return nullptr;
}

PluginDevice* RuntimeState::DeviceEvenIfNone(int device_type) {
  if (PluginDevice* d = DeviceOrNull(device_type)) return d;
  ThrowNoDevice(DLContext{device_type, 0});
}

void RuntimeState::ForgetOldFailures() {
  size_t failed = 0;
  for (const auto& p : plugins_) failed += Failed(p->info.status);
  for (auto it = plugins_.begin(); it != plugins_.end() && failed >= kMaxFailedRecords;) {
    if (Failed((*it)->info.status)) {
      it = plugins_.erase(it);
      --failed;
    } else {
      ++it;
    }
  }
}

int RuntimeState::Count(int device_type) {
  if (device_type <= 0 || device_type >= DLARRAY_MAX_DEVICE_TYPES) return 0;
  DeviceSlot& slot = devices[device_type];
  if (slot.device.load(std::memory_order_acquire) == nullptr) return 0;
  const int n = slot.count.load(std::memory_order_acquire);
  if (n != kUncounted) return n;
  std::lock_guard<std::mutex> lock(mu_);
  return CountLocked(device_type);
}

int RuntimeState::CountLocked(int device_type) {
  DeviceSlot& slot = devices[device_type];
  int n = slot.count.load(std::memory_order_acquire);
  if (n != kUncounted || slot.owner == nullptr) return n == kUncounted ? 0 : n;
  PluginSlot& p = *slot.owner;
  std::string why;
  try {
    n = p.device->device_count();
  } catch (const std::exception& e) {
    n = 0;
    why = e.what();
  }
  if (n <= 0) {
    n = 0;
    try {
      if (why.empty()) why = p.device->unavailable_reason();
    } catch (const std::exception& e) {
      why = e.what();
    }
    // As a plugin that found none at load: its device stays reachable through DeviceOrNull
    // (extensions, the reason in errors), while DeviceFor refuses every id.
    p.info.status = PluginStatus::kNoDevices;
    p.info.reason = "zero devices" + (why.empty() ? std::string() : ": " + why);
    slot.device.store(nullptr, std::memory_order_release);
  }
  p.info.device_count = n;
  slot.count.store(n, std::memory_order_release);
  return n;
}

PluginSlot& RuntimeState::LoadLocked(const std::string& path_in, const std::string& origin,
                                     bool count_devices) {
  std::string path = path_in;
  if (path_in.find('\0') != std::string::npos) {
    // Kept printable: a NUL would cut every message that names the path.
    path.clear();
    for (char c : path_in) path += c == '\0' ? std::string("\\0") : std::string(1, c);
    plugins_.push_back(std::make_unique<PluginSlot>());
    PluginSlot& bad = *plugins_.back();
    bad.info.path = path;
    bad.info.origin = origin;
    bad.info.name = NameFromPath(path);
    bad.info.status = PluginStatus::kOpenFailed;
    bad.info.reason = "the path contains a NUL byte (written here as \\0)";
    return bad;
  } else if (!path_in.empty()) {
    std::error_code ec;
    fs::path abs = fs::absolute(path_in, ec);
    fs::path canon = ec ? fs::path() : fs::weakly_canonical(abs, ec);
    if (!ec) path = canon.string();
  }
  for (auto it = plugins_.begin(); it != plugins_.end(); ++it) {
    if ((*it)->info.path != path) continue;
    // The same file again: one record. A failed one is tried afresh (the file may be fixed).
    if (!Failed((*it)->info.status)) return **it;
    plugins_.erase(it);
    break;
  }
  plugins_.push_back(std::make_unique<PluginSlot>());
  PluginSlot& slot = *plugins_.back();
  slot.info.path = path;
  slot.info.origin = origin;
  slot.info.name = NameFromPath(path);
  LoadInto(slot, count_devices);
  if (Failed(slot.info.status)) {
    // Nothing of a failed plugin is referenced any more: unload it.
    if (slot.device) slot.device->destroy();
    slot.device.reset();
    slot.library.reset();
  }
  PluginSlot* result = &slot;
  if (Failed(slot.info.status)) {
    // Keep the newest record; make room by forgetting old failures (never this one).
    std::unique_ptr<PluginSlot> newest = std::move(plugins_.back());
    plugins_.pop_back();
    ForgetOldFailures();
    plugins_.push_back(std::move(newest));
    result = plugins_.back().get();
  }
  return *result;
}

void RuntimeState::LoadInto(PluginSlot& slot, bool count_devices) {
  PluginInfo& info = slot.info;
  const std::string& path = info.path;
  auto fail = [&](PluginStatus status, std::string reason) {
    info.status = status;
    info.reason = std::move(reason);
  };
  if (path.empty()) return fail(PluginStatus::kOpenFailed, "the path is empty");
  if (IsDisabled(disabled_, info.name)) {
    return fail(PluginStatus::kDisabled, "disabled by DLARRAY_DISABLE_PLUGINS");
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    return fail(PluginStatus::kOpenFailed,
                err == ENOENT ? std::string("no such file") : std::string(std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    return fail(PluginStatus::kOpenFailed,
                S_ISDIR(st.st_mode)
                    ? "a directory, not a library file"
                    : "not a regular file (a FIFO, socket or device is never opened)");
  }
  // What dlopen would crash on (a truncated ELF) or explain wrongly (another machine's library).
  const std::string refused = CheckPluginFile(path);
  if (!refused.empty()) return fail(PluginStatus::kOpenFailed, refused);
  auto lib = std::make_shared<boost::dll::shared_library>();
  dlerror();  // clear any stale message
  boost::dll::fs::error_code load_ec;
  lib->load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, load_ec);
  if (load_ec || !lib->is_loaded()) {
    const char* why = dlerror();
    return fail(PluginStatus::kOpenFailed, why ? why : load_ec.message());
  }
  slot.library = lib;
  if (!lib->has(DLARRAY_PLUGIN_ENTRY_SYMBOL)) {
    return fail(PluginStatus::kMissingEntry, std::string("no entry symbol '") +
                                                 DLARRAY_PLUGIN_ENTRY_SYMBOL +
                                                 "' (not a dlarray plugin)");
  }
  const DLArrayPluginDescriptor* desc = nullptr;
  try {
    desc = lib->get<const DLArrayPluginDescriptor*()>(DLARRAY_PLUGIN_ENTRY_SYMBOL)();
  } catch (...) {
    return fail(PluginStatus::kInitFailed, "the entry function threw an exception");
  }
  if (desc == nullptr) {
    return fail(PluginStatus::kInitFailed, "the entry function returned no descriptor");
  }
  info.abi_version = desc->abi_major;  // read before anything else
  if (desc->abi_major < DLARRAY_PLUGIN_ABI_OLDEST_MAJOR ||
      desc->abi_major > DLARRAY_PLUGIN_ABI_MAJOR) {
    // Before ABI 2 the descriptor held one version number; abi_minor means nothing then.
    const std::string theirs = desc->abi_major < 2 ? std::to_string(desc->abi_major)
                                                   : AbiText(desc->abi_major, desc->abi_minor);
    return fail(PluginStatus::kAbiMismatch,
                "built for plugin ABI " + theirs + ", this runtime has plugin ABI " +
                    AbiText(DLARRAY_PLUGIN_ABI_MAJOR, DLARRAY_PLUGIN_ABI_MINOR) +
                    " (it loads plugins of ABI " + std::to_string(DLARRAY_PLUGIN_ABI_OLDEST_MAJOR) +
                    ".x to " + std::to_string(DLARRAY_PLUGIN_ABI_MAJOR) +
                    ".x: rebuild the plugin against this dlarray SDK)");
  }
  info.abi_minor = desc->abi_minor;
  if (desc->struct_size <
      offsetof(DLArrayPluginDescriptor, register_kernels) + sizeof(desc->register_kernels)) {
    return fail(PluginStatus::kInitFailed, "the descriptor's struct_size " +
                                               std::to_string(desc->struct_size) +
                                               " is smaller than any ABI 2 descriptor");
  }
  if (desc->name != nullptr && desc->name[0] != '\0') info.name = desc->name;
  if (desc->version != nullptr) info.version = desc->version;
  if (IsDisabled(disabled_, info.name)) {
    return fail(PluginStatus::kDisabled, "disabled by DLARRAY_DISABLE_PLUGINS");
  }
  if (desc->device_type < 0 || desc->device_type >= DLARRAY_MAX_DEVICE_TYPES) {
    return fail(PluginStatus::kInitFailed, "device type " + std::to_string(desc->device_type) +
                                               " is out of range (0.." +
                                               std::to_string(DLARRAY_MAX_DEVICE_TYPES - 1) + ")");
  }
  info.device_type = desc->device_type;
  const bool serves_device = desc->device_type != 0;
  if (serves_device) {
    if (devices[desc->device_type].device.load() != nullptr) {
      std::string other = "another plugin";
      for (auto& p : plugins_) {
        if (p->info.status == PluginStatus::kLoaded && p->info.device_type == desc->device_type)
          other = p->info.path;
      }
      return fail(PluginStatus::kDuplicate,
                  DeviceTypeName(desc->device_type) + " devices are already served by " + other);
    }
    if (desc->create_device == nullptr) {
      return fail(PluginStatus::kInitFailed,
                  "serves " + DeviceTypeName(desc->device_type) + " but has no create_device");
    }
    try {
      const DLArrayDeviceApi* table = nullptr;
      ClearPluginError();
      if (desc->create_device(CoreApi(), &table) != 0) ThrowPluginError("create_device");
      slot.device =
          std::make_unique<PluginDevice>(table, info.name, desc->device_type, desc->abi_major);
      if (count_devices) info.device_count = slot.device->device_count();
    } catch (const std::exception& e) {
      return fail(PluginStatus::kInitFailed, std::string("initialisation failed: ") + e.what());
    }
    if (count_devices && info.device_count <= 0) {
      info.device_count = 0;
      NameDeviceType(desc->device_type, info.name);
      std::string why;
      try {
        why = slot.device->unavailable_reason();
      } catch (const std::exception& e) {
        why = e.what();
      }
      return fail(PluginStatus::kNoDevices,
                  "zero devices" + (why.empty() ? std::string() : ": " + why));
    }
  }
  StagingRegistry staged(info.name);
  try {
    ClearPluginError();
    if (desc->register_kernels != nullptr && desc->register_kernels(CoreApi(), &staged) != 0) {
      ThrowPluginError("register_kernels");
    }
    ops.Commit(staged);
  } catch (const std::exception& e) {
    return fail(PluginStatus::kInitFailed, std::string("registering kernels failed: ") + e.what());
  }
  // One entry per op, though a plugin may register an op's kernels for several device types.
  for (const auto& k : staged.kernels) {
    if (std::find(info.ops.begin(), info.ops.end(), k.op) == info.ops.end()) {
      info.ops.push_back(k.op);
    }
  }
  for (const auto& d : staged.declared) info.declared_ops.push_back(d.name);
  if (serves_device) {
    DeviceSlot& ds = devices[desc->device_type];
    ds.count.store(count_devices ? info.device_count : kUncounted, std::memory_order_relaxed);
    ds.owner = &slot;
    NameDeviceType(desc->device_type, info.name);
    ds.device.store(slot.device.get(), std::memory_order_release);
  }
  info.status = PluginStatus::kLoaded;
}

const char* PluginStatusName(PluginStatus status) {
  switch (status) {
    case PluginStatus::kLoaded:
      return "loaded";
    case PluginStatus::kDisabled:
      return "disabled";
    case PluginStatus::kOpenFailed:
      return "open failed";
    case PluginStatus::kMissingEntry:
      return "missing entry symbol";
    case PluginStatus::kAbiMismatch:
      return "ABI mismatch";
    case PluginStatus::kInitFailed:
      return "init failed";
    case PluginStatus::kNoDevices:
      return "no devices";
    case PluginStatus::kDuplicate:
      return "duplicate";
  }
  return "unknown";
}

}  // namespace dlarray
