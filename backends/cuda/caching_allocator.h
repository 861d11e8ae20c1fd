/*!
 * \file caching_allocator.h
 * \brief Per-device caching allocator: keeps freed blocks for reuse instead of cudaFree.
 *
 * Reuse is stream-ordered and needs no events: every kernel and copy of a device runs on the
 * device's single stream, so work queued after a reuse runs after the work that used the block.
 */
#ifndef DLARRAY_BACKENDS_CUDA_CACHING_ALLOCATOR_H_
#define DLARRAY_BACKENDS_CUDA_CACHING_ALLOCATOR_H_

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "dlarray/device.h"

namespace dlarray {
namespace cuda {

class CachingAllocator {
 public:
  /*!
   * \param device the CUDA device id served.
   * \param label the device in messages, e.g. "cuda(0) (NVIDIA H100)".
   * \param sync_stream waits for the device's stream; called before cached blocks are freed.
   */
  CachingAllocator(int device, std::string label, std::function<void()> sync_stream);
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  /*! \brief A block of at least nbytes; throws OutOfMemoryError naming the size and device. */
  void* Allocate(size_t nbytes);
  /*! \brief Returns a block from Allocate to the cache; unknown pointers are ignored. */
  void Free(void* ptr) noexcept;
  /*! \brief Gives every cached (unused) block back to the driver. */
  void EmptyCache();
  /*! \brief The counters; bytes count whole blocks (rounded sizes). */
  MemoryStats Stats() const;

  /*!
   * \brief While the device's stream records a CUDA graph: Allocate serves cached blocks, then
   *        the scratch of the device's other graphs, then cudaMalloc with the thread's capture
   *        mode relaxed for the call. Blocks taken while recording and freed while recording are
   *        kept for the graph instead of the cache, so that no later allocation aliases the
   *        scratch memory its replays write.
   *
   * The graphs of a device share their scratch: they all replay on the device's one stream, one
   * after another, and a graph's scratch is dead between its replays. So a plan recorded as
   * several graphs (the data-parallel segments, with collectives between them) needs the
   * scratch of one op-by-op run, not one copy per graph. A shared block goes back to the cache
   * when the last graph holding it is destroyed.
   */
  void BeginCapture();
  /*!
   * \brief Ends the recording: returns the blocks kept for the graph (pointer, size). Sets
   *        *conflict (a message) when an array still alive took another graph's scratch: that
   *        graph's replays would write into it, so the caller must give up this recording.
   */
  std::vector<std::pair<void*, size_t>> EndCapture(std::string* conflict = nullptr);
  /*! \brief Gives a graph's blocks back (after its last replay, stream-ordered): to the cache,
   *         each when no other graph holds it. */
  void ReleaseGraphBlocks(const std::vector<std::pair<void*, size_t>>& blocks) noexcept;

  /*! \brief Block size for a request: 512 B granules up to 1 MiB, then 2 MiB granules. */
  static size_t RoundSize(size_t nbytes);

 private:
  void* TakeCachedLocked(size_t rounded, size_t max_size);
  void* TakePoolLocked(size_t rounded);
  void* MallocWhileCapturingLocked(size_t nbytes, size_t rounded);
  void* AdoptLocked(void* ptr, size_t rounded);
  void ReleaseCachedLocked();
  [[noreturn]] void ThrowOutOfMemoryLocked(size_t nbytes, size_t rounded, const char* cause);

  const int device_;
  const std::string label_;
  const std::function<void()> sync_stream_;
  mutable std::mutex mu_;
  std::multimap<size_t, void*> cached_;     // block size -> block, for best fit
  std::unordered_map<void*, size_t> live_;  // block -> block size
  MemoryStats stats_;
  bool capturing_ = false;
  std::unordered_set<void*> taken_while_capturing_;
  std::vector<std::pair<void*, size_t>> graph_blocks_;
  // Blocks of graph_blocks_ freed earlier in this recording: a later op of the same recording may
  // take them again (the recorded nodes of one stream run one after another).
  std::multimap<size_t, void*> capture_free_;
  // The scratch of the live graphs: block -> (size, graphs holding it); counted in bytes_in_use.
  std::unordered_map<void*, std::pair<size_t, int>> graph_pool_;
  // Blocks of graph_pool_ this recording may take (block size -> block), and those it took.
  std::multimap<size_t, void*> pool_free_;
  std::unordered_set<void*> taken_from_pool_;
};

}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_CACHING_ALLOCATOR_H_
