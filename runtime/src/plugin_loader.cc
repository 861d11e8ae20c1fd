// Plugin discovery and loading with Boost.DLL. A plugin that fails at any step is recorded with
// the exact reason and never stops the others.
#define BOOST_DLL_USE_STD_FS
#include <dlfcn.h>

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "dlarray/plugin.h"
#include "runtime_state.h"

namespace fs = std::filesystem;

namespace dlarray {
namespace {

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

std::vector<std::string> LibrariesIn(const fs::path& dir) {
  std::vector<std::string> libs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".so" && !entry.is_directory())
      libs.push_back(entry.path().string());
  }
  std::sort(libs.begin(), libs.end());
  return libs;
}

std::string Describe(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

}  // namespace

RuntimeState* RuntimeState::Create() {
  auto* state = new RuntimeState();
  state->Discover();
  return state;
}

void RuntimeState::Discover() {
  if (const char* d = std::getenv("DLARRAY_DISABLE_PLUGINS")) disabled_ = Split(d, ',');
  std::error_code ec;
  fs::path core = boost::dll::this_line_location(ec);
  if (!ec) search_path.push_back((core.parent_path() / "plugins").string());
  std::vector<std::string> from_env;
  if (const char* p = std::getenv("DLARRAY_PLUGIN_PATH")) from_env = Split(p, ':');
  search_path.insert(search_path.end(), from_env.begin(), from_env.end());

  std::lock_guard<std::mutex> lock(mu_);
  if (!search_path.empty() && !ec) {
    for (const std::string& lib : LibrariesIn(search_path[0])) LoadLocked(lib, "plugins folder");
  }
  for (const std::string& entry : from_env) {
    if (fs::is_directory(entry, ec)) {
      for (const std::string& lib : LibrariesIn(entry)) LoadLocked(lib, "DLARRAY_PLUGIN_PATH");
    } else {
      LoadLocked(entry, "DLARRAY_PLUGIN_PATH");
    }
  }
}

PluginInfo RuntimeState::Load(const std::string& path, const std::string& origin) {
  std::lock_guard<std::mutex> lock(mu_);
  return LoadLocked(path, origin).info;
}

std::vector<PluginInfo> RuntimeState::Records() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<PluginInfo> out;
  for (const auto& p : plugins_) out.push_back(p->info);
  return out;
}

PluginSlot& RuntimeState::LoadLocked(const std::string& path_in, const std::string& origin) {
  std::error_code ec;
  fs::path abs = fs::absolute(path_in, ec);
  fs::path canon = fs::weakly_canonical(abs, ec);
  std::string path = ec ? path_in : canon.string();
  for (auto& p : plugins_) {
    if (p->info.path == path) return *p;  // the same file twice: one record
  }
  plugins_.push_back(std::make_unique<PluginSlot>());
  PluginSlot& slot = *plugins_.back();
  PluginInfo& info = slot.info;
  info.path = path;
  info.origin = origin;
  info.name = NameFromPath(path);

  if (IsDisabled(disabled_, info.name)) {
    info.status = PluginStatus::kDisabled;
    info.reason = "disabled by DLARRAY_DISABLE_PLUGINS";
    return slot;
  }
  if (!fs::exists(path, ec)) {
    info.status = PluginStatus::kOpenFailed;
    info.reason = "no such file";
    return slot;
  }
  auto lib = std::make_shared<boost::dll::shared_library>();
  dlerror();  // clear any stale message
  boost::dll::fs::error_code load_ec;
  lib->load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, load_ec);
  if (load_ec || !lib->is_loaded()) {
    const char* why = dlerror();
    info.status = PluginStatus::kOpenFailed;
    info.reason = why ? why : load_ec.message();
    return slot;
  }
  slot.library = lib;
  if (!lib->has(DLARRAY_PLUGIN_ENTRY_SYMBOL)) {
    info.status = PluginStatus::kMissingEntry;
    info.reason =
        std::string("no entry symbol '") + DLARRAY_PLUGIN_ENTRY_SYMBOL + "' (not a dlarray plugin)";
    return slot;
  }
  const DLArrayPluginDescriptor* desc = nullptr;
  try {
    desc = lib->get<const DLArrayPluginDescriptor*()>(DLARRAY_PLUGIN_ENTRY_SYMBOL)();
  } catch (...) {
    info.status = PluginStatus::kInitFailed;
    info.reason = "the entry function threw: " + Describe(std::current_exception());
    return slot;
  }
  if (desc == nullptr) {
    info.status = PluginStatus::kInitFailed;
    info.reason = "the entry function returned no descriptor";
    return slot;
  }
  info.abi_version = desc->abi_version;  // read before anything else
  if (desc->abi_version != DLARRAY_PLUGIN_ABI_VERSION) {
    info.status = PluginStatus::kAbiMismatch;
    info.reason = "built for plugin ABI version " + std::to_string(desc->abi_version) +
                  ", this runtime has ABI version " + std::to_string(DLARRAY_PLUGIN_ABI_VERSION);
    return slot;
  }
  if (desc->name != nullptr && desc->name[0] != '\0') info.name = desc->name;
  info.device_type = desc->device_type;
  if (IsDisabled(disabled_, info.name)) {
    info.status = PluginStatus::kDisabled;
    info.reason = "disabled by DLARRAY_DISABLE_PLUGINS";
    return slot;
  }
  if (desc->device_type < 0 || desc->device_type >= DLARRAY_MAX_DEVICE_TYPES) {
    info.status = PluginStatus::kInitFailed;
    info.reason = "device type " + std::to_string(desc->device_type) + " is out of range";
    return slot;
  }
  bool serves_device = desc->device_type != 0;
  if (serves_device) {
    if (devices[desc->device_type].device.load() != nullptr) {
      for (auto& p : plugins_) {
        if (p->info.status == PluginStatus::kLoaded && p->info.device_type == desc->device_type) {
          info.status = PluginStatus::kDuplicate;
          info.reason =
              DeviceTypeName(desc->device_type) + " devices are already served by " + p->info.path;
        }
      }
      return slot;
    }
    if (desc->create_device == nullptr) {
      info.status = PluginStatus::kInitFailed;
      info.reason = "serves " + DeviceTypeName(desc->device_type) + " but has no create_device";
      return slot;
    }
    try {
      slot.device.reset(desc->create_device());
      if (!slot.device) throw BackendError("create_device returned null");
      info.device_count = slot.device->device_count();
    } catch (...) {
      info.status = PluginStatus::kInitFailed;
      info.reason = "initialisation threw: " + Describe(std::current_exception());
      return slot;
    }
    if (info.device_count <= 0) {
      info.device_count = 0;
      info.status = PluginStatus::kNoDevices;
      std::string why;
      try {
        why = slot.device->unavailable_reason();
      } catch (...) {
        why = Describe(std::current_exception());
      }
      info.reason = "zero devices" + (why.empty() ? std::string() : ": " + why);
      return slot;
    }
  }
  StagingRegistry staged;
  try {
    if (desc->register_kernels != nullptr) desc->register_kernels(&staged);
    ops.Commit(staged, info.name);
  } catch (...) {
    info.status = PluginStatus::kInitFailed;
    info.reason = "registering kernels threw: " + Describe(std::current_exception());
    return slot;
  }
  for (const auto& k : staged.kernels) info.ops.push_back(k.op);
  if (serves_device) {
    DeviceSlot& ds = devices[desc->device_type];
    ds.count = info.device_count;
    ds.device.store(slot.device.get(), std::memory_order_release);
  }
  info.status = PluginStatus::kLoaded;
  return slot;
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
