/*!
 * \file host_staging.h
 * \brief Host-to-device copies through pinned staging buffers, so that they return as soon as the
 *        host source may be reused without waiting for the device.
 */
#ifndef DLARRAY_BACKENDS_CUDA_HOST_STAGING_H_
#define DLARRAY_BACKENDS_CUDA_HOST_STAGING_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <mutex>

namespace dlarray {
namespace cuda {

class HostStaging {
 public:
  /*! \brief Bytes per staging buffer; copies are cut into chunks of this size. */
  static constexpr size_t kChunkBytes = size_t{4} << 20;

  explicit HostStaging(int device) : device_(device) {}
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;

  /*!
   * \brief Queues the copy of nbytes from host src to device dst on stream (of this device).
   *        Each chunk is copied into a pinned buffer on the host, then by DMA while the next
   *        chunk fills the other buffer; small copies share a buffer, one after another. Returns
   *        once src has been read; the device may still be copying out of the staging buffers.
   */
  void CopyToDevice(void* dst, const void* src, size_t nbytes, cudaStream_t stream);

 private:
  void InitLocked();

  const int device_;
  std::mutex mu_;
  bool ready_ = false;
  void* buffers_[2] = {nullptr, nullptr};
  cudaEvent_t drained_[2] = {nullptr, nullptr};  // recorded after the DMA out of each buffer
  size_t used_[2] = {0, 0};  // bytes of each buffer handed out since its last drain
  int current_ = 0;
};

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_HOST_STAGING_H_
