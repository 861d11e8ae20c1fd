/*!
 * \file address_space.h
 * \brief Device "pointers" for OpenCL buffers.
 *
 * OpenCL memory is a handle (cl_mem), but the dlarray core treats DLArray.data as an address: it
 * adds byte_offset to it, compares it and passes data + byte_offset to copy(). So every buffer gets
 * an address range of its own: kTag | slot << kOffsetBits | offset. Bit 63 makes the address
 * non-canonical on x86-64 and AArch64, so it never equals a host address and faults if it is ever
 * dereferenced; the slot finds the buffer in O(1); the offset is a byte offset into it. Slots are
 * reused after a buffer is released.
 */
#ifndef DLARRAY_BACKENDS_OPENCL_ADDRESS_SPACE_H_
#define DLARRAY_BACKENDS_OPENCL_ADDRESS_SPACE_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "cl_headers.h"

namespace dlarray::opencl {

/*! \brief Where an address points: a buffer of a device and a byte offset into it. */
struct BufferRef {
  cl_mem mem = nullptr;  //!< the buffer
  size_t offset = 0;     //!< bytes from the buffer's start
  size_t size = 0;       //!< the buffer's size in bytes
  int device = -1;       //!< the device id it belongs to
};

/*! \brief The table of live buffers and their addresses (one per plugin, every device). */
class AddressSpace {
 public:
  static constexpr int kOffsetBits = 40;                             //!< 1 TiB per buffer at most
  static constexpr uint64_t kTag = uint64_t{1} << 63;                //!< marks an OpenCL address
  static constexpr uint64_t kMaxBytes = uint64_t{1} << kOffsetBits;  //!< largest buffer
  static constexpr uint64_t kMaxSlots = uint64_t{1} << (63 - kOffsetBits);  //!< live buffers

  /*! \brief The address of a new buffer (offset 0). Throws OutOfMemoryError when full. */
  void* Insert(cl_mem mem, int device, size_t size);
  /*! \brief Forgets the buffer starting at addr and returns it (nullptr when unknown). */
  BufferRef Erase(const void* addr);
  /*!
   * \brief The buffer holding [addr, addr + nbytes) of device `device`. Throws DeviceError when
   *        addr is not one of this table's addresses, belongs to another device, or the range
   *        runs past the buffer's end. `what` names the operand in messages.
   */
  BufferRef Resolve(const void* addr, int device, size_t nbytes, const std::string& what) const;
  /*! \brief Whether addr carries the OpenCL tag (is possibly one of ours). */
  static bool IsTagged(const void* addr) { return (reinterpret_cast<uintptr_t>(addr) & kTag) != 0; }

 private:
  struct Slot {
    cl_mem mem = nullptr;
    size_t size = 0;
    int device = -1;
  };
  mutable std::mutex mu_;
  std::vector<Slot> slots_{1};  // slot 0 is never used: no address is kTag itself
  std::vector<uint64_t> free_;
};

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_ADDRESS_SPACE_H_
