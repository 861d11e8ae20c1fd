// dlarray._core's side of device graphs: the "dlarray.graph.v1" extension (dlarray/ext/graph.h) of
// the device plugin serving the recorded device (CUDA graphs on the CUDA plugin) as
// _core._graph_* functions and the _CudaGraph class, which the autodiff executor uses to record a
// plan once and replay it.
#include "dlarray/ext/graph.h"

#include <pybind11/stl.h>

#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "binding.h"

namespace dlarray {
namespace {

// Set at interpreter exit: graphs are then left to the process's end (the driver may be gone).
std::atomic<bool> g_exiting{false};

// The graph table of ctx's device plugin (any device type may offer one), checked once per type.
const DLArrayGraphExtV1* GraphTable(const DLContext& ctx) {
  static std::array<std::atomic<const DLArrayGraphExtV1*>, DLARRAY_MAX_DEVICE_TYPES> tables{};
  CheckDevice(ctx);  // a type in range with a usable plugin, else its reason
  std::atomic<const DLArrayGraphExtV1*>& slot = tables[ctx.device_type];
  if (const DLArrayGraphExtV1* t = slot.load(std::memory_order_acquire)) return t;
  const auto* t =
      static_cast<const DLArrayGraphExtV1*>(DeviceExtension(ctx.device_type, DLARRAY_EXT_GRAPH_V1));
  if (t == nullptr || t->struct_size < sizeof(DLArrayGraphExtV1)) {
    throw Error(ErrorKind::kValue, "graphs record a device's stream, and the plugin serving " +
                                       ContextToString(ctx) + " does not offer a complete " +
                                       DLARRAY_EXT_GRAPH_V1);
  }
  slot.store(t, std::memory_order_release);
  return t;
}

template <typename F>
void Call(const char* what, F&& f) {
  ClearPluginError();
  if (f() != 0) ThrowPluginError(std::string("dlarray.graph: ") + what);
}

/*! \brief A recorded graph and the table of the plugin that made it; destroyed with the last
 *         reference. */
struct CudaGraph {
  const DLArrayGraphExtV1* ext = nullptr;
  DLArrayGraphExec* exec = nullptr;
  ~CudaGraph() {
    if (exec != nullptr && !g_exiting.load(std::memory_order_relaxed)) ext->destroy(exec);
  }
};

// Why ctx's device (any device, when None) cannot record graphs; "" when it can.
std::string Available(const std::optional<DLContext>& ctx) {
  int device_type = -1;
  try {
    if (ctx.has_value()) {
      (void)GraphTable(*ctx);
    } else {
      (void)RequireExtension(DLARRAY_EXT_GRAPH_V1, "recording graphs", &device_type);
    }
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace

void BindGraph(py::module_& m) {
  m.def("_graph_unavailable_reason", &Available, py::arg("ctx") = py::none(),
        "Why graphs cannot be recorded on ctx (by default: on any device) (\"\" when they can).");
  m.def(
      "_graph_begin_capture",
      [](const DLContext& ctx) {
        Call("begin_capture", [&] { return GraphTable(ctx)->begin_capture(ctx.device_id); });
      },
      py::arg("ctx"), "Starts recording the ops queued on ctx's stream (they are not run).");
  m.def(
      "_graph_end_capture",
      [](const DLContext& ctx) {
        auto graph = std::make_shared<CudaGraph>();
        graph->ext = GraphTable(ctx);
        Call("end_capture", [&] { return graph->ext->end_capture(ctx.device_id, &graph->exec); });
        return graph;
      },
      py::arg("ctx"), "Stops recording: the graph, ready to launch.");
  m.def(
      "_graph_abort_capture",
      [](const DLContext& ctx) {
        Call("abort_capture", [&] { return GraphTable(ctx)->abort_capture(ctx.device_id); });
      },
      py::arg("ctx"), "Stops a recording and discards it.");
  m.def(
      "_graph_is_capturing",
      [](const DLContext& ctx) { return GraphTable(ctx)->is_capturing(ctx.device_id) != 0; },
      py::arg("ctx"), "Whether ctx's stream is recording.");
  m.def(
      "_graph_shutdown", [] { g_exiting.store(true); },
      "Leaves graphs to the process's end (called at interpreter exit).");
  py::class_<CudaGraph, std::shared_ptr<CudaGraph>>(m, "_CudaGraph",
                                                    "A recorded CUDA graph of one GPU's ops.")
      .def(
          "launch",
          [](const CudaGraph& g) { Call("launch", [&] { return g.ext->launch(g.exec); }); },
          "Queues one replay on the GPU's stream (does not wait).")
      .def_property_readonly(
          "num_nodes", [](const CudaGraph& g) { return g.ext->num_nodes(g.exec); },
          "Operations in the graph (kernels, copies, ...).");
}

}  // namespace dlarray
