// NDArray: shape, ctx, dtype, asnumpy, copyto, arr[key] = value, copy, astype, repr, pickling;
// empty() and array().
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "assign.h"
#include "binding.h"

namespace dlarray {
namespace {

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

NDArray Empty(const py::handle& shape, const DLContext& ctx, const py::object& dtype) {
  const DLArrayDType t = dtype.is_none() ? kFloat32 : DTypeFromNumpy(dtype);
  return NDArray{Array::Empty(ShapeFrom(shape), ctx, t)};
}

NDArray Astype(const NDArray& self, const py::object& dtype, bool copy) {
  const DLArrayDType t = DTypeFromNumpy(dtype);
  if (t == self.array->dtype()) return copy ? CompactCopy(self) : self;
  // The array API standard: complex to real "should not be permitted" (NumPy warns and drops the
  // imaginary part, a silent loss of data once warnings are filtered).
  if (self.array->dtype().code == kDLArrayComplex && t.code != kDLArrayComplex) {
    throw DTypeError("astype: converting " + DTypeToString(self.array->dtype()) + " to " +
                     DTypeToString(t) +
                     " would drop the imaginary part; the array API does not permit it");
  }
  NDArray src = self.array->is_compact() ? self : CompactCopy(self);
  NDArray out{Array::Empty(src.array->shape(), src.array->ctx(), t)};
  RunOp(RequireOp("astype"), {src.dl()}, {&out}, {});
  return out;
}

// A copy of obj on ctx: NDArrays (any device) and DLPack producers without a host round trip,
// anything else through NumPy. dtype None: float32 (the seed's rule) for non-arrays.
NDArray FromObject(const py::object& obj, const DLContext& ctx, const py::object& dtype) {
  NDArray src;
  if (py::isinstance<NDArray>(obj)) {
    src = obj.cast<NDArray>();
  } else if (!py::isinstance<py::array>(obj) && py::hasattr(obj, "__dlpack__")) {
    src = py::module_::import("dlarray._core").attr("from_dlpack")(obj).cast<NDArray>();
  }
  if (src.array) {
    if (!dtype.is_none()) src = Astype(src, dtype, false);
    if (!src.array->is_compact()) src = CompactCopy(src);
    NDArray out{Array::Empty(src.array->shape(), ctx, src.array->dtype())};
    if (src.array->ctx() == ctx) {
      RunOp(RequireOp("copy"), {src.dl()}, {&out}, {});
    } else {
      CopyArrays(src.dl(), out.dl());
    }
    return out;
  }
  py::module_ np = py::module_::import("numpy");
  py::object dt = dtype.is_none() ? py::object(DTypeToNumpy(kFloat32)) : dtype;
  py::array host = NumericArray(obj, DTypeToNumpy(DTypeFromNumpy(dt)), "array()");
  std::vector<int64_t> shape(host.shape(), host.shape() + host.ndim());
  NDArray out{Array::Empty(shape, ctx, DTypeFromNumpy(host.dtype()))};
  if (out.array->size() == 0) return out;
  std::shared_ptr<Array> shared = ShareNumpy(host);
  if (shared && ctx.device_type == kDLArrayCPU) {
    RunOp(RequireOp("copy"), {shared->dl()}, {&out}, {});  // any strides, never a write
  } else {
    host = np.attr("asarray")(host, py::arg("order") = "C");  // 0-d stays 0-d
    std::vector<int64_t> dims;
    DLArray view = HostView(host, out.array->dtype(), dims);
    CopyArrays(&view, out.dl());
  }
  return out;
}

// A pickled NDArray: (host data as a NumPy array, device).
NDArray FromState(const py::tuple& t) {
  if (t.size() != 2) throw Error(ErrorKind::kValue, "NDArray pickle: bad state");
  if (!py::isinstance<py::array>(t[0]) ||
      !(py::isinstance<DLContext>(t[1]) || py::isinstance<py::str>(t[1]))) {
    throw DTypeError("NDArray.__setstate__: the state must be (a numpy array, a DLContext), got (" +
                     TypeName(t[0]) + ", " + TypeName(t[1]) + ")");
  }
  py::array host = t[0].cast<py::array>();
  return FromObject(host, t[1].cast<DLContext>(), py::object(host.attr("dtype")));
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

// bool(x): NumPy's rule: one element is its truth value; more are ambiguous; none is an error.
bool Truth(const NDArray& self) {
  const int64_t n = self.array->size();
  if (n != 1) {
    throw Error(ErrorKind::kValue,
                n == 0 ? "the truth value of an empty NDArray is ambiguous"
                       : "the truth value of an NDArray with " + std::to_string(n) +
                             " elements is ambiguous; compare and reduce on the host "
                             "(x.asnumpy().any() or .all())");
  }
  return AsNumpy(self).attr("item")().cast<bool>();
}

py::object Item(const NDArray& self) {
  if (self.array->size() != 1) {
    throw Error(ErrorKind::kValue, "item(): the NDArray has " + std::to_string(self.array->size()) +
                                       " elements; only one-element arrays convert to a scalar");
  }
  return AsNumpy(self).attr("item")();
}

}  // namespace

void CopyArrays(const DLArray* from, DLArray* to) {
  if (ShouldReleaseGilForCopy(from) || ShouldReleaseGilForCopy(to)) {
    py::gil_scoped_release release;
    CopyFromTo(from, to);
  } else {
    CopyFromTo(from, to);
  }
}

NDArray CompactCopy(const NDArray& src) {
  NDArray out{Array::Empty(src.array->shape(), src.array->ctx(), src.array->dtype())};
  RunOp(RequireOp("copy"), {src.dl()}, {&out}, {});
  return out;
}

py::array AsNumpy(const NDArray& self) {
  NDArray src = self.array->is_compact() ? self : CompactCopy(self);
  const Array& a = *src.array;
  py::array out(DTypeToNumpy(a.dtype()), a.shape());
  if (a.size() == 0) return out;
  std::vector<int64_t> shape;
  DLArray host = HostView(out, a.dtype(), shape);
  CopyArrays(a.dl(), &host);
  return out;
}

void BindNDArray(py::module_& m) {
  py::class_<NDArray> cls(m, "NDArray", py::buffer_protocol(),
                          R"doc(An n-dimensional array on one device.

Made by :func:`dlarray.empty`, :func:`dlarray.array`, :func:`dlarray.asarray`,
:func:`dlarray.from_dlpack` and :meth:`NDArray.copyto`, never directly. Arrays the runtime makes
are compact and row-major (DLPack's DLTensor layout); views (indexing, ``T``, ``reshape``) and
arrays over other libraries' memory share it, with strides. The memory is freed when the last
array over it goes.

Operators (``+ - * / @``, comparisons, in-place forms) follow NumPy 2's dtype promotion (NEP 50:
Python scalars are weak), with bfloat16 promoting as float16 does and bfloat16 with float16
giving float32. A Python int an integer result cannot hold raises OverflowError
(``int8_array + 1000``) instead of wrapping; comparisons with it are exact.

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
>>> x[:, 1].asnumpy()
array([1., 4.], dtype=float32)
)doc");
  cls.def_property_readonly(
         "shape", [](const NDArray& s) { return ShapeTuple(*s.array); }, "Extents, a tuple.")
      .def_property_readonly(
          "ctx", [](const NDArray& s) { return s.array->ctx(); }, "The array's device context.")
      .def_property_readonly(
          "device", [](const NDArray& s) { return s.array->ctx(); },
          "The array's device context (the array API's name for ctx).")
      .def_property_readonly(
          "dtype", [](const NDArray& s) { return DTypeToNumpy(s.array->dtype()); },
          "Element type, as a numpy.dtype (bfloat16: ml_dtypes.bfloat16).")
      .def_property_readonly(
          "size", [](const NDArray& s) { return s.array->size(); }, "Number of elements.")
      .def_property_readonly(
          "ndim", [](const NDArray& s) { return s.array->shape().size(); }, "Number of dimensions.")
      .def_property_readonly(
          "nbytes", [](const NDArray& s) { return s.array->nbytes(); },
          "Bytes of the elements (size * itemsize).")
      .def_property_readonly(
          "itemsize", [](const NDArray& s) { return DTypeBytes(s.array->dtype()); },
          "Bytes per element.")
      .def_property_readonly(
          "strides",
          [](const NDArray& s) {
            const auto& st = s.array->strides();
            py::tuple t(st.size());
            const int64_t item = static_cast<int64_t>(DTypeBytes(s.array->dtype()));
            for (size_t i = 0; i < st.size(); ++i) t[i] = py::int_(st[i] * item);
            return t;
          },
          "Bytes to step in each dimension (NumPy's convention).")
      .def_property_readonly(
          "is_contiguous", [](const NDArray& s) { return s.array->is_compact(); },
          "Whether the elements are compact row-major (C-contiguous).")
      .def_property_readonly(
          "readonly", [](const NDArray& s) { return s.array->read_only(); },
          "Whether writes are refused (the memory of a read-only source).")
      .def_property_readonly(
          "data_ptr",
          [](const NDArray& s) { return reinterpret_cast<uintptr_t>(s.array->data_ptr()); },
          "Address of the first element (device pointer for device arrays).")
      .def("asnumpy", &AsNumpy, R"doc(Copies the array into a new NumPy array.

Waits for the work queued on the array's device first, so the result reflects every op issued
before the call.

Returns
-------
numpy.ndarray
    A new compact array of the same shape and dtype, in host memory.

Examples
--------
>>> import dlarray
>>> dlarray.array([1, 2, 3]).asnumpy()
array([1., 2., 3.], dtype=float32)
)doc",
           Guard())
      .def(
          "copyto",
          [](const NDArray& self, const py::object& target) -> py::object {
            if (py::isinstance<NDArray>(target)) {
              Assign(target.cast<NDArray>(), py::cast(self));
              return target;
            }
            if (!py::isinstance<DLContext>(target) && !py::isinstance<py::str>(target)) {
              throw DTypeError(
                  "copyto: target must be a DLContext, a device string or an "
                  "NDArray, got " +
                  TypeName(target));
            }
            const DLContext ctx = target.cast<DLContext>();
            NDArray src = self.array->is_compact() ? self : CompactCopy(self);
            NDArray out{Array::Empty(src.array->shape(), ctx, src.array->dtype())};
            if (ctx == src.array->ctx()) {
              RunOp(RequireOp("copy"), {src.dl()}, {&out}, {});
            } else {
              CopyArrays(src.dl(), out.dl());
            }
            return py::cast(std::move(out));
          },
          py::arg("target"), R"doc(Copies the array to a device, or into an existing array.

Parameters
----------
target : DLContext, str or NDArray
    A device (a new compact array is made there) or an NDArray of the same shape and dtype
    (any layout, any device).

Returns
-------
NDArray
    The copy (``target`` itself when it is an NDArray).

Raises
------
TypeError
    ``target`` is neither a device nor an NDArray, or the dtypes differ.
ValueError
    The shapes differ, the target is read-only, or the device is unknown.)doc",
          Guard())
      .def("copy", &CompactCopy, R"doc(A compact copy on the same device (how views become compact).

Returns
-------
NDArray
    A new C-contiguous array with the same elements.)doc",
           Guard())
      .def("astype", &Astype, py::arg("dtype"), py::arg("copy") = true,
           R"doc(The elements converted to another dtype, on the same device (NumPy's casts).

Parameters
----------
dtype : numpy dtype, numpy scalar type or name
    The target dtype, spelled as for every dtype argument (``'int8'``, ``np.int8``,
    ``np.dtype('int8')``; bfloat16: ``'bfloat16'`` or ``ml_dtypes.bfloat16``).
copy : bool, optional
    False: return the array itself when it already has ``dtype`` (default True: always new).

Returns
-------
NDArray
    The converted array.

Raises
------
TypeError
    An unsupported dtype.)doc",
           Guard())
      .def(
          "__setitem__",
          [](const NDArray& self, const py::object& key, const py::object& value) {
            py::object target = py::cast(self).attr("__getitem__")(key);
            Assign(target.cast<NDArray>(), value);
          },
          R"doc(Assignment to the elements a basic index selects: ``arr[key] = value``.

Parameters
----------
key : int, slice, Ellipsis, None or tuple of them
    As for ``arr[key]`` (``arr[:]`` is the whole array).
value : NDArray, array_like or scalar
    An NDArray of the selection's shape and dtype (on any device), or anything NumPy converts
    to an array that broadcasts to the selection's shape.

Raises
------
ValueError
    A value whose shape does not broadcast, a read-only array, or NaN into an integer array.
OverflowError
    A number an integer array's dtype cannot hold (``1000`` into int8, ``-1`` into uint8, an
    infinity), as in NumPy.
TypeError
    An NDArray value of another dtype, or advanced indexing.
IndexError
    An index out of bounds.

Examples
--------
>>> import dlarray
>>> x = dlarray.empty((2, 2))
>>> x[:] = 3
>>> x[0, 1] = 5
>>> x.asnumpy()
array([[3., 5.],
       [3., 3.]], dtype=float32)
)doc",
          Guard())
      .def("__len__",
           [](const NDArray& s) {
             if (s.array->shape().empty()) throw DTypeError("len() of a 0-d NDArray");
             return s.array->shape()[0];
           })
      .def("__bool__", &Truth, Guard())
      .def("item", &Item, "The single element as a Python scalar.", Guard())
      .def(
          "__float__", [](const NDArray& s) { return py::float_(Item(s)); }, Guard())
      .def(
          "__int__", [](const NDArray& s) { return py::int_(Item(s)); }, Guard())
      .def(
          "__index__",
          [](const NDArray& s) {
            // As NumPy 2: only integer arrays are indices (not bool, not float), and one element.
            const DLArrayDType t = s.array->dtype();
            if (t.code != kDLArrayInt && t.code != kDLArrayUInt) {
              throw DTypeError("only integer arrays can be used as an index (__index__), got " +
                               DTypeToString(t));
            }
            if (s.array->size() != 1 || !s.array->shape().empty()) {
              throw DTypeError("only 0-d integer arrays can be used as an index (__index__), got " +
                               std::to_string(s.array->shape().size()) + " dimensions");
            }
            return py::int_(Item(s));
          },
          Guard())
      .def(
          "__complex__",
          [](const NDArray& s) {
            const py::object v = Item(s);
            return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(
                PyComplex_RealAsDouble(v.ptr()), PyComplex_ImagAsDouble(v.ptr())));
          },
          Guard())
      .def(
          "tolist", [](const NDArray& s) { return AsNumpy(s).attr("tolist")(); },
          "The elements as nested Python lists (copied to the host).", Guard())
      .def("__repr__", &Repr, Guard())
      .def(py::pickle([](const NDArray& s) { return py::make_tuple(AsNumpy(s), s.array->ctx()); },
                      &FromState));

  BindViews(cls);
  BindDLPack(m, cls);
  BindNumpyInterop(m, cls);

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
  m.def(
      "parse_dtype", [](const py::object& spec) { return DTypeToNumpy(DTypeFromNumpy(spec)); },
      py::arg("dtype"), R"doc(The numpy dtype a dtype specification names, as every dtype argument
parses it: a numpy dtype, a numpy scalar type, a Python type, a name ('float32', 'f4', 'int8')
or 'bfloat16' (ml_dtypes.bfloat16, which needs the ml_dtypes package).

Raises
------
TypeError
    Not a data type, or one dlarray does not support.)doc",
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
