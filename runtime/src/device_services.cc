// Device services beyond the plugin table, through device extensions (memory info, stream
// ordering), and device names as strings ("cuda:1").
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "core_api.h"
#include "dlarray/ext/mem_info.h"
#include "dlarray/ext/streams.h"
#include "dlarray/runtime.h"
#include "runtime_state.h"

namespace dlarray {

MemInfo GetMemInfo(DLContext ctx) {
  PluginDevice* device = RuntimeState::Get().DeviceFor(ctx);
  const auto* ext =
      static_cast<const DLArrayMemInfoExtV1*>(device->extension(DLARRAY_EXT_MEM_INFO_V1));
  if (ext == nullptr || ext->mem_info == nullptr) {
    throw BackendError("mem_info: the " + device->plugin() + " plugin serving " +
                       ContextToString(ctx) + " does not report free and total memory");
  }
  MemInfo out;
  ClearPluginError();
  if (ext->mem_info(ext->self, ctx.device_id, &out.free_bytes, &out.total_bytes) != 0) {
    ThrowPluginError("mem_info(" + ContextToString(ctx) + ") of plugin '" + device->plugin() + "'");
  }
  return out;
}

void WaitStream(DLContext ctx, void* waiter, void* signaller) {
  PluginDevice* device = RuntimeState::Get().DeviceFor(ctx);
  if (waiter == signaller) return;
  const auto* ext =
      static_cast<const DLArrayStreamsExtV1*>(device->extension(DLARRAY_EXT_STREAMS_V1));
  if (ext == nullptr || ext->wait_stream == nullptr) {
    if (device->stream(ctx.device_id) == nullptr) return;  // a synchronous device
    throw BackendError("the " + device->plugin() + " plugin serving " + ContextToString(ctx) +
                       " has streams but cannot order them (no " DLARRAY_EXT_STREAMS_V1 ")");
  }
  ClearPluginError();
  if (ext->wait_stream(ext->self, ctx.device_id, waiter, signaller) != 0) {
    ThrowPluginError("wait_stream on " + ContextToString(ctx) + " of plugin '" + device->plugin() +
                     "'");
  }
}

int DeviceTypeFromName(const std::string& name) {
  if (name == "gpu") return kDLArrayCUDA;  // the seed API's name of CUDA devices
  // The names the core prints: DLPack's, plugins' own, and "device_type_<n>".
  for (int t = 1; t < DLARRAY_MAX_DEVICE_TYPES; ++t) {
    if (name == DeviceTypeName(t)) return t;
  }
  for (const PluginInfo& p : Plugins()) {
    if (p.device_type > 0 && p.name == name) return p.device_type;
  }
  return -1;
}

DLContext ParseContext(const std::string& text) {
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const int type = DeviceTypeFromName(kind);
  auto fail = [&](const std::string& why) -> DLContext {
    // The names of the types some plugin serves, and the two every build knows.
    std::vector<int> types{kDLArrayCPU, kDLArrayCUDA};
    for (const PluginInfo& p : Plugins()) {
      if (std::find(types.begin(), types.end(), p.device_type) == types.end() &&
          p.device_type > 0) {
        types.push_back(p.device_type);
      }
    }
    std::string names;
    for (int t : types) names += (names.empty() ? "" : ", ") + DeviceTypeName(t);
    throw Error(ErrorKind::kValue, "device '" + text + "': " + why +
                                       " (write a device type name with an optional id: " + names +
                                       ", e.g. '" + DeviceTypeName(kDLArrayCUDA) + ":1')");
  };
  if (type < 0) return fail("unknown device type '" + kind + "'");
  int id = 0;
  if (colon != std::string::npos) {
    const std::string digits = text.substr(colon + 1);
    if (digits.empty() || digits.size() > 9) return fail("the id must be a number from 0");
    for (char c : digits) {
      if (!std::isdigit(static_cast<unsigned char>(c))) {
        return fail("the id must be a number from 0");
      }
    }
    id = std::stoi(digits);
  }
  return DLContext{type, id};
}

}  // namespace dlarray
