/*!
 * \file opencl_device.h
 * \brief OpenclDevice: the dlarray::Device of the OpenCL plugin (device type 4, kDLOpenCL).
 */
#ifndef DLARRAY_BACKENDS_OPENCL_OPENCL_DEVICE_H_
#define DLARRAY_BACKENDS_OPENCL_OPENCL_DEVICE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "buffer_table.h"
#include "cl_headers.h"
#include "dlarray/device.h"

namespace dlarray::opencl {

/*! \brief DLPack's device type of OpenCL devices (kDLArrayOpenCL of dlarray/dlarray.h). */
constexpr int kDLOpenCL = kDLArrayOpenCL;

class BufferPool;
class ProgramCache;

/*! \brief What the kernels need to know about one OpenCL device (fixed once found). */
struct DeviceInfo {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  std::string name;                  //!< CL_DEVICE_NAME
  std::string platform_name;         //!< CL_PLATFORM_NAME
  std::string platform_vendor;       //!< CL_PLATFORM_VENDOR
  std::string platform_version;      //!< CL_PLATFORM_VERSION
  std::string device_version;        //!< CL_DEVICE_VERSION
  std::string driver_version;        //!< CL_DRIVER_VERSION
  uint64_t global_mem = 0;           //!< CL_DEVICE_GLOBAL_MEM_SIZE
  uint64_t max_alloc = 0;            //!< CL_DEVICE_MAX_MEM_ALLOC_SIZE
  size_t max_work_group = 1;         //!< CL_DEVICE_MAX_WORK_GROUP_SIZE
  unsigned compute_units = 1;        //!< CL_DEVICE_MAX_COMPUTE_UNITS
  bool is_cpu = false;               //!< CL_DEVICE_TYPE_CPU
  bool fp64 = false;                 //!< doubles in kernels (cl_khr_fp64)
  bool fp32_correct_divide = false;  //!< CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT (may be asked for)
};

/*!
 * \brief Every selected OpenCL device (see device_selection.h). Per device, made at first use:
 *        a context, one in-order command queue that every kernel and copy uses, a buffer pool and
 *        the compiled programs. Nothing touches OpenCL before device_count() is first called.
 */
class OpenclDevice final : public Device {
 public:
  OpenclDevice();
  ~OpenclDevice() override;

  int device_type() const override { return kDLOpenCL; }
  int device_count() override;
  std::string unavailable_reason() override;
  std::string device_name(int id) override;
  void* allocate(int id, size_t nbytes) override;
  void free(int id, void* ptr, size_t nbytes) noexcept override;
  void copy(const void* src, uint64_t src_offset, DLDevice src_ctx, void* dst, uint64_t dst_offset,
            DLDevice dst_ctx, size_t nbytes) override;
  /*! \brief clEnqueueFillBuffer on the device's queue (the pattern is copied when queued). */
  void fill(void* dst, uint64_t dst_offset, DLDevice device, const void* pattern,
            uint32_t pattern_size, size_t nbytes) override;
  void synchronize(int id) override;
  void* stream(int id) override { return queue(id); }
  MemoryStats memory_stats(int id) override;
  void empty_cache(int id) override;
  /*! \brief Read-only: "platform", "driver_version", "program_cache" (folder or why not),
   *         "selection" (the selectors in force). */
  std::string get_option(const std::string& key) override;
  /*! \brief "dlarray.opencl.v2" (dlarray/ext/opencl.h): buffers, contexts and queues. */
  const void* extension(const std::string& name) override;

  // For the kernels of this plugin (ids are validated by the core).
  /*! \brief Static facts of device id. */
  const DeviceInfo& info(int id);
  /*! \brief The context of device id, made at first use. */
  cl_context context(int id);
  /*! \brief The in-order queue of device id, made at first use. */
  cl_command_queue queue(int id);
  /*! \brief The buffer behind bytes [offset, offset + nbytes) of buffer handle `buffer` (an
   *         array's data) of device id; throws DeviceError. */
  BufferRef resolve(int id, const void* buffer, uint64_t offset, size_t nbytes,
                    const std::string& what) const {
    return buffers_.Resolve(buffer, offset, id, nbytes, what);
  }
  /*! \brief The compiled programs of device id. */
  ProgramCache& programs(int id);
  /*! \brief Scratch: a pooled buffer of at least nbytes (*size: its size), given back with
   *         release_scratch. */
  cl_mem scratch(int id, size_t nbytes, size_t* size);
  /*! \brief Gives back a scratch buffer (work queued on it still runs first: one queue). */
  void release_scratch(int id, cl_mem mem, size_t size) noexcept;
  /*! \brief Serialises setting kernel arguments and enqueuing on device id (a cl_kernel is not
   *         thread-safe). */
  std::mutex& launch_mutex(int id);

 private:
  struct PerDevice;
  void FindDevices();
  PerDevice& At(int id);
  PerDevice& Ready(int id);
  void CheckProcess() const;

  std::once_flag found_once_;
  long found_pid_ = 0;  // the process that started OpenCL
  int count_ = 0;
  std::string unavailable_reason_;
  std::string selection_;
  std::vector<std::unique_ptr<PerDevice>> devices_;
  BufferTable buffers_;
};

/*! \brief An RAII scratch buffer of device id. */
class Scratch {
 public:
  Scratch(OpenclDevice* device, int id, size_t nbytes)
      : device_(device), id_(id), mem_(device->scratch(id, nbytes, &size_)) {}
  ~Scratch() { device_->release_scratch(id_, mem_, size_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  /*! \brief The buffer. */
  cl_mem get() const { return mem_; }

 private:
  OpenclDevice* device_;
  int id_;
  size_t size_ = 0;
  cl_mem mem_;
};

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_OPENCL_DEVICE_H_
