/*!
 * \file buffer_pool.h
 * \brief A caching allocator of OpenCL buffers for one device.
 */
#ifndef DLARRAY_BACKENDS_OPENCL_BUFFER_POOL_H_
#define DLARRAY_BACKENDS_OPENCL_BUFFER_POOL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "cl_headers.h"
#include "dlarray/device.h"

namespace dlarray::opencl {

/*!
 * \brief Buffers of one context, kept for reuse when freed. Requests are rounded up to 256 B up to
 *        1 MiB and to 64 KiB beyond; a request takes the smallest cached buffer that fits and
 *        wastes at most a quarter of it, else a new clCreateBuffer. When the device runs out, the
 *        cache is released and the allocation tried once more. Reuse needs no events: every
 *        command of the device goes through one in-order queue, so work queued before a free
 *        finishes before work queued after the buffer is handed out again.
 */
class BufferPool {
 public:
  /*! \brief `where` names the device in messages; max_alloc is CL_DEVICE_MAX_MEM_ALLOC_SIZE. */
  BufferPool(cl_context context, std::string where, uint64_t max_alloc, uint64_t global_mem);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  /*! \brief A buffer of at least nbytes (> 0); *size gets its real size. OutOfMemoryError. */
  cl_mem allocate(size_t nbytes, size_t* size);
  /*! \brief Takes back a buffer from allocate (size: the real size). */
  void release(cl_mem mem, size_t size) noexcept;
  /*! \brief Releases every cached buffer. */
  void empty();
  /*! \brief Counters (whole buffers). */
  MemoryStats stats();

 private:
  void EmptyLocked();
  cl_context context_;
  std::string where_;
  uint64_t max_alloc_;
  uint64_t global_mem_;
  std::mutex mu_;
  std::multimap<size_t, cl_mem> cached_;
  MemoryStats stats_;
};

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_BUFFER_POOL_H_
