// Views that share memory: basic indexing (x[0], x[1:3], x[:, ::2], x[..., None]), reshape,
// transpose / T, iteration.
#include <pybind11/stl.h>

#include <numeric>
#include <string>
#include <vector>

#include "binding.h"

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

NDArray GetItem(const NDArray& self, const py::object& key) {
  const Array& a = *self.array;
  const int64_t item = static_cast<int64_t>(DTypeBytes(a.dtype()));
  py::tuple items = py::isinstance<py::tuple>(key) ? key.cast<py::tuple>() : py::make_tuple(key);
  int consumed = 0;
  bool ellipsis = false;
  for (const py::handle& k : items) {
    if (k.is(py::ellipsis())) {
      if (ellipsis) IndexFail("an index can only have a single ellipsis ('...')");
      ellipsis = true;
    } else if (py::isinstance<py::slice>(k) ||
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
  int64_t offset = 0;  // in elements
  int dim = 0;
  for (const py::handle& k : items) {
    if (k.is(py::ellipsis())) {
      for (int n = ndim - consumed; n > 0; --n, ++dim) {
        shape.push_back(a.shape()[dim]);
        strides.push_back(a.strides()[dim]);
      }
    } else if (k.is_none()) {
      shape.push_back(1);
      strides.push_back(0);
    } else if (py::isinstance<py::slice>(k)) {
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

NDArray Reshape(const NDArray& self, const py::args& args) {
  std::vector<int64_t> shape = ShapeArgs(args, "reshape: dimension");
  const int64_t size = self.array->size();
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
  NDArray src = self.array->is_compact() ? self : CompactCopy(self);
  std::vector<int64_t> strides(shape.size());
  int64_t step = 1;
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    strides[i] = step;
    if (__builtin_mul_overflow(step, std::max<int64_t>(shape[i], 1), &step)) {
      throw Error(ErrorKind::kValue, "reshape: the dimensions multiply past 2**63 - 1");
    }
  }
  return NDArray{src.array->View(shape, strides, src.array->byte_offset())};
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

}  // namespace

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
    A view when the array is compact, else a compact copy in the new shape.

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
