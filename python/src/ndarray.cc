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
  py::class_<NDArray>(m, "NDArray", R"doc(An n-dimensional array on one device.

Made by :func:`dlarray.empty`, :func:`dlarray.array` and :meth:`NDArray.copyto`, never directly.
The memory is compact and row-major (DLPack's DLTensor layout) and belongs to the device of
:attr:`ctx`; it is freed when the last reference goes.

Examples
--------
>>> import numpy as np
>>> import dlarray
>>> x = dlarray.array(np.arange(6).reshape(2, 3))
>>> x.shape, x.dtype, x.ctx
((2, 3), dtype('float32'), cpu(0))
>>> x.asnumpy()
array([[0., 1., 2.],
       [3., 4., 5.]], dtype=float32)
)doc")
      .def_property_readonly(
          "shape", [](const NDArray& s) { return ShapeTuple(*s.array); },
          "tuple of int: The extent of each dimension.")
      .def_property_readonly(
          "ctx", [](const NDArray& s) { return s.array->ctx(); },
          "DLContext: The device that holds the data.")
      .def_property_readonly(
          "dtype", [](const NDArray& s) { return DTypeToNumpy(s.array->dtype()); },
          "numpy.dtype: The element type (float32 unless asked otherwise).")
      .def_property_readonly(
          "size", [](const NDArray& s) { return s.array->size(); }, "int: The number of elements.")
      .def_property_readonly(
          "ndim", [](const NDArray& s) { return s.array->shape().size(); },
          "int: The number of dimensions.")
      .def_property_readonly(
          "nbytes", [](const NDArray& s) { return s.array->nbytes(); },
          "int: The size of the data in bytes.")
      .def_property_readonly(
          "data_ptr", [](const NDArray& s) { return reinterpret_cast<uintptr_t>(s.dl()->data); },
          "int: Address of the first element (a device pointer for device arrays).")
      .def("asnumpy", &AsNumpy, R"doc(Copies the array into a new NumPy array.

Waits for the work queued on the array's device first, so the result reflects every op issued
before the call.

Returns
-------
numpy.ndarray
    A new array of the same shape and dtype, in host memory.

Examples
--------
>>> import dlarray
>>> dlarray.array([1, 2, 3]).asnumpy()
array([1., 2., 3.], dtype=float32)
)doc",
           Guard())
      .def(
          "__array__",
          [](const NDArray& s, const py::object& dtype, const py::object&) {
            py::array a = AsNumpy(s);
            return dtype.is_none() ? py::object(a) : py::object(a.attr("astype")(dtype));
          },
          py::arg("dtype") = py::none(), py::arg("copy") = py::none(),
          "NumPy's conversion hook: ``numpy.asarray(x)`` copies like :meth:`asnumpy`.", Guard())
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
          py::arg("target"), R"doc(Copies the array to another device, or into another array.

Parameters
----------
target : DLContext or NDArray
    A device: the copy is a new array there. An NDArray of the same shape and dtype, on any
    device: the data is copied into it.

Returns
-------
NDArray
    The new array, or ``target``.

Raises
------
ValueError
    When ``target`` is an NDArray of another shape.
TypeError
    When ``target`` is neither a DLContext nor an NDArray, or has another dtype.
RuntimeError
    When ``target``'s device has no usable plugin.
MemoryError
    When the new array cannot be allocated.

Examples
--------
>>> import dlarray
>>> x = dlarray.array([1.0, 2.0])
>>> y = dlarray.empty((2,))
>>> x.copyto(y) is y
True
>>> x.copyto(dlarray.cpu(0)).asnumpy()
array([1., 2.], dtype=float32)
)doc",
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
          R"doc(Whole-array assignment: ``arr[:] = value``.

Parameters
----------
key : slice
    ``:`` (or ``...``, ``()``): only whole-array assignment is supported.
value : NDArray, array_like or scalar
    An NDArray of the same shape (on any device), or anything NumPy converts to an array that
    broadcasts to this array's shape.

Raises
------
ValueError
    For any other key, or a value whose shape does not broadcast.

Examples
--------
>>> import dlarray
>>> x = dlarray.empty((2, 2))
>>> x[:] = 3
>>> x.asnumpy()
array([[3., 3.],
       [3., 3.]], dtype=float32)
)doc",
          Guard())
      .def(
          "__len__",
          [](const NDArray& s) {
            if (s.array->shape().empty()) throw DTypeError("len() of a 0-d NDArray");
            return s.array->shape()[0];
          },
          "The length of the first dimension; TypeError for a 0-d array.")
      .def("__repr__", &Repr, Guard());

  m.def("empty", &Empty, py::arg("shape"), py::arg("ctx") = DLContext{kDLArrayCPU, 0},
        py::arg("dtype") = py::none(), R"doc(A new array whose elements are not initialised.

Parameters
----------
shape : int or sequence of int
    The extent of each dimension; every extent must be at least 1.
ctx : DLContext, optional
    The device, ``cpu(0)`` by default.
dtype : numpy dtype or str, optional
    float32 by default; numeric types only (float, int, uint, bool).

Returns
-------
NDArray

Raises
------
ValueError
    When an extent is smaller than 1, or ``ctx``'s device id is out of range.
TypeError
    When ``shape`` is not integers, or ``dtype`` is not numeric.
RuntimeError
    When no usable plugin serves ``ctx`` (the message says why).
MemoryError
    When the device cannot allocate the array.

Examples
--------
>>> import dlarray
>>> x = dlarray.empty((500, 200), dlarray.cpu(0))
>>> x.shape, x.dtype
((500, 200), dtype('float32'))
)doc",
        Guard());
  m.def("array", &FromObject, py::arg("obj"), py::arg("ctx") = DLContext{kDLArrayCPU, 0},
        py::arg("dtype") = py::none(),
        R"doc(Copies array-like data to a device.

Parameters
----------
obj : array_like or NDArray
    Anything NumPy converts to an array (lists, NumPy arrays of any numeric dtype and layout),
    or an NDArray on any device.
ctx : DLContext, optional
    The device, ``cpu(0)`` by default.
dtype : numpy dtype or str, optional
    float32 by default, as in the seed (an NDArray keeps its dtype); numeric types only.

Returns
-------
NDArray
    A new array on ``ctx``.

Raises
------
ValueError
    When the data is empty or ragged, or ``ctx``'s device id is out of range.
TypeError
    When the dtype is not numeric, or an NDArray would need a dtype conversion.
RuntimeError
    When no usable plugin serves ``ctx``.
MemoryError
    When the device cannot allocate the array.

Examples
--------
>>> import numpy as np
>>> import dlarray
>>> dlarray.array(np.eye(2), dlarray.cpu(0))
NDArray([[1., 0.],
         [0., 1.]], dtype=float32, ctx=cpu(0))
)doc",
        Guard());
}

}  // namespace dlarray
