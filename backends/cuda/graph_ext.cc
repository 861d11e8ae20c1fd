// Extension "dlarray.graph.v1" (dlarray/ext/graph.h): the device's stream recorded into a CUDA
// graph (CudaDevice::BeginCapture / EndCapture), instantiated, and replayed with one launch.
// Errors go to the core with set_error, as in dlarray.rtc (rtc_common.h).
#include "graph_ext.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda_check.h"
#include "cuda_device.h"
#include "dlarray/errors.h"
#include "dlarray/ext/graph.h"
#include "rtc_common.h"

struct DLArrayGraphExec {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  int device_id = 0;
  int64_t num_nodes = 0;
  std::vector<std::pair<void*, size_t>> blocks;  // scratch memory its replays use
};

namespace dlarray {
namespace cuda {
namespace {

std::atomic<CudaDevice*> g_device{nullptr};

CudaDevice& Device() { return *g_device.load(std::memory_order_acquire); }

void CheckId(int32_t id) {
  const int count = Device().device_count();
  if (id < 0 || id >= count) {
    throw Error(ErrorKind::kValue, "dlarray.graph: there is no " +
                                       FormatDevice({kDLArrayCUDA, id}) + " (" +
                                       std::to_string(count) + " GPU(s))");
  }
}

int BeginCapture(int32_t device_id) {
  return rtc::Guard([&] {
    CheckId(device_id);
    Device().BeginCapture(device_id);
  });
}

int EndCapture(int32_t device_id, DLArrayGraphExec** out) {
  if (out != nullptr) *out = nullptr;
  return rtc::Guard([&] {
    if (out == nullptr) throw Error(ErrorKind::kValue, "dlarray.graph: end_capture: out is NULL");
    CheckId(device_id);
    auto exec = std::make_unique<DLArrayGraphExec>();
    exec->device_id = device_id;
    exec->graph = Device().EndCapture(device_id, &exec->blocks);
    size_t nodes = 0;
    cudaError_t err = cudaGraphGetNodes(exec->graph, nullptr, &nodes);
    if (err == cudaSuccess) err = cudaGraphInstantiate(&exec->exec, exec->graph, 0);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      (void)cudaGraphDestroy(exec->graph);
      Device().ReleaseGraphBlocks(device_id, exec->blocks);
      ThrowCudaError(err, "cudaGraphInstantiate", __FILE__, __LINE__);
    }
    exec->num_nodes = static_cast<int64_t>(nodes);
    *out = exec.release();
  });
}

int AbortCapture(int32_t device_id) {
  return rtc::Guard([&] {
    CheckId(device_id);
    if (!Device().capturing(device_id)) return;
    try {
      cudaGraph_t graph = Device().EndCapture(device_id, nullptr);
      (void)cudaGraphDestroy(graph);
    } catch (const BackendError&) {
      // The recording was broken already (that is why it is aborted): it is discarded.
    }
  });
}

int32_t IsCapturing(int32_t device_id) {
  int32_t result = 0;
  (void)rtc::Guard([&] {
    CheckId(device_id);
    result = Device().capturing(device_id) ? 1 : 0;
  });
  return result;
}

int Launch(DLArrayGraphExec* exec) {
  return rtc::Guard([&] {
    if (exec == nullptr) throw Error(ErrorKind::kValue, "dlarray.graph: launch of a NULL graph");
    CudaDevice& device = Device();
    cudaStream_t stream = device.cuda_stream(exec->device_id);
    SetDevice(exec->device_id);
    CUDA_CALL(cudaGraphLaunch(exec->exec, stream));
  });
}

int64_t NumNodes(const DLArrayGraphExec* exec) { return exec == nullptr ? 0 : exec->num_nodes; }

void Destroy(DLArrayGraphExec* exec) {
  if (exec == nullptr) return;
  CudaDevice* device = &Device();
  // Pending replays finish first: CUDA defers freeing an executable graph that is in flight, and
  // the blocks go back to a cache whose next users queue on the same stream. A graph freed while
  // its device records another (a garbage collection in the middle of a recording) waits for the
  // recording's end: destroying it there broke the recording, and only a later op said so.
  auto destroy = [device, exec]() noexcept {
    (void)cudaGraphExecDestroy(exec->exec);
    (void)cudaGraphDestroy(exec->graph);
    (void)cudaGetLastError();
    device->ReleaseGraphBlocks(exec->device_id, exec->blocks);
    delete exec;
  };
  try {
    device->RunUnlessCapturing(exec->device_id, destroy);
  } catch (...) {
    destroy();  // the device is gone (the process ends): nothing records
  }
}

const DLArrayGraphExtV1 kGraph = {sizeof(DLArrayGraphExtV1),
                                  &BeginCapture,
                                  &EndCapture,
                                  &AbortCapture,
                                  &IsCapturing,
                                  &Launch,
                                  &NumNodes,
                                  &Destroy};

}  // namespace

const void* GraphExtension(CudaDevice* device) {
  g_device.store(device, std::memory_order_release);
  return &kGraph;
}

}  // namespace cuda
}  // namespace dlarray
