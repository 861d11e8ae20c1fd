/*!
 * \file dlarray/device.h
 * \brief The abstract C++ Device a backend plugin subclasses (header-only plugin SDK layer).
 *
 * A Device never crosses the library boundary itself: dlarray/plugin.h wraps it into the C table
 * DLArrayDeviceApi of dlarray/plugin_api.h, catching every exception. So a plugin built with any
 * compiler and C++ library can subclass it.
 */
#ifndef DLARRAY_DEVICE_H_
#define DLARRAY_DEVICE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dlarray/dlarray.h"
#include "dlarray/errors.h"
#include "dlarray/plugin_api.h"

namespace dlarray {

/*! \brief Allocator counters of one device (dlarray.memory_stats). */
struct MemoryStats {
  uint64_t bytes_in_use = 0;       //!< bytes held by live arrays
  uint64_t bytes_reserved = 0;     //!< bytes taken from the system/driver (in use + cached)
  uint64_t num_allocations = 0;    //!< system/driver allocations made so far (cudaMalloc, ...)
  uint64_t num_frees = 0;          //!< system/driver frees made so far
  uint64_t peak_bytes_in_use = 0;  //!< high-water mark of bytes_in_use
};

/*!
 * \brief One backend's devices of one type (all ids). Methods may throw dlarray::Error.
 *
 * The core validates every argument before it calls in: ids are in range, sizes are consistent,
 * pointers come from allocate(). Thread-safety: methods may be called from several threads.
 */
class Device {
 public:
  virtual ~Device() = default;
  /*! \brief The DLArrayDeviceType served; must equal the plugin descriptor's device type. */
  virtual int device_type() const = 0;
  /*! \brief How many devices exist; 0 means unusable (see unavailable_reason). */
  virtual int device_count() = 0;
  /*! \brief Why device_count() is 0 (e.g. "no CUDA driver"); empty otherwise. */
  virtual std::string unavailable_reason() { return {}; }
  /*! \brief Human-readable name of device id (e.g. the GPU model). */
  virtual std::string device_name(int id) = 0;
  /*! \brief Allocates nbytes (> 0) on device id; throws OutOfMemoryError when it cannot. */
  virtual void* allocate(int id, size_t nbytes) = 0;
  /*! \brief Releases a pointer from allocate(id, nbytes). Must not throw. */
  virtual void free(int id, void* ptr, size_t nbytes) noexcept = 0;
  /*!
   * \brief Copies nbytes from byte src_offset of buffer src to byte dst_offset of buffer dst (a
   *        buffer is what allocate() gave, or host memory on a CPU side). At least one side is on
   *        this device type; the other is on this type or on the CPU. Returns once host memory
   *        given as src may be reused and, for a copy into host memory, once dst holds the data.
   */
  virtual void copy(const void* src, uint64_t src_offset, DLDevice src_device, void* dst,
                    uint64_t dst_offset, DLDevice dst_device, size_t nbytes) = 0;
  /*!
   * \brief Repeats the pattern_size (1, 2, 4 or 8) bytes at pattern over nbytes (a multiple of
   *        it) at byte dst_offset of buffer dst on `device`, ordered like kernels; returns once
   *        pattern may be reused (DLArrayDeviceApi.fill). The default copies the pattern, repeated
   *        in host memory, over with copy(); a device overrides it with its own fill.
   */
  virtual void fill(void* dst, uint64_t dst_offset, DLDevice device, const void* pattern,
                    uint32_t pattern_size, size_t nbytes) {
    std::vector<unsigned char> host(nbytes);
    for (size_t i = 0; i < nbytes; i += pattern_size) {
      std::memcpy(host.data() + i, pattern, pattern_size);
    }
    copy(host.data(), 0, DLDevice{kDLArrayCPU, 0}, dst, dst_offset, device, nbytes);
  }
  /*!
   * \brief DLARRAY_DEVICE_* bits of dlarray/plugin_api.h: whether data pointers are addresses the
   *        core may offset (DLARRAY_DEVICE_POINTER_ARITHMETIC) or even read on the host
   *        (DLARRAY_DEVICE_HOST_ADDRESSABLE). 0: opaque buffer handles.
   */
  virtual uint64_t capabilities() const { return 0; }
  /*! \brief Waits for all work queued on device id; reports asynchronous failures. */
  virtual void synchronize(int id) = 0;
  /*! \brief The stream kernels of device id run on (nullptr: synchronous backend). */
  virtual void* stream(int id) {
    (void)id;
    return nullptr;
  }
  /*! \brief Allocator counters of device id. */
  virtual MemoryStats memory_stats(int id) {
    (void)id;
    return {};
  }
  /*! \brief Returns cached, unused blocks of device id to the system. */
  virtual void empty_cache(int id) { (void)id; }
  /*! \brief Sets a backend option (e.g. "matmul_precision" = "tf32"); throws on unknown keys. */
  virtual void set_option(const std::string& key, const std::string& value) {
    (void)value;
    throw Error(ErrorKind::kValue,
                "unknown option '" + key + "' for device type " + std::to_string(device_type()));
  }
  /*! \brief Reads a backend option; throws on unknown keys. */
  virtual std::string get_option(const std::string& key) {
    throw Error(ErrorKind::kValue,
                "unknown option '" + key + "' for device type " + std::to_string(device_type()));
  }
  /*!
   * \brief A named extension table (e.g. "dlarray.rtc.v1"), whose C layout the extension's header
   *        documents; nullptr when this device does not offer it.
   */
  virtual const void* extension(const std::string& name) {
    (void)name;
    return nullptr;
  }
};

}  // namespace dlarray

#endif  // DLARRAY_DEVICE_H_
