/* The seed's C API (libc_runtime_api.so) from C: struct layouts, results against plain C loops,
 * and every error return. Built as a library linked against the shim only, so that the Python
 * tests can also load it into a process where libdlarray_runtime.so (same names, DLPack layouts)
 * was loaded first with RTLD_GLOBAL: its calls must still reach the shim. */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "seed_c_api.h"
#include "selftest.h"

#define EXPORT __attribute__((visibility("default")))

static DLContext Ctx(int device_type, int device_id) {
  DLContext c;
  c.device_id = device_id;
  c.device_type = device_type;
  return c;
}

/* A caller-made array over caller memory, as the seed's ndarray._numpyasarray builds it. */
static DLArray HostArray(float* data, int ndim, int64_t* shape) {
  DLArray a;
  a.data = data;
  a.ctx = Ctx(1, 0);
  a.ndim = ndim;
  a.shape = shape;
  return a;
}

static void CheckLayout(SelfTest* t) {
  /* The seed's ctypes structs: DLContext(device_id, device_type), DLArray(data, ctx, ndim, shape).
   */
  CHECK(sizeof(DLContext) == 8);
  CHECK(offsetof(DLContext, device_id) == 0);
  CHECK(offsetof(DLContext, device_type) == 4);
  CHECK(offsetof(DLArray, data) == 0);
  CHECK(offsetof(DLArray, ctx) == sizeof(void*));
  CHECK(offsetof(DLArray, ndim) == sizeof(void*) + 8);
  CHECK(offsetof(DLArray, shape) == 3 * sizeof(void*));
  CHECK(sizeof(DLArray) == 4 * sizeof(void*));
}

/* Copies in, relu, matmul with transposes, array_set and copies out on one device. */
static void CheckOps(SelfTest* t, int device_type) {
  enum { M = 3, K = 5, N = 4 };
  int64_t shape_mk[2] = {M, K}, shape_nk[2] = {N, K}, shape_mn[2] = {M, N};
  float x[M * K], w[N * K], got[M * N], want[M * N], r[M * K];
  for (int i = 0; i < M * K; ++i) x[i] = (float)(i % 7) - 3.0f;
  for (int i = 0; i < N * K; ++i) w[i] = 0.25f * (float)(i % 5) - 0.5f;
  DLArray hx = HostArray(x, 2, shape_mk), hw = HostArray(w, 2, shape_nk);
  DLArray hgot = HostArray(got, 2, shape_mn), hr = HostArray(r, 2, shape_mk);

  DLArrayHandle a = NULL, b = NULL, c = NULL;
  CHECK(DLArrayAlloc(shape_mk, 2, Ctx(device_type, 0), &a) == 0);
  CHECK(DLArrayAlloc(shape_nk, 2, Ctx(device_type, 0), &b) == 0);
  CHECK(DLArrayAlloc(shape_mn, 2, Ctx(device_type, 0), &c) == 0);
  if (a == NULL || b == NULL || c == NULL) return;
  CHECK(a->ndim == 2 && a->shape[0] == M && a->shape[1] == K && a->data != NULL);
  CHECK(a->ctx.device_type == device_type && a->ctx.device_id == 0);
  CHECK(DLArrayCopyFromTo(&hx, a, NULL) == 0);
  CHECK(DLArrayCopyFromTo(&hw, b, NULL) == 0);

  /* c = a @ b.T */
  CHECK(DLGpuMatrixMultiply(a, false, b, true, c) == 0);
  CHECK(DLArrayCopyFromTo(c, &hgot, NULL) == 0);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int k = 0; k < K; ++k) s += x[i * K + k] * w[j * K + k];
      want[i * N + j] = s;
    }
  }
  int close = 1;
  for (int i = 0; i < M * N; ++i) close &= got[i] - want[i] < 1e-4f && want[i] - got[i] < 1e-4f;
  CHECK(close);

  /* relu in place on the device, then out */
  CHECK(DLGpuRelu(a, a) == 0);
  CHECK(DLArrayCopyFromTo(a, &hr, NULL) == 0);
  int relu_ok = 1;
  for (int i = 0; i < M * K; ++i) relu_ok &= r[i] == (x[i] > 0.0f ? x[i] : 0.0f);
  CHECK(relu_ok);

  CHECK(DLGpuArraySet(c, 2.5f) == 0);
  CHECK(DLArrayCopyFromTo(c, &hgot, NULL) == 0);
  int set_ok = 1;
  for (int i = 0; i < M * N; ++i) set_ok &= got[i] == 2.5f;
  CHECK(set_ok);

  /* device to device */
  DLArrayHandle a2 = NULL;
  CHECK(DLArrayAlloc(shape_mk, 2, Ctx(device_type, 0), &a2) == 0);
  CHECK(DLArrayCopyFromTo(a, a2, NULL) == 0);
  memset(r, 0, sizeof(r));
  CHECK(DLArrayCopyFromTo(a2, &hr, NULL) == 0);
  int copy_ok = 1;
  for (int i = 0; i < M * K; ++i) copy_ok &= r[i] == (x[i] > 0.0f ? x[i] : 0.0f);
  CHECK(copy_ok);

  CHECK(DLArrayFree(a) == 0 && DLArrayFree(b) == 0 && DLArrayFree(c) == 0 && DLArrayFree(a2) == 0);
}

/* Caller-made arrays are operands too, used in place: the op writes into the caller's buffer. */
static void CheckCallerArrays(SelfTest* t) {
  int64_t shape[1] = {6};
  float in[6] = {-2, -1, 0, 1, 2, 3}, out[6] = {9, 9, 9, 9, 9, 9};
  DLArray hin = HostArray(in, 1, shape), hout = HostArray(out, 1, shape);
  CHECK(DLGpuRelu(&hin, &hout) == 0);
  CHECK(out[0] == 0 && out[1] == 0 && out[2] == 0 && out[3] == 1 && out[5] == 3);
  CHECK(DLGpuMatrixMultiplyByConst(&hin, 0.5f, &hout) == 0);
  CHECK(out[0] == -1.0f && out[5] == 1.5f);
  CHECK_ERR(DLArrayFree(&hin), "not made by DLArrayAlloc");
}

static void* ErrorInAnotherThread(void* arg) {
  (void)arg;
  DLArrayHandle h = NULL;
  int64_t bad[1] = {-3};
  DLArrayAlloc(bad, 1, Ctx(1, 0), &h);
  return NULL;
}

static void CheckErrors(SelfTest* t) {
  int64_t s35[2] = {3, 5}, s53[2] = {5, 3}, s4[1] = {4}, bad[1] = {-1};
  DLArrayHandle a = NULL, b = NULL, h = NULL;
  CHECK(DLArrayAlloc(s35, 2, Ctx(1, 0), &a) == 0);
  CHECK(DLArrayAlloc(s53, 2, Ctx(1, 0), &b) == 0);
  if (a == NULL || b == NULL) return;
  CHECK_ERR(DLGpuRelu(a, b), "DLGpuRelu");
  CHECK(strstr(DLGetLastError(), "(3, 5)") && strstr(DLGetLastError(), "(5, 3)"));
  CHECK_ERR(DLGpuMatrixMultiply(a, false, a, false, b), "inner dimensions");
  CHECK_ERR(DLGpuMatrixElementwiseAdd(a, b, a), "shape");
  CHECK_ERR(DLGpuReduceSumAxisZero(a, a), "axis 0");
  CHECK_ERR(DLGpuBroadcastTo(a, b), "cannot broadcast");
  CHECK_ERR(DLArrayCopyFromTo(a, b, NULL), "differs from target shape");
  CHECK_ERR(DLArrayCopyFromTo(a, a, (void*)a), "stream");
  CHECK_ERR(DLGpuRelu(NULL, b), "input 0 is a null handle");
  CHECK_ERR(DLGpuSoftmax(a, NULL), "output is a null handle");
  CHECK_ERR(DLArrayCopyFromTo(NULL, a, NULL), "copy source is a null handle");
  CHECK_ERR(DLArrayFree(NULL), "null handle");

  CHECK_ERR(DLArrayAlloc(bad, 1, Ctx(1, 0), &h), "(-1,)");
  CHECK_ERR(DLArrayAlloc(s4, -1, Ctx(1, 0), &h), "ndim -1");
  CHECK_ERR(DLArrayAlloc(s4, 65, Ctx(1, 0), &h), "ndim 65");
  CHECK_ERR(DLArrayAlloc(NULL, 2, Ctx(1, 0), &h), "shape is null");
  CHECK_ERR(DLArrayAlloc(s4, 1, Ctx(1, 0), NULL), "out is null");
  CHECK_ERR(DLArrayAlloc(s4, 1, Ctx(1, 9), &h), "cpu(9)");
  CHECK_ERR(DLArrayAlloc(s4, 1, Ctx(7, 0), &h), "vulkan(0)");
  CHECK_ERR(DLArrayAlloc(s4, 1, Ctx(21, 0), &h), "device_type_21(0)");

  /* freed handles are reported, never read */
  CHECK(DLArrayFree(b) == 0);
  CHECK_ERR(DLArrayFree(b), "already freed");
  CHECK_ERR(DLGpuRelu(a, b), "output is a freed handle");
  CHECK_ERR(DLGpuReluGradient(a, b, a), "input 1 is a freed handle");
  CHECK_ERR(DLArrayCopyFromTo(b, a, NULL), "copy source is a freed handle");

  /* the message is per thread */
  CHECK_ERR(DLGpuRelu(a, b), "output is a freed handle");
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, ErrorInAnotherThread, NULL) == 0);
  pthread_join(thread, NULL);
  CHECK(strstr(DLGetLastError(), "output is a freed handle") != NULL);

  /* a scalar (ndim 0) is one element */
  DLArrayHandle s = NULL;
  CHECK(DLArrayAlloc(NULL, 0, Ctx(1, 0), &s) == 0);
  if (s != NULL) {
    CHECK(s->ndim == 0);
    CHECK(DLGpuArraySet(s, 4.0f) == 0);
    CHECK(DLArrayFree(s) == 0);
  }
  CHECK(DLArrayFree(a) == 0);
}

/* Runs every check; returns the number of failures (the first one in report). GPU checks run
 * where gpu(0) can be allocated; otherwise the failure must name cuda(0). */
EXPORT int seed_api_selftest(char* report, int report_size) {
  SelfTest state = {0, report, report_size};
  SelfTest* t = &state;
  if (report != NULL && report_size > 0) report[0] = '\0';
  CheckLayout(t);
  CheckOps(t, 1);
  CheckCallerArrays(t);
  CheckErrors(t);
  DLArrayHandle g = NULL;
  int64_t one[1] = {1};
  if (DLArrayAlloc(one, 1, Ctx(2, 0), &g) == 0) {
    CHECK(DLArrayFree(g) == 0);
    CheckOps(t, 2);
  } else {
    CHECK(strstr(DLGetLastError(), "cuda(0)") != NULL);
  }
  return t->failures;
}

/* Whether gpu(0) was usable (for the runner's message). */
EXPORT int seed_api_selftest_has_gpu(void) {
  DLArrayHandle g = NULL;
  int64_t one[1] = {1};
  if (DLArrayAlloc(one, 1, Ctx(2, 0), &g) != 0) return 0;
  DLArrayFree(g);
  return 1;
}
