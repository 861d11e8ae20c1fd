// "dlarray.mpi.v1" (dlarray/ext/mpi.h): argument checks, then MPI calls on host memory. MPI's
// own datatypes and reductions serve every dtype they cover; float16 and bfloat16 travel as
// 16-bit words reduced by user-defined operations, and avg is a sum divided afterwards.
#include "mpi_ext.h"

#include <atomic>
#include <climits>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "dlarray/errors.h"
#include "dlarray/ext/collective_util.h"
#include "dlarray/plugin.h"
#include "dtype.h"
#include "mpi_library.h"

struct DLArrayMpiComm {
  dlarray::cpu::mpi::Handle comm = nullptr;
  int32_t world_size = 0;
  int32_t rank = 0;
  std::atomic<bool> aborted{false};
  std::atomic<int64_t> busy_since_ns{0};  // when the call now inside MPI began; 0: none
  // Non-blocking all-reduces started and not yet waited for, by request number: avg divides
  // at the wait, so the output (its data and dtype only) and its size are kept.
  struct Started {
    dlarray::cpu::mpi::Handle request;
    DLArray recv;
    size_t count;
    int32_t op;
  };
  std::unordered_map<int64_t, Started> started;
  int64_t next_request = 1;
};

namespace dlarray::cpu {
namespace {

using mpi::Handle;
using mpi::Lib;
using mpi::Library;

// The coarse monotonic clock (the last tick's time, a few ns to read): it times waits against
// timeouts of seconds, twice per collective, and the precise clock cost 6% of a 1 KB all-reduce.
int64_t NowNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

std::string Who(const DLArrayMpiComm* c) {
  return "rank " + std::to_string(c->rank) + " of " + std::to_string(c->world_size);
}

void Check(const Library& lib, const char* call, int code) {
  if (code != mpi::kSuccess) throw BackendError(mpi::ErrorText(lib, call, code));
}

// Runs one MPI call on a live communicator, timed for pending_seconds.
template <typename F>
void Run(DLArrayMpiComm* c, const char* call, F&& f) {
  if (c == nullptr) throw Error(ErrorKind::kValue, std::string(call) + ": comm is null");
  if (c->aborted.load()) {
    throw BackendError(std::string(call) + ": the communicator of " + Who(c) + " was aborted");
  }
  c->busy_since_ns.store(NowNs());
  int code;
  try {
    code = f(Lib(), c->comm);
  } catch (...) {
    c->busy_since_ns.store(0);
    throw;
  }
  c->busy_since_ns.store(0);
  if (code != mpi::kSuccess) {
    throw BackendError(mpi::ErrorText(Lib(), call, code) + " on " + Who(c));
  }
}

// --- Arrays and dtypes ----------------------------------------------------------------------

size_t CheckArray(const DLArray* a, const char* op, const char* which) {
  if (a == nullptr) throw Error(ErrorKind::kValue, std::string(op) + ": the " + which + " is null");
  if (a->ctx.device_type != kDLArrayCPU) {
    throw DeviceError(std::string(op) + ": the " + which + " is on " + FormatDevice(a->ctx) +
                      "; MPI collectives take host (cpu) arrays");
  }
  return CheckedCompactSize(a, op, which);
}

void* Data(const DLArray* a) { return static_cast<char*>(a->data) + a->byte_offset; }
size_t ElementBytes(const DLArray* a) { return (a->dtype.bits + 7) / 8 * a->dtype.lanes; }

void CheckSameDType(const DLArray* send, const DLArray* recv, const char* op) {
  if (send->dtype != recv->dtype) {
    throw DTypeError(std::string(op) + ": input is " + FormatDType(send->dtype) +
                     " but output is " + FormatDType(recv->dtype));
  }
}

void RequireSize(size_t got, size_t want, const char* op, const char* which, const char* rule) {
  if (got != want) {
    throw ShapeError(std::string(op) + ": the " + which + " has " + std::to_string(got) +
                     " elements but " + rule + " needs " + std::to_string(want));
  }
}

int CheckCount(size_t n, const char* op) {
  if (n > static_cast<size_t>(INT_MAX)) {
    throw ShapeError(std::string(op) + ": " + std::to_string(n) +
                     " elements per rank is more than MPI's int count allows (2^31 - 1)");
  }
  return static_cast<int>(n);
}

// A reduction of two 16-bit floats as NumPy does it: in float, rounded once to the storage type.
template <typename T, int kOp>
void HalfOp(void* in, void* inout, int* len, Handle* /*type*/) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < *len; ++i) {
    const float x = Load(a[i]), y = Load(b[i]);
    float r;
    if constexpr (kOp == kDLArrayMpiSum) {
      r = x + y;
    } else if constexpr (kOp == kDLArrayMpiProd) {
      r = x * y;
    } else if constexpr (kOp == kDLArrayMpiMax) {
      r = (x > y || x != x) ? x : y;  // NaN wins, as np.maximum
    } else {
      r = (x < y || x != x) ? x : y;
    }
    b[i] = Store<T>(r);
  }
}

// The user-defined operations for the 16-bit floats: [bfloat16?][op], made once.
Handle HalfOpHandle(bool bfloat, int32_t op) {
  static std::once_flag once;
  static Handle ops[2][4];
  std::call_once(once, [] {
    const mpi::UserFunction fns[2][4] = {
        {&HalfOp<Half, 0>, &HalfOp<Half, 1>, &HalfOp<Half, 2>, &HalfOp<Half, 3>},
        {&HalfOp<BFloat16, 0>, &HalfOp<BFloat16, 1>, &HalfOp<BFloat16, 2>, &HalfOp<BFloat16, 3>}};
    for (int b = 0; b < 2; ++b) {
      for (int o = 0; o < 4; ++o)
        Check(Lib(), "MPI_Op_create", Lib().OpCreate(fns[b][o], 1, &ops[b][o]));
    }
  });
  return ops[bfloat ? 1 : 0][op];
}

// MPI's datatype for a dtype (float16 and bfloat16 as uint16 words).
Handle TypeOf(DLArrayDType t, const char* op) {
  const Library& lib = Lib();
  if (t.lanes == 1) {
    switch (t.code) {
      case kDLArrayFloat:
        if (t.bits == 32) return lib.t_float;
        if (t.bits == 64) return lib.t_double;
        if (t.bits == 16) return lib.t_uint16;
        break;
      case kDLArrayBfloat:
        if (t.bits == 16) return lib.t_uint16;
        break;
      case kDLArrayInt:
        if (t.bits == 8) return lib.t_int8;
        if (t.bits == 16) return lib.t_int16;
        if (t.bits == 32) return lib.t_int32;
        if (t.bits == 64) return lib.t_int64;
        break;
      case kDLArrayUInt:
        if (t.bits == 8) return lib.t_uint8;
        if (t.bits == 16) return lib.t_uint16;
        if (t.bits == 32) return lib.t_uint32;
        if (t.bits == 64) return lib.t_uint64;
        break;
      case kDLArrayBool:
        if (t.bits == 8) return lib.t_bool;
        break;
      case kDLArrayComplex:
        if (t.bits == 64) return lib.t_cfloat;
        if (t.bits == 128) return lib.t_cdouble;
        break;
      default:
        break;
    }
  }
  throw DTypeError(std::string(op) + ": MPI collectives have no " + FormatDType(t));
}

const char* OpName(int32_t op) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "avg"};
  return kNames[op];
}

// MPI's reduction for op on dtype t (avg reduces with sum, then divides).
Handle ReduceOf(DLArrayDType t, int32_t op, const char* what) {
  if (op < kDLArrayMpiSum || op > kDLArrayMpiAvg) {
    throw Error(ErrorKind::kValue, std::string(what) + ": unknown reduction " + std::to_string(op) +
                                       " (0 sum, 1 prod, 2 max, 3 min, 4 avg)");
  }
  const int32_t base = op == kDLArrayMpiAvg ? kDLArrayMpiSum : op;
  const bool half16 = t.bits == 16 && (t.code == kDLArrayFloat || t.code == kDLArrayBfloat);
  if (half16) return HalfOpHandle(t.code == kDLArrayBfloat, base);
  if (t.code == kDLArrayBool) {
    if (op == kDLArrayMpiAvg) {
      throw DTypeError(std::string(what) +
                       ": avg of bool is not defined (sum is or, prod is "
                       "and, max or, min and)");
    }
    return (op == kDLArrayMpiSum || op == kDLArrayMpiMax) ? Lib().op_lor : Lib().op_land;
  }
  if (t.code == kDLArrayComplex && (op == kDLArrayMpiMax || op == kDLArrayMpiMin)) {
    throw DTypeError(std::string(what) + ": " + OpName(op) + " of " + FormatDType(t) +
                     " is not defined (complex numbers are not ordered)");
  }
  const Library& lib = Lib();
  const Handle ops[] = {lib.op_sum, lib.op_prod, lib.op_max, lib.op_min};
  return ops[base];
}

// x /= n elementwise: integers truncate toward zero (C's division, NCCL's ncclAvg).
void DivideBy(DLArray* a, size_t count, int32_t n) {
  Dispatch<kAllTypes | kComplexTypes>(a->dtype, "all_reduce avg", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(Data(a));
    for (size_t i = 0; i < count; ++i) {
      if constexpr (kIsComplex<T>) {
        p[i].re /= n;
        p[i].im /= n;
      } else if constexpr (std::is_same_v<T, bool>) {
        (void)p;
      } else if constexpr (std::is_integral_v<T>) {
        p[i] = static_cast<T>(p[i] / static_cast<T>(n));
      } else {
        p[i] = Store<T>(Load(p[i]) / static_cast<float>(n));
      }
    }
  });
}

// --- Joining ---------------------------------------------------------------------------------

// comm_create's work: the job's world, or the jobs joined through port, ordered by rank.
Handle Join(const Library& lib, int32_t world_size, int32_t rank, const char* port) {
  int job_size = 0;
  Check(lib, "MPI_Comm_size", lib.CommSize(lib.comm_world, &job_size));
  Handle cur = nullptr;
  Check(lib, "MPI_Comm_split", lib.CommSplit(lib.comm_world, 0, rank, &cur));
  Check(lib, "MPI_Comm_set_errhandler", lib.CommSetErrhandler(cur, lib.errors_return));
  if (job_size != world_size) {
    if (job_size > world_size || world_size % job_size != 0) {
      throw Error(ErrorKind::kValue,
                  "the group has world_size " + std::to_string(world_size) +
                      " but MPI_COMM_WORLD has " + std::to_string(job_size) +
                      " ranks (mpirun -n / srun -n), which do not make whole jobs of it: start "
                      "as many ranks as WORLD_SIZE says");
    }
    if (port == nullptr || *port == '\0') {
      throw Error(ErrorKind::kValue,
                  "comm_create: several MPI jobs join through a port, and "
                  "none was given");
    }
    int min_rank = 0;
    Check(lib, "MPI_Allreduce", lib.Allreduce(&rank, &min_rank, 1, lib.t_int32, lib.op_min, cur));
    int remaining = min_rank == 0 ? world_size / job_size - 1 : 0;
    auto merge = [&](Handle inter, int high) {
      Handle merged = nullptr;
      Check(lib, "MPI_Intercomm_merge", lib.IntercommMerge(inter, high, &merged));
      Check(lib, "MPI_Comm_disconnect", lib.CommDisconnect(&inter));
      Check(lib, "MPI_Comm_free", lib.CommFree(&cur));
      cur = merged;
      Check(lib, "MPI_Comm_set_errhandler", lib.CommSetErrhandler(cur, lib.errors_return));
    };
    if (min_rank != 0) {  // a job without rank 0 connects once, then accepts the later ones
      Handle inter = nullptr;
      Check(lib, "MPI_Comm_connect", lib.CommConnect(port, lib.info_null, 0, cur, &inter));
      merge(inter, 1);
      Check(lib, "MPI_Bcast", lib.Bcast(&remaining, 1, lib.t_int32, 0, cur));
    }
    while (remaining > 0) {
      Handle inter = nullptr;
      Check(lib, "MPI_Comm_accept", lib.CommAccept(port, lib.info_null, 0, cur, &inter));
      merge(inter, 0);
      int root_rank = 0;
      Check(lib, "MPI_Comm_rank", lib.CommRank(cur, &root_rank));
      if (root_rank == 0) --remaining;
      Check(lib, "MPI_Bcast", lib.Bcast(&remaining, 1, lib.t_int32, 0, cur));
    }
    Handle ordered = nullptr;
    Check(lib, "MPI_Comm_split", lib.CommSplit(cur, 0, rank, &ordered));
    Check(lib, "MPI_Comm_free", lib.CommFree(&cur));
    cur = ordered;
    Check(lib, "MPI_Comm_set_errhandler", lib.CommSetErrhandler(cur, lib.errors_return));
  }
  int size = 0, got = 0;
  Check(lib, "MPI_Comm_size", lib.CommSize(cur, &size));
  Check(lib, "MPI_Comm_rank", lib.CommRank(cur, &got));
  if (size != world_size || got != rank) {
    throw Error(ErrorKind::kValue,
                "the MPI group has " + std::to_string(size) + " ranks and this process is rank " +
                    std::to_string(got) + ", but it was asked to be rank " + std::to_string(rank) +
                    " of " + std::to_string(world_size) + ": two processes claim one rank");
  }
  return cur;
}

// --- The table's functions -------------------------------------------------------------------

template <typename F>
int Guard(F&& f) noexcept {
  return dlarray::Guard("dlarray.mpi", static_cast<F&&>(f));
}

int LoadMpi(const char* const* candidates, int32_t num_candidates) {
  return Guard([&] {
    std::vector<std::string> places;
    for (int32_t i = 0; candidates != nullptr && i < num_candidates; ++i) {
      if (candidates[i] != nullptr) places.emplace_back(candidates[i]);
    }
    (void)mpi::Load(places);
  });
}

int LibraryInfo(const char** path, const char** version) {
  return Guard([&] {
    const Library& lib = Lib();
    if (path != nullptr) *path = lib.path.c_str();
    if (version != nullptr) *version = lib.version.c_str();
  });
}

int World(int32_t* rank, int32_t* size) {
  return Guard([&] {
    const Library& lib = Lib();
    int r = 0, s = 0;
    Check(lib, "MPI_Comm_rank", lib.CommRank(lib.comm_world, &r));
    Check(lib, "MPI_Comm_size", lib.CommSize(lib.comm_world, &s));
    if (rank != nullptr) *rank = r;
    if (size != nullptr) *size = s;
  });
}

int OpenPort(char* name) {
  return Guard([&] {
    if (name == nullptr) throw Error(ErrorKind::kValue, "open_port: name is null");
    std::vector<char> buffer(DLARRAY_MPI_PORT_BYTES + 1, '\0');
    Check(Lib(), "MPI_Open_port", Lib().OpenPort(Lib().info_null, buffer.data()));
    std::memcpy(name, buffer.data(), DLARRAY_MPI_PORT_BYTES);
    name[DLARRAY_MPI_PORT_BYTES - 1] = '\0';
  });
}

int CommCreate(int32_t world_size, int32_t rank, const char* port, DLArrayMpiComm** out) {
  return Guard([&] {
    if (out == nullptr) throw Error(ErrorKind::kValue, "comm_create: out is null");
    *out = nullptr;
    if (world_size < 1 || rank < 0 || rank >= world_size) {
      throw Error(ErrorKind::kValue, "comm_create: rank " + std::to_string(rank) +
                                         " is not in [0, world_size " + std::to_string(world_size) +
                                         ")");
    }
    auto c = std::make_unique<DLArrayMpiComm>();
    c->world_size = world_size;
    c->rank = rank;
    c->busy_since_ns.store(NowNs());  // joining waits for the other jobs, and may time out
    try {
      c->comm = Join(Lib(), world_size, rank, port);
    } catch (...) {
      c->busy_since_ns.store(0);
      throw;
    }
    c->busy_since_ns.store(0);
    *out = c.release();
  });
}

int CommAbort(DLArrayMpiComm* c, int32_t* busy) {
  return Guard([&] {
    if (c == nullptr) throw Error(ErrorKind::kValue, "comm_abort: comm is null");
    c->aborted.store(true);
    if (busy != nullptr) *busy = c->busy_since_ns.load() != 0 ? 1 : 0;
  });
}

int CommDestroy(DLArrayMpiComm* c) {
  return Guard([&] {
    if (c == nullptr) return;
    std::unique_ptr<DLArrayMpiComm> owner(c);
    // An aborted communicator may have peers that are gone: freeing it could wait for them.
    if (c->comm != nullptr && !c->aborted.load()) {
      int finalized = 0;
      Lib().Finalized(&finalized);
      if (finalized == 0) Check(Lib(), "MPI_Comm_free", Lib().CommFree(&c->comm));
    }
  });
}

int AllReduce(DLArrayMpiComm* c, const DLArray* send, DLArray* recv, int32_t op) {
  return Guard([&] {
    const size_t n = CheckArray(send, "all_reduce", "input");
    RequireSize(CheckArray(recv, "all_reduce", "output"), n, "all_reduce", "output",
                "an input of that size");
    CheckSameDType(send, recv, "all_reduce");
    const Handle type = TypeOf(send->dtype, "all_reduce");
    const Handle reduce = ReduceOf(send->dtype, op, "all_reduce");
    const int count = CheckCount(n, "all_reduce");
    const void* in = Data(send) == Data(recv) ? mpi::InPlace() : Data(send);
    Run(c, "MPI_Allreduce", [&](const Library& lib, Handle comm) {
      return lib.Allreduce(in, Data(recv), count, type, reduce, comm);
    });
    if (op == kDLArrayMpiAvg) DivideBy(recv, n, c->world_size);
  });
}

int Broadcast(DLArrayMpiComm* c, const DLArray* send, DLArray* recv, int32_t root) {
  return Guard([&] {
    if (c == nullptr) throw Error(ErrorKind::kValue, "broadcast: comm is null");
    if (root < 0 || root >= c->world_size) {
      throw Error(ErrorKind::kValue, "broadcast: root " + std::to_string(root) +
                                         " is not a rank of " + std::to_string(c->world_size));
    }
    const size_t n = CheckArray(recv, "broadcast", "output");
    RequireSize(CheckArray(send, "broadcast", "input"), n, "broadcast", "input",
                "an output of that size");
    CheckSameDType(send, recv, "broadcast");
    const Handle type = TypeOf(recv->dtype, "broadcast");
    const int count = CheckCount(n, "broadcast");
    if (c->rank == root && Data(send) != Data(recv) && n > 0) {
      std::memmove(Data(recv), Data(send), n * ElementBytes(recv));
    }
    Run(c, "MPI_Bcast", [&](const Library& lib, Handle comm) {
      return lib.Bcast(Data(recv), count, type, root, comm);
    });
  });
}

int AllGather(DLArrayMpiComm* c, const DLArray* send, DLArray* recv) {
  return Guard([&] {
    if (c == nullptr) throw Error(ErrorKind::kValue, "all_gather: comm is null");
    const size_t n = CheckArray(send, "all_gather", "input");
    RequireSize(CheckArray(recv, "all_gather", "output"), n * c->world_size, "all_gather", "output",
                "world_size x the input's size");
    CheckSameDType(send, recv, "all_gather");
    const Handle type = TypeOf(send->dtype, "all_gather");
    const int count = CheckCount(n * c->world_size, "all_gather") / c->world_size;
    Run(c, "MPI_Allgather", [&](const Library& lib, Handle comm) {
      return lib.Allgather(Data(send), count, type, Data(recv), count, type, comm);
    });
  });
}

int ReduceScatter(DLArrayMpiComm* c, const DLArray* send, DLArray* recv, int32_t op) {
  return Guard([&] {
    if (c == nullptr) throw Error(ErrorKind::kValue, "reduce_scatter: comm is null");
    const size_t n = CheckArray(recv, "reduce_scatter", "output");
    RequireSize(CheckArray(send, "reduce_scatter", "input"), n * c->world_size, "reduce_scatter",
                "input", "world_size x the output's size");
    CheckSameDType(send, recv, "reduce_scatter");
    const Handle type = TypeOf(send->dtype, "reduce_scatter");
    const Handle reduce = ReduceOf(send->dtype, op, "reduce_scatter");
    const int count = CheckCount(n * c->world_size, "reduce_scatter") / c->world_size;
    Run(c, "MPI_Reduce_scatter_block", [&](const Library& lib, Handle comm) {
      return lib.ReduceScatterBlock(Data(send), Data(recv), count, type, reduce, comm);
    });
    if (op == kDLArrayMpiAvg) DivideBy(recv, n, c->world_size);
  });
}

int Barrier(DLArrayMpiComm* c) {
  return Guard([&] {
    Run(c, "MPI_Barrier", [](const Library& lib, Handle comm) { return lib.Barrier(comm); });
  });
}

int PendingSeconds(DLArrayMpiComm* c, double* seconds) {
  return Guard([&] {
    if (c == nullptr || seconds == nullptr) {
      throw Error(ErrorKind::kValue, "pending_seconds: null argument");
    }
    const int64_t since = c->busy_since_ns.load();
    *seconds = since == 0 ? 0.0 : static_cast<double>(NowNs() - since) * 1e-9;
  });
}

int Finalize() {
  return Guard([] {
    const Library& lib = Lib();
    int finalized = 0;
    lib.Finalized(&finalized);
    if (lib.initialised_here && finalized == 0) Check(lib, "MPI_Finalize", lib.Finalize());
  });
}

int IallReduce(DLArrayMpiComm* c, const DLArray* send, DLArray* recv, int32_t op,
               int64_t* request) {
  return Guard([&] {
    if (request == nullptr) throw Error(ErrorKind::kValue, "iall_reduce: request is null");
    const size_t n = CheckArray(send, "iall_reduce", "input");
    RequireSize(CheckArray(recv, "iall_reduce", "output"), n, "iall_reduce", "output",
                "an input of that size");
    CheckSameDType(send, recv, "iall_reduce");
    const Handle type = TypeOf(send->dtype, "iall_reduce");
    const Handle reduce = ReduceOf(send->dtype, op, "iall_reduce");
    const int count = CheckCount(n, "iall_reduce");
    const void* in = Data(send) == Data(recv) ? mpi::InPlace() : Data(send);
    Handle handle = nullptr;
    Run(c, "MPI_Iallreduce", [&](const Library& lib, Handle comm) {
      return lib.Iallreduce(in, Data(recv), count, type, reduce, comm, &handle);
    });
    DLArray kept = *recv;
    kept.shape = nullptr;  // the caller's shape may not outlive this call; count stands for it
    kept.strides = nullptr;
    *request = c->next_request++;
    c->started.emplace(*request, DLArrayMpiComm::Started{handle, kept, n, op});
  });
}

int Wait(DLArrayMpiComm* c, int64_t request) {
  return Guard([&] {
    if (c == nullptr) throw Error(ErrorKind::kValue, "wait: comm is null");
    auto it = c->started.find(request);
    if (it == c->started.end()) {
      throw Error(ErrorKind::kValue, "wait: request " + std::to_string(request) +
                                         " was not started by iall_reduce, or was waited for");
    }
    DLArrayMpiComm::Started s = it->second;
    c->started.erase(it);
    Run(c, "MPI_Wait", [&](const Library& lib, Handle) { return lib.Wait(&s.request, nullptr); });
    if (s.op == kDLArrayMpiAvg) DivideBy(&s.recv, s.count, c->world_size);
  });
}

const DLArrayMpiExtV1 kApi = {
    sizeof(DLArrayMpiExtV1),
    &LoadMpi,
    &LibraryInfo,
    &World,
    &OpenPort,
    &CommCreate,
    &CommAbort,
    &CommDestroy,
    &AllReduce,
    &Broadcast,
    &AllGather,
    &ReduceScatter,
    &Barrier,
    &PendingSeconds,
    &Finalize,
    &IallReduce,
    &Wait,
};

}  // namespace

const DLArrayMpiExtV1* MpiExtension() { return &kApi; }

}  // namespace dlarray::cpu
