#include "cuda_device.h"

#include <pthread.h>

#include <cstring>
#include <functional>
#include <string>

#include "caching_allocator.h"
#include "cublas_library.h"
#include "cublaslt_tune.h"
#include "cuda_check.h"
#include "current_device_ext.h"
#include "dlarray/errors.h"
#include "dlarray/ext/current_device.h"
#include "dlarray/ext/graph.h"
#include "dlarray/ext/nccl.h"
#include "dlarray/ext/rtc.h"
#include "dlarray/sdk_util.h"
#include "fill.h"
#include "graph_ext.h"
#include "host_staging.h"
#include "nccl_ext.h"
#include "rtc_ext.h"

namespace dlarray {
namespace cuda {

struct CudaDevice::PerDevice {
  PerDevice(int id, const std::string& device_name, int sms, std::function<void()> sync)
      : name(device_name),
        sm_count(sms),
        allocator(id, FormatDevice(DLDevice{kDLArrayCUDA, id}) + " (" + device_name + ")",
                  std::move(sync)),
        staging(id) {}

  const std::string name;
  const int sm_count;
  CachingAllocator allocator;
  HostStaging staging;
  std::mutex mu;  // guards the lazy members below
  std::atomic<bool> ready{false};
  cudaStream_t stream = nullptr;
  cudaEvent_t handoff = nullptr;  // recorded on stream for another stream to wait on
  std::mutex handoff_mu;          // one record-and-wait at a time on handoff
  std::atomic<cublasHandle_t> blas{nullptr};
  void* blas_workspace = nullptr;
  size_t blas_workspace_bytes = 0;
  std::atomic<unsigned int*> semaphores{nullptr};
  std::atomic<bool> capturing{false};                // the stream records a CUDA graph
  std::vector<std::function<void()>> after_capture;  // RunUnlessCapturing's, under mu
};

namespace {

std::string VersionText(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// "CUDA runtime 13.0, driver supports CUDA 12.4" or "..., no CUDA driver (libcuda.so.1) found".
std::string VersionsText() {
  int runtime = 0;
  int driver = 0;
  (void)cudaRuntimeGetVersion(&runtime);
  (void)cudaDriverGetVersion(&driver);
  (void)cudaGetLastError();
  const std::string rt = "CUDA runtime " + VersionText(runtime);
  if (driver == 0) return rt + ", no CUDA driver (libcuda.so.1) found";
  return rt + ", driver supports CUDA " + VersionText(driver);
}

// Uploads up to this size go through the pinned staging buffers and return without waiting for
// the GPU (a 4 KiB upload: 2.6 us against 6.7 us for cudaMemcpyAsync plus a sync, H200). Larger
// ones are a cudaMemcpyAsync from pageable memory and a stream sync, which moved 64 MiB at
// 19 GB/s against 16 GB/s staged.
constexpr size_t kStagedUploadLimit = size_t{8} << 20;

// Destroys an event at scope exit; destroying a recorded event is safe (freed once it fires).
struct EventGuard {
  cudaEvent_t event = nullptr;
  ~EventGuard() {
    if (event != nullptr) (void)cudaEventDestroy(event);
  }
};

// fork(): a child of a process that had initialised CUDA cannot use CUDA (its calls fail or
// hang). Every entry point of the device checks this first and raises a clear error instead.
std::atomic<bool> cuda_initialised{false};
std::atomic<bool> forked_after_init{false};

void OnForkChild() {
  if (cuda_initialised.load(std::memory_order_relaxed)) {
    forked_after_init.store(true, std::memory_order_relaxed);
  }
}

const bool fork_handler_registered = pthread_atfork(nullptr, nullptr, &OnForkChild) == 0;

[[noreturn]] void ThrowForkedChild(int id) {
  throw BackendError(FormatDevice(DLDevice{kDLArrayCUDA, id}) +
                     ": this process was forked (fork(), multiprocessing's 'fork' start method) "
                     "from one that had initialised CUDA, and CUDA cannot be used after fork; "
                     "start worker processes with the 'spawn' or 'forkserver' start method");
}

}  // namespace

CudaDevice::CudaDevice(const DLArrayCoreApi* core) : core_(core) { (void)fork_handler_registered; }

// Streams, handles and memory are left to the process exit: at that point the CUDA runtime
// may already be torn down, and calls into it from a static destructor are not safe.
CudaDevice::~CudaDevice() = default;

void CudaDevice::InitDevices() {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    const char* what = err == cudaErrorInsufficientDriver ? "no CUDA driver"
                       : err == cudaErrorNoDevice         ? "no CUDA device"
                                                          : "CUDA is unusable";
    unavailable_reason_ = std::string(what) + ": cudaGetDeviceCount failed: " + CudaErrorText(err) +
                          "; " + VersionsText();
    return;
  }
  if (n <= 0) {
    unavailable_reason_ = "no CUDA device: cudaGetDeviceCount found none; " + VersionsText();
    return;
  }
  std::vector<std::unique_ptr<PerDevice>> devices;
  for (int id = 0; id < n; ++id) {
    cudaDeviceProp props;
    err = cudaGetDeviceProperties(&props, id);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      unavailable_reason_ = "CUDA is unusable: cudaGetDeviceProperties(" + std::to_string(id) +
                            ") failed: " + CudaErrorText(err);
      return;
    }
    devices.push_back(std::make_unique<PerDevice>(id, props.name, props.multiProcessorCount,
                                                  [this, id] { synchronize(id); }));
  }
  cuda_initialised.store(true);  // a fork() child can no longer use CUDA
  devices_ = std::move(devices);
  peer_state_.assign(static_cast<size_t>(n) * n, 0);
  count_ = n;
}

int CudaDevice::device_count() {
  std::call_once(count_once_, [this] { InitDevices(); });
  return count_;
}

std::string CudaDevice::unavailable_reason() {
  return device_count() == 0 ? unavailable_reason_ : std::string();
}

CudaDevice::PerDevice& CudaDevice::At(int id) {
  if (forked_after_init.load(std::memory_order_relaxed)) ThrowForkedChild(id);
  if (id < 0 || id >= device_count()) {
    throw DeviceError(FormatDevice(DLDevice{kDLArrayCUDA, id}) + " does not exist: " +
                      (count_ == 0 ? unavailable_reason_
                                   : "this machine has " + std::to_string(count_) + " GPU(s)"));
  }
  return *devices_[id];
}

CudaDevice::PerDevice& CudaDevice::Ready(int id) {
  PerDevice& d = At(id);
  if (d.ready.load(std::memory_order_acquire)) return d;
  std::lock_guard<std::mutex> lock(d.mu);
  if (!d.ready.load(std::memory_order_relaxed)) {
    SetDevice(id);
    CUDA_CALL(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));
    CUDA_CALL(cudaEventCreateWithFlags(&d.handoff, cudaEventDisableTiming));
    d.ready.store(true, std::memory_order_release);
  }
  return d;
}

std::string CudaDevice::device_name(int id) { return At(id).name; }

int CudaDevice::sm_count(int id) { return At(id).sm_count; }

cudaStream_t CudaDevice::cuda_stream(int id) { return Ready(id).stream; }

cublasHandle_t CudaDevice::cublas(int id) {
  PerDevice& d = Ready(id);
  if (cublasHandle_t h = d.blas.load(std::memory_order_acquire)) return h;
  std::lock_guard<std::mutex> lock(d.mu);
  cublasHandle_t h = d.blas.load(std::memory_order_relaxed);
  if (h == nullptr) {
    SetDevice(id);
    const CublasLibrary& blas = CublasLibrary::Require();  // the first use loads cuBLAS
    CUBLAS_CALL(blas.Create(&h));
    // A workspace of our own (NVIDIA's advice: 32 MiB from Hopper on, 4 MiB before): cuBLAS
    // then never allocates inside a product, which a CUDA graph recording would not allow.
    int major = 0;
    (void)cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, id);
    const size_t workspace_bytes = major >= 9 ? (size_t{32} << 20) : (size_t{4} << 20);
    cublasStatus_t st = blas.SetStream(h, d.stream);
    if (st == CUBLAS_STATUS_SUCCESS &&
        cudaMalloc(&d.blas_workspace, workspace_bytes) == cudaSuccess) {
      st = blas.SetWorkspace(h, d.blas_workspace, workspace_bytes);
      d.blas_workspace_bytes = workspace_bytes;
    } else {
      (void)cudaGetLastError();
      d.blas_workspace = nullptr;  // cuBLAS keeps its own default workspace
      d.blas_workspace_bytes = 0;
    }
    if (st != CUBLAS_STATUS_SUCCESS) {
      (void)blas.Destroy(h);
      CUBLAS_CALL(st);
    }
    d.blas.store(h, std::memory_order_release);
  }
  return h;
}

unsigned int* CudaDevice::semaphores(int id) {
  PerDevice& d = Ready(id);
  if (unsigned int* s = d.semaphores.load(std::memory_order_acquire)) return s;
  std::lock_guard<std::mutex> lock(d.mu);
  unsigned int* s = d.semaphores.load(std::memory_order_relaxed);
  if (s == nullptr) {
    SetDevice(id);
    CUDA_CALL(cudaMalloc(reinterpret_cast<void**>(&s), kNumSemaphores * sizeof(unsigned int)));
    CUDA_CALL(cudaMemsetAsync(s, 0, kNumSemaphores * sizeof(unsigned int), d.stream));
    d.semaphores.store(s, std::memory_order_release);
  }
  return s;
}

void* CudaDevice::allocate(int id, size_t nbytes) { return At(id).allocator.Allocate(nbytes); }

void CudaDevice::free(int id, void* ptr, size_t nbytes) noexcept {
  (void)nbytes;
  if (forked_after_init.load(std::memory_order_relaxed)) return;  // the parent's memory
  if (id >= 0 && id < count_) devices_[id]->allocator.Free(ptr);
}

MemoryStats CudaDevice::memory_stats(int id) { return At(id).allocator.Stats(); }

void CudaDevice::empty_cache(int id) { At(id).allocator.EmptyCache(); }

void CudaDevice::synchronize(int id) {
  PerDevice& d = Ready(id);
  ThrowIfCapturing(id, "wait for");
  const cudaError_t err = cudaStreamSynchronize(d.stream);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    throw BackendError("CUDA error on " + FormatDevice(DLDevice{kDLArrayCUDA, id}) + " (" + d.name +
                       "), reported by cudaStreamSynchronize: " + CudaErrorText(err) +
                       " (an earlier asynchronous kernel or copy may have failed)");
  }
}

void CudaDevice::copy(const void* src_buffer, uint64_t src_offset, DLDevice src_ctx,
                      void* dst_buffer, uint64_t dst_offset, DLDevice dst_ctx, size_t nbytes) {
  // CUDA and host buffers are addresses.
  const void* src = static_cast<const char*>(src_buffer) + src_offset;
  void* dst = static_cast<char*>(dst_buffer) + dst_offset;
  const bool src_gpu = src_ctx.device_type == kDLArrayCUDA;
  const bool dst_gpu = dst_ctx.device_type == kDLArrayCUDA;
  if (!(src_gpu && dst_gpu && src_ctx.device_id == dst_ctx.device_id)) {
    // Copies with the host or another GPU wait for the stream: not while it records a graph.
    if (src_gpu) ThrowIfCapturing(src_ctx.device_id, "copy from");
    if (dst_gpu) ThrowIfCapturing(dst_ctx.device_id, "copy to");
  }
  if (src_gpu && dst_gpu && src_ctx.device_id != dst_ctx.device_id) {
    CopyBetweenDevices(src, src_ctx.device_id, dst, dst_ctx.device_id, nbytes);
  } else if (src_gpu && dst_gpu) {
    PerDevice& d = Ready(dst_ctx.device_id);
    SetDevice(dst_ctx.device_id);
    CUDA_CALL(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, d.stream));
  } else if (dst_gpu) {
    const int id = dst_ctx.device_id;
    PerDevice& d = Ready(id);
    if (nbytes <= kStagedUploadLimit && d.staging.CopyToDevice(dst, src, nbytes, d.stream)) return;
    SetDevice(id);
    CUDA_CALL(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyHostToDevice, d.stream));
    synchronize(id);  // the pageable source may be reused once this returns
  } else if (src_gpu) {
    const int id = src_ctx.device_id;
    PerDevice& d = Ready(id);
    if (nbytes <= HostStaging::kReadbackBytes &&
        d.staging.CopyToHost(dst, src, nbytes, d.stream, [this, id] { synchronize(id); })) {
      return;
    }
    SetDevice(id);
    CUDA_CALL(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, d.stream));
    synchronize(id);
  } else {
    std::memcpy(dst, src, nbytes);
  }
}

void CudaDevice::fill(void* dst_buffer, uint64_t dst_offset, DLDevice device, const void* pattern,
                      uint32_t pattern_size, size_t nbytes) {
  PerDevice& d = Ready(device.device_id);
  SetDevice(device.device_id);
  FillPattern(static_cast<char*>(dst_buffer) + dst_offset, pattern, pattern_size, nbytes, d.stream);
}

bool CudaDevice::EnablePeerAccess(int from, int to) {
  std::lock_guard<std::mutex> lock(peer_mu_);
  char& state = peer_state_[static_cast<size_t>(from) * count_ + to];
  if (state == 0) {
    state = 2;
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, from, to) == cudaSuccess && can) {
      SetDevice(from);
      // Already enabled (by NCCL or another library in this process) counts as enabled.
      const cudaError_t err = cudaDeviceEnablePeerAccess(to, 0);
      if (err == cudaSuccess || err == cudaErrorPeerAccessAlreadyEnabled) state = 1;
    }
    (void)cudaGetLastError();
  }
  return state == 1;
}

void CudaDevice::StreamWaitsFor(PerDevice& from, int from_id, cudaStream_t waiter) {
  std::lock_guard<std::mutex> lock(from.handoff_mu);
  SetDevice(from_id);
  CUDA_CALL(cudaEventRecord(from.handoff, from.stream));
  // The wait takes the event as recorded now; recording it again later does not change it.
  CUDA_CALL(cudaStreamWaitEvent(waiter, from.handoff, 0));
}

void CudaDevice::CopyBetweenDevices(const void* src, int src_id, void* dst, int dst_id,
                                    size_t nbytes) {
  PerDevice& s = Ready(src_id);
  PerDevice& d = Ready(dst_id);
  // With access both ways the copy engines move the data directly (NVLink or PCIe); without it
  // cudaMemcpyPeerAsync stages through the driver's pinned buffers. Either way it is queued.
  EnablePeerAccess(dst_id, src_id);
  EnablePeerAccess(src_id, dst_id);
  // The copy runs on the destination's stream after the source's queued work; the source's
  // later work (which may reuse or free the source block) waits for the copy. The destination's
  // later work is behind it on its own stream. The host never waits.
  StreamWaitsFor(s, src_id, d.stream);
  SetDevice(dst_id);
  CUDA_CALL(cudaMemcpyPeerAsync(dst, dst_id, src, src_id, nbytes, d.stream));
  StreamWaitsFor(d, dst_id, s.stream);
}

void CudaDevice::set_option(const std::string& key, const std::string& value) {
  if (key != "matmul_precision") {
    Device::set_option(key, value);
    return;
  }
  if (value == "highest") {
    matmul_tf32_.store(false, std::memory_order_relaxed);
  } else if (value == "tf32") {
    matmul_tf32_.store(true, std::memory_order_relaxed);
  } else {
    throw Error(ErrorKind::kValue,
                "cuda: matmul_precision must be \"highest\" or \"tf32\", got \"" + value + "\"");
  }
}

int CudaDevice::OptionDeviceId(const std::string& key, const std::string& text) {
  size_t used = 0;
  int id = -1;
  try {
    id = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) {
    throw Error(ErrorKind::kValue, "cuda: option " + key + ": '" + text + "' is not a device id");
  }
  if (id < 0 || id >= device_count()) {
    throw DeviceError("cuda: option " + key + ": there is no " +
                      FormatDevice(DLDevice{kDLArrayCUDA, id}));
  }
  return id;
}

std::string CudaDevice::get_option(const std::string& key) {
  if (key == "matmul_precision") return matmul_tf32() ? "tf32" : "highest";
  const size_t colon = key.find(':');
  const std::string name = key.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : key.substr(colon + 1);
  if (colon != std::string::npos && name == "compute_capability") {
    // "compute_capability:<id>" -> e.g. "9.0" (for building kernels for this GPU).
    const int id = OptionDeviceId(key, arg);
    int major = 0, minor = 0;
    CUDA_CALL(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, id));
    CUDA_CALL(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, id));
    return std::to_string(major) + "." + std::to_string(minor);
  }
  if (colon != std::string::npos && name == "cublaslt_choices") {
    // "cublaslt_choices:<id>" -> how each fused product seen on it runs, a line each
    // (cublaslt_tune.cc)
    return CublasLtChoices(OptionDeviceId(key, arg));
  }
  if (colon != std::string::npos && name == "pci_bus_id") {
    // "pci_bus_id:<id>" -> e.g. "0000:1B:00.0": which physical GPU an id is.
    const int id = OptionDeviceId(key, arg);
    char bus[64] = {0};
    CUDA_CALL(cudaDeviceGetPCIBusId(bus, sizeof(bus), id));
    return bus;
  }
  if (colon != std::string::npos && name == "peer_access") {
    // "peer_access:<a>,<b>" -> "1" when copies between cuda(a) and cuda(b) go peer to peer (access
    // is enabled both ways, as the first copy between them does), "0" when they are staged.
    const size_t comma = arg.find(',');
    if (comma == std::string::npos) {
      throw Error(ErrorKind::kValue, "cuda: option " + key + ": expected peer_access:<a>,<b>");
    }
    const int a = OptionDeviceId(key, arg.substr(0, comma));
    const int b = OptionDeviceId(key, arg.substr(comma + 1));
    if (a == b) return "1";
    const bool ab = EnablePeerAccess(a, b);
    const bool ba = EnablePeerAccess(b, a);
    return ab && ba ? "1" : "0";
  }
  return Device::get_option(key);
}

const void* CudaDevice::extension(const std::string& name) {
  if (name == DLARRAY_EXT_CURRENT_DEVICE_V1) return CurrentDeviceExtension();
  if (name == DLARRAY_EXT_RTC_V1) return RtcExtension(this);
  if (name == DLARRAY_EXT_GRAPH_V1) return GraphExtension(this);
  if (name == DLARRAY_EXT_NCCL_V1) return NcclExtension(this, core_);
  return FindExtension(name);  // mem_info, streams (cuda_plugin.cc)
}

void CudaDevice::mem_info(int id, uint64_t* free_bytes, uint64_t* total_bytes) {
  At(id);
  SetDevice(id);
  size_t free_b = 0, total_b = 0;
  CUDA_CALL(cudaMemGetInfo(&free_b, &total_b));
  *free_bytes = free_b;
  *total_bytes = total_b;
}

void CudaDevice::wait_stream(int id, cudaStream_t waiter, cudaStream_t signaller) {
  Ready(id);
  SetDevice(id);
  EventGuard guard;
  CUDA_CALL(cudaEventCreateWithFlags(&guard.event, cudaEventDisableTiming));
  CUDA_CALL(cudaEventRecord(guard.event, signaller));
  CUDA_CALL(cudaStreamWaitEvent(waiter, guard.event, 0));
}

void CudaDevice::ThrowIfCapturing(int id, const char* what) {
  if (id >= 0 && id < count_ && devices_[id]->capturing.load(std::memory_order_acquire)) {
    throw BackendError(std::string("cannot ") + what + " " +
                       FormatDevice(DLDevice{kDLArrayCUDA, id}) +
                       " while its stream records a CUDA graph: waits and copies with the "
                       "host belong before or after the recording");
  }
}

std::pair<void*, size_t> CudaDevice::cublas_workspace(int id) {
  (void)cublas(id);
  PerDevice& d = At(id);
  std::lock_guard<std::mutex> lock(d.mu);  // cublas() wrote them under it
  return {d.blas_workspace, d.blas_workspace_bytes};
}

bool CudaDevice::capturing(int id) { return At(id).capturing.load(std::memory_order_acquire); }

bool CudaDevice::RecordUnlessCapturing(int id, cudaEvent_t event, cudaStream_t stream) {
  PerDevice& d = At(id);
  std::lock_guard<std::mutex> lock(d.mu);
  if (d.capturing.load(std::memory_order_relaxed)) return false;
  SetDevice(id);
  CUDA_CALL(cudaEventRecord(event, stream));
  return true;
}

void CudaDevice::RunUnlessCapturing(int id, std::function<void()> fn) {
  PerDevice& d = At(id);
  {
    std::lock_guard<std::mutex> lock(d.mu);
    if (d.capturing.load(std::memory_order_relaxed)) {
      d.after_capture.push_back(std::move(fn));
      return;
    }
  }
  // Not under the lock: fn may wait for the stream, and a stream held up by a collective that
  // waits for a dead peer ends only once the group's watchdog, which records under this lock
  // (RecordUnlessCapturing), has aborted the communicator.
  fn();
}

void CudaDevice::BeginCapture(int id) {
  PerDevice& d = Ready(id);
  // What a recording cannot do: make the stream, the cuBLAS handle (and its workspace), the
  // counters some kernels use.
  (void)cublas(id);
  (void)semaphores(id);
  std::lock_guard<std::mutex> lock(d.mu);
  if (d.capturing.load(std::memory_order_relaxed)) {
    throw Error(ErrorKind::kValue, FormatDevice(DLDevice{kDLArrayCUDA, id}) +
                                       " is already recording a "
                                       "CUDA graph: end_capture or abort_capture it first");
  }
  SetDevice(id);
  // Work queued before the recording must not be recorded: it already is on the stream.
  d.allocator.BeginCapture();
  const cudaError_t err = cudaStreamBeginCapture(d.stream, cudaStreamCaptureModeThreadLocal);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    (void)d.allocator.EndCapture();
    ThrowCudaError(err, "cudaStreamBeginCapture", __FILE__, __LINE__);
  }
  d.capturing.store(true, std::memory_order_release);
}

cudaGraph_t CudaDevice::EndCapture(int id, std::vector<std::pair<void*, size_t>>* blocks) {
  PerDevice& d = At(id);
  // What waited for the recording's end runs once the lock is released (declared first, so
  // destroyed last), on every way out; RunUnlessCapturing queues it again should another
  // recording have begun in between.
  std::vector<std::function<void()>> waited;
  struct RunWaited {
    CudaDevice* device;
    int id;
    std::vector<std::function<void()>>* fns;
    ~RunWaited() {
      for (std::function<void()>& fn : *fns) device->RunUnlessCapturing(id, std::move(fn));
    }
  } run_waited{this, id, &waited};
  std::lock_guard<std::mutex> lock(d.mu);
  waited.swap(d.after_capture);
  if (!d.capturing.load(std::memory_order_relaxed)) {
    throw Error(ErrorKind::kValue,
                FormatDevice(DLDevice{kDLArrayCUDA, id}) + " is not recording a CUDA graph");
  }
  SetDevice(id);
  cudaGraph_t graph = nullptr;
  const cudaError_t err = cudaStreamEndCapture(d.stream, &graph);
  d.capturing.store(false, std::memory_order_release);
  std::string conflict;
  std::vector<std::pair<void*, size_t>> kept = d.allocator.EndCapture(&conflict);
  if (err != cudaSuccess || graph == nullptr || !conflict.empty()) {
    (void)cudaGetLastError();
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    d.allocator.ReleaseGraphBlocks(kept);
    const std::string text = err != cudaSuccess ? "cudaStreamEndCapture: " + CudaErrorText(err) +
                                                      " (an op waited for the device or used "
                                                      "another stream while recording)"
                             : graph == nullptr ? std::string("no graph was made")
                                                : conflict;
    throw BackendError("CUDA graph capture on " + FormatDevice(DLDevice{kDLArrayCUDA, id}) +
                       " failed: " + text);
  }
  if (blocks != nullptr) {
    *blocks = std::move(kept);
  } else {
    d.allocator.ReleaseGraphBlocks(kept);
  }
  return graph;
}

void CudaDevice::ReleaseGraphBlocks(int id,
                                    const std::vector<std::pair<void*, size_t>>& blocks) noexcept {
  if (id >= 0 && id < count_) devices_[id]->allocator.ReleaseGraphBlocks(blocks);
}

}  // namespace cuda
}  // namespace dlarray
