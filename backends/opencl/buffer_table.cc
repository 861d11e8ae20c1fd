/*!
 * \file buffer_table.cc
 * \brief The live OpenCL buffers by handle (see buffer_table.h).
 */
#include "buffer_table.h"

#include <cstdio>

#include "dlarray/errors.h"

namespace dlarray::opencl {
namespace {

std::string Hex(const void* p) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", p);
  return text;
}

}  // namespace

void BufferTable::Insert(cl_mem mem, int device, size_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  buffers_[mem] = Entry{size, device};
}

BufferRef BufferTable::Erase(const void* buffer) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = buffers_.find(buffer);
  if (it == buffers_.end()) return {};
  const BufferRef ref{static_cast<cl_mem>(const_cast<void*>(buffer)), 0, it->second.size,
                      it->second.device};
  buffers_.erase(it);
  return ref;
}

BufferRef BufferTable::Resolve(const void* buffer, uint64_t offset, int device, size_t nbytes,
                               const std::string& what) const {
  Entry e;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = buffers_.find(buffer);
    if (it != buffers_.end()) e = it->second;
  }
  const std::string where = "opencl(" + std::to_string(device) + ")";
  if (e.device < 0) {
    throw DeviceError(what + " (buffer " + Hex(buffer) + ") is not memory of an " + where +
                      " array: OpenCL arrays are made by dlarray.empty or dlarray.array");
  }
  if (e.device != device) {
    throw DeviceError(what + " lives on opencl(" + std::to_string(e.device) + "), not on " + where);
  }
  if (offset > e.size || nbytes > e.size - offset) {
    throw DeviceError(what + ": bytes [" + std::to_string(offset) + ", " +
                      std::to_string(offset + nbytes) + ") run past the end of its " +
                      std::to_string(e.size) + "-byte buffer on " + where);
  }
  return BufferRef{static_cast<cl_mem>(const_cast<void*>(buffer)), static_cast<size_t>(offset),
                   e.size, e.device};
}

}  // namespace dlarray::opencl
