/* A user of dlarray's own C API (DLPack layouts), linked against libdlarray_runtime.so only. The
 * Python tests load it into a process where libc_runtime_api.so (same names, the seed's layouts)
 * was loaded first with RTLD_GLOBAL: its calls must still reach the core. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dlarray/c_runtime_api.h"
#include "selftest.h"

#define EXPORT __attribute__((visibility("default")))

static DLArray HostArray(float* data, int ndim, int64_t* shape) {
  DLArray a;
  memset(&a, 0, sizeof(a));
  a.data = data;
  a.ctx.device_type = kDLArrayCPU;
  a.ctx.device_id = 0;
  a.ndim = ndim;
  a.dtype.code = kDLArrayFloat;
  a.dtype.bits = 32;
  a.dtype.lanes = 1;
  a.shape = shape;
  return a;
}

/* Alloc, copies, the seed-named op DLGpuRelu and errors through the core's C API; returns the
 * number of failures (the first one in report). */
EXPORT int c_api_selftest(char* report, int report_size) {
  SelfTest state = {0, report, report_size};
  SelfTest* t = &state;
  if (report != NULL && report_size > 0) report[0] = '\0';
  CHECK(sizeof(DLArray) == 48 && offsetof(DLArray, shape) == 24);

  int64_t shape[2] = {4, 3}, other[1] = {5};
  float x[12], y[12];
  for (int i = 0; i < 12; ++i) x[i] = (float)i - 5.5f;
  DLArray hx = HostArray(x, 2, shape), hy = HostArray(y, 2, shape);
  DLContext cpu;
  cpu.device_type = kDLArrayCPU;
  cpu.device_id = 0;
  DLArrayHandle a = NULL, b = NULL;
  CHECK(DLArrayAlloc(shape, 2, cpu, &a) == 0);
  CHECK(DLArrayAlloc(other, 1, cpu, &b) == 0);
  if (a == NULL || b == NULL) return t->failures;
  CHECK(a->ctx.device_type == kDLArrayCPU && a->dtype.bits == 32 && a->ndim == 2);
  CHECK(DLArrayCopyFromTo(&hx, a, NULL) == 0);
  CHECK(DLGpuRelu(a, a) == 0);
  CHECK(DLArrayCopyFromTo(a, &hy, NULL) == 0);
  int ok = 1;
  for (int i = 0; i < 12; ++i) ok &= y[i] == (x[i] > 0.0f ? x[i] : 0.0f);
  CHECK(ok);
  CHECK_ERR(DLArrayRelu(a, b), "(5,)");
  CHECK(DLArrayFree(b) == 0);
  CHECK_ERR(DLArrayFree(b), "already freed");
  CHECK(DLArrayFree(a) == 0);
  return t->failures;
}
