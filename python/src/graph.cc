// dlarray._core's side of CUDA graphs: the CUDA plugin's "dlarray.graph.v1" extension
// (dlarray/ext/graph.h) as _core._graph_* functions and the _CudaGraph class, which the
// autodiff executor uses to record a plan once and replay it.
#include "dlarray/ext/graph.h"

#include <atomic>
#include <memory>
#include <string>

#include "binding.h"

namespace dlarray {
namespace {

// Set at interpreter exit: graphs are then left to the process's end (the driver may be gone).
std::atomic<bool> g_exiting{false};

const DLArrayGraphExt* GraphTable() {
  static std::atomic<const DLArrayGraphExt*> table{nullptr};
  if (const DLArrayGraphExt* t = table.load(std::memory_order_acquire)) return t;
  const void* found = nullptr;
  try {
    found = PluginExtension(kDLArrayCUDA, DLARRAY_EXT_GRAPH);
  } catch (const Error& e) {
    throw BackendError(std::string("CUDA graphs need the CUDA plugin: ") + e.what());
  }
  const auto* t = static_cast<const DLArrayGraphExt*>(found);
  if (t == nullptr || t->struct_size < sizeof(DLArrayGraphExt)) {
    throw BackendError("CUDA graphs: the CUDA plugin does not offer " DLARRAY_EXT_GRAPH
                       " (a plugin from an older dlarray?)");
  }
  table.store(t, std::memory_order_release);
  return t;
}

template <typename F>
void Call(const char* what, F&& f) {
  ClearPluginError();
  if (f() != 0) ThrowPluginError(std::string("dlarray.graph: ") + what);
}

int GpuId(const DLContext& ctx) {
  if (ctx.device_type != kDLArrayCUDA) {
    throw Error(ErrorKind::kValue,
                "CUDA graphs record GPU streams, not the stream of device "
                "type " +
                    std::to_string(ctx.device_type) + " (" + DeviceName(ctx) + ")");
  }
  return ctx.device_id;
}

/*! \brief A recorded graph; destroyed with the last reference. */
struct CudaGraph {
  DLArrayGraphExec* exec = nullptr;
  ~CudaGraph() {
    if (exec != nullptr && !g_exiting.load(std::memory_order_relaxed)) GraphTable()->destroy(exec);
  }
};

std::string Available() {
  try {
    (void)GraphTable();
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace

void BindGraph(py::module_& m) {
  m.def("_graph_unavailable_reason", &Available,
        "Why CUDA graphs cannot be recorded in this process (\"\" when they can).");
  m.def(
      "_graph_begin_capture",
      [](const DLContext& ctx) {
        const int id = GpuId(ctx);
        Call("begin_capture", [&] { return GraphTable()->begin_capture(id); });
      },
      py::arg("ctx"), "Starts recording the ops queued on ctx's stream (they are not run).");
  m.def(
      "_graph_end_capture",
      [](const DLContext& ctx) {
        const int id = GpuId(ctx);
        auto graph = std::make_shared<CudaGraph>();
        Call("end_capture", [&] { return GraphTable()->end_capture(id, &graph->exec); });
        return graph;
      },
      py::arg("ctx"), "Stops recording: the graph, ready to launch.");
  m.def(
      "_graph_abort_capture",
      [](const DLContext& ctx) {
        const int id = GpuId(ctx);
        Call("abort_capture", [&] { return GraphTable()->abort_capture(id); });
      },
      py::arg("ctx"), "Stops a recording and discards it.");
  m.def(
      "_graph_is_capturing",
      [](const DLContext& ctx) { return GraphTable()->is_capturing(GpuId(ctx)) != 0; },
      py::arg("ctx"), "Whether ctx's stream is recording.");
  m.def(
      "_graph_shutdown", [] { g_exiting.store(true); },
      "Leaves graphs to the process's end (called at interpreter exit).");
  py::class_<CudaGraph, std::shared_ptr<CudaGraph>>(m, "_CudaGraph",
                                                    "A recorded CUDA graph of one GPU's ops.")
      .def(
          "launch",
          [](const CudaGraph& g) { Call("launch", [&] { return GraphTable()->launch(g.exec); }); },
          "Queues one replay on the GPU's stream (does not wait).")
      .def_property_readonly(
          "num_nodes", [](const CudaGraph& g) { return GraphTable()->num_nodes(g.exec); },
          "Operations in the graph (kernels, copies, ...).");
}

}  // namespace dlarray
