// A per-thread cache of freed memory blocks of one size, for the block every array op makes and
// drops (an Array and its reference counts, Array::New): its malloc and free were ~250 of the
// ~1,800 instructions of a 1-element x[0], a pop and a push from the cache are a few. Blocks are
// plain ::operator new memory, so a block may be freed on another thread than the one that took
// it (it then joins that thread's cache).
#ifndef DLARRAY_RUNTIME_SRC_BLOCK_CACHE_H_
#define DLARRAY_RUNTIME_SRC_BLOCK_CACHE_H_

#include <cstddef>
#include <new>

namespace dlarray {

template <size_t kBytes>
class BlockCache {
 public:
  static void* Allocate() {
    State& s = state_;
    if (Node* n = s.head) {
      s.head = n->next;
      --s.count;
      return n;
    }
    return ::operator new(kBytes);
  }

  static void Free(void* p) noexcept {
    State& s = state_;
    if (s.count >= kMaxBlocks || s.closed) {
      ::operator delete(p);
      return;
    }
    if (!s.registered) {  // the first block this thread keeps: free them all when it ends
      s.registered = true;
      drain_.touch = true;
    }
    s.head = new (p) Node{s.head};
    ++s.count;
  }

 private:
  static_assert(kBytes >= sizeof(void*), "a block holds the link to the next one");
  // Enough for the views and results of a loop body; more goes back to malloc. AddressSanitizer
  // builds keep none: a block in use again would hide a use of a freed Array.
#if defined(__SANITIZE_ADDRESS__)
  static constexpr int kMaxBlocks = 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  static constexpr int kMaxBlocks = 0;
#else
  static constexpr int kMaxBlocks = 64;
#endif
#else
  static constexpr int kMaxBlocks = 64;
#endif
  struct Node {
    Node* next;
  };
  // Trivially destructible, so it stays usable after the thread's destructors ran (blocks freed
  // then, by another thread_local's destructor, go straight to ::operator delete).
  struct State {
    Node* head;
    int count;
    bool registered;
    bool closed;
  };
  // Frees the cached blocks when the thread ends; made on a thread's first kept block only (a
  // thread_local with a destructor costs a check at each use).
  struct Drain {
    bool touch = false;
    ~Drain() {
      State& s = state_;
      s.closed = true;
      while (Node* n = s.head) {
        s.head = n->next;
        ::operator delete(n);
      }
      s.count = 0;
    }
  };
  static thread_local State state_;
  static thread_local Drain drain_;
};

template <size_t kBytes>
thread_local typename BlockCache<kBytes>::State BlockCache<kBytes>::state_{};
template <size_t kBytes>
thread_local typename BlockCache<kBytes>::Drain BlockCache<kBytes>::drain_;

/*! \brief A std allocator whose single-object allocations come from BlockCache (the blocks of
 *         std::allocate_shared); larger ones from ::operator new. */
template <typename T>
struct CachedAllocator {
  using value_type = T;
  CachedAllocator() = default;
  template <typename U>
  CachedAllocator(const CachedAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit
  T* allocate(size_t n) {
    static_assert(alignof(T) <= alignof(std::max_align_t), "over-aligned types need their own");
    if (n == 1) return static_cast<T*>(BlockCache<sizeof(T)>::Allocate());
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n == 1) {
      BlockCache<sizeof(T)>::Free(p);
    } else {
      ::operator delete(p);
    }
  }
  template <typename U>
  bool operator==(const CachedAllocator<U>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const CachedAllocator<U>&) const noexcept {
    return false;
  }
};

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_BLOCK_CACHE_H_
