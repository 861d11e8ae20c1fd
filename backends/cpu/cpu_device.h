/*!
 * \file cpu_device.h
 * \brief The host as a dlarray device: one device (id 0), 64-byte aligned allocations, counters.
 */
#ifndef DLARRAY_BACKENDS_CPU_CPU_DEVICE_H_
#define DLARRAY_BACKENDS_CPU_CPU_DEVICE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "dlarray/device.h"

namespace dlarray::cpu {

/*! \brief Alignment of every allocation (a cache line, a full AVX-512 vector). */
constexpr size_t kAllocationAlignment = 64;

/*! \brief The plugin's extension tables by name (cpu_plugin.cc), or nullptr. */
const void* FindExtension(const std::string& name);

class LargeBlocks;

class CpuDevice final : public Device {
 public:
  CpuDevice();
  ~CpuDevice() override;
  int device_type() const override { return kDLArrayCPU; }
  int device_count() override { return 1; }
  std::string device_name(int id) override;
  void* allocate(int id, size_t nbytes) override;
  void free(int id, void* ptr, size_t nbytes) noexcept override;
  uint64_t capabilities() const override { return DLARRAY_DEVICE_HOST_ADDRESSABLE; }
  void copy(const void* src, uint64_t src_offset, DLDevice src_device, void* dst,
            uint64_t dst_offset, DLDevice dst_device, size_t nbytes) override;
  void fill(void* dst, uint64_t dst_offset, DLDevice device, const void* pattern,
            uint32_t pattern_size, size_t nbytes) override;
  void synchronize(int id) override;
  MemoryStats memory_stats(int id) override;
  /*! \brief Frees the large blocks kept for reuse (LargeBlocks). */
  void empty_cache(int id) override;
  /*! \brief "num_threads": the thread pool's size (1 to 4095). */
  void set_option(const std::string& key, const std::string& value) override;
  /*!
   * \brief "num_threads", "wait_policy", "gemm" ("cblas" or "blocked"), and the BLAS's "blas"
   *        (name), "blas_path", "blas_config", "blas_core" (its kernel for this CPU),
   *        "blas_threads" (its own pool's), "cache_limit" (bytes LargeBlocks may keep).
   */
  std::string get_option(const std::string& key) override;
  /*! \brief "dlarray.mem_info.v1" (see cpu_plugin.cc). */
  const void* extension(const std::string& name) override;
  /*! \brief Available and total physical memory (MemAvailable and MemTotal of /proc/meminfo). */
  static void MemInfo(uint64_t* free_bytes, uint64_t* total_bytes);

 private:
  std::string model_;      // from /proc/cpuinfo
  uint64_t memory_limit_;  // RAM + swap: larger requests are refused up front
  std::atomic<uint64_t> bytes_in_use_{0};
  std::atomic<uint64_t> bytes_reserved_{0};
  std::atomic<uint64_t> peak_bytes_in_use_{0};
  std::unique_ptr<LargeBlocks> large_blocks_;  // freed blocks of 1 MiB and more, for reuse
};

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_CPU_DEVICE_H_
