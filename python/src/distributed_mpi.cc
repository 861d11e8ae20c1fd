// MPI for dlarray.distributed's CPU path: the "dlarray.mpi.v1" extension of whichever device
// plugin offers it (the CPU plugin), found by name through the core. MpiCommunicator has the
// methods of NcclCommunicator that the process group uses, so one group serves both. Every call
// that may wait releases the GIL: the watchdog thread reads pending_seconds and aborts meanwhile.
#include <pybind11/stl.h>

#include <shared_mutex>
#include <string>
#include <vector>

#include "binding.h"
#include "dlarray/ext/mpi.h"

namespace dlarray {
namespace {

// what is a literal: the message is made only on failure (a small all-reduce takes a microsecond).
template <typename F>
void CallMpi(const char* what, F&& call) {
  ClearPluginError();
  if (call() != 0) ThrowPluginError(what);
}

const DLArrayMpiExtV1* MpiApi() {
  int device_type = -1;
  const auto* api = static_cast<const DLArrayMpiExtV1*>(
      RequireExtension(DLARRAY_EXT_MPI_V1, "dlarray.distributed on CPU arrays", &device_type));
  if (!DLARRAY_STRUCT_HAS(api, DLArrayMpiExtV1, finalize)) {
    throw BackendError("the " + DeviceTypeName(device_type) +
                       " plugin's " DLARRAY_EXT_MPI_V1 " table is incomplete");
  }
  return api;
}

// One rank's MPI communicator. Calls hold mu_ shared (abort and pending_seconds too, from the
// watchdog); destroy() holds it exclusively, so no call outlives the communicator.
class MpiCommunicator {
 public:
  MpiCommunicator(int world_size, int rank)
      : api_(MpiApi()), world_size_(world_size), rank_(rank) {}
  ~MpiCommunicator() {
    if (comm_ == nullptr) return;
    py::gil_scoped_release release;
    (void)api_->comm_destroy(comm_);
    ClearPluginError();
  }
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  // Joins the group: payload is rank 0's port name (empty when one MPI job holds every rank).
  void Init(const py::bytes& payload) {
    std::string port = payload;
    DLArrayMpiComm* comm = nullptr;
    {
      py::gil_scoped_release release;
      std::unique_lock<std::shared_mutex> lock(mu_);
      CallMpi("mpi comm_create", [&] {
        return api_->comm_create(world_size_, rank_, port.empty() ? nullptr : port.c_str(), &comm);
      });
      comm_ = comm;
    }
  }

  void AllReduce(const NDArray& send, const NDArray& recv, int op) {
    AllReduce(send.dl(), recv.dl(), op);
  }
  void AllReduce(const DLArray* send, DLArray* recv, int op) {
    Use("mpi all_reduce", [&](DLArrayMpiComm* c) { return api_->all_reduce(c, send, recv, op); });
  }

  // dlarray.distributed.all_reduce's common case, in place: array exactly an NDArray and
  // writable, op a str that ops (the Python layer's table of op names) maps to a code. Returns
  // false, having done nothing, for anything else: the general path then checks and raises
  // with its messages. The plugin checks the rest (device, dtype, layout) as for AllReduce.
  bool FastAllReduce(PyObject* array, PyObject* op) {
    const NDArray* a = ExactInstance<NDArray>(array);
    if (a == nullptr || a->array->read_only() || !PyUnicode_CheckExact(op)) return false;
    PyObject* code = PyDict_GetItemWithError(ops_.ptr(), op);  // borrowed; a str cannot raise
    if (code == nullptr || !PyLong_CheckExact(code)) {
      PyErr_Clear();
      return false;
    }
    AllReduce(a->dl(), a->dl(), static_cast<int>(PyLong_AsLong(code)));
    return true;
  }
  void SetOps(py::dict ops) { ops_ = std::move(ops); }
  void Broadcast(const NDArray& send, const NDArray& recv, int root) {
    Use("mpi broadcast",
        [&](DLArrayMpiComm* c) { return api_->broadcast(c, send.dl(), recv.dl(), root); });
  }
  void AllGather(const NDArray& send, const NDArray& recv) {
    Use("mpi all_gather",
        [&](DLArrayMpiComm* c) { return api_->all_gather(c, send.dl(), recv.dl()); });
  }
  void ReduceScatter(const NDArray& send, const NDArray& recv, int op) {
    Use("mpi reduce_scatter",
        [&](DLArrayMpiComm* c) { return api_->reduce_scatter(c, send.dl(), recv.dl(), op); });
  }
  // MPI has no group launch: one all-reduce per array, in order.
  void AllReduceGroup(const std::vector<NDArray>& arrays, int op) {
    for (const NDArray& a : arrays) AllReduce(a, a, op);
  }
  // Starts a non-blocking all-reduce; the number it returns goes to Wait. The caller keeps both
  // arrays alive until then (dlarray.distributed's buckets hold them).
  int64_t IallReduce(const NDArray& send, const NDArray& recv, int op) {
    RequireNonBlocking();
    int64_t request = 0;
    Use("mpi iall_reduce", [&](DLArrayMpiComm* c) {
      return api_->iall_reduce(c, send.dl(), recv.dl(), op, &request);
    });
    return request;
  }
  void Wait(int64_t request) {
    RequireNonBlocking();
    Use("mpi wait", [&](DLArrayMpiComm* c) { return api_->wait(c, request); });
  }
  void Barrier() {
    Use("mpi barrier", [&](DLArrayMpiComm* c) { return api_->barrier(c); });
  }
  void AsyncError() {}  // MPI reports failures from the call that meets them

  double PendingSeconds() {
    double s = 0;
    py::gil_scoped_release release;
    std::shared_lock<std::shared_mutex> lock(mu_, std::try_to_lock);
    // Held exclusively while joining: the process group's own timer limits the join.
    if (!lock.owns_lock()) return 0.0;
    if (comm_ != nullptr)
      CallMpi("mpi pending_seconds", [&] { return api_->pending_seconds(comm_, &s); });
    return s;
  }

  // Marks the communicator failed; true when a call is still inside MPI (it cannot be stopped).
  bool Abort() {
    py::gil_scoped_release release;
    std::shared_lock<std::shared_mutex> lock(mu_, std::try_to_lock);
    if (!lock.owns_lock()) return true;  // still joining the other ranks
    int32_t busy = 0;
    if (comm_ != nullptr) CallMpi("mpi comm_abort", [&] { return api_->comm_abort(comm_, &busy); });
    return busy != 0;
  }

  void Finalize() { Barrier(); }

  void Destroy() {
    py::gil_scoped_release release;
    std::unique_lock<std::shared_mutex> lock(mu_);
    DLArrayMpiComm* c = comm_;
    comm_ = nullptr;
    if (c != nullptr) CallMpi("mpi comm_destroy", [&] { return api_->comm_destroy(c); });
  }

 private:
  void RequireNonBlocking() const {
    if (!DLARRAY_STRUCT_HAS(api_, DLArrayMpiExtV1, wait)) {
      throw BackendError("the CPU plugin's " DLARRAY_EXT_MPI_V1
                         " table has no iall_reduce/wait (a plugin older than this module)");
    }
  }

  template <typename F>
  void Use(const char* what, F&& call) {
    py::gil_scoped_release release;
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (comm_ == nullptr) {
      throw Error(ErrorKind::kValue,
                  std::string(what) + ": the communicator is not initialised or was destroyed");
    }
    CallMpi(what, [&] { return call(comm_); });
  }

  const DLArrayMpiExtV1* api_;
  int world_size_, rank_;
  py::dict ops_;  // FastAllReduce's op names
  std::shared_mutex mu_;
  DLArrayMpiComm* comm_ = nullptr;  // guarded by mu_
};

// comm.fast_all_reduce(ops)'s function: f(array, op) runs FastAllReduce on comm (its self) and
// returns True, or returns False for the general path. A C function (METH_FASTCALL), as pybind11's
// dispatch would cost a third of a 1 KB all-reduce between two ranks of one host.
PyObject* FastAllReduceEntry(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "all_reduce fast path: expected (array, op)");
    return nullptr;
  }
  try {
    const bool taken = ExactInstance<MpiCommunicator>(self)->FastAllReduce(args[0], args[1]);
    return py::bool_(taken).release().ptr();
  } catch (...) {
    return RaiseCurrentException();
  }
}

PyMethodDef g_fast_all_reduce = {
    "fast_all_reduce",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&FastAllReduceEntry)), METH_FASTCALL,
    "f(array, op): all_reduce in place if it is the common case; True when done."};

}  // namespace

void BindDistributedMpi(py::module_& m) {
  m.def(
      "mpi_load",
      [](const std::vector<std::string>& candidates) {
        const DLArrayMpiExtV1* api = MpiApi();
        std::vector<const char*> c;
        for (const std::string& s : candidates) c.push_back(s.c_str());
        const char* path = nullptr;
        const char* version = nullptr;
        {
          py::gil_scoped_release release;
          CallMpi("mpi load", [&] { return api->load(c.data(), static_cast<int32_t>(c.size())); });
          CallMpi("mpi library", [&] { return api->library(&path, &version); });
        }
        return py::make_tuple(std::string(path != nullptr ? path : ""),
                              std::string(version != nullptr ? version : ""));
      },
      py::arg("candidates"),
      "Opens the MPI library (once) and initialises MPI; returns (path, version text).");
  m.def(
      "mpi_world",
      [] {
        const DLArrayMpiExtV1* api = MpiApi();
        int32_t rank = 0, size = 0;
        py::gil_scoped_release release;
        CallMpi("mpi world", [&] { return api->world(&rank, &size); });
        return std::make_pair(rank, size);
      },
      "(rank, size) of this process in MPI_COMM_WORLD.");
  m.def(
      "mpi_open_port",
      [] {
        const DLArrayMpiExtV1* api = MpiApi();
        std::string name(DLARRAY_MPI_PORT_BYTES, '\0');
        {
          py::gil_scoped_release release;
          CallMpi("mpi open_port", [&] { return api->open_port(&name[0]); });
        }
        return py::bytes(name.c_str());
      },
      "A new MPI port name (bytes) for jobs joining this one.");
  m.def(
      "mpi_finalize",
      [] {
        const DLArrayMpiExtV1* api = MpiApi();
        py::gil_scoped_release release;
        CallMpi("mpi finalize", [&] { return api->finalize(); });
      },
      "MPI_Finalize, when dlarray initialised MPI.");

  py::class_<MpiCommunicator>(m, "MpiCommunicator",
                              "One rank's MPI communicator (dlarray.distributed's CPU path).")
      .def(py::init<int, int>(), py::arg("world_size"), py::arg("rank"))
      .def("init", &MpiCommunicator::Init, py::arg("port"))
      .def("all_reduce",
           py::overload_cast<const NDArray&, const NDArray&, int>(&MpiCommunicator::AllReduce),
           py::arg("send"), py::arg("recv"), py::arg("op"))
      .def(
          "fast_all_reduce",
          [](py::object self, py::dict ops) {
            MpiCommunicator* comm = ExactInstance<MpiCommunicator>(self.ptr());
            if (comm == nullptr)
              throw py::type_error("fast_all_reduce: a subclass of MpiCommunicator");
            comm->SetOps(std::move(ops));
            return py::reinterpret_steal<py::object>(
                PyCFunction_NewEx(&g_fast_all_reduce, self.ptr(), nullptr));
          },
          py::arg("ops"),
          "A function f(array, op) that runs all_reduce(array, array, ops[op]) and returns True "
          "when array is an NDArray itself, writable, and op a key of ops; else False, having "
          "done nothing.")
      .def("broadcast", &MpiCommunicator::Broadcast, py::arg("send"), py::arg("recv"),
           py::arg("root"))
      .def("all_gather", &MpiCommunicator::AllGather, py::arg("send"), py::arg("recv"))
      .def("reduce_scatter", &MpiCommunicator::ReduceScatter, py::arg("send"), py::arg("recv"),
           py::arg("op"))
      .def("all_reduce_group", &MpiCommunicator::AllReduceGroup, py::arg("arrays"), py::arg("op"))
      .def("iall_reduce", &MpiCommunicator::IallReduce, py::arg("send"), py::arg("recv"),
           py::arg("op"))
      .def("wait", &MpiCommunicator::Wait, py::arg("request"))
      .def("barrier", &MpiCommunicator::Barrier)
      .def("async_error", &MpiCommunicator::AsyncError)
      .def("pending_seconds", &MpiCommunicator::PendingSeconds)
      .def("abort", &MpiCommunicator::Abort)
      .def("finalize", &MpiCommunicator::Finalize)
      .def("destroy", &MpiCommunicator::Destroy);
}

}  // namespace dlarray
