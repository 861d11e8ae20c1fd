// NCCL for dlarray.distributed: the "dlarray.nccl.v1" extension of the device plugin offering it
// (the CUDA plugin), found by name through the core (which knows no device). Every call that may
// wait releases the GIL, so the watchdog thread can abort a communicator while the main thread
// waits inside NCCL or for the GPU.
#include <pybind11/stl.h>

#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "binding.h"
#include "dlarray/ext/nccl.h"

namespace dlarray {
namespace {

// Calls an extension function, turning a failure it reported with set_error into the typed
// exception (ValueError, TypeError, RuntimeError in Python).
template <typename F>
void CallExtension(const std::string& what, F&& call) {
  ClearPluginError();
  if (call() != 0) ThrowPluginError(what);
}

// The table of the device plugin offering NCCL, also when it found no device: opening NCCL and
// making ids need none, and comm_create says itself that there is no GPU.
const DLArrayNcclExtV1* Api() {
  int device_type = -1;
  const auto* api = static_cast<const DLArrayNcclExtV1*>(
      RequireExtension(DLARRAY_EXT_NCCL_V1, "dlarray.distributed", &device_type));
  if (!DLARRAY_STRUCT_HAS(api, DLArrayNcclExtV1, pending_seconds)) {
    throw BackendError("the " + DeviceTypeName(device_type) +
                       " plugin's " DLARRAY_EXT_NCCL_V1 " table is incomplete");
  }
  return api;
}

// One rank's communicator. Every call holds mu_ shared while it runs (with the GIL released),
// abort() too, since the extension allows an abort during any call; destroy() holds it
// exclusively, so that no call, from the watchdog thread or any other, outlives the
// communicator.
class Communicator {
 public:
  Communicator(int device_id, int world_size, int rank) : api_(Api()) {
    DLArrayNcclComm* comm = nullptr;
    py::gil_scoped_release release;
    CallExtension("nccl comm_create",
                  [&] { return api_->comm_create(device_id, world_size, rank, &comm); });
    comm_ = comm;
  }
  // Python drops the last reference: no call can be running. destroy() normally came first.
  ~Communicator() {
    if (comm_ == nullptr) return;
    py::gil_scoped_release release;
    (void)api_->comm_destroy(comm_);
    ClearPluginError();
  }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  void Init(const py::bytes& id) {
    std::string bytes = id;
    if (bytes.size() != DLARRAY_NCCL_UNIQUE_ID_BYTES) {
      throw Error(ErrorKind::kValue, "nccl unique id must have " +
                                         std::to_string(DLARRAY_NCCL_UNIQUE_ID_BYTES) +
                                         " bytes, got " + std::to_string(bytes.size()));
    }
    Use("init", [&](DLArrayNcclComm* c) {
      return api_->comm_init(c, reinterpret_cast<const uint8_t*>(bytes.data()));
    });
  }

  void AllReduce(const NDArray& send, const NDArray& recv, int op) {
    Use("all_reduce",
        [&](DLArrayNcclComm* c) { return api_->all_reduce(c, send.dl(), recv.dl(), op); });
  }
  void Broadcast(const NDArray& send, const NDArray& recv, int root) {
    Use("broadcast",
        [&](DLArrayNcclComm* c) { return api_->broadcast(c, send.dl(), recv.dl(), root); });
  }
  void AllGather(const NDArray& send, const NDArray& recv) {
    Use("all_gather",
        [&](DLArrayNcclComm* c) { return api_->all_gather(c, send.dl(), recv.dl()); });
  }
  void ReduceScatter(const NDArray& send, const NDArray& recv, int op) {
    Use("reduce_scatter",
        [&](DLArrayNcclComm* c) { return api_->reduce_scatter(c, send.dl(), recv.dl(), op); });
  }

  // All-reduces several arrays in place: one peer-memory kernel when eligible, else one NCCL
  // group (one launch); the extension decides (all_reduce_group), or, from an older plugin, here.
  void AllReduceGroup(const std::vector<NDArray>& arrays, int op) {
    std::vector<DLArray*> dls;
    for (const NDArray& a : arrays) dls.push_back(a.dl());
    if (DLARRAY_STRUCT_HAS(api_, DLArrayNcclExtV1, all_reduce_group)) {
      Use("all_reduce_group", [&](DLArrayNcclComm* c) {
        return api_->all_reduce_group(c, dls.data(), static_cast<int32_t>(dls.size()), op);
      });
      return;
    }
    py::gil_scoped_release release;
    std::shared_lock<std::shared_mutex> lock(mu_);
    DLArrayNcclComm* c = Live("all_reduce_group");
    CallExtension("nccl group_start", [&] { return api_->group_start(c); });
    try {
      for (DLArray* a : dls) {
        CallExtension("nccl all_reduce", [&] { return api_->all_reduce(c, a, a, op); });
      }
    } catch (...) {
      (void)api_->group_end(c);  // the group must be closed; the first error is the one raised
      ClearPluginError();
      throw;
    }
    CallExtension("nccl group_end", [&] { return api_->group_end(c); });
  }

  // A data-parallel bucket's mean and its SGD step in one peer-memory kernel (params[i]: None
  // for a gradient without one). An older plugin has none: the caller asks has_all_reduce_sgd.
  void AllReduceSgd(const std::vector<NDArray>& arrays,
                    const std::vector<std::optional<NDArray>>& params, double scale) {
    if (params.size() != arrays.size()) {
      throw py::value_error("all_reduce_sgd: " + std::to_string(params.size()) +
                            " parameters for " + std::to_string(arrays.size()) + " gradients");
    }
    if (!HasAllReduceSgd()) throw py::value_error("all_reduce_sgd: the CUDA plugin has none");
    std::vector<DLArray*> dls, ps;
    for (const NDArray& a : arrays) dls.push_back(a.dl());
    for (const auto& p : params) ps.push_back(p ? p->dl() : nullptr);
    Use("all_reduce_sgd", [&](DLArrayNcclComm* c) {
      return api_->all_reduce_sgd(c, dls.data(), ps.data(), static_cast<int32_t>(dls.size()),
                                  scale);
    });
  }
  bool HasAllReduceSgd() const {
    return DLARRAY_STRUCT_HAS(api_, DLArrayNcclExtV1, all_reduce_sgd);
  }

  // The peer-memory all-reduce's settings, before init (no-op with an older plugin).
  void ConfigurePeer(bool enabled, uint64_t max_bytes, double timeout_seconds) {
    if (!DLARRAY_STRUCT_HAS(api_, DLArrayNcclExtV1, peer_configure)) return;
    Use("peer_configure", [&](DLArrayNcclComm* c) {
      return api_->peer_configure(c, enabled ? 1 : 0, max_bytes, timeout_seconds);
    });
  }

  // (peer all-reduce calls, NCCL all-reduce calls, peer path set up, its max bytes).
  py::tuple PeerStats() {
    uint64_t counts[4] = {0, 0, 0, 0};
    if (DLARRAY_STRUCT_HAS(api_, DLArrayNcclExtV1, peer_stats)) {
      Use("peer_stats", [&](DLArrayNcclComm* c) { return api_->peer_stats(c, counts, 4); });
    }
    return py::make_tuple(counts[0], counts[1], counts[2] != 0, counts[3]);
  }

  // Later collectives on the side stream (true), or back on the GPU's stream, which then waits
  // for them on the GPU (false): data-parallel training's gradient buckets overlap the backward.
  void SetStream(bool side) {
    if (!DLARRAY_STRUCT_HAS(api_, DLArrayNcclExtV1, set_stream)) {
      throw BackendError("the CUDA plugin's " DLARRAY_EXT_NCCL_V1
                         " table has no set_stream (a plugin older than this module)");
    }
    Use("set_stream", [&](DLArrayNcclComm* c) { return api_->set_stream(c, side ? 1 : 0); });
  }
  void AsyncError() {
    Use("async_error", [&](DLArrayNcclComm* c) { return api_->async_error(c); });
  }

  double PendingSeconds() {
    double s = 0;
    Use("pending_seconds", [&](DLArrayNcclComm* c) { return api_->pending_seconds(c, &s); });
    return s;
  }

  void Abort() {
    py::gil_scoped_release release;
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (comm_ != nullptr) CallExtension("nccl comm_abort", [&] { return api_->comm_abort(comm_); });
  }

  void Finalize() {
    Use("finalize", [&](DLArrayNcclComm* c) { return api_->comm_finalize(c); });
  }

  void Destroy() {
    py::gil_scoped_release release;
    std::unique_lock<std::shared_mutex> lock(mu_);
    DLArrayNcclComm* c = comm_;
    comm_ = nullptr;
    if (c != nullptr) CallExtension("nccl comm_destroy", [&] { return api_->comm_destroy(c); });
  }

 private:
  // Runs call(comm) with the GIL released and the communicator kept alive.
  template <typename F>
  void Use(const char* what, F&& call) {
    py::gil_scoped_release release;
    std::shared_lock<std::shared_mutex> lock(mu_);
    DLArrayNcclComm* c = Live(what);
    CallExtension(std::string("nccl ") + what, [&] { return call(c); });
  }

  DLArrayNcclComm* Live(const char* what) {
    if (comm_ == nullptr) {
      throw Error(ErrorKind::kValue,
                  std::string("nccl ") + what + ": the communicator was destroyed");
    }
    return comm_;
  }

  const DLArrayNcclExtV1* api_;
  std::shared_mutex mu_;
  DLArrayNcclComm* comm_ = nullptr;  // guarded by mu_
};

}  // namespace

void BindDistributed(py::module_& m) {
  m.def(
      "nccl_load",
      [](const std::vector<std::string>& candidates) {
        const DLArrayNcclExtV1* api = Api();
        std::vector<const char*> c;
        for (const std::string& s : candidates) c.push_back(s.c_str());
        const char* path = nullptr;
        int32_t version = 0;
        {
          py::gil_scoped_release release;
          CallExtension("nccl load",
                        [&] { return api->load(c.data(), static_cast<int32_t>(c.size())); });
          CallExtension("nccl library", [&] { return api->library(&path, &version); });
        }
        return py::make_tuple(std::string(path != nullptr ? path : ""), version);
      },
      py::arg("candidates"),
      "Opens libnccl.so.2 (once), trying `candidates` (files or folders) before the system's; "
      "returns (path, version code).");
  m.def(
      "nccl_unique_id",
      [] {
        const DLArrayNcclExtV1* api = Api();
        std::string id(DLARRAY_NCCL_UNIQUE_ID_BYTES, '\0');
        {
          py::gil_scoped_release release;
          CallExtension("nccl get_unique_id",
                        [&] { return api->get_unique_id(reinterpret_cast<uint8_t*>(&id[0])); });
        }
        return py::bytes(id);
      },
      "A new NCCL unique id (bytes).");

  py::class_<Communicator>(m, "NcclCommunicator",
                           "One rank's NCCL communicator (dlarray.distributed uses it).")
      .def(py::init<int, int, int>(), py::arg("device_id"), py::arg("world_size"), py::arg("rank"))
      .def("init", &Communicator::Init, py::arg("unique_id"))
      .def("all_reduce", &Communicator::AllReduce, py::arg("send"), py::arg("recv"), py::arg("op"))
      .def("broadcast", &Communicator::Broadcast, py::arg("send"), py::arg("recv"), py::arg("root"))
      .def("all_gather", &Communicator::AllGather, py::arg("send"), py::arg("recv"))
      .def("reduce_scatter", &Communicator::ReduceScatter, py::arg("send"), py::arg("recv"),
           py::arg("op"))
      .def("all_reduce_group", &Communicator::AllReduceGroup, py::arg("arrays"), py::arg("op"))
      .def("set_stream", &Communicator::SetStream, py::arg("side"))
      .def("configure_peer", &Communicator::ConfigurePeer, py::arg("enabled"), py::arg("max_bytes"),
           py::arg("timeout_seconds"))
      .def("peer_stats", &Communicator::PeerStats)
      .def("all_reduce_sgd", &Communicator::AllReduceSgd, py::arg("arrays"), py::arg("params"),
           py::arg("scale"))
      .def("has_all_reduce_sgd", &Communicator::HasAllReduceSgd)
      .def("async_error", &Communicator::AsyncError)
      .def("pending_seconds", &Communicator::PendingSeconds)
      .def("abort", &Communicator::Abort)
      .def("finalize", &Communicator::Finalize)
      .def("destroy", &Communicator::Destroy);
}

}  // namespace dlarray
