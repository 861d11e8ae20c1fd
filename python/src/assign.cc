// Assignment (arr[key] = value, copyto into an array) and the host conversions it shares with
// array(): numbers reach integer arrays by NumPy's rules, so nothing wraps or saturates silently.
#include "assign.h"

#include <algorithm>
#include <string>
#include <vector>

namespace dlarray {
namespace {

// Whether an object array holds only Python ints (bool excluded): ints past 64 bits, which the
// conversion to the target dtype refuses with NumPy's OverflowError.
bool AllPythonInts(const py::array& probe) {
  if (probe.size() == 0) return false;
  for (const py::handle& v : probe.attr("flat")) {
    if (!PyLong_CheckExact(v.ptr())) return false;
  }
  return true;
}

}  // namespace

// obj as a C-contiguous NumPy array of dtype dt. Only numbers convert: NumPy would also turn
// None into NaN, strings into their numeric value and complex into its real part, silently.
// Complex data converts to complex dtypes only.
py::array NumericArray(const py::object& obj, const py::object& dt, const std::string& where) {
  py::module_ np = py::module_::import("numpy");
  if (obj.is_none()) {
    throw DTypeError(where +
                     ": None is not array data (only numbers convert: bool, int, float, complex)");
  }
  py::array probe = np.attr("asarray")(obj);
  const char kind = probe.dtype().kind();
  const bool bfloat16 = py::str(probe.dtype().attr("name")).cast<std::string>() == "bfloat16";
  const bool to_complex = py::dtype::from_args(dt).kind() == 'c';
  if (kind == 'c' && !to_complex) {
    throw DTypeError(where + ": cannot convert complex data to " + std::string(py::str(dt)) +
                     " (it would drop the imaginary part); use a complex dtype");
  }
  if (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f' && kind != 'c' && !bfloat16 &&
      !(kind == 'O' && AllPythonInts(probe))) {
    throw DTypeError(where + ": cannot convert " + TypeName(obj) + " (NumPy dtype " +
                     std::string(py::str(probe.dtype())) +
                     ") to numbers; only bool, int, uint, float and complex data convert");
  }
  // Python data converts straight to dt, so NumPy checks each number as it does for
  // np.array(data, dtype): 1000 into int8 is an OverflowError, NaN into int32 a ValueError.
  // Arrays cast as NumPy casts them (wrapping), as in NumPy.
  const py::object source = py::isinstance<py::array>(obj) ? py::object(probe) : obj;
  return np.attr("asarray")(source, py::arg("dtype") = dt, py::arg("order") = "C");
}

py::tuple ShapeTuple(const Array& a) {
  py::tuple t(a.shape().size());
  for (size_t i = 0; i < a.shape().size(); ++i) t[i] = py::int_(a.shape()[i]);
  return t;
}

DLArray HostView(const py::array& arr, DLArrayDType dtype, std::vector<int64_t>& shape) {
  shape.assign(arr.shape(), arr.shape() + arr.ndim());
  DLArray v{};
  v.data = const_cast<void*>(arr.data());  // read only as a copy source unless it is the target
  v.ctx = DLContext{kDLArrayCPU, 0};
  v.ndim = static_cast<int32_t>(arr.ndim());
  v.dtype = dtype;
  v.shape = shape.data();
  return v;
}

namespace {

// A compact NumPy array of dtype dt holding value broadcast to shape (ShapeError if it cannot).
py::array HostSource(const py::object& value, const py::dtype& dt, const Array& target) {
  py::module_ np = py::module_::import("numpy");
  py::array src = NumericArray(value, dt, "arr[key] = value");
  const auto& shape = target.shape();
  if (src.ndim() != static_cast<py::ssize_t>(shape.size()) ||
      !std::equal(shape.begin(), shape.end(), src.shape())) {
    try {
      src = np.attr("broadcast_to")(src, ShapeTuple(target));
    } catch (const py::error_already_set&) {
      throw ShapeError("cannot set an NDArray of shape " + ShapeToString(target.dl()) +
                       " from a value of shape " + std::string(py::str(src.attr("shape"))));
    }
  }
  return np.attr("asarray")(src, py::arg("order") = "C");  // keeps 0-d arrays 0-d
}

void RequireWritable(const NDArray& a, const char* what) {
  if (a.array->read_only()) {
    throw Error(ErrorKind::kValue, std::string(what) +
                                       ": the array is read-only (it shares the memory of a "
                                       "read-only source); make a writable copy with .copy()");
  }
}

// target[...] = a number, filled on the target's device (through a compact temporary when the
// target is a strided view). An integer or bool target takes the number as NumPy's arr[...] =
// value does (OverflowError for an integer out of the dtype's range or an infinity, ValueError
// for NaN, floats truncated): NumPy converts it, exactly for any 64-bit integer, and the device
// repeats its bytes (FillElements). Float targets go through array_set, whose range check they
// keep. False when value is not a real number (the caller then converts it as an array: a
// complex value, which array_set cannot take, is copied from the host).
bool AssignScalar(const NDArray& target, const py::object& value) {
  const Array& t = *target.array;
  if (!PyLong_Check(value.ptr())) {  // Python ints past 64 bits make object arrays
    py::array scalar = py::module_::import("numpy").attr("asarray")(value);
    const char kind = scalar.dtype().kind();
    if (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f') return false;
  }
  const DLArrayDType dt = t.dtype();
  const bool exact = dt.code == kDLArrayInt || dt.code == kDLArrayUInt || dt.code == kDLArrayBool;
  py::array cell;
  double v = 0.0;
  if (exact) {
    cell = py::array(DTypeToNumpy(dt), std::vector<py::ssize_t>{});
    cell[py::tuple()] = value;
  } else {
    v = py::float_(value).cast<double>();
  }
  NDArray fill = t.is_compact() ? target : NDArray{Array::Empty(t.shape(), t.ctx(), t.dtype())};
  if (exact) {
    FillElements(fill.dl(), cell.data(), static_cast<size_t>(cell.itemsize()));
  } else {
    RunOp(RequireOp("array_set"), {}, {&fill}, {v});
  }
  if (fill.dl() != target.dl()) RunOp(RequireOp("copy"), {fill.dl()}, {&target}, {});
  return true;
}

// target = src of another shape that broadcasts to target's (NumPy's rules: x[1:3] = row,
// x[...] = a 0-d array): src moved to target's device, broadcast by the broadcast_to op into a
// compact array, then copied into target's layout.
void AssignBroadcast(const NDArray& target, NDArray src) {
  const Array& t = *target.array;
  const std::vector<int64_t>& from = src.array->shape();
  const std::vector<int64_t>& to = t.shape();
  bool fits = from.size() <= to.size();
  for (size_t i = 1; fits && i <= from.size(); ++i) {
    fits = from[from.size() - i] == 1 || from[from.size() - i] == to[to.size() - i];
  }
  if (!fits) {
    throw ShapeError("cannot assign an NDArray of shape " + ShapeToString(src.dl()) +
                     " to a target of shape " + ShapeToString(t.dl()) +
                     " (it does not broadcast to it: trailing dimensions equal or 1)");
  }
  if (src.array->ctx() != t.ctx()) {
    if (!src.array->is_compact()) src = CompactCopy(src);
    NDArray moved{Array::Empty(from, t.ctx(), t.dtype())};
    CopyArrays(src.dl(), moved.dl());
    src = moved;
  }
  NDArray full{Array::Empty(to, t.ctx(), t.dtype())};
  RunOp(RequireOp("broadcast_to"), {src.dl()}, {&full}, {});
  RunOp(RequireOp("copy"), {full.dl()}, {&target}, {});
}

}  // namespace

// target (any layout, any device) = value (NDArray, NumPy array or anything NumPy converts).
void Assign(const NDArray& target, const py::object& value) {
  RequireWritable(target, "assignment");
  const Array& t = *target.array;
  if (t.size() == 0) return;
  if (py::isinstance<NDArray>(value)) {
    NDArray src = value.cast<NDArray>();
    if (src.array->dtype() != t.dtype()) {
      throw DTypeError("cannot assign an NDArray of dtype " + DTypeToString(src.array->dtype()) +
                       " to one of dtype " + DTypeToString(t.dtype()) +
                       "; convert it first with .astype()");
    }
    if (src.array->storage() == t.storage() && src.dl() != t.dl()) {
      src = CompactCopy(src);  // views of one memory: read everything before writing
    }
    if (src.array->shape() != t.shape()) {
      AssignBroadcast(target, src);
      return;
    }
    if (src.array->ctx() == t.ctx()) {
      const int copy = RequireOp("copy");
      RunOp(copy, {src.dl()}, {&target}, {});
      return;
    }
    if (!src.array->is_compact()) src = CompactCopy(src);
    if (t.is_compact()) {
      CopyArrays(src.dl(), target.dl());
    } else {
      NDArray staged{Array::Empty(t.shape(), t.ctx(), t.dtype())};
      CopyArrays(src.dl(), staged.dl());
      RunOp(RequireOp("copy"), {staged.dl()}, {&target}, {});
    }
    return;
  }
  if (!py::isinstance<py::array>(value) && !py::isinstance<py::sequence>(value) &&
      AssignScalar(target, value)) {
    return;
  }
  py::array src = HostSource(value, DTypeToNumpy(t.dtype()), t);
  std::vector<int64_t> shape;
  DLArray host = HostView(src, t.dtype(), shape);
  if (t.is_compact()) {
    CopyArrays(&host, target.dl());
  } else {
    NDArray staged{Array::Empty(t.shape(), t.ctx(), t.dtype())};
    CopyArrays(&host, staged.dl());
    RunOp(RequireOp("copy"), {staged.dl()}, {&target}, {});
  }
}

}  // namespace dlarray
