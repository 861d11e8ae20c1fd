#include "host_staging.h"

#include <algorithm>
#include <cstring>

#include "cuda_check.h"

namespace dlarray {
namespace cuda {

void HostStaging::InitLocked() {
  for (int i = 0; i < 2; ++i) {
    if (buffers_[i] == nullptr) CUDA_CALL(cudaHostAlloc(&buffers_[i], kChunkBytes, 0));
    if (drained_[i] == nullptr) {
      CUDA_CALL(cudaEventCreateWithFlags(&drained_[i], cudaEventDisableTiming));
    }
  }
  ready_ = true;
}

void HostStaging::CopyToDevice(void* dst, const void* src, size_t nbytes, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  SetDevice(device_);
  if (!ready_) InitLocked();
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
}

}  // namespace cuda
}  // namespace dlarray
