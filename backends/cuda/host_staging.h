/*!
 * \file host_staging.h
 * \brief Copies between pageable host memory and a device through pinned buffers: uploads
 *        return as soon as the host source may be reused, without waiting for the device; small
 *        readbacks avoid the driver's pageable path.
 */
#ifndef DLARRAY_BACKENDS_CUDA_HOST_STAGING_H_
#define DLARRAY_BACKENDS_CUDA_HOST_STAGING_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <mutex>

namespace dlarray {
namespace cuda {

class HostStaging {
 public:
  /*! \brief Bytes per staging buffer; copies are cut into chunks of this size. */
  static constexpr size_t kChunkBytes = size_t{4} << 20;
  /*! \brief Largest readback CopyToHost takes. */
  static constexpr size_t kReadbackBytes = size_t{1} << 20;

  explicit HostStaging(int device) : device_(device) {}
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;

  /*!
   * \brief Queues the copy of nbytes from host src to device dst on stream (of this device).
   *        Each chunk is copied into a pinned buffer on the host, then by DMA while the next
   *        chunk fills the other buffer; small copies share a buffer, one after another. Returns
   *        once src has been read; the device may still be copying out of the staging buffers.
   *        Returns false, having done nothing, when no pinned memory could be had.
   */
  bool CopyToDevice(void* dst, const void* src, size_t nbytes, cudaStream_t stream);

  /*!
   * \brief Copies nbytes (<= kReadbackBytes) from device src to host dst: a DMA into a pinned
   *        buffer queued on stream, wait_stream() (which throws on failure), then a host copy.
   *        Returns false, having done nothing, when no pinned memory could be had.
   */
  bool CopyToHost(void* dst, const void* src, size_t nbytes, cudaStream_t stream,
                  const std::function<void()>& wait_stream);

 private:
  bool ReadyLocked();  // makes the pinned buffers and events once; false without pinned memory

  const int device_;
  std::mutex mu_;
  bool ready_ = false;
  bool no_pinned_memory_ = false;
  void* buffers_[2] = {nullptr, nullptr};
  cudaEvent_t drained_[2] = {nullptr, nullptr};  // recorded after the DMA out of each buffer
  size_t used_[2] = {0, 0};  // bytes of each buffer handed out since its last drain
  int current_ = 0;
  void* readback_ = nullptr;
};

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_HOST_STAGING_H_
