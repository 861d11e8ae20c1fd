// The core's view of a device type served by a plugin: the plugin's C table, called with every
// return code checked and every failure turned into a typed exception naming the plugin.
#ifndef DLARRAY_RUNTIME_SRC_PLUGIN_DEVICE_H_
#define DLARRAY_RUNTIME_SRC_PLUGIN_DEVICE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "dlarray/device.h"
#include "dlarray/plugin_api.h"

namespace dlarray {

class PluginDevice {
 public:
  /*! \brief Checks the table (required functions present); throws BackendError naming a gap.
   *         abi_major: the plugin's (2: the 2.x copy signature and no capabilities field). */
  PluginDevice(const DLArrayDeviceApi* api, std::string plugin, int device_type,
               uint32_t abi_major);

  const DLArrayDeviceApi* api() const { return api_; }
  const std::string& plugin() const { return plugin_; }
  int device_type() const { return device_type_; }

  int device_count();
  std::string unavailable_reason();
  std::string device_name(int id);
  /*! \brief Never returns null: a plugin that gives no memory is reported as an error. */
  void* allocate(int id, size_t nbytes);
  void free(int id, void* ptr, size_t nbytes) noexcept;
  /*! \brief Copies between (buffer, byte offset) pairs, in the plugin's ABI. */
  void copy(const void* src, uint64_t src_offset, DLDevice src_device, void* dst,
            uint64_t dst_offset, DLDevice dst_device, size_t nbytes);
  /*! \brief Repeats pattern (pattern_size bytes) over nbytes at (dst, dst_offset): the plugin's
   *         fill, or, where it has none (2.x, or NULL), host memory copied over with copy. */
  void fill(void* dst, uint64_t dst_offset, DLDevice device, const void* pattern,
            uint32_t pattern_size, size_t nbytes);
  /*! \brief DLARRAY_DEVICE_* bits (for a 2.x plugin: what 2.x cores assumed of its type). */
  uint64_t capabilities() const { return capabilities_; }
  /*! \brief Whether the core may offset data pointers (DLARRAY_DEVICE_POINTER_ARITHMETIC). */
  bool pointer_arithmetic() const {
    return (capabilities_ & DLARRAY_DEVICE_POINTER_ARITHMETIC) != 0;
  }
  void synchronize(int id);
  void* stream(int id);
  MemoryStats memory_stats(int id);
  void empty_cache(int id);
  void set_option(const std::string& key, const std::string& value);
  std::string get_option(const std::string& key);
  const void* extension(const std::string& name);
  /*! \brief Lets the plugin release the device (only when its loading failed afterwards). */
  void destroy() noexcept;

 private:
  void Check(int rc, const char* what);
  std::string Where(const char* what) const;

  const DLArrayDeviceApi* api_;
  std::string plugin_;
  int device_type_;
  uint32_t abi_major_;
  uint64_t capabilities_ = 0;
};

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_PLUGIN_DEVICE_H_
