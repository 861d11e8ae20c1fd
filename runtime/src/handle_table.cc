// The C API's handle table: slots in a reserved address range, handed out in order.
#include "handle_table.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "dlarray/errors.h"

namespace dlarray {

namespace {

// Address space reserved for slots: the first size that can be mapped. Pages are only backed by
// memory once a slot in them is used, and given back when a whole chunk has been freed. 16 GiB
// give 2^28 handles before the range wraps around.
constexpr size_t kReserveBytes[] = {size_t{16} << 30, size_t{1} << 30, size_t{64} << 20};

static_assert(sizeof(DLArray) <= HandleTable::kSlotBytes, "a DLArray must fit a slot");

void WriteDLArray(void* slot, const Array& a) {
  *static_cast<DLArray*>(slot) = *a.dl();  // shape points into a, which the table keeps alive
}

}  // namespace

HandleTable& HandleTable::Get() {
  static HandleTable* table = new HandleTable(&WriteDLArray);
  return *table;
}

HandleTable::HandleTable(SlotWriter write_slot) : write_slot_(write_slot) {
  for (size_t bytes : kReserveBytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) {
      base_ = static_cast<char*>(p);
      capacity_ = bytes / kSlotBytes;
      return;
    }
    reserve_error_ = std::strerror(errno);
  }
}

bool HandleTable::InRange(const void* p) const {
  const char* c = static_cast<const char*>(p);
  return base_ != nullptr && c >= base_ && c < base_ + capacity_ * kSlotBytes;
}

uint64_t HandleTable::SlotIndex(const void* p, const char* what) const {
  const size_t offset = static_cast<size_t>(static_cast<const char*>(p) - base_);
  if (offset % kSlotBytes != 0) {
    throw Error(ErrorKind::kValue, std::string(what) +
                                       " is not a handle: it points inside a handle made by "
                                       "DLArrayAlloc, not at its start");
  }
  return offset / kSlotBytes;
}

void* HandleTable::SlotAt(uint64_t index) const { return base_ + index * kSlotBytes; }

void HandleTable::ReleaseChunkIfUnused(uint64_t chunk) {
  if (chunk_live_.count(chunk) != 0) return;
  // The pages read as zeros from now on (a stale handle shows ndim 0 and no shape), and hold no
  // memory until a slot in them is handed out again.
  (void)madvise(base_ + chunk * kSlotsPerChunk * kSlotBytes, kSlotsPerChunk * kSlotBytes,
                MADV_DONTNEED);
}

uint64_t HandleTable::NextSlot() {
  const uint64_t chunks = capacity_ / kSlotsPerChunk;
  for (uint64_t tried = 0; tried <= chunks; ++tried) {
    if (cursor_ >= capacity_) {
      cursor_ = 0;
      wrapped_ = true;
    }
    const uint64_t chunk = cursor_ / kSlotsPerChunk;
    const bool chunk_start = cursor_ % kSlotsPerChunk == 0;
    if (!chunk_start || !wrapped_ || chunk_live_.count(chunk) == 0) {
      if (chunk_start && cursor_ > 0) ReleaseChunkIfUnused(chunk - 1);
      return cursor_++;
    }
    cursor_ += kSlotsPerChunk;  // after a wrap: skip chunks that still hold live handles
  }
  throw OutOfMemoryError("DLArrayAlloc: every handle chunk holds a live handle (" +
                         std::to_string(live_.size()) + " live handles)");
}

void* HandleTable::AddSlot(std::shared_ptr<Array> a) {
  std::lock_guard<std::mutex> lock(mu_);
  if (base_ == nullptr) {
    throw OutOfMemoryError("DLArrayAlloc: no address space could be reserved for handles: " +
                           reserve_error_);
  }
  const uint64_t index = NextSlot();
  void* slot = SlotAt(index);
  write_slot_(slot, *a);
  live_.emplace(index, std::move(a));
  ++chunk_live_[index / kSlotsPerChunk];
  return slot;
}

void HandleTable::Remove(const void* h, const char* prefix) {
  std::shared_ptr<Array> doomed;  // destroyed after the lock is released
  {
    const std::string p(prefix);
    if (h == nullptr) throw Error(ErrorKind::kValue, p + "null handle");
    if (!InRange(h)) {
      throw Error(ErrorKind::kValue, p + "the handle was not made by DLArrayAlloc (a caller-made "
                                         "DLArray or a wrong pointer)");
    }
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t index = SlotIndex(h, (p + "the argument").c_str());
    auto it = live_.find(index);
    if (it == live_.end()) {
      throw Error(ErrorKind::kValue,
                  p + (index < cursor_ || wrapped_ ? "the handle was already freed"
                                                   : "the handle was not made by DLArrayAlloc"));
    }
    doomed = std::move(it->second);
    live_.erase(it);
    std::memset(SlotAt(index), 0, kSlotBytes);
    const uint64_t chunk = index / kSlotsPerChunk;
    if (--chunk_live_[chunk] == 0) {
      chunk_live_.erase(chunk);
      // A chunk the cursor has left is returned now; the current one when the cursor leaves it.
      if (chunk != cursor_ / kSlotsPerChunk) ReleaseChunkIfUnused(chunk);
    }
  }
}

HandleTable::Ref HandleTable::Resolve(DLArrayHandle h, const char* what) {
  std::shared_ptr<Array> owner = Find(h, what);
  if (owner == nullptr) return Ref{nullptr, h};
  DLArray* dl = owner->dl();
  return Ref{std::move(owner), dl};
}

std::shared_ptr<Array> HandleTable::Find(const void* h, const char* what) {
  if (h == nullptr) throw Error(ErrorKind::kValue, std::string(what) + " is a null handle");
  if (!InRange(h)) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t index = SlotIndex(h, what);
  auto it = live_.find(index);
  if (it == live_.end()) {
    throw Error(ErrorKind::kValue,
                std::string(what) + (index < cursor_ || wrapped_
                                         ? " is a freed handle"
                                         : " is not a handle made by DLArrayAlloc"));
  }
  return it->second;
}

size_t HandleTable::live() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_.size();
}

}  // namespace dlarray
