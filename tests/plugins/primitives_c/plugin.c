/* The cprim plugin's entry point and device: one device of host memory (so the core may read
 * it, as the CPU's), allocated with malloc, copied with memmove, filled with a byte pattern. Its
 * kernels are the primitives, and nothing else: the elementwise table (elementwise.c), the
 * layout ops (layout.c), reductions, scans and matmul (reduce.c), indexing (index.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prim.h"

/* The device. */
static int DeviceCount(void* self, int32_t* count) {
  (void)self;
  *count = 1;
  return 0;
}

static int DeviceName(void* self, int32_t id, DLArrayString* out) {
  char name[64];
  (void)self;
  snprintf(name, sizeof name, "primitives-only C backend %d", (int)id);
  cprim_core->string_set(out, name);
  return 0;
}

static int Allocate(void* self, int32_t id, uint64_t nbytes, void** out) {
  (void)self;
  (void)id;
  *out = malloc((size_t)nbytes);
  if (*out == NULL) return cprim_fail(kDLArrayErrMemory, CPRIM_NAME ": out of memory");
  return 0;
}

static void Free(void* self, int32_t id, void* ptr, uint64_t nbytes) {
  (void)self;
  (void)id;
  (void)nbytes;
  free(ptr);
}

/* Host memory on both sides (the other side is this device or the CPU). */
static int Copy(void* self, const void* src, uint64_t src_offset, DLDevice src_device, void* dst,
                uint64_t dst_offset, DLDevice dst_device, uint64_t nbytes) {
  (void)self;
  (void)src_device;
  (void)dst_device;
  memmove((char*)dst + dst_offset, (const char*)src + src_offset, (size_t)nbytes);
  return 0;
}

static int Fill(void* self, void* dst, uint64_t dst_offset, DLDevice device, const void* pattern,
                uint32_t pattern_size, uint64_t nbytes) {
  char* p = (char*)dst + dst_offset;
  uint64_t i;
  (void)self;
  (void)device;
  for (i = 0; i < nbytes; i += pattern_size) memcpy(p + i, pattern, pattern_size);
  return 0;
}

static int Synchronize(void* self, int32_t id) {
  (void)self;
  (void)id;
  return 0; /* every kernel has finished when it returns */
}

static DLArrayDeviceApi device_table;

static int CreateDevice(const DLArrayCoreApi* core, const DLArrayDeviceApi** out) {
  cprim_core = core;
  memset(&device_table, 0, sizeof device_table);
  device_table.struct_size = sizeof device_table;
  device_table.device_count = DeviceCount;
  device_table.device_name = DeviceName;
  device_table.allocate = Allocate;
  device_table.free = Free;
  device_table.copy = Copy;
  device_table.synchronize = Synchronize;
  device_table.capabilities = DLARRAY_DEVICE_HOST_ADDRESSABLE;
  device_table.fill = Fill;
  *out = &device_table;
  return 0;
}

/* The primitives outside the elementwise table, by op name. */
static int RegisterKernels(const DLArrayCoreApi* core, DLArrayRegistry* registry) {
  static const struct {
    const char* op;
    DLArrayKernelFn fn;
  } kernels[] = {
#define CPRIM_ENTRY(name) {#name, cprim_##name},
      CPRIM_KERNELS(CPRIM_ENTRY)
#undef CPRIM_ENTRY
  };
  size_t i;
  cprim_core = core;
  for (i = 0; i < sizeof kernels / sizeof kernels[0]; ++i) {
    if (core->register_kernel(registry, kernels[i].op, CPRIM_DEVICE_TYPE, kernels[i].fn, NULL))
      return -1;
  }
  return cprim_register_elementwise(core, registry);
}

DLARRAY_PLUGIN_ENTRY {
  static const DLArrayPluginDescriptor descriptor = {DLARRAY_PLUGIN_ABI_MAJOR,
                                                     DLARRAY_PLUGIN_ABI_MINOR,
                                                     sizeof(DLArrayPluginDescriptor),
                                                     CPRIM_NAME,
                                                     "1.0",
                                                     CPRIM_DEVICE_TYPE,
                                                     0,
                                                     CreateDevice,
                                                     RegisterKernels};
  return &descriptor;
}
