#include "host_staging.h"

#include <algorithm>
#include <cstring>

#include "cuda_check.h"

namespace dlarray {
namespace cuda {

bool HostStaging::ReadyLocked() {
  if (ready_) return true;
  if (no_pinned_memory_) return false;
  SetDevice(device_);
  for (int i = 0; i < 2; ++i) {
    if (buffers_[i] == nullptr && cudaHostAlloc(&buffers_[i], kChunkBytes, 0) != cudaSuccess) {
      break;
    }
    if (drained_[i] == nullptr) {
      CUDA_CALL(cudaEventCreateWithFlags(&drained_[i], cudaEventDisableTiming));
    }
  }
  if (readback_ == nullptr) (void)cudaHostAlloc(&readback_, kReadbackBytes, 0);
  if (buffers_[0] == nullptr || buffers_[1] == nullptr || readback_ == nullptr) {
    (void)cudaGetLastError();  // pinned memory is limited here: the callers copy directly
    no_pinned_memory_ = true;
    return false;
  }
  ready_ = true;
  return true;
}

bool HostStaging::CopyToDevice(void* dst, const void* src, size_t nbytes, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ReadyLocked()) return false;
  SetDevice(device_);
  auto* out = static_cast<char*>(dst);
  const auto* in = static_cast<const char*>(src);
  for (size_t offset = 0; offset < nbytes; offset += kChunkBytes) {
    const size_t len = std::min(kChunkBytes, nbytes - offset);
    int b = current_;
    if (used_[b] + len > kChunkBytes) {
      // Switch buffers; the other one's queued DMAs must be done before it is overwritten.
      b = current_ ^= 1;
      CUDA_CALL(cudaEventSynchronize(drained_[b]));
      used_[b] = 0;
    }
    char* staged = static_cast<char*>(buffers_[b]) + used_[b];
    std::memcpy(staged, in + offset, len);
    CUDA_CALL(cudaMemcpyAsync(out + offset, staged, len, cudaMemcpyHostToDevice, stream));
    CUDA_CALL(cudaEventRecord(drained_[b], stream));
    used_[b] += (len + 63) / 64 * 64;
  }
  return true;
}

bool HostStaging::CopyToHost(void* dst, const void* src, size_t nbytes, cudaStream_t stream,
                             const std::function<void()>& wait_stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ReadyLocked()) return false;
  SetDevice(device_);
  CUDA_CALL(cudaMemcpyAsync(readback_, src, nbytes, cudaMemcpyDeviceToHost, stream));
  wait_stream();
  std::memcpy(dst, readback_, nbytes);
  return true;
}

}  // namespace cuda
}  // namespace dlarray
