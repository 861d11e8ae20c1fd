/*!
 * \file opencl_extension.cc
 * \brief "dlarray.opencl.v2": buffers, contexts and queues for other plugins' OpenCL kernels;
 *        "dlarray.mem_info.v1": free and total memory (dlarray.mem_info).
 */
#include "opencl_extension.h"

#include <atomic>

#include "dlarray/errors.h"
#include "dlarray/ext/mem_info.h"
#include "dlarray/ext/opencl.h"
#include "dlarray/sdk_util.h"
#include "opencl_device.h"

namespace dlarray::opencl {
namespace {

std::atomic<const DLArrayCoreApi*> g_core{nullptr};

template <typename F>
int Guarded(F&& f) noexcept {
  return GuardCall(g_core.load(), "dlarray.opencl.v2", static_cast<F&&>(f));
}

OpenclDevice* Self(void* self) { return static_cast<OpenclDevice*>(self); }

int Resolve(void* self, int32_t device_id, const void* buffer, uint64_t offset, uint64_t nbytes,
            void** mem, uint64_t* offset_out) {
  return Guarded([&] {
    OpenclDevice* d = Self(self);
    if (device_id < 0 || device_id >= d->device_count()) {
      throw DeviceError("dlarray.opencl.v2: opencl(" + std::to_string(device_id) +
                        ") does not exist");
    }
    const BufferRef b = d->resolve(device_id, buffer, offset, static_cast<size_t>(nbytes), "array");
    *mem = b.mem;
    *offset_out = b.offset;
  });
}

int Objects(void* self, int32_t device_id, void** context, void** queue, void** device) {
  return Guarded([&] {
    OpenclDevice* d = Self(self);
    if (device_id < 0 || device_id >= d->device_count()) {
      throw DeviceError("dlarray.opencl.v2: opencl(" + std::to_string(device_id) +
                        ") does not exist");
    }
    if (context != nullptr) *context = d->context(device_id);
    if (queue != nullptr) *queue = d->queue(device_id);
    if (device != nullptr) *device = d->info(device_id).device;
  });
}

// Total: CL_DEVICE_GLOBAL_MEM_SIZE. Free: OpenCL has no query for it, so the best this process
// knows: the total less the bytes its live arrays hold (cached buffers count as free: the pool
// gives them back when an allocation fails). Other processes' use of the device is not seen.
int MemInfo(void* self, int32_t device_id, uint64_t* free_bytes, uint64_t* total_bytes) {
  return Guarded([&] {
    OpenclDevice* d = Self(self);
    if (device_id < 0 || device_id >= d->device_count()) {
      throw DeviceError("mem_info: opencl(" + std::to_string(device_id) + ") does not exist");
    }
    const uint64_t total = d->info(device_id).global_mem;
    const uint64_t used = d->memory_stats(device_id).bytes_in_use;
    *total_bytes = total;
    *free_bytes = total > used ? total - used : 0;
  });
}

}  // namespace

void SetExtensionCore(const DLArrayCoreApi* core) { g_core.store(core); }

const void* OpenclExtensionTable(OpenclDevice* device) {
  static const DLArrayOpenclExtV2 table{sizeof(DLArrayOpenclExtV2), device, &Resolve, &Objects};
  return &table;
}

const void* MemInfoTable(OpenclDevice* device) {
  static const DLArrayMemInfoExtV1 table{sizeof(DLArrayMemInfoExtV1), device, &MemInfo};
  return &table;
}

}  // namespace dlarray::opencl
