// "dlarray.nccl.v1": the table (dlarray/ext/nccl.h): argument checks (nccl_checks.h), then NCCL
// calls on the communicator (nccl_comm.h) and the GPU's stream; failures go to the core's
// set_error.
#include "nccl_ext.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "cuda_device.h"
#include "dlarray/errors.h"
#include "dlarray/ext/collective_util.h"
#include "dlarray/kernel.h"
#include "dlarray/sdk_util.h"
#include "nccl_checks.h"
#include "nccl_comm.h"
#include "nccl_library.h"
#include "peer_allreduce.h"

namespace dlarray {
namespace cuda {
namespace {

using nccl::AbortLocked;
using nccl::CheckAllReduce;
using nccl::CheckArray;
using nccl::CheckReduceOp;
using nccl::CheckSameDType;
using nccl::Data;
using nccl::EndGroup;
using nccl::Lib;
using nccl::Library;
using nccl::NcclType;
using nccl::NoteQueuedUnlessGrouped;
using nccl::RequireSize;
using nccl::Result;
using nccl::Run;
using nccl::SplitBlocking;
using nccl::StartGroup;
using nccl::StreamOf;
using nccl::ThrowAborted;
using nccl::ThrowNccl;
using nccl::WaitReady;
using nccl::Who;

struct State {
  CudaDevice* device = nullptr;
  const DLArrayCoreApi* core = nullptr;
};

State& Global() {
  static State state;
  return state;
}

template <typename F>
int Guard(F&& f) noexcept {
  return GuardCall(Global().core, "dlarray.nccl", static_cast<F&&>(f));
}

// The stream an NCCL collective goes on now (set_stream). NCCL is never recorded into a CUDA
// graph: a recorded NCCL collective hung on 2 H200s, and the watchdog cannot time a replay. The
// peer-memory all-reduce (a plain kernel) is what a recording may hold.
nccl::Stream CollectiveStream(DLArrayNcclComm* c, const char* what) {
  if (c->device->capturing(c->device_id)) {
    throw Error(ErrorKind::kValue,
                std::string(what) + " on " + Who(c) +
                    ": NCCL collectives cannot be recorded in a CUDA graph (a recording may "
                    "hold all-reduces of floating arrays that the peer-memory path takes: every "
                    "rank on this host, at most DLARRAY_PEER_ALLREDUCE_MAX_BYTES a call)");
  }
  std::lock_guard<std::mutex> lock(c->mu);
  return nccl::CollectiveStreamLocked(c);
}

// --- The table's functions -----------------------------------------------------------------

int Load(const char* const* candidates, int32_t num_candidates) {
  return Guard([&] {
    std::vector<std::string> places;
    for (int32_t i = 0; candidates != nullptr && i < num_candidates; ++i) {
      if (candidates[i] != nullptr) places.emplace_back(candidates[i]);
    }
    (void)nccl::Load(places);
  });
}

int LibraryInfo(const char** path, int32_t* version) {
  return Guard([&] {
    const Library& lib = Lib();
    if (path != nullptr) *path = lib.path.c_str();
    if (version != nullptr) *version = lib.version;
  });
}

int GetUniqueId(uint8_t* id) {
  return Guard([&] {
    if (id == nullptr) throw Error(ErrorKind::kValue, "get_unique_id: id is null");
    nccl::UniqueId uid;
    const Result r = Lib().GetUniqueId(&uid);
    if (r != nccl::kSuccess) {
      throw BackendError("NCCL ncclGetUniqueId failed: " + nccl::ErrorText(Lib(), r));
    }
    std::memcpy(id, uid.internal, sizeof(uid.internal));
  });
}

int CommCreate(int32_t device_id, int32_t world_size, int32_t rank, DLArrayNcclComm** out) {
  return Guard([&] {
    if (out == nullptr) throw Error(ErrorKind::kValue, "comm_create: out is null");
    *out = nullptr;
    CudaDevice* device = Global().device;
    const int count = device->device_count();
    if (device_id < 0 || device_id >= count) {
      throw DeviceError("comm_create: there is no " + FormatDevice({kDLArrayCUDA, device_id}) +
                        ": this machine has " + std::to_string(count) + " GPU(s)");
    }
    if (world_size < 1 || rank < 0 || rank >= world_size) {
      throw Error(ErrorKind::kValue, "comm_create: rank " + std::to_string(rank) +
                                         " is not in [0, world_size " + std::to_string(world_size) +
                                         ")");
    }
    (void)Lib();  // NCCL must be there before anyone waits for this rank
    auto c = std::make_unique<DLArrayNcclComm>();
    c->device = device;
    c->device_id = device_id;
    c->world_size = world_size;
    c->rank = rank;
    *out = c.release();
  });
}

int CommInit(DLArrayNcclComm* c, const uint8_t* id) {
  return Guard([&] {
    if (c == nullptr || id == nullptr) throw Error(ErrorKind::kValue, "comm_init: null argument");
    (void)StreamOf(c);  // the device's stream and context exist before NCCL binds to the GPU
    Result r;
    {
      std::lock_guard<std::mutex> lock(c->mu);
      if (c->aborted.load()) ThrowAborted(c, "ncclCommInitRankConfig");
      if (c->comm != nullptr || c->finalized) {
        throw Error(ErrorKind::kValue, "comm_init: " + Who(c) + " is already initialised");
      }
      nccl::UniqueId uid;
      std::memcpy(uid.internal, id, sizeof(uid.internal));
      nccl::Config config;
      config.blocking = 0;  // never block inside NCCL: the wait below can be aborted
      SetDevice(c->device_id);
      nccl::Comm comm = nullptr;
      r = Lib().CommInitRankConfig(&comm, c->world_size, uid, c->rank, &config);
      c->comm = comm;
      if (r != nccl::kSuccess && r != nccl::kInProgress) {
        if (comm != nullptr) {
          (void)Lib().CommAbort(comm);
          c->comm = nullptr;
        }
        ThrowNccl(c, "ncclCommInitRankConfig", r);
      }
    }
    try {
      if (r == nccl::kInProgress) WaitReady(c, "ncclCommInitRankConfig");
      if (Lib().CommSplit != nullptr) SplitBlocking(c);
      if (c->world_size > 1) peer::SetUp(c);  // a collective: every rank agrees
    } catch (...) {
      std::lock_guard<std::mutex> lock(c->mu);
      AbortLocked(c);
      throw;
    }
  });
}

int CommAbort(DLArrayNcclComm* c) {
  return Guard([&] {
    if (c == nullptr) throw Error(ErrorKind::kValue, "comm_abort: comm is null");
    c->aborted.store(true);
    peer::SignalAbort(c);  // a peer all-reduce kernel waiting for a peer gives up (no mutex)
    std::lock_guard<std::mutex> lock(c->mu);
    // Collectives queued in an open group still refer to the communicator: group_end (which
    // follows at once: nothing blocks inside a group) submits them, then aborts. A blocking
    // call running without mu (in_call) is aborted under it: that is what ends its wait.
    if (c->comm != nullptr && !c->in_group) AbortLocked(c);
  });
}

int PendingSeconds(DLArrayNcclComm* c, double* seconds) {
  return Guard([&] {
    if (c == nullptr || seconds == nullptr) {
      throw Error(ErrorKind::kValue, "pending_seconds: null argument");
    }
    *seconds = nccl::PendingSeconds(c);
  });
}

int CommFinalize(DLArrayNcclComm* c) {
  return Guard([&] {
    if (c == nullptr) throw Error(ErrorKind::kValue, "comm_finalize: comm is null");
    Run(c, "ncclCommFinalize",
        [](const Library& lib, nccl::Comm comm) { return lib.CommFinalize(comm); });
    std::lock_guard<std::mutex> lock(c->mu);
    c->finalized = true;
  });
}

int CommDestroy(DLArrayNcclComm* c) {
  return Guard([&] {
    if (c == nullptr) return;
    std::unique_ptr<DLArrayNcclComm> owner(c);
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->comm == nullptr) return;
    SetDevice(c->device_id);
    if (!c->finalized || c->aborted.load()) {
      AbortLocked(c);
      return;
    }
    nccl::Comm comm = c->comm;
    nccl::Comm parent = c->parent;
    c->comm = nullptr;
    c->parent = nullptr;
    const Result r = Lib().CommDestroy(comm);
    // The parent ran no collective (only the split): freeing it needs no peer. After the child,
    // which may share its resources (NCCL_COMM_SPLIT_SHARE_RESOURCES).
    if (parent != nullptr) (void)Lib().CommAbort(parent);
    if (r != nccl::kSuccess) {
      throw BackendError("NCCL ncclCommDestroy failed on " + Who(c) + ": " +
                         nccl::ErrorText(Lib(), r));
    }
  });
}

// ncclAllReduce of n elements (checked by CheckAllReduce).
void NcclAllReduce(DLArrayNcclComm* c, const DLArray* send, DLArray* recv, size_t n, int32_t op) {
  const int type = NcclType(send->dtype, "all_reduce");
  nccl::Stream stream = CollectiveStream(c, "ncclAllReduce");
  Run(c, "ncclAllReduce", [&](const Library& lib, nccl::Comm comm) {
    return lib.AllReduce(Data(send), Data(recv), n, type, op, comm, stream);
  });
  NoteQueuedUnlessGrouped(c, stream);
}

int AllReduce(DLArrayNcclComm* c, const DLArray* send, DLArray* recv, int32_t op) {
  return Guard([&] {
    if (c == nullptr) throw Error(ErrorKind::kValue, "all_reduce: comm is null");
    const size_t n = CheckAllReduce(c, send, recv, op);
    if (peer::TryAllReduce(c, &send, &recv, &n, 1, op)) return;
    c->nccl_calls.fetch_add(1);
    NcclAllReduce(c, send, recv, n, op);
  });
}

int Broadcast(DLArrayNcclComm* c, const DLArray* send, DLArray* recv, int32_t root) {
  return Guard([&] {
    if (c == nullptr) throw Error(ErrorKind::kValue, "broadcast: comm is null");
    if (root < 0 || root >= c->world_size) {
      throw Error(ErrorKind::kValue, "broadcast: root " + std::to_string(root) +
                                         " is not a rank of " + std::to_string(c->world_size));
    }
    const size_t n = CheckArray(c, recv, "broadcast", "output");
    RequireSize(CheckArray(c, send, "broadcast", "input"), n, "broadcast", "input",
                "an output of that size");
    CheckSameDType(send, recv, "broadcast");
    const int type = NcclType(recv->dtype, "broadcast");
    nccl::Stream stream = CollectiveStream(c, "ncclBroadcast");
    Run(c, "ncclBroadcast", [&](const Library& lib, nccl::Comm comm) {
      return lib.Broadcast(Data(send), Data(recv), n, type, root, comm, stream);
    });
    NoteQueuedUnlessGrouped(c, stream);
  });
}

int AllGather(DLArrayNcclComm* c, const DLArray* send, DLArray* recv) {
  return Guard([&] {
    if (c == nullptr) throw Error(ErrorKind::kValue, "all_gather: comm is null");
    const size_t n = CheckArray(c, send, "all_gather", "input");
    RequireSize(CheckArray(c, recv, "all_gather", "output"), n * c->world_size, "all_gather",
                "output", "world_size x the input's size");
    CheckSameDType(send, recv, "all_gather");
    const int type = NcclType(send->dtype, "all_gather");
    nccl::Stream stream = CollectiveStream(c, "ncclAllGather");
    Run(c, "ncclAllGather", [&](const Library& lib, nccl::Comm comm) {
      return lib.AllGather(Data(send), Data(recv), n, type, comm, stream);
    });
    NoteQueuedUnlessGrouped(c, stream);
  });
}

int ReduceScatter(DLArrayNcclComm* c, const DLArray* send, DLArray* recv, int32_t op) {
  return Guard([&] {
    if (c == nullptr) throw Error(ErrorKind::kValue, "reduce_scatter: comm is null");
    const size_t n = CheckArray(c, recv, "reduce_scatter", "output");
    RequireSize(CheckArray(c, send, "reduce_scatter", "input"), n * c->world_size, "reduce_scatter",
                "input", "world_size x the output's size");
    CheckSameDType(send, recv, "reduce_scatter");
    CheckReduceOp(op, "reduce_scatter");
    const int type = NcclType(send->dtype, "reduce_scatter");
    nccl::Stream stream = CollectiveStream(c, "ncclReduceScatter");
    Run(c, "ncclReduceScatter", [&](const Library& lib, nccl::Comm comm) {
      return lib.ReduceScatter(Data(send), Data(recv), n, type, op, comm, stream);
    });
    NoteQueuedUnlessGrouped(c, stream);
  });
}

int GroupStart(DLArrayNcclComm* c) {
  return Guard([&] { StartGroup(c); });
}

int GroupEnd(DLArrayNcclComm* c) {
  return Guard([&] { EndGroup(c); });
}

// Several in-place all-reduces: one peer-memory kernel when eligible, else one NCCL group.
int AllReduceGroup(DLArrayNcclComm* c, DLArray* const* arrays, int32_t count, int32_t op) {
  return Guard([&] {
    if (c == nullptr) throw Error(ErrorKind::kValue, "all_reduce_group: comm is null");
    if (count < 0 || (count > 0 && arrays == nullptr)) {
      throw Error(ErrorKind::kValue,
                  "all_reduce_group: no arrays (count " + std::to_string(count) + ")");
    }
    std::vector<size_t> sizes;
    for (int32_t i = 0; i < count; ++i)
      sizes.push_back(CheckAllReduce(c, arrays[i], arrays[i], op));
    if (count == 0) return;
    if (peer::TryAllReduce(c, arrays, arrays, sizes.data(), count, op)) return;
    c->nccl_calls.fetch_add(1);
    StartGroup(c);
    try {
      for (int32_t i = 0; i < count; ++i) NcclAllReduce(c, arrays[i], arrays[i], sizes[i], op);
    } catch (...) {
      try {
        EndGroup(c);  // the group must be closed; the first error is the one raised
      } catch (...) {
      }
      throw;
    }
    EndGroup(c);
  });
}

// A data-parallel bucket's mean and its SGD step in one peer-memory kernel (all_reduce_sgd).
int AllReduceSgd(DLArrayNcclComm* c, DLArray* const* arrays, DLArray* const* params, int32_t count,
                 double scale) {
  return Guard([&] {
    constexpr const char* kWhat = "all_reduce_sgd";
    if (c == nullptr) throw Error(ErrorKind::kValue, "all_reduce_sgd: comm is null");
    if (count <= 0 || arrays == nullptr || params == nullptr) {
      throw Error(ErrorKind::kValue,
                  "all_reduce_sgd: no arrays (count " + std::to_string(count) + ")");
    }
    std::vector<size_t> sizes;
    for (int32_t i = 0; i < count; ++i) {
      sizes.push_back(CheckAllReduce(c, arrays[i], arrays[i], kDLArrayNcclAvg));
      const DLArrayDType t = arrays[i]->dtype;
      if (t.code != kDLArrayFloat || (t.bits != 32 && t.bits != 64) || t.lanes != 1) {
        throw DTypeError("all_reduce_sgd: the arrays must be float32 or float64, got " +
                         FormatDType(t));
      }
      if (params[i] == nullptr) continue;
      RequireSize(CheckArray(c, params[i], kWhat, "parameter"), sizes.back(), kWhat, "parameter",
                  "its gradient");
      CheckSameDType(arrays[i], params[i], kWhat);
    }
    if (!peer::TryAllReduce(c, arrays, arrays, sizes.data(), count, kDLArrayNcclAvg, params,
                            scale)) {
      throw Error(ErrorKind::kValue,
                  "all_reduce_sgd on " + Who(c) +
                      ": the peer-memory path does not take this call (every rank on this host "
                      "with peer access, one dtype, at most DLARRAY_PEER_ALLREDUCE_MAX_BYTES and "
                      "64 arrays); it has no NCCL form");
    }
  });
}

int PeerConfigure(DLArrayNcclComm* c, int32_t enabled, uint64_t max_bytes, double timeout_seconds) {
  return Guard([&] { peer::Configure(c, enabled != 0, max_bytes, timeout_seconds); });
}

int PeerStats(DLArrayNcclComm* c, uint64_t* counts, int32_t num_counts) {
  return Guard([&] { peer::Stats(c, counts, num_counts); });
}

int SetStream(DLArrayNcclComm* c, int32_t side) {
  return Guard([&] {
    if (c == nullptr) throw Error(ErrorKind::kValue, "set_stream: comm is null");
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->in_group) throw Error(ErrorKind::kValue, "set_stream: a group is open");
    SetDevice(c->device_id);
    if (side != 0) {
      if (c->side == nullptr) {
        CUDA_CALL(cudaStreamCreateWithFlags(&c->side, cudaStreamNonBlocking));
        CUDA_CALL(cudaEventCreateWithFlags(&c->fork, cudaEventDisableTiming));
        CUDA_CALL(cudaEventCreateWithFlags(&c->join, cudaEventDisableTiming));
      }
      c->on_side = true;
      return;
    }
    if (!c->on_side) return;
    c->on_side = false;
    CUDA_CALL(cudaEventRecord(c->join, c->side));
    CUDA_CALL(cudaStreamWaitEvent(static_cast<cudaStream_t>(StreamOf(c)), c->join, 0));
  });
}

int AsyncError(DLArrayNcclComm* c) {
  return Guard([&] {
    if (c == nullptr) throw Error(ErrorKind::kValue, "async_error: comm is null");
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->aborted.load()) ThrowAborted(c, "async_error");
    peer::CheckError(c);
    if (c->comm == nullptr) return;  // not initialised yet, or destroyed cleanly
    Result state = nccl::kSuccess;
    const Result r = Lib().CommGetAsyncError(c->comm, &state);
    if (r != nccl::kSuccess) ThrowNccl(c, "ncclCommGetAsyncError", r);
    if (state != nccl::kSuccess && state != nccl::kInProgress) {
      ThrowNccl(c, "asynchronous operation", state);
    }
  });
}

const DLArrayNcclExtV1 kApi = {
    sizeof(DLArrayNcclExtV1),
    &Load,
    &LibraryInfo,
    &GetUniqueId,
    &CommCreate,
    &CommInit,
    &CommAbort,
    &CommFinalize,
    &CommDestroy,
    &AllReduce,
    &Broadcast,
    &AllGather,
    &ReduceScatter,
    &GroupStart,
    &GroupEnd,
    &AsyncError,
    &PendingSeconds,
    &SetStream,
    &PeerConfigure,
    &AllReduceGroup,
    &PeerStats,
    &AllReduceSgd,
};

}  // namespace

const DLArrayNcclExtV1* NcclExtension(CudaDevice* device, const DLArrayCoreApi* core) {
  static std::once_flag once;
  std::call_once(once, [&] {
    Global().device = device;
    Global().core = core;
  });
  return &kApi;
}

}  // namespace cuda
}  // namespace dlarray
