/*!
 * \file buffer_pool.cc
 * \brief BufferPool (see buffer_pool.h).
 */
#include "buffer_pool.h"

#include <cstdio>

#include "cl_check.h"
#include "dlarray/errors.h"

namespace dlarray::opencl {
namespace {

size_t Rounded(size_t n) {
  const size_t unit = n <= (size_t{1} << 20) ? 256 : size_t{64} << 10;
  return (n + unit - 1) / unit * unit;
}

std::string Bytes(uint64_t n) {
  char text[96];
  std::snprintf(text, sizeof(text), "%llu bytes (%.2f GiB)", static_cast<unsigned long long>(n),
                static_cast<double>(n) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

}  // namespace

BufferPool::BufferPool(cl_context context, std::string where, uint64_t max_alloc,
                       uint64_t global_mem)
    : context_(context), where_(std::move(where)), max_alloc_(max_alloc), global_mem_(global_mem) {}

// Buffers are left to the process exit, like the context they belong to.
BufferPool::~BufferPool() = default;

cl_mem BufferPool::allocate(size_t nbytes, size_t* size) {
  if (nbytes > max_alloc_ || nbytes > SIZE_MAX / 2) {
    throw OutOfMemoryError(where_ + ": cannot allocate " + Bytes(nbytes) +
                           ": the device's largest buffer is " + Bytes(max_alloc_) +
                           " (CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
  }
  const size_t want = Rounded(nbytes) <= max_alloc_ ? Rounded(nbytes) : nbytes;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cached_.lower_bound(want);
  if (it != cached_.end() && it->first - want <= it->first / 4) {
    cl_mem mem = it->second;
    *size = it->first;
    cached_.erase(it);
    stats_.bytes_in_use += *size;
    if (stats_.bytes_in_use > stats_.peak_bytes_in_use) {
      stats_.peak_bytes_in_use = stats_.bytes_in_use;
    }
    return mem;
  }
  for (int attempt = 0;; ++attempt) {
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(context_, CL_MEM_READ_WRITE, want, nullptr, &err);
    if (err == CL_SUCCESS) {
      *size = want;
      stats_.num_allocations += 1;
      stats_.bytes_in_use += want;
      stats_.bytes_reserved += want;
      if (stats_.bytes_in_use > stats_.peak_bytes_in_use) {
        stats_.peak_bytes_in_use = stats_.bytes_in_use;
      }
      return mem;
    }
    if (attempt == 0 && IsOutOfMemory(err) && !cached_.empty()) {
      EmptyLocked();
      continue;
    }
    if (IsOutOfMemory(err) || err == CL_INVALID_BUFFER_SIZE) {
      throw OutOfMemoryError(where_ + ": cannot allocate " + Bytes(nbytes) + ": clCreateBuffer " +
                             "failed: " + ClErrorText(err) + " (" + Bytes(stats_.bytes_in_use) +
                             " in use of " + Bytes(global_mem_) + ")");
    }
    ThrowClError(err, "clCreateBuffer(" + std::to_string(want) + " bytes)", __FILE__, __LINE__);
  }
}

void BufferPool::release(cl_mem mem, size_t size) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.bytes_in_use -= size;
  try {
    cached_.emplace(size, mem);
  } catch (...) {
    // No room to remember it: release it now.
    (void)clReleaseMemObject(mem);
    stats_.num_frees += 1;
    stats_.bytes_reserved -= size;
  }
}

void BufferPool::EmptyLocked() {
  for (const auto& [size, mem] : cached_) {
    (void)clReleaseMemObject(mem);
    stats_.num_frees += 1;
    stats_.bytes_reserved -= size;
  }
  cached_.clear();
}

void BufferPool::empty() {
  std::lock_guard<std::mutex> lock(mu_);
  EmptyLocked();
}

MemoryStats BufferPool::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace dlarray::opencl
