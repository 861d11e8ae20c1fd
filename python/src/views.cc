// Views that share memory: basic indexing (x[0], x[1:3], x[:, ::2], x[..., None]), reshape (a
// view whenever the layout allows), transpose / T / mT, iteration, and _view (any layout).
#include <pybind11/stl.h>

#include <numeric>
#include <string>
#include <vector>

#include "binding.h"
#include "fast_path.h"

namespace dlarray {
namespace {

[[noreturn]] void IndexFail(const std::string& msg) { throw py::index_error(msg); }

// operator.index(v) as int64, named what (e.g. "transpose: axis") in errors: TypeError for
// non-integers, OverflowError past int64, or IndexError for an index, as NumPy raises.
int64_t Index(const py::handle& v, const char* what, bool is_index = false) {
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
  if (!i) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw py::error_already_set();
    PyErr_Clear();
    throw DTypeError(std::string(what) + " must be an integer, got " + TypeName(v));
  }
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (n == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow != 0) {
    const std::string msg =
        std::string(what) + " " + std::string(py::str(i)) + " does not fit a 64-bit integer";
    if (is_index) throw py::index_error(msg);
    PyErr_SetString(PyExc_OverflowError, msg.c_str());
    throw py::error_already_set();
  }
  return n;
}

// x[i], x[i, j, ...], x[...], and x[a:b:c] or x[i, a:b:c] (a slice last): a key of exact ints,
// each in range, perhaps ending in a slice, or an ellipsis alone, as the indices (and slice) of
// Array::Subarray's view (the per-call case, a 0-d view for a full key): the count of ints, with
// *sliced set when the key ends in a slice (slice: its start, length and step), or -1 for every
// other key, which GetItem's general path then answers (its view or its error).
int IntegerKey(const Array& a, PyObject* key, int64_t* indices, bool* sliced, int64_t* slice) {
  *sliced = false;
  if (key == Py_Ellipsis) return 0;
  PyObject* const* items = &key;
  Py_ssize_t count = 1;
  if (PyTuple_CheckExact(key)) {
    items = reinterpret_cast<PyTupleObject*>(key)->ob_item;
    count = PyTuple_GET_SIZE(key);
  }
  const int ndim = static_cast<int>(a.shape().size());
  if (count == 0 || count > ndim) return -1;
  if (PySlice_Check(items[count - 1])) {
    Py_ssize_t start = 0, stop = 0, step = 0;
    if (PySlice_Unpack(items[count - 1], &start, &stop, &step) < 0) {
      PyErr_Clear();  // the general path raises it
      return -1;
    }
    --count;
    slice[1] = PySlice_AdjustIndices(a.shape()[count], &start, &stop, step);
    slice[0] = start;
    slice[2] = step;
    *sliced = true;
  }
  for (int d = 0; d < count; ++d) {
    if (!PyLong_CheckExact(items[d])) return -1;
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(items[d], &overflow);
    const int64_t extent = a.shape()[d];
    if (overflow != 0 || i < -extent || i >= extent) return -1;
    indices[d] = i < 0 ? i + extent : i;
  }
  return static_cast<int>(count);
}

NDArray GetItem(const NDArray& self, const py::object& key) {
  const Array& a = *self.array;
  const int64_t item = static_cast<int64_t>(DTypeBytes(a.dtype()));
  int64_t indices[DLARRAY_MAX_NDIM], slice[3];
  bool sliced = false;
  const int num_indices = IntegerKey(a, key.ptr(), indices, &sliced, slice);
  if (num_indices >= 0)
    return NDArray{a.Subarray(indices, num_indices, nullptr, sliced ? slice : nullptr)};
  // The items in place (a tuple's, or the key alone): no tuple to make, no object to compare.
  PyObject* single = key.ptr();
  PyObject* const* items = &single;
  Py_ssize_t count = 1;
  if (PyTuple_Check(key.ptr())) {
    items = reinterpret_cast<PyTupleObject*>(key.ptr())->ob_item;
    count = PyTuple_GET_SIZE(key.ptr());
  }
  int consumed = 0;
  bool ellipsis = false;
  for (Py_ssize_t n = 0; n < count; ++n) {
    const py::handle k = items[n];
    if (k.ptr() == Py_Ellipsis) {
      if (ellipsis) IndexFail("an index can only have a single ellipsis ('...')");
      ellipsis = true;
    } else if (PyLong_CheckExact(k.ptr()) || PySlice_Check(k.ptr()) ||
               (!k.is_none() && !PyBool_Check(k.ptr()) && py::hasattr(k, "__index__"))) {
      ++consumed;
    } else if (!k.is_none()) {
      throw DTypeError("NDArray supports basic indexing only (integers, slices, ..., None), got " +
                       TypeName(k) + "; index on the host (x.asnumpy()[...]) for the rest");
    }
  }
  const int ndim = static_cast<int>(a.shape().size());
  if (consumed > ndim) {
    IndexFail("too many indices for an NDArray of " + std::to_string(ndim) + " dimension" +
              (ndim == 1 ? "" : "s") + ": " + std::to_string(consumed) + " were given");
  }
  std::vector<int64_t> shape, strides;
  shape.reserve(static_cast<size_t>(ndim + count));
  strides.reserve(static_cast<size_t>(ndim + count));
  int64_t offset = 0;  // in elements
  int dim = 0;
  for (Py_ssize_t n = 0; n < count; ++n) {
    const py::handle k = items[n];
    if (k.ptr() == Py_Ellipsis) {
      for (int n = ndim - consumed; n > 0; --n, ++dim) {
        shape.push_back(a.shape()[dim]);
        strides.push_back(a.strides()[dim]);
      }
    } else if (k.is_none()) {
      shape.push_back(1);
      strides.push_back(0);
    } else if (PySlice_Check(k.ptr())) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(k.ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
      const Py_ssize_t len = PySlice_AdjustIndices(a.shape()[dim], &start, &stop, step);
      if (len > 0) offset += start * a.strides()[dim];
      shape.push_back(len);
      strides.push_back(a.strides()[dim] * step);
      ++dim;
    } else {
      const int64_t extent = a.shape()[dim];
      int64_t i = Index(k, "index", true);
      if (i < -extent || i >= extent) {
        IndexFail("index " + std::to_string(i) + " is out of bounds for axis " +
                  std::to_string(dim) + " with size " + std::to_string(extent));
      }
      if (i < 0) i += extent;
      offset += i * a.strides()[dim];
      ++dim;
    }
  }
  for (; dim < ndim; ++dim) {
    shape.push_back(a.shape()[dim]);
    strides.push_back(a.strides()[dim]);
  }
  const int64_t byte_offset = static_cast<int64_t>(a.byte_offset()) + offset * item;
  return NDArray{a.View(shape, strides, static_cast<uint64_t>(byte_offset))};
}

std::vector<int64_t> ShapeArgs(const py::args& args, const char* what) {
  py::object spec = args.size() == 1 ? py::object(args[0]) : py::object(args);
  std::vector<int64_t> shape;
  if (py::isinstance<py::int_>(spec) || !py::isinstance<py::sequence>(spec)) {
    shape.push_back(Index(spec, what));
  } else {
    for (const py::handle& d : spec) {
      shape.push_back(Index(d, what));
    }
  }
  return shape;
}

// The shape a reshape asks for, with a -1 resolved; ValueError naming the sizes otherwise.
std::vector<int64_t> ResolveShape(std::vector<int64_t> shape, int64_t size) {
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) throw Error(ErrorKind::kValue, "reshape: only one dimension can be -1");
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      throw Error(ErrorKind::kValue, "reshape: dimensions must be >= 0 (or one -1)");
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      throw Error(ErrorKind::kValue, "reshape: the dimensions multiply past 2**63 - 1");
    }
  }
  if (infer >= 0) {
    if (known == 0 || size % known != 0) {
      throw Error(ErrorKind::kValue, "reshape: cannot reshape an array of size " +
                                         std::to_string(size) + " with a -1 dimension");
    }
    shape[infer] = size / known;
    known *= shape[infer];
  }
  if (known != size) {
    std::string text;
    for (int64_t d : shape) text += (text.empty() ? "" : ", ") + std::to_string(d);
    throw Error(ErrorKind::kValue, "reshape: cannot reshape an array of size " +
                                       std::to_string(size) + " into shape (" + text + ")");
  }
  return shape;
}

// Strides that show a's elements in `shape` without moving them, or false when the layout
// cannot (a transposed or sliced view whose merged axes are not evenly spaced). Axes of extent
// 1 are dropped; the rest are matched in groups of equal element counts, and each group of a
// must be one evenly strided run.
bool ViewStrides(const Array& a, const std::vector<int64_t>& shape, std::vector<int64_t>* out) {
  out->assign(shape.size(), 0);
  if (a.size() == 0) {  // no element: any strides are compact; canonical ones
    int64_t step = 1;
    for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
      (*out)[i] = step;
      step *= std::max<int64_t>(shape[i], 1);
    }
    return true;
  }
  std::vector<int64_t> ext, st;
  for (size_t d = 0; d < a.shape().size(); ++d) {
    if (a.shape()[d] != 1) {
      ext.push_back(a.shape()[d]);
      st.push_back(a.strides()[d]);
    }
  }
  size_t i = 0, j = 0;
  while (j < shape.size()) {
    if (shape[j] == 1) {
      ++j;
      continue;
    }
    // Equal sizes (both totals are a.size() > 0) keep both indices in range.
    int64_t old_count = ext[i], new_count = shape[j];
    size_t i_end = i + 1, j_end = j + 1;
    while (old_count != new_count) {
      if (old_count < new_count) {
        old_count *= ext[i_end++];
      } else {
        new_count *= shape[j_end++];
      }
    }
    for (size_t m = i; m + 1 < i_end; ++m) {
      if (st[m] != st[m + 1] * ext[m + 1]) return false;
    }
    (*out)[j_end - 1] = st[i_end - 1];
    for (size_t n = j_end - 1; n > j; --n) (*out)[n - 1] = (*out)[n] * shape[n];
    i = i_end;
    j = j_end;
  }
  return true;
}

// copy: -1 (None: a view when the layout allows, else a copy), 0 (a view or ValueError),
// 1 (always a copy), as the array API's reshape.
NDArray ReshapeTo(const NDArray& self, const std::vector<int64_t>& requested, int copy) {
  const std::vector<int64_t> shape = ResolveShape(requested, self.array->size());
  std::vector<int64_t> strides;
  if (copy != 1 && ViewStrides(*self.array, shape, &strides)) {
    return NDArray{self.array->View(shape, strides, self.array->byte_offset())};
  }
  if (copy == 0) {
    throw Error(ErrorKind::kValue, "reshape: copy=False, but this strided view of shape " +
                                       ShapeToString(self.array->dl()) +
                                       " cannot be shown in the new shape without copying");
  }
  NDArray src = CompactCopy(self);
  ViewStrides(*src.array, shape, &strides);  // compact: always a view
  return NDArray{src.array->View(shape, strides, src.array->byte_offset())};
}

NDArray Reshape(const NDArray& self, const py::args& args) {
  return ReshapeTo(self, ShapeArgs(args, "reshape: dimension"), -1);
}

// A view of self's memory in any layout, in elements: the first element `offset` elements from
// self's, then `strides` (negative for flip, 0 for broadcasting). The core refuses a view that
// reaches outside the memory. For the array API's composites (_manipulation_api.py).
NDArray StridedView(const NDArray& self, const std::vector<int64_t>& shape,
                    const std::vector<int64_t>& strides, int64_t offset) {
  const Array& a = *self.array;
  const int64_t item = static_cast<int64_t>(DTypeBytes(a.dtype()));
  int64_t bytes = 0, first = 0;
  if (__builtin_mul_overflow(offset, item, &bytes) ||
      __builtin_add_overflow(static_cast<int64_t>(a.byte_offset()), bytes, &first) || first < 0) {
    throw Error(ErrorKind::kValue, "a view starting " + std::to_string(offset) +
                                       " elements away would start outside its array's memory");
  }
  return NDArray{a.View(shape, strides, static_cast<uint64_t>(first))};
}

NDArray Transpose(const NDArray& self, const py::args& args) {
  const Array& a = *self.array;
  const int ndim = static_cast<int>(a.shape().size());
  std::vector<int64_t> axes(static_cast<size_t>(ndim));
  if (args.size() == 0 || (args.size() == 1 && args[0].is_none())) {
    for (int i = 0; i < ndim; ++i) axes[i] = ndim - 1 - i;
  } else {
    axes = ShapeArgs(args, "transpose: axis");
    if (static_cast<int>(axes.size()) != ndim) {
      throw Error(ErrorKind::kValue, "transpose: axes don't match the array's " +
                                         std::to_string(ndim) + " dimensions");
    }
    std::vector<bool> seen(static_cast<size_t>(ndim), false);
    for (int64_t& ax : axes) {
      if (ax < -ndim || ax >= ndim) {
        throw Error(ErrorKind::kValue, "transpose: axis " + std::to_string(ax) +
                                           " is out of bounds for " + std::to_string(ndim) +
                                           " dimensions");
      }
      if (ax < 0) ax += ndim;
      if (seen[ax]) throw Error(ErrorKind::kValue, "transpose: repeated axis in transpose");
      seen[ax] = true;
    }
  }
  std::vector<int64_t> shape, strides;
  for (int64_t ax : axes) {
    shape.push_back(a.shape()[ax]);
    strides.push_back(a.strides()[ax]);
  }
  return NDArray{a.View(shape, strides, a.byte_offset())};
}

// x[i], x[i, j], x[1:], x[..., None] (BasicKey) for an exact NDArray as the type's subscript
// slot: GetItem's view, without the Python __getitem__ that _indexing_api puts before it and
// pybind11's dispatch and return cast (most of a 1-element x[0]). No guard: no Python code runs
// for these keys. Every other key or object goes to that Python __getitem__ (g_python_getitem).
//
// CPython 3.11+ specializes a warm `x[k]` of a heap type whose __getitem__ is a Python function
// to call that function directly, past the slot. So the type's __getitem__ becomes a C method
// (kGetItemMethod, the same code as the slot), which the specializer leaves to the slot.
PyObject* g_python_getitem = nullptr;  // the Python __getitem__ (a function), owned
std::string g_getitem_doc;

// A key of basic indexing alone, told by exact types: an int, a slice, None, ..., or a tuple of
// them. The Python __getitem__ hands exactly these to GetItem too (no item is an array).
bool BasicItem(PyObject* k) {
  return PyLong_CheckExact(k) || PySlice_Check(k) || k == Py_None || k == Py_Ellipsis;
}
bool BasicKey(PyObject* key) {
  if (BasicItem(key)) return true;
  if (!PyTuple_CheckExact(key)) return false;
  for (Py_ssize_t i = 0, n = PyTuple_GET_SIZE(key); i < n; ++i) {
    if (!BasicItem(PyTuple_GET_ITEM(key, i))) return false;
  }
  return true;
}

PyObject* Subscript(PyObject* self, PyObject* key) {
  const NDArray* a = ExactInstance<NDArray>(self);
  if (a == nullptr || !BasicKey(key)) {
    PyObject* args[2] = {self, key};
    return PyObject_Vectorcall(g_python_getitem, args, 2, nullptr);
  }
  try {
    int64_t indices[DLARRAY_MAX_NDIM], slice[3];  // GetItem's first case, into a kept instance
    bool sliced = false;
    const int num_indices = IntegerKey(*a->array, key, indices, &sliced, slice);
    if (num_indices >= 0) {
      return NewSubarray(*a->array, indices, num_indices, sliced ? slice : nullptr);
    }
    return NewInstance(GetItem(*a, py::reinterpret_borrow<py::object>(key)));
  } catch (...) {
    return RaiseCurrentException();
  }
}

PyMethodDef kGetItemMethod = {"__getitem__", &Subscript, METH_O, nullptr};

}  // namespace

void SetSubscriptSlot() {
  PyTypeObject* type = py::detail::get_type_info(typeid(NDArray))->type;
  PyObject* current = PyDict_GetItemString(type->tp_dict, "__getitem__");  // borrowed
  if (current != nullptr && PyFunction_Check(current)) {
    // _indexing_api's method (or one set since): ours calls it for every key but BasicKey's.
    Py_INCREF(current);
    Py_XSETREF(g_python_getitem, current);
    const py::object doc = py::reinterpret_borrow<py::object>(current).attr("__doc__");
    // The text signature first: inspect.signature reads (self, key, /) from it, as the
    // standard's stub has it (the array API suite's signature test inspects x.__getitem__).
    g_getitem_doc = "__getitem__($self, key, /)\n--\n\n" +
                    (doc.is_none() ? std::string() : doc.cast<std::string>());
    kGetItemMethod.ml_doc = g_getitem_doc.c_str();
    py::object method = py::reinterpret_steal<py::object>(PyDescr_NewMethod(type, &kGetItemMethod));
    if (!method || PyObject_SetAttrString(reinterpret_cast<PyObject*>(type), "__getitem__",
                                          method.ptr()) != 0) {
      throw py::error_already_set();
    }
  }
  if (g_python_getitem == nullptr) return;  // no Python __getitem__ yet: nothing to put before
  type->tp_as_mapping->mp_subscript = &Subscript;
  PyType_Modified(type);
}

void BindViews(py::class_<NDArray>& cls) {
  cls.def("__getitem__", &GetItem, py::arg("key"),
          R"doc(Basic indexing: a view sharing memory.

Parameters
----------
key : int, slice, Ellipsis, None or tuple of them
    As in NumPy's basic indexing (``x[0]``, ``x[1:3]``, ``x[:, ::2]``, ``x[..., None]``).

Returns
-------
NDArray
    The view (no copy; writes through it change this array).

Raises
------
IndexError
    An index out of bounds, too many indices, or two ellipses.
TypeError
    Advanced indexing (lists, arrays, booleans): index on the host instead.

Examples
--------
>>> import numpy as np
>>> import dlarray
>>> x = dlarray.array(np.arange(6).reshape(2, 3))
>>> x[1, ::2].asnumpy()
array([3., 5.], dtype=float32)
)doc",
          Guard())
      .def("reshape", &Reshape, R"doc(The elements in another shape.

Parameters
----------
*shape : int or tuple of int
    The new extents (one may be -1: inferred).

Returns
-------
NDArray
    A view when the layout allows (always for compact arrays), else a compact copy.

Raises
------
ValueError
    The element counts differ, or more than one extent is -1.

Examples
--------
>>> import dlarray
>>> dlarray.array([1, 2, 3, 4]).reshape(2, -1).shape
(2, 2)
)doc",
           Guard())
      .def("transpose", &Transpose, R"doc(A view with the axes permuted.

Parameters
----------
*axes : int or tuple of int, optional
    The permutation (default: the axes reversed).

Returns
-------
NDArray
    The view (it shares memory and is strided unless trivially compact).

Raises
------
ValueError
    The axes are not a permutation of the array's.
)doc",
           Guard())
      .def_property_readonly(
          "T", [](const NDArray& s) { return Transpose(s, py::args()); },
          "A view with the axes reversed.")
      .def_property_readonly(
          "mT",
          [](const NDArray& s) {
            const int ndim = static_cast<int>(s.array->shape().size());
            if (ndim < 2) {
              throw Error(ErrorKind::kValue, "mT needs an array of at least 2 dimensions, got " +
                                                 std::to_string(ndim));
            }
            std::vector<int64_t> shape = s.array->shape(), strides = s.array->strides();
            std::swap(shape[ndim - 1], shape[ndim - 2]);
            std::swap(strides[ndim - 1], strides[ndim - 2]);
            return NDArray{s.array->View(shape, strides, s.array->byte_offset())};
          },
          "A view with the last two axes swapped (a stack of transposed matrices).")
      .def("_reshape", &ReshapeTo, py::arg("shape"), py::arg("copy"),
           "reshape with copy -1 (None), 0 (False: a view or ValueError) or 1 (True).", Guard())
      .def("_view", &StridedView, py::arg("shape"), py::arg("strides"), py::arg("offset"),
           "A view in any layout, in elements from this array's first element.", Guard())
      .def(
          "__iter__",
          [](const NDArray& s) {
            if (s.array->shape().empty()) throw DTypeError("iteration over a 0-d NDArray");
            py::list rows;
            for (int64_t i = 0; i < s.array->shape()[0]; ++i) rows.append(GetItem(s, py::int_(i)));
            return py::iter(rows);
          },
          Guard());
}

}  // namespace dlarray
