/*!
 * \file buffer_table.h
 * \brief The live OpenCL buffers of this backend, by handle.
 *
 * An array's DLArray.data on an OpenCL device is its cl_mem itself, and byte_offset its position in
 * that buffer (plugin ABI 3.0: the device has no pointer arithmetic, so the core never offsets the
 * handle). The table knows each buffer's size and device, so that a handle from elsewhere (a
 * DLPack producer, an op plugin) is refused with a message instead of reaching the driver, and an
 * offset and size past the buffer's end are caught before a kernel runs.
 */
#ifndef DLARRAY_BACKENDS_OPENCL_BUFFER_TABLE_H_
#define DLARRAY_BACKENDS_OPENCL_BUFFER_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cl_headers.h"

namespace dlarray::opencl {

/*! \brief Bytes of a buffer: the buffer, an offset into it, its size and device. */
struct BufferRef {
  cl_mem mem = nullptr;  //!< the buffer
  size_t offset = 0;     //!< bytes from the buffer's start
  size_t size = 0;       //!< the buffer's size in bytes
  int device = -1;       //!< the device id it belongs to
};

/*! \brief The table of live buffers (one per plugin, every device). */
class BufferTable {
 public:
  /*! \brief Records a new buffer of `size` bytes on device `device`. */
  void Insert(cl_mem mem, int device, size_t size);
  /*! \brief Forgets the buffer and returns it (mem nullptr when unknown). */
  BufferRef Erase(const void* buffer);
  /*!
   * \brief Bytes [offset, offset + nbytes) of buffer handle `buffer` of device `device`. Throws
   *        DeviceError when the handle is not one of this table's buffers, belongs to another
   *        device, or the range runs past the buffer's end. `what` names the operand in messages.
   */
  BufferRef Resolve(const void* buffer, uint64_t offset, int device, size_t nbytes,
                    const std::string& what) const;

 private:
  struct Entry {
    size_t size = 0;
    int device = -1;
  };
  mutable std::mutex mu_;
  std::unordered_map<const void*, Entry> buffers_;
};

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_BUFFER_TABLE_H_
