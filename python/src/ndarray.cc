// NDArray: shape, ctx, dtype, asnumpy, copyto, arr[:] = value, repr; empty() and array().
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "binding.h"

namespace dlarray {
namespace {

std::string TypeName(const py::handle& obj) { return py::str(py::type::of(obj).attr("__name__")); }

// One dimension: any integer (int, numpy integers, objects with __index__) within int64.
int64_t ToDim(const py::handle& d) {
  if (!py::isinstance<py::int_>(d) && !py::hasattr(d, "__index__")) {
    throw DTypeError("shape entries must be integers, got " + TypeName(d));
  }
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(d.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) {
    throw ShapeError("shape dimension " + std::string(py::str(index)) +
                     " is out of range: dimensions must be between 1 and 2**63 - 1");
  }
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

std::vector<int64_t> ShapeFrom(const py::handle& shape) {
  std::vector<int64_t> dims;
  if (py::isinstance<py::int_>(shape) ||
      (!py::isinstance<py::sequence>(shape) && py::hasattr(shape, "__index__"))) {
    dims.push_back(ToDim(shape));
  } else if (py::isinstance<py::sequence>(shape) && !py::isinstance<py::str>(shape) &&
             !py::isinstance<py::bytes>(shape)) {
    for (const py::handle& d : shape) dims.push_back(ToDim(d));
  } else {
    throw DTypeError("shape must be an int or a sequence of ints, got " + TypeName(shape));
  }
  return dims;
}

// obj as a C-contiguous NumPy array of dtype dt. Only numbers convert: NumPy would also turn
// None into NaN, strings into their numeric value and complex into its real part, silently.
py::array NumericArray(const py::object& obj, const py::object& dt, const std::string& where) {
  py::module_ np = py::module_::import("numpy");
  if (obj.is_none()) {
    throw DTypeError(where + ": None is not array data (only numbers convert: bool, int, float)");
  }
  py::array probe = np.attr("asarray")(obj);
  const char kind = probe.dtype().kind();
  if (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f') {
    throw DTypeError(where + ": cannot convert " + TypeName(obj) + " (NumPy dtype " +
                     std::string(py::str(probe.dtype())) +
                     ") to numbers; only bool, int, uint and float data convert");
  }
  return np.attr("asarray")(probe, py::arg("dtype") = dt, py::arg("order") = "C");
}

py::tuple ShapeTuple(const Array& a) {
  py::tuple t(a.shape().size());
  for (size_t i = 0; i < a.shape().size(); ++i) t[i] = py::int_(a.shape()[i]);
  return t;
}

DLArray HostView(py::array& arr, DLArrayDType dtype, std::vector<int64_t>& shape) {
  shape.assign(arr.shape(), arr.shape() + arr.ndim());
  DLArray v{};
  v.data = arr.mutable_data();
  v.ctx = DLContext{kDLArrayCPU, 0};
  v.ndim = static_cast<int32_t>(arr.ndim());
  v.dtype = dtype;
  v.shape = shape.data();
  return v;
}

// Copies with the GIL released for large or device arrays; the GIL is held again on return, so
// callers may build Python objects right after.
void Copy(const DLArray* from, DLArray* to) {
  if (ShouldReleaseGilForCopy(from) || ShouldReleaseGilForCopy(to)) {
    ReleaseGil release;
    CopyFromTo(from, to);
  } else {
    CopyFromTo(from, to);
  }
}

py::array AsNumpy(const NDArray& self) {
  const Array& a = *self.array;
  py::array out(DTypeToNumpy(a.dtype()), a.shape());
  std::vector<int64_t> shape;
  DLArray host = HostView(out, a.dtype(), shape);
  Copy(a.dl(), &host);
  return out;
}

void CopyFromNumpy(NDArray& self, const py::object& value) {
  Array& a = *self.array;
  py::module_ np = py::module_::import("numpy");
  py::object dt = DTypeToNumpy(a.dtype());
  py::array src = NumericArray(value, dt, "arr[:] = value");
  if (src.ndim() != static_cast<py::ssize_t>(a.shape().size()) ||
      !std::equal(a.shape().begin(), a.shape().end(), src.shape())) {
    py::tuple target = ShapeTuple(a);
    try {
      src =
          np.attr("ascontiguousarray")(np.attr("broadcast_to")(src, target), py::arg("dtype") = dt);
    } catch (const py::error_already_set&) {
      throw ShapeError("cannot set an NDArray of shape " + ShapeToString(a.dl()) +
                       " from a value of shape " + std::string(py::str(src.attr("shape"))));
    }
  }
  std::vector<int64_t> shape;
  DLArray host = HostView(src, a.dtype(), shape);
  Copy(&host, a.dl());
}

NDArray Empty(const py::handle& shape, const DLContext& ctx, const py::object& dtype) {
  py::dtype dt = dtype.is_none() ? py::dtype("float32") : py::dtype::from_args(dtype);
  return NDArray{Array::Empty(ShapeFrom(shape), ctx, DTypeFromNumpy(dt))};
}

NDArray FromObject(const py::object& obj, const DLContext& ctx, const py::object& dtype) {
  if (py::isinstance<NDArray>(obj)) {
    const NDArray& src = obj.cast<const NDArray&>();
    DLArrayDType t =
        dtype.is_none() ? src.array->dtype() : DTypeFromNumpy(py::dtype::from_args(dtype));
    if (t != src.array->dtype())
      throw DTypeError("array(): dtype conversion of an NDArray is not supported");
    NDArray out{Array::Empty(src.array->shape(), ctx, t)};
    Copy(src.dl(), out.dl());
    return out;
  }
  py::object dt = dtype.is_none() ? py::object(py::dtype("float32")) : dtype;
  py::array src = NumericArray(obj, dt, "array()");
  std::vector<int64_t> shape(src.shape(), src.shape() + src.ndim());
  NDArray out{Array::Empty(shape, ctx, DTypeFromNumpy(src.dtype()))};
  CopyFromNumpy(out, src);
  return out;
}

std::string Repr(const NDArray& self) {
  const Array& a = *self.array;
  std::string head = "NDArray(shape=" + ShapeToString(a.dl()) +
                     ", dtype=" + DTypeToString(a.dtype()) + ", ctx=" + ContextToString(a.ctx()) +
                     ")";
  if (a.size() > 1000) return head;
  py::module_ np = py::module_::import("numpy");
  std::string data = py::str(np.attr("array2string")(AsNumpy(self), py::arg("separator") = ", ",
                                                     py::arg("prefix") = "        "));
  return "NDArray(" + data + ", dtype=" + DTypeToString(a.dtype()) +
         ", ctx=" + ContextToString(a.ctx()) + ")";
}

}  // namespace

void BindNDArray(py::module_& m) {
  py::class_<NDArray>(m, "NDArray", "An n-dimensional array on one device.")
      .def_property_readonly("shape", [](const NDArray& s) { return ShapeTuple(*s.array); })
      .def_property_readonly("ctx", [](const NDArray& s) { return s.array->ctx(); })
      .def_property_readonly("dtype",
                             [](const NDArray& s) { return DTypeToNumpy(s.array->dtype()); })
      .def_property_readonly("size", [](const NDArray& s) { return s.array->size(); })
      .def_property_readonly("ndim", [](const NDArray& s) { return s.array->shape().size(); })
      .def_property_readonly("nbytes", [](const NDArray& s) { return s.array->nbytes(); })
      .def_property_readonly(
          "data_ptr", [](const NDArray& s) { return reinterpret_cast<uintptr_t>(s.dl()->data); },
          "Address of the first element (device pointer for device arrays).")
      .def("asnumpy", &AsNumpy, "Copies to a new NumPy array (waits for pending device work).",
           Guard())
      .def(
          "__array__",
          [](const NDArray& s, const py::object& dtype, const py::object&) {
            py::array a = AsNumpy(s);
            return dtype.is_none() ? py::object(a) : py::object(a.attr("astype")(dtype));
          },
          py::arg("dtype") = py::none(), py::arg("copy") = py::none(), Guard())
      .def(
          "copyto",
          [](const NDArray& self, const py::object& target) -> py::object {
            if (py::isinstance<DLContext>(target)) {
              NDArray out{
                  Array::Empty(self.array->shape(), target.cast<DLContext>(), self.array->dtype())};
              Copy(self.dl(), out.dl());
              return py::cast(std::move(out));
            }
            if (py::isinstance<NDArray>(target)) {
              const NDArray& out = target.cast<const NDArray&>();
              Copy(self.dl(), out.dl());
              return target;
            }
            throw DTypeError("copyto: target must be a DLContext or an NDArray, got " +
                             TypeName(target));
          },
          py::arg("target"), "Copies into a new array on a context, or into an existing NDArray.",
          Guard())
      .def(
          "__setitem__",
          [](NDArray& self, const py::object& key, const py::object& value) {
            bool full = py::isinstance<py::slice>(key) && key.attr("start").is_none() &&
                        key.attr("stop").is_none() && key.attr("step").is_none();
            if (!full && !(py::isinstance<py::tuple>(key) && py::len(key) == 0) &&
                !key.is(py::ellipsis())) {
              throw Error(ErrorKind::kValue,
                          "NDArray supports only whole-array assignment: arr[:] = value");
            }
            if (py::isinstance<NDArray>(value)) {
              const NDArray& src = value.cast<const NDArray&>();
              if (src.dl() == self.dl()) return;
              Copy(src.dl(), self.dl());
              return;
            }
            CopyFromNumpy(self, value);
          },
          Guard())
      .def("__len__",
           [](const NDArray& s) {
             if (s.array->shape().empty()) throw DTypeError("len() of a 0-d NDArray");
             return s.array->shape()[0];
           })
      .def("__repr__", &Repr, Guard());

  m.def("empty", &Empty, py::arg("shape"), py::arg("ctx") = DLContext{kDLArrayCPU, 0},
        py::arg("dtype") = py::none(), "An uninitialised array (float32 unless dtype is given).",
        Guard());
  m.def("array", &FromObject, py::arg("obj"), py::arg("ctx") = DLContext{kDLArrayCPU, 0},
        py::arg("dtype") = py::none(),
        "Copies array-like data to ctx (float32 unless dtype is given, as in the seed).", Guard());
}

}  // namespace dlarray
