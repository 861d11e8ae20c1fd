/*!
 * \file large_blocks.h
 * \brief LargeBlocks: freed large host blocks kept for reuse, up to a byte budget.
 *
 * A fresh large block costs its page faults at first touch: for a 64 MB output about as long as a
 * memory-bound op over it (4-5 ms on a 2-core VM), and glibc hands blocks above its mmap threshold
 * (at most 32 MB) back to the system at every free, so a loop of such ops faults every time. The
 * CUDA plugin's caching allocator keeps blocks for the same reason (cudaMalloc's cost).
 */
#ifndef DLARRAY_BACKENDS_CPU_LARGE_BLOCKS_H_
#define DLARRAY_BACKENDS_CPU_LARGE_BLOCKS_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace dlarray::cpu {

class LargeBlocks {
 public:
  /*! \brief Smallest block kept: smaller ones come from glibc's heap without faults. */
  static constexpr size_t kMinBytes = size_t{1} << 20;
  /*! \brief At most this many blocks kept (a look-up walks them). */
  static constexpr size_t kMaxBlocks = 64;

  /*!
   * \param limit_bytes most bytes kept (0 keeps none); `DLARRAY_CPU_CACHE_MB` overrides it, and
   *        builds with AddressSanitizer keep none, so it still sees a use after free.
   */
  explicit LargeBlocks(uint64_t limit_bytes);

  /*! \brief The size a block of `size` bytes (>= kMinBytes) is allocated with: sizes round up to
   *         eighths of a power of two, so blocks of nearby sizes are reused (at most 1/8 more
   *         address space; pages never touched cost no memory). */
  static size_t ClassSize(size_t size);

  /*! \brief A kept block of exactly `class_size` bytes, or nullptr. */
  void* Take(size_t class_size);
  /*! \brief Keeps the block if the budget allows (evicting the least recently kept blocks);
   *         returns the bytes given back to the system (`class_size` when not kept). */
  size_t Put(void* ptr, size_t class_size);
  /*! \brief Frees every kept block; returns their bytes. */
  size_t Release();
  uint64_t limit() const { return limit_; }

 private:
  struct Block {
    void* ptr;
    size_t size;
  };
  /*! \brief Gives `blocks` back to the system (called without the lock); returns their bytes. */
  static size_t Free(const std::vector<Block>& blocks);
  std::mutex mu_;
  std::vector<Block> blocks_;  // oldest first
  uint64_t kept_ = 0, limit_;
};

}  // namespace dlarray::cpu

#endif  // DLARRAY_BACKENDS_CPU_LARGE_BLOCKS_H_
