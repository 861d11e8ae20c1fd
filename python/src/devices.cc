// Devices from Python: counts, names, memory, and device strings ("cuda:1").
#include <pybind11/stl.h>

#include <climits>
#include <string>

#include "binding.h"

namespace dlarray {
namespace {

// A device kind as a device type number: an int, a name ("cuda", "gpu", a plugin's) or a
// context / device string (its type).
int KindToType(const py::object& kind) {
  if (py::isinstance<py::int_>(kind) && !PyBool_Check(kind.ptr())) {
    int overflow = 0;
    const long long t = PyLong_AsLongLongAndOverflow(kind.ptr(), &overflow);
    if (overflow != 0 || t < 0 || t > INT_MAX) {
      throw Error(ErrorKind::kValue, "device_count: kind " + std::string(py::str(kind)) +
                                         " is not a device type number (DLPack's, e.g. 1 "
                                         "for the CPU, 2 for CUDA)");
    }
    return static_cast<int>(t);
  }
  if (py::isinstance<py::str>(kind)) {
    const std::string name = kind.cast<std::string>();
    const int t = DeviceTypeFromName(name.substr(0, name.find(':')));
    if (t < 0) ParseContext(name);  // throws ValueError listing the names
    return t;
  }
  if (!py::isinstance<DLContext>(kind)) {
    throw DTypeError(
        "device_count: kind must be a device name ('cpu', 'cuda'), a device type "
        "number or a DLContext, got " +
        TypeName(kind));
  }
  return kind.cast<DLContext>().device_type;
}

}  // namespace

void BindDevices(py::module_& m) {
  m.def("devices", &Devices, R"doc(Every usable device, CPU first.

A device is usable when a loaded plugin serves its type and reports it; a GPU whose plugin
is missing or has no driver is not listed (:func:`dlarray.plugins` says why).

Returns
-------
list of DLContext
    ``cpu(0)``, then ``cuda(0)``, ``cuda(1)``, ... and the devices of other plugins.

Examples
--------
>>> import dlarray
>>> dlarray.cpu(0) in dlarray.devices()
True
)doc");
  m.def(
      "device_count", [](const py::object& kind) { return DeviceCount(KindToType(kind)); },
      py::arg("kind"), "How many devices of a kind exist (0 when no plugin serves it).");
  m.def(
      "device_name", [](const DLContext& ctx) { return DeviceName(ctx); }, py::arg("ctx"),
      "The device's name (e.g. the CPU or GPU model).", Guard());
  m.def(
      "mem_info",
      [](const DLContext& ctx) {
        const MemInfo info = GetMemInfo(ctx);
        return py::make_tuple(info.free_bytes, info.total_bytes);
      },
      py::arg("ctx"), "(free, total) bytes of the device's memory.", Guard());
  m.def(
      "parse_device", [](const DLContext& ctx) { return ctx; }, py::arg("device"),
      "The context a device string or context names (no range check).");
  m.def(
      "check_device", [](const DLContext& ctx) { CheckDevice(ctx); }, py::arg("ctx"),
      "Raises unless ctx names a usable device (ValueError for an id out of range).");
}

}  // namespace dlarray
