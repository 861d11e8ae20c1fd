// dlarray._core: a thin binding. Converts arguments, releases the GIL around device work, and maps
// dlarray::Error kinds to ValueError / TypeError / RuntimeError / MemoryError.
#include <pybind11/stl.h>

#include <climits>
#include <string>
#include <vector>

#include "binding.h"
#include "dlarray/plugin_api.h"

namespace dlarray {
namespace {

// pybind11's cast_error says "Unable to cast Python instance of type <class 'str'> to C++ type
// '?'", a RuntimeError, for what is a caller's value of the wrong type. Arguments converted by
// hand get their own message naming them (IntArgument); this is the net for the rest.
void SetCastError(const std::string& what) {
  static const std::string kPrefix = "of type <class '";
  std::string type;
  const size_t at = what.find(kPrefix);
  if (at != std::string::npos) {
    const size_t begin = at + kPrefix.size();
    const size_t end = what.find('\'', begin);
    if (end != std::string::npos) type = what.substr(begin, end - begin);
  }
  const std::string msg = "an argument" + (type.empty() ? std::string() : " of type " + type) +
                          " has the wrong type or is out of range for this call (see its "
                          "signature in help())";
  PyErr_SetString(PyExc_TypeError, msg.c_str());
}

void TranslateErrors(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const py::cast_error& e) {
    SetCastError(e.what());
  } catch (const Error& e) {
    switch (e.kind()) {
      case ErrorKind::kValue:
        PyErr_SetString(PyExc_ValueError, e.what());
        return;
      case ErrorKind::kType:
        PyErr_SetString(PyExc_TypeError, e.what());
        return;
      case ErrorKind::kMemory:
        PyErr_SetString(PyExc_MemoryError, e.what());
        return;
      case ErrorKind::kRuntime:
        PyErr_SetString(PyExc_RuntimeError, e.what());
        return;
    }
  }
}

// A field of a pickled state as a C int: TypeError naming it for non-integers (bool too),
// OverflowError past the int range (a plain cast raised pybind11's cast_error).
int IntArgument(const py::handle& v, const std::string& name) {
  if (!py::isinstance<py::int_>(v) || PyBool_Check(v.ptr())) {
    throw DTypeError(name + " must be an int, got " + TypeName(v));
  }
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (n == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow != 0 || n < INT_MIN || n > INT_MAX) {
    PyErr_SetString(PyExc_OverflowError,
                    (name + " " + std::string(py::str(v)) + " is out of the int range").c_str());
    throw py::error_already_set();
  }
  return static_cast<int>(n);
}

DLContext ContextFromState(const py::tuple& t) {
  if (t.size() != 2) {
    throw DTypeError(
        "DLContext.__setstate__: the state must be a (device_id, device_type) "
        "tuple, got " +
        std::string(py::repr(t)));
  }
  const int device_id = IntArgument(t[0], "DLContext.__setstate__: device_id");
  const int device_type = IntArgument(t[1], "DLContext.__setstate__: device_type");
  return DLContext{device_type, device_id};
}

py::dict PluginToDict(const PluginInfo& p) {
  py::dict d;
  d["name"] = p.name;
  d["path"] = p.path;
  d["origin"] = p.origin;
  d["status"] = PluginStatusName(p.status);
  d["reason"] = p.reason;
  d["device_type"] = p.device_type == 0 ? std::string() : DeviceTypeName(p.device_type);
  d["device_count"] = p.device_count;
  d["abi_version"] = py::make_tuple(p.abi_version, p.abi_minor);
  d["version"] = p.version;
  d["declared_ops"] = p.declared_ops;
  d["ops"] = p.ops;
  return d;
}

std::vector<DLContext> ContextsOrAll(const py::object& ctx, const char* fn) {
  if (ctx.is_none()) return Devices();
  if (!py::isinstance<DLContext>(ctx) && !py::isinstance<py::str>(ctx)) {
    throw DTypeError(std::string(fn) +
                     ": ctx must be a DLContext (e.g. dlarray.cpu(0)), a device string "
                     "(e.g. 'cuda:0') or None, got " +
                     std::string(py::str(py::type::of(ctx).attr("__name__"))));
  }
  return {ctx.cast<DLContext>()};
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "dlarray runtime binding (see the dlarray package for the documented API)";
  py::register_exception_translator(&TranslateErrors);

  py::class_<DLContext>(m, "DLContext", R"doc(A device: its type and its id (DLPack's DLDevice).

Usually made by :func:`dlarray.cpu` and :func:`dlarray.gpu`. Contexts compare and hash by value
and can be pickled.

Parameters
----------
device_id : int
    Index among the devices of that type, from 0.
device_type : int
    DLPack's device type number: 1 for the CPU, 2 for CUDA GPUs.

Examples
--------
>>> import dlarray
>>> dlarray.DLContext(0, 1) == dlarray.cpu(0)
True
>>> dlarray.gpu(1)
cuda(1)
)doc")
      .def(py::init([](int device_id, int device_type) {
             return DLContext{device_type, device_id};
           }),
           py::arg("device_id"), py::arg("device_type"))
      .def(py::init([](const std::string& text) { return ParseContext(text); }), py::arg("device"),
           "From a device string: 'cpu', 'cuda:1', 'gpu:0', ...")
      .def_readonly("device_id", &DLContext::device_id,
                    "int: Index among the devices of that type, from 0.")
      .def_readonly("device_type", &DLContext::device_type,
                    "int: DLPack's device type number: 1 for the CPU, 2 for CUDA GPUs.")
      .def("__repr__", &ContextToString)
      .def("__eq__",
           [](const DLContext& a, const py::object& b) {
             return py::isinstance<DLContext>(b) && a == b.cast<DLContext>();
           })
      .def("__hash__", [](const DLContext& c) { return c.device_type * 1000003 + c.device_id; })
      .def(py::pickle([](const DLContext& c) { return py::make_tuple(c.device_id, c.device_type); },
                      &ContextFromState));

  m.def(
      "plugins",
      [] {
        py::list out;
        for (const PluginInfo& p : Plugins()) out.append(PluginToDict(p));
        return out;
      },
      "Every plugin tried, as dicts (see :func:`dlarray.plugins`).");
  m.def("plugin_search_path", &PluginSearchPath,
        "The folders searched for plugins at start-up, in order.");
  m.def("core_library_path", &CoreLibraryPath, "Absolute path of libdlarray_runtime.so.");
  m.def(
      "load_plugin",
      [](const std::string& path) {
        PluginInfo info = LoadPlugin(path);
        if (info.status != PluginStatus::kLoaded) {
          throw BackendError("plugin " + info.path + " is not usable: " +
                             PluginStatusName(info.status) + ": " + info.reason);
        }
        return PluginToDict(info);
      },
      py::arg("path"), "Loads one plugin library (see :func:`dlarray.load_plugin`).");
  m.def(
      "synchronize",
      [](const py::object& ctx) {
        std::vector<DLContext> all = ContextsOrAll(ctx, "synchronize");
        ReleaseGil release;
        for (const DLContext& c : all) Synchronize(c);
      },
      py::arg("ctx") = py::none(), R"doc(Waits until the work queued on a device has finished.

Ops on a GPU return as soon as they are queued on the device's stream; call this before timing
or before handing memory to code that does not know the stream. ``asnumpy()`` and copies to the
host already wait.

Parameters
----------
ctx : DLContext, optional
    The device; by default every usable device.

Raises
------
RuntimeError
    When a kernel queued earlier failed (the device's error, e.g. an illegal address), or no
    usable plugin serves ``ctx``.

Examples
--------
>>> import dlarray
>>> dlarray.synchronize(dlarray.cpu(0))
)doc",
      Guard());
  m.def(
      "memory_stats",
      [](const DLContext& ctx) {
        MemoryStats s = GetMemoryStats(ctx);
        py::dict d;
        d["bytes_in_use"] = s.bytes_in_use;
        d["bytes_reserved"] = s.bytes_reserved;
        d["num_allocations"] = s.num_allocations;
        d["num_frees"] = s.num_frees;
        d["peak_bytes_in_use"] = s.peak_bytes_in_use;
        return d;
      },
      py::arg("ctx"), "Allocator counters of a device (see :func:`dlarray.memory_stats`).");
  m.def(
      "empty_cache",
      [](const py::object& ctx) {
        for (const DLContext& c : ContextsOrAll(ctx, "empty_cache")) EmptyCache(c);
      },
      py::arg("ctx") = py::none(),
      "Returns cached device memory to the system (see :func:`dlarray.empty_cache`).", Guard());
  m.def(
      "set_option",
      [](const DLContext& ctx, const std::string& key, const std::string& value) {
        SetDeviceOption(ctx, key, value);
      },
      py::arg("ctx"), py::arg("key"), py::arg("value"),
      "Sets a device option of ctx's plugin (e.g. matmul_precision); ValueError for an unknown "
      "key or value.");
  m.def(
      "get_option",
      [](const DLContext& ctx, const std::string& key) { return GetDeviceOption(ctx, key); },
      py::arg("ctx"), py::arg("key"), "The value of a device option of ctx's plugin.");
  m.def(
      "stream_handle",
      [](const DLContext& ctx) { return reinterpret_cast<uintptr_t>(DeviceStream(ctx)); },
      py::arg("ctx"), "The device stream ops on ctx run on (cudaStream_t as an int), 0 if none.");
  m.attr("PLUGIN_ABI_VERSION") = py::make_tuple(DLARRAY_PLUGIN_ABI_MAJOR, DLARRAY_PLUGIN_ABI_MINOR);
  m.attr("__version__") = DLARRAY_VERSION;  // from the VERSION file, through CMake

  BindDevices(m);
  BindDistributed(m);
  BindDistributedMpi(m);
  BindNDArray(m);
  BindOps(m);
  BindFastPath(m);
  RegisterExitHook();
  BindCustom(m);
  BindRtc(m);
  BindGraph(m);
  BindFuseOpencl(m);
  BindFuseFast(m);
}

}  // namespace dlarray
