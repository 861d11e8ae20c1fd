// The peer all-reduce's host side (peer_allreduce.h): setting the buffers up at comm_init (the
// ranks exchange their CUDA IPC handles through NCCL itself, then agree), and each call's
// eligibility, arguments and launch.
#include "peer_allreduce.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cuda_check.h"
#include "dlarray/errors.h"
#include "nccl_comm.h"

namespace dlarray {
namespace cuda {
namespace peer {
namespace {

// What each rank tells the others at set-up (a fixed-size plain struct: sent as bytes).
struct Record {
  char host[128];  // host name and boot id: the ranks that may map each other's memory
  char bus[32];    // the GPU's PCI bus id (device numbers differ between processes)
  cudaIpcMemHandle_t handle;
  uint64_t max_bytes;
  uint32_t first_seq;
  int32_t enabled;  // configured on, and the buffer is allocated
  int32_t sms;      // the GPU's multiprocessors
  int32_t pad;
};

// Each rank's slot of a buffer half for calls of at most max_bytes: room for every array's
// padding too.
uint64_t SlotBytes(uint64_t max_bytes) {
  return (max_bytes + kAlign - 1) / kAlign * kAlign + kMaxSegments * kAlign;
}

constexpr int kNcclUint8 = 1;
constexpr int kNcclInt32 = 2;
constexpr int kNcclMin = 3;

void FillHost(char* out, size_t size) {
  std::string id(256, '\0');
  if (gethostname(&id[0], id.size() - 1) != 0) id = "?";
  id.resize(std::strlen(id.c_str()));
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  if (boot >> boot_id) id += "/" + boot_id;
  std::memset(out, 0, size);
  std::memcpy(out, id.data(), std::min(id.size(), size - 1));
}

// The sequence number the flags start from: 0, or DLARRAY_PEER_ALLREDUCE_FIRST_SEQ (for the
// tests, which start near 2^32 to see the numbers wrap). Rank 0's counts.
uint32_t FirstSeq() {
  const char* text = std::getenv("DLARRAY_PEER_ALLREDUCE_FIRST_SEQ");
  return text == nullptr ? 0u : static_cast<uint32_t>(std::strtoull(text, nullptr, 10));
}

// Waits, with mu released, until stream has run what was queued; comm_abort ends the wait.
void WaitStream(DLArrayNcclComm* c, cudaStream_t stream, const char* what) {
  nccl::Waiting waiting(c);
  for (;;) {
    const cudaError_t err = cudaStreamQuery(stream);
    if (err == cudaSuccess) return;
    if (err != cudaErrorNotReady) ThrowCudaError(err, what, __FILE__, __LINE__);
    if (c->aborted.load()) nccl::ThrowAborted(c, what);
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// A CUDA call at set-up whose failure only turns the peer path off (NCCL serves instead).
bool Ok(cudaError_t err) {
  if (err == cudaSuccess) return true;
  (void)cudaGetLastError();
  return false;
}

// This rank's record; allocates the state's buffer and host words when enabled.
Record Prepare(DLArrayNcclComm* c, State* s) {
  Record mine;
  std::memset(&mine, 0, sizeof(mine));
  FillHost(mine.host, sizeof(mine.host));
  mine.first_seq = FirstSeq();
  mine.max_bytes = c->peer_max_bytes;
  bool ok = c->peer_enabled && c->peer_max_bytes > 0 && c->world_size <= kMaxRanks &&
            Ok(cudaDeviceGetPCIBusId(mine.bus, sizeof(mine.bus) - 1, c->device_id));
  void* words = nullptr;
  ok = ok && Ok(cudaDeviceGetAttribute(&mine.sms, cudaDevAttrMultiProcessorCount, c->device_id));
  ok = ok && Ok(cudaHostAlloc(&words, 2 * sizeof(int32_t), cudaHostAllocMapped));
  if (words != nullptr) {
    s->words = static_cast<volatile int32_t*>(words);
    s->words[kAbortWord] = 0;
    s->words[kErrorWord] = 0;
  }
  void* device_words = nullptr;
  ok = ok && Ok(cudaHostGetDevicePointer(&device_words, words, 0));
  s->device_words = static_cast<int32_t*>(device_words);
  void* own = nullptr;
  const uint64_t world = static_cast<uint64_t>(c->world_size);
  ok = ok && Ok(cudaMalloc(&own, kHeaderBytes + 2 * world * SlotBytes(c->peer_max_bytes)));
  s->own = static_cast<char*>(own);
  ok = ok && Ok(cudaIpcGetMemHandle(&mine.handle, own));
  mine.enabled = ok ? 1 : 0;
  return mine;
}

// Every rank's record, through an NCCL all-gather on the communicator's stream.
std::vector<Record> Exchange(DLArrayNcclComm* c, const Record& mine) {
  const size_t n = sizeof(Record);
  const size_t world = static_cast<size_t>(c->world_size);
  auto stream = static_cast<cudaStream_t>(nccl::StreamOf(c));
  std::vector<Record> all(world);
  char* buf = nullptr;
  CUDA_CALL(cudaMalloc(reinterpret_cast<void**>(&buf), n * (world + 1)));
  try {
    CUDA_CALL(cudaMemcpyAsync(buf, &mine, n, cudaMemcpyHostToDevice, stream));
    nccl::Run(c, "ncclAllGather (peer all-reduce set-up)",
              [&](const nccl::Library& lib, nccl::Comm comm) {
                return lib.AllGather(buf, buf + n, n, kNcclUint8, comm, stream);
              });
    WaitStream(c, stream, "the peer all-reduce set-up");  // abortable, unlike a copy's wait
    CUDA_CALL(cudaMemcpy(all.data(), buf + n, n * world, cudaMemcpyDeviceToHost));
  } catch (...) {
    (void)cudaFree(buf);
    throw;
  }
  CUDA_CALL(cudaFree(buf));
  return all;
}

// 1 when every rank says 1 (an NCCL min all-reduce), else 0.
int32_t AllAgree(DLArrayNcclComm* c, int32_t ok) {
  auto stream = static_cast<cudaStream_t>(nccl::StreamOf(c));
  int32_t* flag = nullptr;
  int32_t result = 0;
  CUDA_CALL(cudaMalloc(reinterpret_cast<void**>(&flag), sizeof(int32_t)));
  try {
    CUDA_CALL(cudaMemcpyAsync(flag, &ok, sizeof(ok), cudaMemcpyHostToDevice, stream));
    nccl::Run(c, "ncclAllReduce (peer all-reduce set-up)",
              [&](const nccl::Library& lib, nccl::Comm comm) {
                return lib.AllReduce(flag, flag, 1, kNcclInt32, kNcclMin, comm, stream);
              });
    WaitStream(c, stream, "the peer all-reduce set-up");
    CUDA_CALL(cudaMemcpy(&result, flag, sizeof(result), cudaMemcpyDeviceToHost));
  } catch (...) {
    (void)cudaFree(flag);
    throw;
  }
  CUDA_CALL(cudaFree(flag));
  return result;
}

// Maps every peer's buffer here; false when a peer is on another host, on a GPU this process
// does not see or cannot access, or its handle does not open.
bool MapPeers(State* s, const std::vector<Record>& all) {
  const Record& mine = all[static_cast<size_t>(s->rank)];
  for (int p = 0; p < s->world; ++p) {
    const Record& r = all[static_cast<size_t>(p)];
    if (r.enabled == 0 || std::strncmp(r.host, mine.host, sizeof(r.host)) != 0) return false;
    s->max_bytes = std::min(s->max_bytes, r.max_bytes);
    s->max_blocks = std::min(s->max_blocks, static_cast<int>(r.sms));
    if (p == s->rank) continue;
    int device = -1;
    if (!Ok(cudaDeviceGetByPCIBusId(&device, r.bus))) return false;
    // Two ranks on one GPU would take turns on it while each spins for the other.
    int can = 0;
    if (device == s->device_id || !Ok(cudaDeviceCanAccessPeer(&can, s->device_id, device)) ||
        can == 0) {
      return false;
    }
    void* mapped = nullptr;
    if (!Ok(cudaIpcOpenMemHandle(&mapped, r.handle, cudaIpcMemLazyEnablePeerAccess))) {
      return false;
    }
    s->mapped[p] = static_cast<char*>(mapped);
  }
  return true;
}

// Flags and the last call's number start at the first sequence number (the first call's number
// is one more); no call is running.
bool InitFlags(State* s, uint32_t first_seq) {
  std::vector<uint32_t> header(kHeaderBytes / sizeof(uint32_t), first_seq);
  uint32_t* control = header.data() + kFlagBytes / sizeof(uint32_t);
  control[kBlocksDone] = 0;
  return Ok(cudaMemcpy(s->own, header.data(), kHeaderBytes, cudaMemcpyHostToDevice));
}

}  // namespace

State::~State() {
  if (words != nullptr) words[kAbortWord] = 1;  // a kernel still spinning gives up
  (void)cudaSetDevice(device_id);
  for (int p = 0; p < kMaxRanks; ++p) {
    if (p != rank && mapped[p] != nullptr) (void)cudaIpcCloseMemHandle(mapped[p]);
  }
  if (own != nullptr) (void)cudaFree(own);
  if (words != nullptr) (void)cudaFreeHost(const_cast<int32_t*>(words));
  (void)cudaGetLastError();
}

void SetUp(DLArrayNcclComm* c) {
  SetDevice(c->device_id);
  auto s = std::make_unique<State>();
  s->device_id = c->device_id;
  s->rank = c->rank;
  s->world = c->world_size;
  s->max_bytes = c->peer_max_bytes;
  s->max_blocks = kMaxBlocks;
  // The group's watchdog aborts a collective waiting past the timeout (comm_abort: the kernel
  // stops at once); the kernel's own bound is a backstop a little later, so that the watchdog's
  // report comes first where it runs.
  constexpr double kBackstopSeconds = 10;
  s->timeout_ns = static_cast<uint64_t>((c->peer_timeout_seconds + kBackstopSeconds) * 1e9);
  const Record mine = Prepare(c, s.get());
  const std::vector<Record> all = Exchange(c, mine);
  bool ok = mine.enabled != 0;
  if (ok) {
    s->mapped[s->rank] = s->own;
    ok = MapPeers(s.get(), all) && InitFlags(s.get(), all[0].first_seq);
    // Every rank lays its halves out for the agreed (smallest) limit, which every rank's
    // allocation holds.
    s->capacity = s->max_bytes;
    s->slot_bytes = SlotBytes(s->max_bytes);
    s->half_bytes = static_cast<uint64_t>(s->world) * s->slot_bytes;
  }
  // Every rank's own verdict, agreed: a rank alone on the peer path would wait forever.
  if (AllAgree(c, ok ? 1 : 0) == 0) return;  // s frees what was made
  std::lock_guard<std::mutex> lock(c->mu);
  c->peer_words.store(s->words);
  c->peer = std::move(s);
}

bool TryAllReduce(DLArrayNcclComm* c, const DLArray* const* in, DLArray* const* out,
                  const size_t* sizes, int count, int32_t op, DLArray* const* params,
                  double scale) {
  State* s = c->peer.get();  // set at comm_init, before any collective; its settings under mu
  if (s == nullptr || count < 1 || count > kMaxSegments) return false;
  const DLArrayDType t = in[0]->dtype;
  if (!Supports(t, op)) return false;
  KernelArgs args;
  std::memset(&args, 0, sizeof(args));
  uint64_t bytes = 0, offset = 0, units = 0;
  for (int i = 0; i < count; ++i) {
    if (in[i]->dtype != t || out[i]->dtype != t) return false;
    const uint64_t n = sizes[i];
    bytes += n * t.bits / 8;
    void* param = params == nullptr || params[i] == nullptr
                      ? nullptr
                      : static_cast<char*>(params[i]->data) + params[i]->byte_offset;
    args.segments[i] = {static_cast<const char*>(in[i]->data) + in[i]->byte_offset,
                        static_cast<char*>(out[i]->data) + out[i]->byte_offset, param, offset, n};
    offset += (n * t.bits / 8 + kAlign - 1) / kAlign * kAlign;
    units += (n + UnitElements(t) - 1) / UnitElements(t);
  }
  if (bytes == 0) return false;
  nccl::Stream stream;
  bool recorded = false;  // the GPU records a CUDA graph: the kernel is recorded, not run
  {
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->aborted.load() || c->comm == nullptr) nccl::ThrowAborted(c, "peer all-reduce");
    if (c->in_group || !c->peer_enabled || bytes > s->max_bytes) return false;
    if (offset > s->slot_bytes) {  // slot_bytes leaves room for every array's padding
      throw BackendError("peer all-reduce: " + std::to_string(offset) +
                         " padded bytes exceed the buffer slot's " + std::to_string(s->slot_bytes));
    }
    CheckError(c);
    SetDevice(c->device_id);
    stream = nccl::CollectiveStreamLocked(c);
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    CUDA_CALL(cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capture));
    recorded = capture != cudaStreamCaptureStatusNone;
    for (int p = 0; p < s->world; ++p) {
      args.buffers[p] = s->mapped[p] + kHeaderBytes;
      args.flags[p] = reinterpret_cast<uint32_t*>(s->mapped[p]);
    }
    args.control = reinterpret_cast<uint32_t*>(s->own + kFlagBytes);
    args.words = s->device_words;
    args.timeout_ns = s->timeout_ns;
    args.slot_bytes = s->slot_bytes;
    args.half_bytes = s->half_bytes;
    args.rank = s->rank;
    args.world = s->world;
    args.scale = scale;
    args.op = op;
    args.num_segments = count;
    const uint64_t blocks =
        std::min<uint64_t>((units + kThreads - 1) / kThreads, static_cast<uint64_t>(s->max_blocks));
    Launch(args, t, static_cast<int>(std::max<uint64_t>(blocks, 1)),
           static_cast<cudaStream_t>(stream));
  }
  c->peer_calls.fetch_add(1);
  // A recorded call is timed by the kernel's own bound and ended by comm_abort's abort word; the
  // watchdog's events cannot follow a graph's replays.
  if (!recorded) nccl::NoteQueued(c, stream);
  return true;
}

void Configure(DLArrayNcclComm* c, bool enabled, uint64_t max_bytes, double timeout_seconds) {
  if (c == nullptr) throw Error(ErrorKind::kValue, "peer_configure: comm is null");
  if (!(timeout_seconds > 0)) {
    throw Error(ErrorKind::kValue, "peer_configure: timeout_seconds must be positive, got " +
                                       std::to_string(timeout_seconds));
  }
  std::lock_guard<std::mutex> lock(c->mu);
  c->peer_enabled = enabled;
  if (c->comm == nullptr && !c->finalized) {  // before comm_init: what SetUp prepares
    c->peer_max_bytes = max_bytes;
    c->peer_timeout_seconds = timeout_seconds;
  } else if (c->peer != nullptr) {
    c->peer->max_bytes = std::min(max_bytes, c->peer->capacity);
  }
}

void Stats(DLArrayNcclComm* c, uint64_t* counts, int32_t num_counts) {
  if (c == nullptr || (counts == nullptr && num_counts > 0)) {
    throw Error(ErrorKind::kValue, "peer_stats: null argument");
  }
  std::lock_guard<std::mutex> lock(c->mu);
  const State* s = c->peer.get();
  const uint64_t all[4] = {c->peer_calls.load(), c->nccl_calls.load(),
                           s != nullptr && c->peer_enabled ? 1u : 0u,
                           s != nullptr ? s->max_bytes : 0u};
  for (int32_t i = 0; i < num_counts && i < 4; ++i) counts[i] = all[i];
}

void CheckError(DLArrayNcclComm* c) {
  const State* s = c->peer.get();
  if (s == nullptr) return;
  const int32_t word = s->words[kErrorWord];
  if (word == 0) return;
  const std::string peer = "rank " + std::to_string(word % 256);
  if (word / 256 == kErrTimeout) {
    throw BackendError("peer all-reduce on " + nccl::Who(c) + ": waited more than " +
                       std::to_string(static_cast<int64_t>(s->timeout_ns / 1000000000)) +
                       " s for " + peer +
                       " (DLARRAY_DIST_TIMEOUT and a margin): it died, or skipped the "
                       "collective");
  }
  throw BackendError("peer all-reduce on " + nccl::Who(c) + ": aborted while waiting for " + peer);
}

void SignalAbort(DLArrayNcclComm* c) {
  volatile int32_t* words = c->peer_words.load();
  if (words != nullptr) words[kAbortWord] = 1;
}

}  // namespace peer
}  // namespace cuda
}  // namespace dlarray
