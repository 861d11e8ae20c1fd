// The functions' fast path: dlarray.exp(x), dlarray.add(x1, x2), dlarray.sum(x, axis=...),
// dlarray.take(x, indices, axis=...) as builtins that take the common case themselves (exact,
// compact NDArrays: one for an elementwise function of one array or a reduction, two of one dtype,
// shape and device for a function of two, an array and its int64 indices for take) and hand every
// other call to the general Python path unchanged. The planner
// (dlarray._elementwise_api, dlarray._statistics_api) is asked once per dtype which one op the
// general path would run (fast_path.cc says more).
#include <string>
#include <utility>
#include <vector>

#include "fast_path.h"

namespace dlarray {
namespace {

// The reduction of x (non-empty, at least 1-D) over the axes in `mask` (bit k: axis k; at
// least one, and no empty output) into a new array, as the general path (_reduction.reduce) plans
// it off CUDA (PlannedInPython): each run of adjacent reduced axes, the last run first, is one
// reduce call on the current array seen as (outer, n, inner) into (outer, inner); the last call
// writes the result.
PyObject* RunReduce(const Plan& plan, const Array& x, uint64_t mask, bool keepdims) {
  std::vector<int64_t> cur = x.shape(), final_shape;
  for (size_t k = 0; k < cur.size(); ++k) {
    if ((mask >> k & 1) == 0) {
      final_shape.push_back(cur[k]);
    } else if (keepdims) {
      final_shape.push_back(1);
    }
  }
  NDArray out{Array::Empty(final_shape, x.ctx(), plan.out)};
  std::shared_ptr<Array> step_out;  // the previous call's result, the next call's input
  int64_t count = 1;                // of the reduced elements: post's (or fold's) attribute
  for (size_t k = 0; k < cur.size(); ++k) count *= (mask >> k & 1) ? cur[k] : 1;
  const double count_attr = static_cast<double>(count);
  const bool fold = plan.fold >= 0 && HasKernel(plan.fold, x.ctx().device_type);
  int64_t in_shape[3], out_shape[2];
  for (int stop = static_cast<int>(cur.size()); stop > 0;) {
    if ((mask >> (stop - 1) & 1) == 0) {
      --stop;
      continue;
    }
    int first = stop - 1;
    while (first > 0 && (mask >> (first - 1) & 1) != 0) --first;
    int64_t outer = 1, n = 1, inner = 1;
    for (int k = 0; k < first; ++k) outer *= cur[k];
    for (int k = first; k < stop; ++k) n *= cur[k];
    for (size_t k = stop; k < cur.size(); ++k) inner *= cur[k];
    cur.erase(cur.begin() + first, cur.begin() + stop);
    const bool last = (mask & ((uint64_t{1} << first) - 1)) == 0;
    std::shared_ptr<Array> next = last ? nullptr : Array::Empty({outer, inner}, x.ctx(), plan.out);
    DLArray in = step_out ? *step_out->dl() : *x.dl(), result = last ? *out.dl() : *next->dl();
    in_shape[0] = outer, in_shape[1] = n, in_shape[2] = inner;
    out_shape[0] = outer, out_shape[1] = inner;
    in.ndim = 3, in.shape = in_shape, in.strides = nullptr;
    result.ndim = 2, result.shape = out_shape, result.strides = nullptr;
    const DLArray* ins[1] = {&in};
    DLArray* outs[1] = {&result};
    if (last && fold) {
      InvokeReleasing(plan.fold, x, ins, 1, outs, &count_attr, 1);
    } else {
      InvokeReleasing(plan.op, x, ins, 1, outs, &plan.number, 1);
    }
    step_out = std::move(next);
    stop = first;
  }
  if (plan.post >= 0 && !fold) {  // in place: the result is a new compact array of its own
    const DLArray* ins[1] = {out.dl()};
    DLArray* outs[1] = {out.dl()};
    InvokeReleasing(plan.post, x, ins, 1, outs, &count_attr, 1);
  }
  return NewInstance(std::move(out));
}

// A function of one array (dlarray.exp, ...) with the same fast path: the planner is asked per
// dtype; anything but one compact exact NDArray, positionally, goes to the general path.
struct Function {
  py::object general;  // the general path: general(*args, **kwargs)
  py::object plan;     // plan(name, dtype): (op name, result dtype) or None
  py::str name;
  Plans<uint32_t> plans;
  std::string name_text, doc;
  bool whole;     // a reduction (sum(x, axis=...)), else elementwise (exp(x))
  bool one_axis;  // one axis or all (argmax): an axis tuple takes the general path
  bool binary;    // a function of two arrays (add(x1, x2)); plan(name, dtype) is for both
  // take(x, indices, axis=...): plan(name, dtype) names the gather op; take_along_axis: the
  // gather_along op, then gather (for one row) as its post op
  enum class Gather { kNone, kTake, kAlong } gather;
  PyMethodDef def{};
};

// The reduced axes of `axis` (None: all; an exact int; a tuple of exact ints) for ndim
// dimensions as a bit mask, or 0 where the general path must decide: a bad or repeated axis
// raises there, and axis=() reduces nothing.
// An axis argument that is an exact int in [-ndim, ndim), as 0..ndim-1; -1 for anything else
// (bool, NumPy integers, floats, out of range: the general path decides and raises).
int ExactAxis(PyObject* a, int ndim) {
  if (!PyLong_CheckExact(a)) return -1;
  int overflow = 0;
  const long long k = PyLong_AsLongLongAndOverflow(a, &overflow);
  if (overflow != 0 || k < -ndim || k >= ndim) return -1;
  return static_cast<int>(k < 0 ? k + ndim : k);
}

uint64_t AxisMask(PyObject* axis, int ndim) {
  if (ndim > 64) return 0;
  if (axis == nullptr || axis == Py_None)
    return ndim == 64 ? ~uint64_t{0} : (uint64_t{1} << ndim) - 1;
  auto bit = [ndim](PyObject* a) -> uint64_t {
    const int k = ExactAxis(a, ndim);
    return k < 0 ? 0 : uint64_t{1} << k;
  };
  if (PyLong_CheckExact(axis)) return bit(axis);
  if (!PyTuple_CheckExact(axis)) return 0;
  uint64_t mask = 0;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(axis); ++i) {
    const uint64_t b = bit(PyTuple_GET_ITEM(axis, i));
    if (b == 0 || (mask & b) != 0) return 0;
    mask |= b;
  }
  return mask;
}

// A reduction's keywords: axis and keepdims (an exact bool) are read; any other (dtype) leaves the
// call to the general path (false).
bool ReadReduceKeywords(PyObject* kwnames, PyObject* const* values, PyObject** axis,
                        bool* keepdims) {
  for (Py_ssize_t i = 0; kwnames != nullptr && i < PyTuple_GET_SIZE(kwnames); ++i) {
    PyObject* name = PyTuple_GET_ITEM(kwnames, i);
    if (PyUnicode_CompareWithASCIIString(name, "axis") == 0) {
      *axis = values[i];
    } else if (PyUnicode_CompareWithASCIIString(name, "keepdims") == 0 &&
               (values[i] == Py_True || values[i] == Py_False)) {
      *keepdims = values[i] == Py_True;
    } else {
      return false;
    }
  }
  return true;
}

// Whether the reduction over the axes in mask takes the general path for its plan: several runs
// of axes on CUDA, whose order _reduction._order chooses (RunReduce reduces the last run first).
bool PlannedInPython(uint64_t mask, int device_type) {
  if (device_type != kDLArrayCUDA) return false;
  const uint64_t runs = mask >> __builtin_ctzll(mask);  // mask != 0
  return (runs & (runs + 1)) != 0;                      // a gap between reduced axes
}

// The plan for an array of dtype t (the planner asked at the first one).
const Plan& PlanFor(Function& f, DLArrayDType t) {
  const uint32_t key = DTypeKey(t);
  if (const Plan* found = f.plans.Find(key)) return *found;
  CallGuard guard;  // the planner is Python code
  return f.plans.Add(key, ReadPlan(f.plan(f.name, DTypeToNumpy(t))));
}

// A function of two arrays (dlarray.add(x1, x2), ...): both exact and compact, of one dtype, shape
// and device, positionally (a scalar, a cast or a broadcast: the general path).
PyObject* CallBinary(Function& f, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  const NDArray* a = nargs == 2 && kwnames == nullptr ? ExactInstance<NDArray>(args[0]) : nullptr;
  const NDArray* b = a != nullptr ? ExactInstance<NDArray>(args[1]) : nullptr;
  if (b != nullptr && a->array->is_compact() && b->array->is_compact()) {
    const Array& x = *a->array;
    const Array& y = *b->array;
    if (x.ctx() == y.ctx() && x.shape() == y.shape() &&
        DTypeKey(x.dtype()) == DTypeKey(y.dtype())) {
      try {
        const Plan& plan = PlanFor(f, x.dtype());
        if (plan.op >= 0 && HasKernel(plan.op, x.ctx().device_type)) {
          const DLArray* ins[2] = {x.dl(), y.dl()};
          return Run(plan, x, ins, 2, nullptr, 0);
        }
      } catch (...) {
        return RaiseCurrentException();
      }
    }
  }
  return PyObject_Vectorcall(f.general.ptr(), args, static_cast<size_t>(nargs), kwnames);
}

// take's axis for x of ndim dimensions (the keyword, else `axis`: an exact int, or None for a 1-D
// x), or -1 where the general path must decide (it raises for a bad or missing axis).
int TakeAxis(PyObject* kwnames, PyObject* const* values, int ndim, PyObject* axis) {
  if (kwnames != nullptr) {
    if (PyTuple_GET_SIZE(kwnames) != 1 ||
        PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "axis") != 0) {
      return -1;
    }
    axis = values[0];
  }
  if (axis == Py_None) return ndim == 1 ? 0 : -1;
  return ExactAxis(axis, ndim);
}

// The indices of take (1-D) or take_along_axis (x's shape outside axis, no broadcast) for x, or
// false where the general path must decide: int64, compact, on x's device.
bool GatherIndices(Function::Gather kind, const Array& x, const Array& idx, int ax) {
  const DLArrayDType t = idx.dtype();
  if (x.ctx() != idx.ctx() || t.code != kDLArrayInt || t.bits != 64 || t.lanes != 1) return false;
  if (kind == Function::Gather::kTake) return idx.shape().size() == 1;
  if (idx.shape().size() != x.shape().size()) return false;
  for (size_t k = 0; k < x.shape().size(); ++k) {
    if (static_cast<int>(k) != ax && idx.shape()[k] != x.shape()[k]) return false;
  }
  return true;
}

// take(x, indices, axis=...) and take_along_axis(x, indices, axis=...) of compact exact arrays
// on one device, int64 indices: the one op the general path makes (x seen as (outer, n, inner);
// take_along_axis's indices as (outer, m, inner), one row of them a take), into a new array. An
// index out of bounds, any failure, and every other call: the general path, which raises as the
// standard says.
PyObject* CallTake(Function& f, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  const NDArray* a = nargs == 2 ? ExactInstance<NDArray>(args[0]) : nullptr;
  const NDArray* b = a != nullptr ? ExactInstance<NDArray>(args[1]) : nullptr;
  if (b != nullptr && a->array->is_compact() && b->array->is_compact()) {
    const Array& x = *a->array;
    const Array& idx = *b->array;
    const bool along = f.gather == Function::Gather::kAlong;
    const int ndim = static_cast<int>(x.shape().size());
    static PyObject* const kLast = PyLong_FromLong(-1);  // take_along_axis's default axis
    const int ax = ndim > 0 ? TakeAxis(kwnames, args + nargs, ndim, along ? kLast : Py_None) : -1;
    if (ax >= 0 && GatherIndices(f.gather, x, idx, ax) && idx.size() > 0 && x.size() > 0) {
      try {
        const Plan& plan = PlanFor(f, x.dtype());
        int64_t in_shape[3] = {1, x.shape()[ax], 1}, out_shape[3];
        for (int k = 0; k < ax; ++k) in_shape[0] *= x.shape()[k];
        for (int k = ax + 1; k < ndim; ++k) in_shape[2] *= x.shape()[k];
        const bool row = !along || (in_shape[0] == 1 && in_shape[2] == 1);
        const int op = along && row ? plan.post : plan.op;
        if (op >= 0 && HasKernel(op, x.ctx().device_type)) {
          std::vector<int64_t> shape = x.shape();
          shape[ax] = idx.shape()[along ? ax : 0];
          NDArray out{Array::Empty(shape, x.ctx(), x.dtype())};
          out_shape[0] = in_shape[0], out_shape[1] = shape[ax], out_shape[2] = in_shape[2];
          DLArray in = *x.dl(), index = *idx.dl(), result = *out.dl();
          in.ndim = result.ndim = 3;
          in.shape = in_shape, result.shape = out_shape;
          in.strides = result.strides = index.strides = nullptr;
          index.ndim = row ? 1 : 3;  // a row: the 1-D indices of a take
          index.shape = row ? out_shape + 1 : out_shape;
          const DLArray* ins[2] = {&in, &index};
          DLArray* outs[1] = {&result};
          InvokeReleasing(op, x, ins, 2, outs, nullptr, 0);
          return NewInstance(std::move(out));
        }
      } catch (const std::exception&) {
        if (PyErr_Occurred() != nullptr) PyErr_Clear();  // the general path says what failed
      }
    }
  }
  return PyObject_Vectorcall(f.general.ptr(), args, static_cast<size_t>(nargs), kwnames);
}

PyObject* CallFunction(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  auto& f = *static_cast<Function*>(PyCapsule_GetPointer(self, nullptr));
  if (f.binary) return CallBinary(f, args, nargs, kwnames);
  if (f.gather != Function::Gather::kNone) return CallTake(f, args, nargs, kwnames);
  PyObject* axis = nullptr;
  bool keepdims = false;
  const bool simple = kwnames == nullptr ||
                      (f.whole && ReadReduceKeywords(kwnames, args + nargs, &axis, &keepdims));
  const NDArray* a = nargs == 1 && simple ? ExactInstance<NDArray>(args[0]) : nullptr;
  if (a != nullptr && a->array->is_compact()) {
    try {
      const Array& x = *a->array;
      const Plan& plan = PlanFor(f, x.dtype());
      if (plan.op >= 0 && HasKernel(plan.op, x.ctx().device_type)) {
        if (!f.whole) {
          const DLArray* ins[1] = {x.dl()};
          return Run(plan, x, ins, 1, nullptr, 0);
        }
        const bool tuple_axis = axis != nullptr && PyTuple_CheckExact(axis);
        const uint64_t mask =
            f.one_axis && tuple_axis ? 0 : AxisMask(axis, static_cast<int>(x.shape().size()));
        if (x.size() > 0 && mask != 0 && !PlannedInPython(mask, x.ctx().device_type) &&
            (plan.post < 0 || HasKernel(plan.post, x.ctx().device_type))) {
          return RunReduce(plan, x, mask, keepdims);  // x non-empty: so is the result
        }
      }
    } catch (...) {
      return RaiseCurrentException();
    }
  }
  return PyObject_Vectorcall(f.general.ptr(), args, static_cast<size_t>(nargs), kwnames);
}

py::object MakeFunction(const std::string& name, py::object general, py::object plan,
                        const std::string& doc, bool whole, bool one_axis, bool binary,
                        const std::string& gather) {
  if (!gather.empty() && gather != "take" && gather != "take_along_axis") {
    throw Error(
        ErrorKind::kValue,
        "_fast_function: gather must be '', 'take' or 'take_along_axis', got '" + gather + "'");
  }
  const Function::Gather kind = gather.empty()     ? Function::Gather::kNone
                                : gather == "take" ? Function::Gather::kTake
                                                   : Function::Gather::kAlong;
  // Lives as long as the process: the function object points into it.
  auto* f = new Function{std::move(general), std::move(plan), py::str(name), {}, name, doc, whole,
                         one_axis,           binary,          kind,          {}};
  f->def = {f->name_text.c_str(),
            reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&CallFunction)),
            METH_FASTCALL | METH_KEYWORDS, f->doc.c_str()};
  return NewBuiltin(&f->def, f, "dlarray");
}

}  // namespace

void BindFastFunction(py::module_& m) {
  m.def(
      "_fast_function", &MakeFunction, py::arg("name"), py::arg("general"), py::arg("plan"),
      py::arg("doc"), py::arg("whole") = false, py::arg("one_axis") = false,
      py::arg("binary") = false, py::arg("gather") = "",
      R"doc(A function of one or two arrays with a C++ fast path (dlarray._elementwise_api uses it).

Parameters
----------
name : str
    The function's name, passed to ``plan``.
general : callable
    The general path, called with the arguments of every call the fast path does not take.
plan : callable
    ``plan(name, dtype)``: ``(op name, result dtype)`` where the general path would run exactly
    that op on a compact array of dtype into a new array, else None. Asked once per dtype.
    With ``whole``: ``("reduce", result dtype, kind[, post op])`` for a reduction of a
    non-empty array of at least one dimension over the ``axis`` keyword (None, an int or a
    tuple of ints; ``keepdims`` a bool), planned as ``_reduction.reduce`` plans it; ``post op``
    then runs on the result in place with the count of reduced elements (mean's divide); a
    fifth element names an op that does the last reduce call and the post op in one, used on
    devices that have it (mean's reduce_mean).
doc : str
    The help text; a first line ``name(signature)`` then ``--`` gives its signature.
whole : bool
    A reduction (``sum(x, axis=..., keepdims=...)``) rather than an elementwise function.
one_axis : bool
    With ``whole``: ``axis`` is one int or None (argmax); a tuple goes to the general path.
binary : bool
    A function of two arrays (``add(x1, x2)``): the fast path takes two compact arrays of one
    dtype, shape and device; ``plan(name, dtype)`` answers for two arrays of that dtype.
gather : str
    ``"take"``: ``take(x, indices, axis=...)``, the fast path taking compact arrays on one
    device, int64 1-D indices and an int axis (None for a 1-D x), and running the gather op
    ``plan(name, dtype)`` names for x's dtype. ``"take_along_axis"``: ``take_along_axis(x,
    indices, axis=-1)`` with int64 indices of x's shape outside the axis (no broadcast); the plan
    names the gather_along op and, as its post op, the gather for one row. An index out of
    bounds goes to the general path, which raises.

Returns
-------
builtin function
)doc");
}

}  // namespace dlarray
