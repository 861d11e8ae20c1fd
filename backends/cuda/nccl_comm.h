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
#include <mutex>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "dlarray/errors.h"
#include "dlarray/ext/nccl.h"
#include "nccl_library.h"

namespace dlarray {
namespace cuda {
class CudaDevice;
}  // namespace cuda
}  // namespace dlarray

// One rank of a group. `mu` serialises the NCCL calls on `comm` with comm_abort (NCCL allows an
// abort from another thread, not one racing a call); long waits poll with the mutex released.
struct DLArrayNcclComm {
  dlarray::cuda::CudaDevice* device = nullptr;
  int device_id = 0;
  int world_size = 1;
  int rank = 0;
  std::mutex mu;
  dlarray::cuda::nccl::Comm comm = nullptr;  // null before comm_init and after an abort
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
  // Since when a call has been waiting for NCCL to finish it in the background (e.g. the first
  // connection to a peer), in steady_clock nanoseconds; 0 when none is.
  std::atomic<int64_t> waiting_since{0};
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

// Runs one NCCL call on the live communicator, then waits if NCCL finishes it in the background.
template <typename Call>
void Run(DLArrayNcclComm* c, const char* what, Call&& call) {
  Result r;
  {
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->aborted.load() || (c->comm == nullptr && c->finalized)) ThrowAborted(c, what);
    if (c->comm == nullptr) {
      throw Error(ErrorKind::kValue, std::string(what) + " on " + Who(c) +
                                         ": the communicator is not initialised (comm_init)");
    }
    SetDevice(c->device_id);
    r = call(Lib(), c->comm);
    if (r != nccl::kSuccess && r != nccl::kInProgress) ThrowNccl(c, what, r);
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
