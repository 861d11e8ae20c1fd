// The process-wide runtime: op table, devices by type, and every plugin the loader tried.
// Created on first use (which runs discovery) and never destroyed, so plugins and devices outlive
// every array, also during interpreter shutdown.
#ifndef DLARRAY_RUNTIME_SRC_RUNTIME_STATE_H_
#define DLARRAY_RUNTIME_SRC_RUNTIME_STATE_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dlarray/runtime.h"
#include "op_table.h"
#include "plugin_device.h"

namespace dlarray {

/*! \brief A loaded or failed plugin: its record plus what keeps it alive. */
struct PluginSlot {
  PluginInfo info;
  std::shared_ptr<void> library;         // the boost::dll::shared_library (failed ones unload)
  std::unique_ptr<PluginDevice> device;  // kept also when it reports zero devices
};

/*! \brief DeviceSlot::count before the plugin has been asked how many devices it has. */
constexpr int kUncounted = -1;

struct DeviceSlot {
  std::atomic<PluginDevice*> device{nullptr};
  // The devices of the plugin, or kUncounted: discovery does not count them (the OpenCL ICD
  // loads its vendors' compiler stacks then, tens of MB, for devices that may never be used),
  // the first question does (RuntimeState::Count). Written before device is published.
  std::atomic<int> count{0};
  PluginSlot* owner = nullptr;  // the plugin serving the type, marked kNoDevices if it has none
};

/*! \brief Lets device_type print (and parse) as the name of the plugin serving it, unless that name
 *         is not an identifier or already names another type. */
void NameDeviceType(int device_type, const std::string& plugin);

class RuntimeState {
 public:
  /*! \brief The runtime; the first call discovers plugins. */
  static RuntimeState& Get() {
    static RuntimeState* state = Create();
    return *state;
  }

  OpTable ops;
  std::array<DeviceSlot, DLARRAY_MAX_DEVICE_TYPES> devices;

  /*! \brief The Device for ctx, or a thrown error with the stored reason. */
  PluginDevice* DeviceFor(DLContext ctx) {
    if (ctx.device_type > 0 && ctx.device_type < DLARRAY_MAX_DEVICE_TYPES) {
      DeviceSlot& slot = devices[ctx.device_type];
      PluginDevice* d = slot.device.load(std::memory_order_acquire);
      if (d != nullptr && ctx.device_id >= 0 && ctx.device_id < Count(ctx.device_type)) return d;
    }
    ThrowNoDevice(ctx);
  }
  [[noreturn]] void ThrowNoDevice(DLContext ctx);
  /*! \brief The devices of a type: the plugin counts them on the first call (a plugin that
   *         finds none becomes kNoDevices then, with its reason). */
  int Count(int device_type);
  /*! \brief The device of type device_type, also when its plugin loaded with no devices; else
   *         the thrown error of DeviceFor. */
  PluginDevice* DeviceEvenIfNone(int device_type);
  /*! \brief Like DeviceEvenIfNone, but nullptr where no plugin serves device_type. */
  PluginDevice* DeviceOrNull(int device_type);

  PluginInfo Load(const std::string& path, const std::string& origin);
  std::vector<PluginInfo> Records();
  std::vector<std::string> search_path;

 private:
  static RuntimeState* Create();
  void Discover();
  // count_devices: ask the plugin for its devices now (explicit loads, DLARRAY_EAGER_PLUGINS=1)
  // rather than at the first question (discovery).
  PluginSlot& LoadLocked(const std::string& path, const std::string& origin,
                         bool count_devices = true);
  void LoadInto(PluginSlot& slot, bool count_devices);
  int CountLocked(int device_type);
  void ForgetOldFailures();

  std::mutex mu_;
  std::vector<std::unique_ptr<PluginSlot>> plugins_;
  std::vector<std::string> disabled_;
};

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_RUNTIME_STATE_H_
