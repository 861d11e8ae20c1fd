// The C API's handles. A handle is the address of a slot in an address range reserved for
// handles; the slot holds a copy of the array's descriptor, so callers may read shape, ndim and ctx
// through it as the seed's ctypes code does. Slots are handed out in increasing order and are not
// reused until the range has been used up and wrapped around, so a freed handle stays invalid
// (DLArrayFree and every call report it) even when the array's memory is reused by new arrays.
// The core C API's table holds DLPack-layout DLArrays (Get()); libc_runtime_api.so builds this
// file into itself and keeps a table of its own whose slots hold the seed's struct.
#ifndef DLARRAY_RUNTIME_SRC_HANDLE_TABLE_H_
#define DLARRAY_RUNTIME_SRC_HANDLE_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "dlarray/dlarray.h"
#include "dlarray/runtime.h"

namespace dlarray {

class HandleTable {
 public:
  /*! \brief Bytes per slot: a DLArray (48 bytes) rounded to a cache line. */
  static constexpr size_t kSlotBytes = 64;
  /*! \brief Slots per chunk; a chunk whose slots are all freed goes back to the system. */
  static constexpr uint64_t kSlotsPerChunk = 1024;

  /*! \brief Writes what a caller reads through a handle (at most kSlotBytes) for array a. */
  using SlotWriter = void (*)(void* slot, const Array& a);

  /*! \brief The core C API's table, whose slots hold a DLArray (never destroyed). */
  static HandleTable& Get();

  /*! \brief A table of its own whose slots write_slot fills (another handle layout). */
  explicit HandleTable(SlotWriter write_slot);

  /*! \brief A new handle for a; the table keeps a until Remove. */
  void* AddSlot(std::shared_ptr<Array> a);
  DLArrayHandle Add(std::shared_ptr<Array> a) {
    return static_cast<DLArrayHandle>(AddSlot(std::move(a)));
  }

  /*!
   * \brief Releases a handle from Add; throws ValueError for null, freed or foreign handles,
   *        its message starting with prefix.
   */
  void Remove(const void* h, const char* prefix = "DLArrayFree: ");

  /*!
   * \brief The array behind a live handle; null for an address outside the handle range (a
   *        caller-made array, the caller's to interpret). Throws ValueError naming `what` for
   *        null handles, freed handles and addresses inside the range that are not handles.
   */
  std::shared_ptr<Array> Find(const void* h, const char* what);

  /*! \brief What a handle stands for during one call. */
  struct Ref {
    std::shared_ptr<Array> owner;  //!< keeps a runtime array alive (null for caller-made arrays)
    DLArray* dl = nullptr;         //!< the array to use
  };

  /*!
   * \brief The array behind h: a live handle from Add (kept alive by Ref::owner), or else a
   *        caller-made DLArray, used as is. Throws ValueError naming `what` for null handles,
   *        freed handles and addresses inside the handle range that are not handles.
   */
  Ref Resolve(DLArrayHandle h, const char* what);

  /*! \brief Number of live handles. */
  size_t live() const;

 private:
  bool InRange(const void* p) const;
  // Index of the slot at p; throws when p is not the start of a slot (under mu_).
  uint64_t SlotIndex(const void* p, const char* what) const;
  void* SlotAt(uint64_t index) const;
  // Moves the cursor to a free slot, skipping chunks that still hold live handles (under mu_).
  uint64_t NextSlot();
  void ReleaseChunkIfUnused(uint64_t chunk);

  SlotWriter write_slot_;
  mutable std::mutex mu_;
  char* base_ = nullptr;
  uint64_t capacity_ = 0;  // slots in the reserved range
  uint64_t cursor_ = 0;    // next slot to hand out
  bool wrapped_ = false;   // the cursor has passed the end of the range at least once
  std::string reserve_error_;
  std::unordered_map<uint64_t, std::shared_ptr<Array>> live_;  // slot index -> array
  std::unordered_map<uint64_t, uint32_t> chunk_live_;          // chunk -> live handles in it
};

}  // namespace dlarray

#endif  // DLARRAY_RUNTIME_SRC_HANDLE_TABLE_H_
