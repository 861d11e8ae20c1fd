#include "nccl_comm.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "cuda_device.h"
#include "dlarray/sdk_util.h"

DLArrayNcclComm::~DLArrayNcclComm() {
  for (const Queued& q : queued) (void)cudaEventDestroy(q.done);
  for (cudaEvent_t e : spare) (void)cudaEventDestroy(e);
  if (fork != nullptr) (void)cudaEventDestroy(fork);
  if (join != nullptr) (void)cudaEventDestroy(join);
  if (side != nullptr) (void)cudaStreamDestroy(side);
}

namespace dlarray {
namespace cuda {
namespace nccl {
namespace {

// Forgets the finished front of the queue; the caller holds events_mu.
void DropFinishedLocked(DLArrayNcclComm* c) {
  while (!c->queued.empty()) {
    const cudaError_t err = cudaEventQuery(c->queued.front().done);
    if (err == cudaErrorNotReady) return;
    (void)cudaGetLastError();  // an error here resurfaces at the device's next synchronize
    c->spare.push_back(c->queued.front().done);
    c->queued.pop_front();
  }
}

// An event after everything queued so far on the stream, covering the unnoted collectives;
// the caller holds events_mu. Not while the GPU records a CUDA graph: the watchdog's event would
// join the recording (see CudaDevice::RecordUnlessCapturing); the collectives then stay unnoted
// until the next call or poll.
void RecordLocked(DLArrayNcclComm* c, Stream stream) {
  SetDevice(c->device_id);
  cudaEvent_t e = nullptr;
  if (!c->spare.empty()) {
    e = c->spare.back();
    c->spare.pop_back();
  } else {
    CUDA_CALL(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  bool recorded = false;
  try {
    recorded = c->device->RecordUnlessCapturing(c->device_id, e, static_cast<cudaStream_t>(stream));
  } catch (...) {
    c->spare.push_back(e);
    throw;
  }
  if (!recorded) {
    c->spare.push_back(e);
    return;
  }
  c->queued.push_back({e, c->unnoted_since});
  c->unnoted = false;
  c->last_note = std::chrono::steady_clock::now();
}

}  // namespace

std::string Who(const DLArrayNcclComm* c) {
  return "rank " + std::to_string(c->rank) + " of " + std::to_string(c->world_size) + " on " +
         FormatDevice({kDLArrayCUDA, c->device_id});
}

[[noreturn]] void ThrowNccl(const DLArrayNcclComm* c, const char* what, Result r) {
  std::string msg =
      std::string("NCCL ") + what + " failed on " + Who(c) + ": " + ErrorText(Lib(), r);
  const char* last = Lib().GetLastError(c->comm);
  if (last != nullptr && last[0] != '\0') msg += "; NCCL's last error: " + std::string(last);
  throw BackendError(msg);
}

[[noreturn]] void ThrowAborted(const DLArrayNcclComm* c, const char* what) {
  throw BackendError(std::string("NCCL ") + what + " on " + Who(c) +
                     ": the communicator was aborted (a peer failed, or comm_abort was called)");
}

// Waits, polling with the mutex released, until NCCL finished the call that returned
// ncclInProgress, or comm_abort. A non-blocking communicator returns ncclInProgress from
// collectives too, which are queued within microseconds: the first 200 us spin (yielding the
// core) rather than sleep, since a sleep costs a scheduler tick on every small collective; a
// longer wait (init, a slow peer) sleeps, 50 us and then 1 ms at a time, not to hold a core.
void WaitReady(DLArrayNcclComm* c, const char* what) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(c->mu);
      if (c->aborted.load() || c->comm == nullptr) ThrowAborted(c, what);
      Result state = kInProgress;
      const Result r = Lib().CommGetAsyncError(c->comm, &state);
      if (r != kSuccess) ThrowNccl(c, "ncclCommGetAsyncError", r);
      if (state == kSuccess) return;
      if (state != kInProgress) ThrowNccl(c, what, state);
    }
    const Clock::duration waited = Clock::now() - start;
    if (waited < std::chrono::microseconds(200)) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(
          std::chrono::microseconds(waited < std::chrono::milliseconds(100) ? 50 : 1000));
    }
  }
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Stream StreamOf(const DLArrayNcclComm* c) { return c->device->cuda_stream(c->device_id); }

Stream CollectiveStreamLocked(DLArrayNcclComm* c) {
  auto main = static_cast<cudaStream_t>(StreamOf(c));
  if (!c->on_side) return main;
  SetDevice(c->device_id);
  CUDA_CALL(cudaEventRecord(c->fork, main));
  CUDA_CALL(cudaStreamWaitEvent(c->side, c->fork, 0));
  return c->side;
}

void AbortLocked(DLArrayNcclComm* c) {
  SetDevice(c->device_id);
  if (c->comm != nullptr) (void)Lib().CommAbort(c->comm);  // blocking: NCCL's work stops
  if (c->parent != nullptr) (void)Lib().CommAbort(c->parent);
  c->comm = nullptr;
  c->parent = nullptr;
}

// A group's collectives are noted once, at group_end.
void NoteQueuedUnlessGrouped(DLArrayNcclComm* c, Stream stream) {
  bool grouped;
  {
    std::lock_guard<std::mutex> lock(c->mu);
    grouped = c->in_group;
  }
  if (!grouped) NoteQueued(c, stream);
}

// Records that collectives were just queued on the communicator's stream. An event per call
// would cost a few microseconds each: one every kNoteInterval is enough for a timeout in seconds.
void NoteQueued(DLArrayNcclComm* c, Stream stream) {
  constexpr auto kNoteInterval = std::chrono::milliseconds(20);
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(c->events_mu);
  c->note_stream = stream;
  if (!c->unnoted) {
    c->unnoted = true;
    c->unnoted_since = now;
  }
  if (!c->queued.empty() && now - c->last_note < kNoteInterval) return;
  DropFinishedLocked(c);
  RecordLocked(c, stream);
}

double PendingSeconds(DLArrayNcclComm* c) {
  double seconds = 0;
  std::lock_guard<std::mutex> lock(c->events_mu);
  DropFinishedLocked(c);
  // Collectives queued after the last event: an event now covers them (a later point of the
  // same stream), timed from when the oldest of them was queued.
  if (c->queued.empty() && c->unnoted && !c->aborted.load()) {
    RecordLocked(c, c->note_stream != nullptr ? c->note_stream : StreamOf(c));
  }
  seconds = c->queued.empty() ? 0.0
                              : std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                              c->queued.front().since)
                                    .count();
  const int64_t since = c->waiting_since.load();
  if (since != 0) seconds = std::max(seconds, static_cast<double>(NowNs() - since) * 1e-9);
  return seconds;
}

// Splits the initialised non-blocking communicator into a blocking one for the collectives
// (nccl_comm.h says why). The split is a collective of the non-blocking parent: it runs in
// NCCL's background thread and stays abortable (aborting the parent aborts the child's init).
// NCCL publishes the child's handle from that thread only once the child is initialised, which
// may be after the parent reports the group done (a 1-rank split returned with it still null on
// an H200, NCCL 2.28): the handle is awaited, then the child's own state. Without a handle after
// kSplitGrace the collectives stay on the non-blocking parent (correct, only slower per call).
void SplitBlocking(DLArrayNcclComm* c) {
  using Clock = std::chrono::steady_clock;
  constexpr auto kSplitGrace = std::chrono::seconds(10);
  Result r;
  {
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->aborted.load() || c->comm == nullptr) ThrowAborted(c, "ncclCommSplit");
    Config config;
    config.blocking = 1;
    SetDevice(c->device_id);
    c->split_out = nullptr;
    r = Lib().CommSplit(c->comm, 0, c->rank, &c->split_out, &config);
    if (r != kSuccess && r != kInProgress) ThrowNccl(c, "ncclCommSplit", r);
  }
  if (r == kInProgress) WaitReady(c, "ncclCommSplit");
  const Clock::time_point start = Clock::now();
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(c->mu);
      if (c->aborted.load() || c->comm == nullptr) ThrowAborted(c, "ncclCommSplit");
      Comm child = __atomic_load_n(&c->split_out, __ATOMIC_ACQUIRE);
      if (child != nullptr) {
        Result state = kInProgress;
        const Result q = Lib().CommGetAsyncError(child, &state);
        if (q != kSuccess) ThrowNccl(c, "ncclCommGetAsyncError", q);
        if (state != kSuccess && state != kInProgress) {
          ThrowNccl(c, "ncclCommSplit", state);
        }
        if (state == kSuccess) {
          c->parent = c->comm;
          c->comm = child;
          c->blocking = true;
          return;
        }
      } else if (Clock::now() - start > kSplitGrace) {
        return;  // no child: the non-blocking parent serves the collectives
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

// Opens a group on c (this thread): NCCL records its collectives until EndGroup.
void StartGroup(DLArrayNcclComm* c) {
  if (c == nullptr) throw Error(ErrorKind::kValue, "group_start: comm is null");
  std::lock_guard<std::mutex> lock(c->mu);
  if (c->aborted.load() || c->comm == nullptr) ThrowAborted(c, "ncclGroupStart");
  if (c->in_group) throw Error(ErrorKind::kValue, "group_start: a group is already open");
  const Result r = Lib().GroupStart();
  if (r != nccl::kSuccess) ThrowNccl(c, "ncclGroupStart", r);
  c->in_group = true;
}

// Closes the group and launches its collectives (a comm_abort meanwhile waits for it).
void EndGroup(DLArrayNcclComm* c) {
  if (c == nullptr) throw Error(ErrorKind::kValue, "group_end: comm is null");
  Result r = nccl::kSuccess;
  nccl::Stream stream;
  bool unlocked = false;  // a blocking comm launches (and may wait for peers) without mu
  {
    std::lock_guard<std::mutex> lock(c->mu);
    if (!c->in_group) throw Error(ErrorKind::kValue, "group_end: no group is open");
    SetDevice(c->device_id);
    stream = c->on_side ? c->side : StreamOf(c);
    if (c->blocking && !c->aborted.load()) {
      c->in_group = false;
      c->in_call.fetch_add(1);
      unlocked = true;
    } else {
      r = Lib().GroupEnd();
      c->in_group = false;
      if (c->aborted.load()) {
        AbortLocked(c);  // the abort that waited
        ThrowAborted(c, "ncclGroupEnd");
      }
      if (r != nccl::kSuccess && r != nccl::kInProgress) ThrowNccl(c, "ncclGroupEnd", r);
    }
  }
  if (unlocked) {
    {
      Waiting waiting(c);
      r = Lib().GroupEnd();
    }
    c->in_call.fetch_sub(1);
    if (c->aborted.load()) ThrowAborted(c, "ncclGroupEnd");
    if (r != nccl::kSuccess) ThrowNccl(c, "ncclGroupEnd", r);
  } else if (r == nccl::kInProgress) {
    Waiting waiting(c);
    WaitReady(c, "ncclGroupEnd");
  }
  NoteQueued(c, stream);
}

}  // namespace nccl
}  // namespace cuda
}  // namespace dlarray
