/*!
 * \file address_space.cc
 * \brief Addresses of OpenCL buffers (see address_space.h).
 */
#include "address_space.h"

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

void* AddressSpace::Insert(cl_mem mem, int device, size_t size) {
  if (size > kMaxBytes) {
    throw OutOfMemoryError("opencl: a buffer of " + std::to_string(size) +
                           " bytes is larger than the 1 TiB this backend addresses");
  }
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    if (slots_.size() >= kMaxSlots) {
      throw OutOfMemoryError("opencl: more than " + std::to_string(kMaxSlots - 1) +
                             " live buffers");
    }
    slot = slots_.size();
    slots_.emplace_back();
  }
  slots_[slot] = Slot{mem, size, device};
  return reinterpret_cast<void*>(static_cast<uintptr_t>(kTag | slot << kOffsetBits));
}

BufferRef AddressSpace::Erase(const void* addr) {
  const uint64_t a = reinterpret_cast<uintptr_t>(addr);
  const uint64_t slot = (a & ~kTag) >> kOffsetBits;
  std::lock_guard<std::mutex> lock(mu_);
  if ((a & kTag) == 0 || (a & (kMaxBytes - 1)) != 0 || slot == 0 || slot >= slots_.size() ||
      slots_[slot].mem == nullptr) {
    return {};
  }
  const Slot s = slots_[slot];
  slots_[slot] = Slot{};
  free_.push_back(slot);
  return BufferRef{s.mem, 0, s.size, s.device};
}

BufferRef AddressSpace::Resolve(const void* addr, int device, size_t nbytes,
                                const std::string& what) const {
  const uint64_t a = reinterpret_cast<uintptr_t>(addr);
  const uint64_t slot = (a & ~kTag) >> kOffsetBits;
  const size_t offset = static_cast<size_t>(a & (kMaxBytes - 1));
  Slot s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if ((a & kTag) != 0 && slot > 0 && slot < slots_.size()) s = slots_[slot];
  }
  const std::string where = "opencl(" + std::to_string(device) + ")";
  if (s.mem == nullptr) {
    throw DeviceError(what + " (address " + Hex(addr) + ") is not memory of an " + where +
                      " array: OpenCL arrays are made by dlarray.empty or dlarray.array");
  }
  if (s.device != device) {
    throw DeviceError(what + " lives on opencl(" + std::to_string(s.device) + "), not on " + where);
  }
  if (offset > s.size || nbytes > s.size - offset) {
    throw DeviceError(what + ": bytes [" + std::to_string(offset) + ", " +
                      std::to_string(offset + nbytes) + ") run past the end of its " +
                      std::to_string(s.size) + "-byte buffer on " + where);
  }
  return BufferRef{s.mem, offset, s.size, s.device};
}

}  // namespace dlarray::opencl
