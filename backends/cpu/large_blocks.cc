/*!
 * \file large_blocks.cc
 * \brief LargeBlocks (see large_blocks.h).
 */
#include "large_blocks.h"

#include <cstdlib>

namespace dlarray::cpu {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

uint64_t LimitFromEnvironment(uint64_t fallback) {
  if (kAddressSanitizer) return 0;
  const char* text = std::getenv("DLARRAY_CPU_CACHE_MB");
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long mb = std::strtoull(text, &end, 10);
  // A value that is not a whole number of MB keeps the default rather than failing every
  // allocation; the documented values are integers.
  if (*end != '\0' || text[0] == '-') return fallback;
  return mb > (UINT64_MAX >> 20) ? UINT64_MAX : mb << 20;
}

}  // namespace

size_t LargeBlocks::Free(const std::vector<Block>& blocks) {
  size_t released = 0;
  for (const Block& b : blocks) {  // outside the lock: unmapping takes a while
    std::free(b.ptr);
    released += b.size;
  }
  return released;
}

LargeBlocks::LargeBlocks(uint64_t limit_bytes) : limit_(LimitFromEnvironment(limit_bytes)) {
  blocks_.reserve(kMaxBlocks);
}

size_t LargeBlocks::ClassSize(size_t size) {
  if (size < kMinBytes) return size;
  const size_t step = (size_t{1} << (63 - __builtin_clzll(size))) / 8;  // top power of two / 8
  if (size > SIZE_MAX - step) return size;
  return (size + step - 1) / step * step;
}

void* LargeBlocks::Take(size_t class_size) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = blocks_.size(); i-- > 0;) {  // the most recently kept first: warm in cache
    if (blocks_[i].size != class_size) continue;
    void* ptr = blocks_[i].ptr;
    blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
    kept_ -= class_size;
    return ptr;
  }
  return nullptr;
}

size_t LargeBlocks::Put(void* ptr, size_t class_size) {
  if (class_size > limit_) {
    std::free(ptr);
    return class_size;
  }
  std::vector<Block> evicted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    size_t drop = 0;
    uint64_t kept = kept_;
    while (drop < blocks_.size() &&
           (kept + class_size > limit_ || blocks_.size() - drop + 1 > kMaxBlocks)) {
      kept -= blocks_[drop].size;
      ++drop;
    }
    evicted.assign(blocks_.begin(), blocks_.begin() + static_cast<std::ptrdiff_t>(drop));
    blocks_.erase(blocks_.begin(), blocks_.begin() + static_cast<std::ptrdiff_t>(drop));
    blocks_.push_back({ptr, class_size});
    kept_ = kept + class_size;
  }
  return Free(evicted);
}

size_t LargeBlocks::Release() {
  std::vector<Block> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    all.swap(blocks_);
    blocks_.reserve(kMaxBlocks);
    kept_ = 0;
  }
  return Free(all);
}

}  // namespace dlarray::cpu
