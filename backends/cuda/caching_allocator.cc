#include "caching_allocator.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <utility>

#include "cuda_check.h"
#include "dlarray/errors.h"

namespace dlarray {
namespace cuda {
namespace {

constexpr size_t kSmallGranule = 512;
constexpr size_t kSmallLimit = size_t{1} << 20;    // 1 MiB
constexpr size_t kLargeGranule = size_t{2} << 20;  // 2 MiB

size_t RoundUp(size_t n, size_t granule) { return (n + granule - 1) / granule * granule; }

std::string FormatBytes(size_t n) {
  char buf[64];
  const double d = static_cast<double>(n);
  if (n >= (size_t{1} << 30)) {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", d / (1 << 30));
  } else if (n >= (size_t{1} << 20)) {
    std::snprintf(buf, sizeof(buf), "%.2f MiB", d / (1 << 20));
  } else {
    std::snprintf(buf, sizeof(buf), "%zu bytes", n);
  }
  return buf;
}

}  // namespace

CachingAllocator::CachingAllocator(int device, std::string label, std::function<void()> sync_stream)
    : device_(device), label_(std::move(label)), sync_stream_(std::move(sync_stream)) {}

size_t CachingAllocator::RoundSize(size_t nbytes) {
  nbytes = std::max<size_t>(nbytes, 1);
  return nbytes <= kSmallLimit ? RoundUp(nbytes, kSmallGranule) : RoundUp(nbytes, kLargeGranule);
}

void* CachingAllocator::Allocate(size_t nbytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (nbytes > std::numeric_limits<size_t>::max() / 2) {
    ThrowOutOfMemoryLocked(nbytes, nbytes, "request too large");
  }
  const size_t rounded = RoundSize(nbytes);
  if (capturing_) {
    // cudaMalloc may synchronize, which breaks a recording: only the cache may serve. First a
    // block this recording freed already (still the graph's), then the ordinary cache.
    auto again = capture_free_.lower_bound(rounded);
    if (again != capture_free_.end()) {
      void* ptr = again->second;
      const size_t size = again->first;
      capture_free_.erase(again);
      graph_blocks_.erase(std::find(graph_blocks_.begin(), graph_blocks_.end(),
                                    std::pair<void*, size_t>(ptr, size)));
      if (graph_pool_.count(ptr) != 0) taken_from_pool_.insert(ptr);
      live_.emplace(ptr, size);  // bytes_in_use still counts it
      taken_while_capturing_.insert(ptr);
      return ptr;
    }
    void* ptr = TakeCachedLocked(rounded, std::numeric_limits<size_t>::max());
    if (ptr == nullptr) ptr = TakePoolLocked(rounded);
    if (ptr == nullptr) ptr = MallocWhileCapturingLocked(nbytes, rounded);
    taken_while_capturing_.insert(ptr);
    return ptr;
  }
  // Best fit among cached blocks, wasting at most a quarter of the block.
  if (void* ptr = TakeCachedLocked(rounded, rounded + rounded / 4)) return ptr;

  SetDevice(device_);
  void* ptr = nullptr;
  cudaError_t err = cudaMalloc(&ptr, rounded);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    // Any cached block that fits, then an empty cache and one more try.
    if (void* cached = TakeCachedLocked(rounded, std::numeric_limits<size_t>::max())) {
      return cached;
    }
    ReleaseCachedLocked();
    err = cudaMalloc(&ptr, rounded);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      ThrowOutOfMemoryLocked(nbytes, rounded, "cudaMalloc failed: cudaErrorMemoryAllocation");
    }
  }
  if (err != cudaSuccess) ThrowCudaError(err, "cudaMalloc", __FILE__, __LINE__);
  return AdoptLocked(ptr, rounded);
}

// A block just cudaMalloc'ed: live and counted.
void* CachingAllocator::AdoptLocked(void* ptr, size_t rounded) {
  live_.emplace(ptr, rounded);
  stats_.num_allocations += 1;
  stats_.bytes_reserved += rounded;
  stats_.bytes_in_use += rounded;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return ptr;
}

// A block no cache holds, while this thread records: cudaMalloc is not stream-ordered, so the
// capture (thread-local mode) forbids it unless the thread relaxes its mode for the call (as
// PyTorch's allocator does); it then neither joins nor breaks the recording. The block becomes
// the graph's scratch when the recording frees it. Out of memory here cannot free the cache
// (that waits for the stream, which a recording cannot): the recording fails, saying so.
void* CachingAllocator::MallocWhileCapturingLocked(size_t nbytes, size_t rounded) {
  SetDevice(device_);
  void* ptr = nullptr;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  CUDA_CALL(cudaThreadExchangeStreamCaptureMode(&mode));
  const cudaError_t err = cudaMalloc(&ptr, rounded);
  CUDA_CALL(cudaThreadExchangeStreamCaptureMode(&mode));
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    ThrowOutOfMemoryLocked(nbytes, rounded,
                           "cudaMalloc failed while recording a CUDA graph (the cache cannot be "
                           "freed during a recording)");
  }
  if (err != cudaSuccess) ThrowCudaError(err, "cudaMalloc (recording)", __FILE__, __LINE__);
  return AdoptLocked(ptr, rounded);
}

void* CachingAllocator::TakePoolLocked(size_t rounded) {
  auto it = pool_free_.lower_bound(rounded);
  if (it == pool_free_.end()) return nullptr;
  void* ptr = it->second;
  live_.emplace(ptr, it->first);  // bytes_in_use counts it already (the pool's)
  pool_free_.erase(it);
  taken_from_pool_.insert(ptr);
  taken_while_capturing_.insert(ptr);
  return ptr;
}

void* CachingAllocator::TakeCachedLocked(size_t rounded, size_t max_size) {
  auto it = cached_.lower_bound(rounded);
  if (it == cached_.end() || it->first > max_size) return nullptr;
  const size_t size = it->first;
  void* ptr = it->second;
  cached_.erase(it);
  live_.emplace(ptr, size);
  stats_.bytes_in_use += size;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return ptr;
}

void CachingAllocator::Free(void* ptr) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return;
  if (capturing_ && taken_while_capturing_.erase(ptr) != 0) {
    graph_blocks_.emplace_back(ptr, it->second);  // stays in use: the graph's scratch
    capture_free_.emplace(it->second, ptr);
    taken_from_pool_.erase(ptr);
    live_.erase(it);
    return;
  }
  if (graph_pool_.count(ptr) != 0) {  // (an array of a given-up recording: the pool keeps it)
    live_.erase(it);
    return;
  }
  cached_.emplace(it->second, ptr);
  stats_.bytes_in_use -= it->second;
  live_.erase(it);
}

void CachingAllocator::BeginCapture() {
  std::lock_guard<std::mutex> lock(mu_);
  capturing_ = true;
  taken_while_capturing_.clear();
  graph_blocks_.clear();
  capture_free_.clear();
  pool_free_.clear();
  taken_from_pool_.clear();
  for (const auto& [ptr, held] : graph_pool_) {
    if (live_.count(ptr) == 0) pool_free_.emplace(held.first, ptr);
  }
}

std::vector<std::pair<void*, size_t>> CachingAllocator::EndCapture(std::string* conflict) {
  std::lock_guard<std::mutex> lock(mu_);
  capturing_ = false;
  taken_while_capturing_.clear();  // blocks still live are ordinary arrays now
  capture_free_.clear();
  pool_free_.clear();
  if (!taken_from_pool_.empty() && conflict != nullptr) {
    *conflict = "an array made while recording (" + FormatBytes(live_[*taken_from_pool_.begin()]) +
                ") took scratch memory of another CUDA graph, whose replays write it";
  }
  taken_from_pool_.clear();
  for (const auto& [ptr, size] : graph_blocks_) {
    auto held = graph_pool_.try_emplace(ptr, size, 0).first;
    held->second.second += 1;
  }
  return std::move(graph_blocks_);
}

void CachingAllocator::ReleaseGraphBlocks(
    const std::vector<std::pair<void*, size_t>>& blocks) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [ptr, size] : blocks) {
    auto held = graph_pool_.find(ptr);
    if (held != graph_pool_.end() && --held->second.second > 0) continue;  // another graph's too
    if (held != graph_pool_.end()) graph_pool_.erase(held);
    if (live_.count(ptr) != 0) continue;  // an array now (see Free)
    cached_.emplace(size, ptr);
    stats_.bytes_in_use -= size;
  }
}

void CachingAllocator::EmptyCache() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!cached_.empty() && !capturing_) ReleaseCachedLocked();
}

void CachingAllocator::ReleaseCachedLocked() {
  // A freed block may still be read by queued kernels: wait for them before cudaFree.
  sync_stream_();
  SetDevice(device_);
  for (const auto& [size, ptr] : cached_) {
    if (cudaFree(ptr) == cudaSuccess) {
      stats_.num_frees += 1;
    } else {
      (void)cudaGetLastError();  // the block is lost either way; keep the counters honest
    }
    stats_.bytes_reserved -= size;
  }
  cached_.clear();
}

void CachingAllocator::ThrowOutOfMemoryLocked(size_t nbytes, size_t rounded, const char* cause) {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  std::string device_memory;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
    device_memory =
        "; device has " + FormatBytes(free_bytes) + " free of " + FormatBytes(total_bytes);
  } else {
    (void)cudaGetLastError();
  }
  throw OutOfMemoryError(
      "CUDA out of memory: cannot allocate " + FormatBytes(nbytes) + " (" + std::to_string(nbytes) +
      " bytes, block of " + std::to_string(rounded) + ") on " + label_ + ": " + cause +
      "; dlarray holds " + FormatBytes(stats_.bytes_in_use) + " in arrays and " +
      FormatBytes(stats_.bytes_reserved - stats_.bytes_in_use) + " cached" + device_memory);
}

MemoryStats CachingAllocator::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace cuda
}  // namespace dlarray
