/* A stand-in for libnccl.so.2 that only answers ncclGetVersion, to test how the CUDA plugin finds
 * and checks NCCL without a GPU. FAKE_NCCL_VERSION picks the version; FAKE_NCCL_PARTIAL leaves
 * ncclCommFinalize out. Every other function fails with ncclInvalidUsage (5). */
#define EXPORT __attribute__((visibility("default")))

EXPORT int ncclGetVersion(int* version) {
  *version = FAKE_NCCL_VERSION;
  return 0;
}
EXPORT const char* ncclGetErrorString(int result) { return result == 0 ? "no error" : "fake"; }
EXPORT const char* ncclGetLastError(void* comm) { return comm ? "" : ""; }
EXPORT int ncclGetUniqueId(void* id) { return id ? 5 : 5; }
EXPORT int ncclCommInitRankConfig(void) { return 5; }
#ifndef FAKE_NCCL_PARTIAL
EXPORT int ncclCommFinalize(void) { return 5; }
#endif
EXPORT int ncclCommDestroy(void) { return 5; }
EXPORT int ncclCommAbort(void) { return 5; }
EXPORT int ncclCommGetAsyncError(void) { return 5; }
EXPORT int ncclAllReduce(void) { return 5; }
EXPORT int ncclBroadcast(void) { return 5; }
EXPORT int ncclAllGather(void) { return 5; }
EXPORT int ncclReduceScatter(void) { return 5; }
EXPORT int ncclGroupStart(void) { return 5; }
EXPORT int ncclGroupEnd(void) { return 5; }
