/*!
 * \file nccl_comm.h
 * \brief One NCCL communicator of the "dlarray.nccl.v1" extension: its state, the checked and
 *        abortable way to call NCCL on it, and the record of collectives still on the GPU.
 */
#ifndef DLARRAY_BACKENDS_CUDA_NCCL_COMM_H_
#define DLARRAY_BACKENDS_CUDA_NCCL_COMM_H_

#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "dlarray/errors.h"
#include "dlarray/ext/nccl.h"
#include "nccl_library.h"
#include "peer_allreduce.h"

namespace dlarray {
namespace cuda {
class CudaDevice;
}  // namespace cuda
}  // namespace dlarray

// One rank of a group. `mu` serialises the NCCL calls on `comm` with comm_abort (NCCL allows an
// abort from another thread, not one racing a call); long waits poll with the mutex released.
//
// Why two communicators: a non-blocking one (config.blocking = 0) makes init abortable, but
// NCCL then launches every collective from a new host thread and returns ncclInProgress, which
// the caller must poll: about 60-100 us a call. So init makes the non-blocking `parent`, then
// splits it (still non-blocking, so abortable) into a blocking `comm` used for collectives:
// they return once queued on the stream. A blocking call that waits for a peer (the first
// connection to it) runs without `mu`, counted in `in_call` and timed by `waiting_since`, so the
// watchdog sees it and comm_abort aborts the communicator under it, as PyTorch's watchdog does.
// Without ncclCommSplit (NCCL < 2.18) `comm` stays the non-blocking one.
struct DLArrayNcclComm {
  dlarray::cuda::CudaDevice* device = nullptr;
  int device_id = 0;
  int world_size = 1;
  int rank = 0;
  std::mutex mu;
  dlarray::cuda::nccl::Comm comm = nullptr;       // null before comm_init and after an abort
  dlarray::cuda::nccl::Comm parent = nullptr;     // the non-blocking comm `comm` was split from
  dlarray::cuda::nccl::Comm split_out = nullptr;  // where ncclCommSplit's thread writes the child
  bool blocking = false;                          // comm is blocking (split from parent)
  std::atomic<int> in_call{0};                    // blocking NCCL calls running without mu
  // set_stream(1): collectives go on `side`, after `fork` (recorded on the GPU's stream);
  // set_stream(0): the GPU's stream waits for `join`, recorded on `side`. Guarded by mu.
  bool on_side = false;
  cudaStream_t side = nullptr;
  cudaEvent_t fork = nullptr;
  cudaEvent_t join = nullptr;
  bool finalized = false;
  bool in_group = false;  // between group_start and group_end: an abort waits for group_end
  std::atomic<bool> aborted{false};
  // Collectives queued on the GPU and not known to be finished: events recorded after them, each
  // with when the oldest collective it covers was queued. Collectives queued within
  // kNoteInterval of the last event wait for the next one ("unnoted"). Guarded by events_mu.
  struct Queued {
    cudaEvent_t done;
    std::chrono::steady_clock::time_point since;
  };
  std::mutex events_mu;
  std::deque<Queued> queued;
  std::vector<cudaEvent_t> spare;  // finished events, recorded again later
  std::chrono::steady_clock::time_point last_note{};
  std::chrono::steady_clock::time_point unnoted_since{};
  bool unnoted = false;
  void* note_stream = nullptr;  // the stream of the last collectives noted
  // Since when a call has been waiting for NCCL to finish it in the background (e.g. the first
  // connection to a peer), in steady_clock nanoseconds; 0 when none is.
  std::atomic<int64_t> waiting_since{0};
  // The peer-memory all-reduce (peer_allreduce.h): peer_configure's settings (off unless
  // configured), then, when every rank agreed at comm_init, its buffers (null otherwise).
  bool peer_enabled = false;
  uint64_t peer_max_bytes = 0;
  double peer_timeout_seconds = 300;
  std::unique_ptr<dlarray::cuda::peer::State> peer;
  std::atomic<volatile int32_t*> peer_words{nullptr};  // peer->words, for comm_abort
  std::atomic<uint64_t> peer_calls{0};                 // all-reduce calls that took the peer path
  std::atomic<uint64_t> nccl_calls{0};  // all-reduce calls (and groups) that went to NCCL
  ~DLArrayNcclComm();
};

namespace dlarray {
namespace cuda {
namespace nccl {

/*! \brief The process's NCCL (opened by the extension's first call that needs it). */
inline const Library& Lib() { return Load({}); }

/*! \brief "rank 1 of 2 on cuda(1)". */
std::string Who(const DLArrayNcclComm* c);

/*! \brief Throws BackendError naming the call, the rank, the NCCL error and NCCL's last error. */
[[noreturn]] void ThrowNccl(const DLArrayNcclComm* c, const char* what, Result r);

/*! \brief Throws BackendError: the communicator was aborted. */
[[noreturn]] void ThrowAborted(const DLArrayNcclComm* c, const char* what);

/*! \brief Waits, polling with the mutex released, until NCCL finished the call that returned
 *         ncclInProgress; throws when it failed or the communicator was aborted meanwhile. */
void WaitReady(DLArrayNcclComm* c, const char* what);

/*! \brief steady_clock now, in nanoseconds. */
int64_t NowNs();

/*! \brief The stream of the communicator's GPU. */
Stream StreamOf(const DLArrayNcclComm* c);

/*! \brief The stream a collective goes on now: the GPU's, or (set_stream(1)) the side stream,
 *         ordered after the GPU stream's queued work; the caller holds mu. */
Stream CollectiveStreamLocked(DLArrayNcclComm* c);

/*! \brief Aborts comm and parent (NCCL frees them); the caller holds mu. */
void AbortLocked(DLArrayNcclComm* c);

/*! \brief Splits the initialised non-blocking communicator into a blocking one for the
 *         collectives (comm_init; see DLArrayNcclComm); keeps the parent without a child. */
void SplitBlocking(DLArrayNcclComm* c);

/*! \brief group_start and group_end on c (throw on failure; EndGroup also after a failure). */
void StartGroup(DLArrayNcclComm* c);
void EndGroup(DLArrayNcclComm* c);

/*! \brief Notes collectives just queued on stream (grouped ones are noted at group_end). */
void NoteQueuedUnlessGrouped(DLArrayNcclComm* c, Stream stream);
void NoteQueued(DLArrayNcclComm* c, Stream stream);

/*! \brief How long the oldest collective not finished on the GPU, or a call waiting for NCCL,
 *         has waited (0: none). */
double PendingSeconds(DLArrayNcclComm* c);

// Marks the communicator as waiting inside a call for as long as it lives (pending_seconds).
struct Waiting {
  explicit Waiting(DLArrayNcclComm* comm) : c(comm) { c->waiting_since.store(NowNs()); }
  ~Waiting() { c->waiting_since.store(0); }
  DLArrayNcclComm* c;
};

// Runs one NCCL call on the live communicator, then waits if NCCL finishes it in the background
// (non-blocking comm). A blocking comm's call runs without mu (it may wait for a peer's first
// connection), as a Waiting call the watchdog times and comm_abort may abort under it.
template <typename Call>
void Run(DLArrayNcclComm* c, const char* what, Call&& call) {
  Result r = nccl::kSuccess;
  Comm comm;
  bool unlocked = false;  // a blocking comm's call outside a group: made below, without mu
  {
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->aborted.load() || (c->comm == nullptr && c->finalized)) ThrowAborted(c, what);
    if (c->comm == nullptr) {
      throw Error(ErrorKind::kValue, std::string(what) + " on " + Who(c) +
                                         ": the communicator is not initialised (comm_init)");
    }
    SetDevice(c->device_id);
    comm = c->comm;
    if (!c->blocking || c->in_group) {  // inside a group NCCL only records the call
      r = call(Lib(), comm);
      if (r != nccl::kSuccess && r != nccl::kInProgress) ThrowNccl(c, what, r);
    } else {
      c->in_call.fetch_add(1);
      unlocked = true;
    }
  }
  if (unlocked) {
    {
      Waiting waiting(c);
      r = call(Lib(), comm);
    }
    c->in_call.fetch_sub(1);
    if (c->aborted.load()) ThrowAborted(c, what);
    if (r != nccl::kSuccess) ThrowNccl(c, what, r);
    return;
  }
  if (r == nccl::kInProgress) {
    Waiting waiting(c);
    WaitReady(c, what);
  }
}

}  // namespace nccl
}  // namespace cuda
}  // namespace dlarray

#endif  // DLARRAY_BACKENDS_CUDA_NCCL_COMM_H_
