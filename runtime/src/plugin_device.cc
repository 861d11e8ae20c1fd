#include "plugin_device.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core_api.h"
#include "dlarray/errors.h"
#include "dlarray/runtime.h"

namespace dlarray {
namespace {

// Whether the table has a non-null function in field (older minors lack newer fields).
#define HAS_FN(api, field) (DLARRAY_STRUCT_HAS(api, DLArrayDeviceApi, field) && (api)->field)

}  // namespace

// The copy of ABI 2.x device tables: plain pointers (data + byte_offset), contexts by value.
using LegacyCopyFn = int (*)(void* self, const void* src, DLDevice src_device, void* dst,
                             DLDevice dst_device, uint64_t nbytes);

PluginDevice::PluginDevice(const DLArrayDeviceApi* api, std::string plugin, int device_type,
                           uint32_t abi_major)
    : api_(api), plugin_(std::move(plugin)), device_type_(device_type), abi_major_(abi_major) {
  if (api == nullptr) throw BackendError("create_device gave no device table");
  if (!DLARRAY_STRUCT_HAS(api, DLArrayDeviceApi, synchronize)) {
    throw BackendError("the device table's struct_size " + std::to_string(api->struct_size) +
                       " is smaller than any ABI 2 device table");
  }
  if (abi_major_ >= 3) {
    capabilities_ = DLARRAY_STRUCT_HAS(api, DLArrayDeviceApi, capabilities) ? api->capabilities : 0;
    // Host memory is addressed with pointers too.
    if (capabilities_ & DLARRAY_DEVICE_HOST_ADDRESSABLE) {
      capabilities_ |= DLARRAY_DEVICE_POINTER_ARITHMETIC;
    }
  } else if (device_type == kDLArrayCPU) {
    capabilities_ = DLARRAY_DEVICE_POINTER_ARITHMETIC | DLARRAY_DEVICE_HOST_ADDRESSABLE;
  } else if (device_type == kDLArrayCUDA) {
    capabilities_ = DLARRAY_DEVICE_POINTER_ARITHMETIC;  // 2.x cores offset CUDA pointers too
  }
  const char* missing = !api->device_count  ? "device_count"
                        : !api->device_name ? "device_name"
                        : !api->allocate    ? "allocate"
                        : !api->free        ? "free"
                        : !api->copy        ? "copy"
                        : !api->synchronize ? "synchronize"
                                            : nullptr;
  if (missing != nullptr) {
    throw BackendError(std::string("the device table has no ") + missing + " function");
  }
}

std::string PluginDevice::Where(const char* what) const {
  return "the " + plugin_ + " plugin's " + what;
}

void PluginDevice::Check(int rc, const char* what) {
  if (rc != 0) ThrowPluginError(Where(what));
}

int PluginDevice::device_count() {
  int32_t n = 0;
  ClearPluginError();
  Check(api_->device_count(api_->self, &n), "device_count");
  return n < 0 ? 0 : n;
}

std::string PluginDevice::unavailable_reason() {
  if (!HAS_FN(api_, unavailable_reason)) return {};
  DLArrayString s;
  ClearPluginError();
  Check(api_->unavailable_reason(api_->self, &s), "unavailable_reason");
  return s.value;
}

std::string PluginDevice::device_name(int id) {
  DLArrayString s;
  ClearPluginError();
  Check(api_->device_name(api_->self, id, &s), "device_name");
  return s.value;
}

void* PluginDevice::allocate(int id, size_t nbytes) {
  void* p = nullptr;
  ClearPluginError();
  Check(api_->allocate(api_->self, id, nbytes, &p), "allocate");
  if (p == nullptr) {
    throw BackendError(Where("allocate") + " returned no memory (a null pointer) for " +
                       std::to_string(nbytes) + " bytes on " +
                       ContextToString(DLContext{device_type_, id}));
  }
  return p;
}

void PluginDevice::free(int id, void* ptr, size_t nbytes) noexcept {
  api_->free(api_->self, id, ptr, nbytes);
}

void PluginDevice::copy(const void* src, uint64_t src_offset, DLDevice src_device, void* dst,
                        uint64_t dst_offset, DLDevice dst_device, size_t nbytes) {
  ClearPluginError();
  if (abi_major_ >= 3) {
    Check(api_->copy(api_->self, src, src_offset, src_device, dst, dst_offset, dst_device, nbytes),
          "copy");
    return;
  }
  // 2.x copies took data + byte_offset, as 2.x cores computed it for every device.
  const auto legacy = reinterpret_cast<LegacyCopyFn>(reinterpret_cast<void (*)()>(api_->copy));
  Check(legacy(api_->self, static_cast<const char*>(src) + src_offset, src_device,
               static_cast<char*>(dst) + dst_offset, dst_device, nbytes),
        "copy");
}

void PluginDevice::fill(void* dst, uint64_t dst_offset, DLDevice device, const void* pattern,
                        uint32_t pattern_size, size_t nbytes) {
  if (nbytes == 0) return;
  if (abi_major_ >= 3 && HAS_FN(api_, fill)) {
    ClearPluginError();
    Check(api_->fill(api_->self, dst, dst_offset, device, pattern, pattern_size, nbytes), "fill");
    return;
  }
  // No fill: the pattern repeated over a bounded host buffer, copied over chunk by chunk (copy
  // returns once its host source may be reused).
  const size_t chunk = std::min<size_t>(nbytes, size_t{1} << 20) / pattern_size * pattern_size;
  std::vector<unsigned char> host(chunk);
  for (size_t i = 0; i < chunk; i += pattern_size) {
    std::memcpy(host.data() + i, pattern, pattern_size);
  }
  for (size_t done = 0; done < nbytes; done += chunk) {
    copy(host.data(), 0, DLDevice{kDLArrayCPU, 0}, dst, dst_offset + done, device,
         std::min(chunk, nbytes - done));
  }
}

void PluginDevice::synchronize(int id) {
  ClearPluginError();
  Check(api_->synchronize(api_->self, id), "synchronize");
}

void* PluginDevice::stream(int id) {
  if (!HAS_FN(api_, stream)) return nullptr;
  void* s = nullptr;
  ClearPluginError();
  Check(api_->stream(api_->self, id, &s), "stream");
  return s;
}

MemoryStats PluginDevice::memory_stats(int id) {
  MemoryStats out;
  if (!HAS_FN(api_, memory_stats)) return out;
  DLArrayMemoryStats c{};
  c.struct_size = sizeof(c);
  ClearPluginError();
  Check(api_->memory_stats(api_->self, id, &c), "memory_stats");
  out.bytes_in_use = c.bytes_in_use;
  out.bytes_reserved = c.bytes_reserved;
  out.num_allocations = c.num_allocations;
  out.num_frees = c.num_frees;
  out.peak_bytes_in_use = c.peak_bytes_in_use;
  return out;
}

void PluginDevice::empty_cache(int id) {
  if (!HAS_FN(api_, empty_cache)) return;
  ClearPluginError();
  Check(api_->empty_cache(api_->self, id), "empty_cache");
}

void PluginDevice::set_option(const std::string& key, const std::string& value) {
  if (!HAS_FN(api_, set_option)) {
    throw Error(ErrorKind::kValue,
                "unknown option '" + key + "': the " + plugin_ + " plugin has no options");
  }
  ClearPluginError();
  Check(api_->set_option(api_->self, key.c_str(), value.c_str()), "set_option");
}

std::string PluginDevice::get_option(const std::string& key) {
  if (!HAS_FN(api_, get_option)) {
    throw Error(ErrorKind::kValue,
                "unknown option '" + key + "': the " + plugin_ + " plugin has no options");
  }
  DLArrayString s;
  ClearPluginError();
  Check(api_->get_option(api_->self, key.c_str(), &s), "get_option");
  return s.value;
}

const void* PluginDevice::extension(const std::string& name) {
  if (!HAS_FN(api_, get_extension)) return nullptr;
  const void* out = nullptr;
  ClearPluginError();
  Check(api_->get_extension(api_->self, name.c_str(), &out), "get_extension");
  return out;
}

void PluginDevice::destroy() noexcept {
  if (HAS_FN(api_, destroy)) api_->destroy(api_->self);
}

}  // namespace dlarray
