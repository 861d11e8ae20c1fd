/* A plugin written in plain C99 against dlarray/plugin_api.h: a host-memory device type (25) with
 * two devices and kernels for copy and relu, plus a new op "c99_axpy" (out = alpha * x + y) with a
 * shape check, registered for that device and for the CPU. It uses no C++ at all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlarray/plugin_api.h"
/* The device extensions' public headers are plain C99 as well. */
#include "dlarray/ext/current_device.h"
#include "dlarray/ext/rtc.h"

/* The same file builds the older test plugins against the frozen ABI 2.0 and 2.1 headers (see
 * CMakeLists.txt), each with its own device type, name and op. */
#ifndef C99_DEVICE_TYPE
#define C99_DEVICE_TYPE 25
#define C99_PLUGIN_NAME "c99_device"
#define C99_OP "c99_axpy"
#endif

static const DLArrayCoreApi* core;

static int64_t Numel(const DLArray* a) {
  int64_t n = 1;
  int i;
  for (i = 0; i < a->ndim; ++i) n *= a->shape[i];
  return n;
}

static float* Floats(const DLArray* a) { return (float*)((char*)a->data + a->byte_offset); }

static int Fail(int kind, const char* message) {
  core->set_error(kind, message);
  return -1;
}

/* The device. */
static int DeviceCount(void* self, int32_t* count) {
  (void)self;
  *count = 2;
  return 0;
}

static int DeviceName(void* self, int32_t id, DLArrayString* out) {
  char name[64];
  (void)self;
  snprintf(name, sizeof name, "c99 host device %d", (int)id);
  core->string_set(out, name);
  return 0;
}

static int Allocate(void* self, int32_t id, uint64_t nbytes, void** out) {
  (void)self;
  (void)id;
  *out = malloc((size_t)nbytes);
  if (*out == NULL) return Fail(kDLArrayErrMemory, "c99 device: out of memory");
  return 0;
}

static void Free(void* self, int32_t id, void* ptr, uint64_t nbytes) {
  (void)self;
  (void)id;
  (void)nbytes;
  free(ptr);
}

#if DLARRAY_PLUGIN_ABI_MAJOR >= 3
/* ABI 3: buffers and byte offsets. */
static int Copy(void* self, const void* src, uint64_t src_offset, DLDevice src_device, void* dst,
                uint64_t dst_offset, DLDevice dst_device, uint64_t nbytes) {
  (void)self;
  (void)src_device;
  (void)dst_device;
  memmove((char*)dst + dst_offset, (const char*)src + src_offset, (size_t)nbytes);
  return 0;
}
#else
/* ABI 2.x: the core added the offsets. */
static int Copy(void* self, const void* src, DLContext src_ctx, void* dst, DLContext dst_ctx,
                uint64_t nbytes) {
  (void)self;
  (void)src_ctx;
  (void)dst_ctx;
  memmove(dst, src, (size_t)nbytes);
  return 0;
}
#endif

static int Synchronize(void* self, int32_t id) {
  (void)self;
  (void)id;
  return 0;
}

static int GetOption(void* self, const char* key, DLArrayString* out) {
  (void)self;
  if (strcmp(key, "language") == 0) {
    core->string_set(out, "C99");
    return 0;
  }
  return Fail(kDLArrayErrValue, "c99 device: unknown option");
}

static DLArrayDeviceApi device_table;

static int CreateDevice(const DLArrayCoreApi* api, const DLArrayDeviceApi** out) {
  core = api;
  memset(&device_table, 0, sizeof device_table);
  device_table.struct_size = sizeof device_table;
  device_table.device_count = DeviceCount;
  device_table.device_name = DeviceName;
  device_table.allocate = Allocate;
  device_table.free = Free;
  device_table.copy = Copy;
  device_table.synchronize = Synchronize;
  device_table.get_option = GetOption;
#if DLARRAY_PLUGIN_ABI_MAJOR >= 3
  device_table.capabilities = DLARRAY_DEVICE_HOST_ADDRESSABLE;
#endif
  *out = &device_table;
  return 0;
}

/* Kernels. */
static int CopyKernel(const DLArrayKernelCall* call, void* data) {
  (void)data;
  memmove(Floats(call->outputs[0]), Floats(call->inputs[0]),
          (size_t)Numel(call->outputs[0]) * sizeof(float));
  return 0;
}

static int ReluKernel(const DLArrayKernelCall* call, void* data) {
  const float* x = Floats(call->inputs[0]);
  float* y = Floats(call->outputs[0]);
  int64_t i, n = Numel(call->outputs[0]);
  (void)data;
  for (i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return 0;
}

static int AxpyKernel(const DLArrayKernelCall* call, void* data) {
  const float* x = Floats(call->inputs[0]);
  const float* y = Floats(call->inputs[1]);
  float* out = Floats(call->outputs[0]);
  const float alpha = (float)call->attrs[0];
  int64_t i, n = Numel(call->outputs[0]);
  (void)data;
  if (call->attrs[0] != call->attrs[0]) return Fail(kDLArrayErrValue, C99_OP ": alpha is NaN");
  for (i = 0; i < n; ++i) out[i] = alpha * x[i] + y[i];
  return 0;
}

/* c99_axpy: x and y of one shape, out of that shape too. */
static int ValidateAxpy(const DLArrayOpCall* call, void* data) {
  int d;
  (void)data;
  for (d = 0; d < 3; ++d) {
    const DLArray* a = d < 2 ? call->inputs[d] : call->outputs[0];
    int i;
    if (a->ndim != call->inputs[0]->ndim) goto mismatch;
    for (i = 0; i < a->ndim; ++i) {
      if (a->shape[i] != call->inputs[0]->shape[i]) goto mismatch;
    }
  }
  return 0;
mismatch:
  return Fail(kDLArrayErrValue, C99_OP ": x, y and out must have one shape");
}

static int RegisterKernels(const DLArrayCoreApi* api, DLArrayRegistry* registry) {
  static const char* const attrs[] = {"alpha"};
  static const char* const inputs[] = {"x", "y"};
  DLArrayOpSchema axpy;
  core = api;
  memset(&axpy, 0, sizeof axpy);
  axpy.struct_size = sizeof axpy;
  axpy.name = C99_OP;
  axpy.doc = "out = alpha * x + y (a kernel written in C99)";
  axpy.attr_names = attrs;
  axpy.input_names = inputs;
  axpy.validate = ValidateAxpy;
  axpy.num_inputs = 2;
  axpy.num_outputs = 1;
  axpy.num_attrs = 1;
  axpy.allow_inplace = 1;
  if (api->declare_op(registry, &axpy) != 0) return -1;
  if (api->register_kernel(registry, "copy", C99_DEVICE_TYPE, CopyKernel, NULL) != 0) return -1;
  if (api->register_kernel(registry, "relu", C99_DEVICE_TYPE, ReluKernel, NULL) != 0) return -1;
  if (api->register_kernel(registry, C99_OP, C99_DEVICE_TYPE, AxpyKernel, NULL) != 0) return -1;
  if (api->register_kernel(registry, C99_OP, kDLArrayCPU, AxpyKernel, NULL) != 0) return -1;
  return 0;
}

DLARRAY_PLUGIN_ENTRY {
  static const DLArrayPluginDescriptor descriptor = {DLARRAY_PLUGIN_ABI_MAJOR,
                                                     DLARRAY_PLUGIN_ABI_MINOR,
                                                     sizeof(DLArrayPluginDescriptor),
                                                     C99_PLUGIN_NAME,
                                                     "1.0",
                                                     C99_DEVICE_TYPE,
                                                     0,
                                                     CreateDevice,
                                                     RegisterKernels};
  return &descriptor;
}
