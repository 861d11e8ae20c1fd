// The arithmetic operators' fast path: x + y, x - y, x * y, x / y (and the reflected forms) as
// C++ methods of NDArray that take the common case themselves and hand everything else to the
// general Python path (dlarray/_operators.py) unchanged.
//
// The common case: both operands exact NDArrays (no subclass), compact, on one device, of one
// shape; or an NDArray and a Python float or int. Which op such a call runs, and the dtype of its
// result, the general path decides: the first call for each (operator, left dtype, right dtype or
// scalar type) asks its planner (_operators._fast_plan) and the answer is kept. The planner
// answers only where the general path would make exactly that one op call into a new array (no
// cast, no broadcast, no check that depends on the value beyond an int scalar's range, checked
// here); everything else, errors included, takes the general path, and so does a device whose
// plugin has no kernel for the op (the general path may compose it). Per call that leaves: type
// checks, one lookup, one allocation and one validated invoke.
#include "fast_path.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <utility>

namespace dlarray {
namespace {

// Python scalars as the right operand's key, next to dtype codes (which are below 256).
constexpr uint32_t kPyFloat = 1u << 30, kPyInt = 1u << 31;

// What an operator does for one key: run op (-1: take the general path) into a new array of
// dtype out; number: an operator's scalar sign (-1: negated), a reduction's kind attribute.
struct Plan {
  int op = -1;
  DLArrayDType out{};
  double number = 1.0;
  int post = -1;  // a reduction's op run afterwards on its result with the count (mean's divide)
};

// The plans made so far, by key. The last key found is checked first: loops repeat one key, and
// the map's hash costs a division (its nodes stay put, so the pointer stays valid).
template <typename Key>
class Plans {
 public:
  const Plan* Find(Key key) {
    if (last_ != nullptr && key == last_key_) return last_;
    auto found = map_.find(key);
    if (found == map_.end()) return nullptr;
    last_key_ = key;
    return last_ = &found->second;
  }
  const Plan& Add(Key key, Plan plan) { return map_.emplace(key, plan).first->second; }

 private:
  std::unordered_map<Key, Plan> map_;
  Key last_key_{};
  const Plan* last_ = nullptr;
};

struct Operator {
  py::object slow;  // the general path: slow(self, other)
  py::object plan;  // the planner: plan(name, left dtype, right dtype or float or int)
  py::str name;     // the operator's name for the planner ("add", "sub", ...)
  Plans<uint64_t> plans;
};

// The methods are C functions of fixed identity (a method descriptor has no closure): one per
// slot, instantiated from a template.
constexpr int kMaxOperators = 8;
Operator* g_operators[kMaxOperators] = {};
PyMethodDef g_defs[kMaxOperators] = {};
std::string g_names[kMaxOperators];  // the methods' dunder names
int g_num_operators = 0;

uint32_t DTypeKey(DLArrayDType t) {
  return static_cast<uint32_t>(t.code) | static_cast<uint32_t>(t.bits) << 8 |
         static_cast<uint32_t>(t.lanes) << 16;
}

// A planner's answer: None, or (op name, result dtype[, number]).
Plan ReadPlan(const py::object& answer) {
  Plan plan;
  if (answer.is_none()) return plan;
  const py::tuple t = answer.cast<py::tuple>();
  plan.op = RequireOp(t[0].cast<std::string>());
  plan.out = DTypeFromNumpy(t[1]);
  if (t.size() > 2) plan.number = t[2].cast<double>();
  if (t.size() > 3) plan.post = RequireOp(t[3].cast<std::string>());
  return plan;
}

// The plan for (left dtype, right): an array of the left's dtype, a Python float or int.
const Plan& Lookup(Operator& f, DLArrayDType left, uint32_t right) {
  const uint64_t key = static_cast<uint64_t>(DTypeKey(left)) << 32 | right;
  if (const Plan* found = f.plans.Find(key)) return *found;
  CallGuard guard;  // the planner is Python code (see binding.h)
  const py::object dtype = DTypeToNumpy(left);
  const py::handle other = right == kPyFloat ? reinterpret_cast<PyObject*>(&PyFloat_Type)
                           : right == kPyInt ? reinterpret_cast<PyObject*>(&PyLong_Type)
                                             : dtype.ptr();
  return f.plans.Add(key, ReadPlan(f.plan(f.name, dtype, other)));
}

// Whether an int scalar may go in as the op's double attribute for an integer result: NumPy 2
// raises for values the dtype cannot hold and the general path takes those past 2**53 exactly.
bool IntFits(long long v, DLArrayDType out) {
  if (out.code != kDLArrayInt && out.code != kDLArrayUInt) return true;
  if (v < -(1LL << 53) || v > (1LL << 53)) return false;
  const int bits = out.bits;
  if (out.code == kDLArrayUInt) return v >= 0 && (bits >= 53 || v < (1LL << bits));
  return bits >= 54 || (v >= -(1LL << (bits - 1)) && v < (1LL << (bits - 1)));
}

PyObject* Run(const Plan& plan, const Array& x, const DLArray* const* ins, int num_inputs,
              const double* attrs, int num_attrs);
PyObject* RunReduce(const Plan& plan, const Array& x, uint64_t mask, bool keepdims);
PyObject* Finish(const Plan& plan, const Array& x, const DLArray* const* ins, int num_inputs,
                 const double* attrs, int num_attrs, NDArray out, DLArray* target);
void InvokeReleasing(int op, const Array& x, const DLArray* const* ins, int num_inputs,
                     DLArray* const* outs, const double* attrs, int num_attrs);
// The fast path; nullptr in *taken = false: the general path must run.
PyObject* Fast(Operator& f, PyObject* self, PyObject* other, bool* taken) {
  *taken = false;
  const NDArray* a = ExactInstance<NDArray>(self);
  if (a == nullptr || !a->array->is_compact()) return nullptr;
  const Array& x = *a->array;
  const DLArray* ins[2] = {x.dl(), nullptr};
  int num_inputs = 1;
  double attr = 0.0;
  uint32_t right;
  long long int_value = 0;
  if (const NDArray* b = ExactInstance<NDArray>(other)) {
    const Array& y = *b->array;
    if (!y.is_compact() || y.ctx() != x.ctx() || y.shape() != x.shape()) return nullptr;
    right = DTypeKey(y.dtype());
    if (right != DTypeKey(x.dtype())) return nullptr;  // the general path casts
    ins[1] = y.dl();
    num_inputs = 2;
  } else if (PyFloat_CheckExact(other)) {
    right = kPyFloat;
    attr = PyFloat_AS_DOUBLE(other);
  } else if (PyLong_CheckExact(other)) {
    int overflow = 0;
    int_value = PyLong_AsLongLongAndOverflow(other, &overflow);
    if (overflow != 0) return nullptr;
    right = kPyInt;
    attr = static_cast<double>(int_value);
  } else {
    return nullptr;
  }
  const Plan& plan = Lookup(f, x.dtype(), right);
  if (plan.op < 0 || !HasKernel(plan.op, x.ctx().device_type) ||
      (right == kPyInt && !IntFits(int_value, plan.out))) {
    return nullptr;
  }
  *taken = true;
  if (plan.number < 0) attr = -attr;  // as Python negates: a NaN's sign flips too
  return Run(plan, x, ins, num_inputs, &attr, num_inputs == 1 ? 1 : 0);
}

// One validated invoke of plan's op into a new array of x's shape; the result as a new reference.
PyObject* Run(const Plan& plan, const Array& x, const DLArray* const* ins, int num_inputs,
              const double* attrs, int num_attrs) {
  NDArray out{Array::Empty(x.shape(), x.ctx(), plan.out)};
  return Finish(plan, x, ins, num_inputs, attrs, num_attrs, std::move(out), out.dl());
}

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
    InvokeReleasing(plan.op, x, ins, 1, outs, &plan.number, 1);
    step_out = std::move(next);
    stop = first;
  }
  if (plan.post >= 0) {  // in place: the result is a new compact array of its own
    int64_t count = 1;
    for (size_t k = 0; k < x.shape().size(); ++k) count *= (mask >> k & 1) ? x.shape()[k] : 1;
    const double attr = static_cast<double>(count);
    const DLArray* ins[1] = {out.dl()};
    DLArray* outs[1] = {out.dl()};
    InvokeReleasing(plan.post, x, ins, 1, outs, &attr, 1);
  }
  return NewInstance(std::move(out));
}

// One invoke of op; work large enough to be worth it runs without the GIL (x decides), under a
// CallGuard. Small ops keep the GIL, so they need no CallGuard: no other thread's interpreter
// exit can unwind them (binding.h); the guard and its thread-local counters were a tenth of a
// 1-element op.
void InvokeReleasing(int op, const Array& x, const DLArray* const* ins, int num_inputs,
                     DLArray* const* outs, const double* attrs, int num_attrs) {
  if (ShouldReleaseGilForOp(x.dl())) {
    CallGuard guard;
    ReleaseGil r;
    Invoke(op, ins, num_inputs, outs, 1, attrs, num_attrs);
  } else {
    Invoke(op, ins, num_inputs, outs, 1, attrs, num_attrs);
  }
}

// Runs plan's op into `target` (out or a view of it) and returns out as a new reference: a small
// op into out itself first tries the runtime's same-shape path, which leaves every decision
// (and error) it does not take to Invoke.
PyObject* Finish(const Plan& plan, const Array& x, const DLArray* const* ins, int num_inputs,
                 const double* attrs, int num_attrs, NDArray out, DLArray* target) {
  DLArray* outs[1] = {target};
  if (ShouldReleaseGilForOp(x.dl()) || target != out.dl() ||
      !TryInvokeSameShape(plan.op, ins, num_inputs, target, attrs, num_attrs)) {
    InvokeReleasing(plan.op, x, ins, num_inputs, outs, attrs, num_attrs);
  }
  return NewInstance(std::move(out));
}

template <int kSlot>
PyObject* Method(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  Operator& f = *g_operators[kSlot];
  if (nargs == 1) {
    try {
      bool taken = false;
      PyObject* result = Fast(f, self, args[0], &taken);
      if (taken) return result;
    } catch (...) {
      return RaiseCurrentException();
    }
  }
  PyObject* call[2] = {self, nargs >= 1 ? args[0] : nullptr};
  return PyObject_Vectorcall(f.slow.ptr(), call, static_cast<size_t>(nargs == 1 ? 2 : 1), nullptr);
}

template <int... kSlots>
constexpr std::array<FastMethod, sizeof...(kSlots)> Methods(std::integer_sequence<int, kSlots...>) {
  return {&Method<kSlots>...};
}

const std::array<FastMethod, kMaxOperators>& MethodTable() {
  static const auto methods = Methods(std::make_integer_sequence<int, kMaxOperators>());
  return methods;
}

py::object MakeOperator(const std::string& dunder, const std::string& name, py::object slow,
                        py::object plan) {
  const auto& methods = MethodTable();
  int k = 0;  // a method made again (the module reloaded) takes its old slot
  while (k < g_num_operators && g_names[k] != dunder) ++k;
  if (k == kMaxOperators) {
    throw Error(ErrorKind::kValue, "_fast_operator: at most " + std::to_string(kMaxOperators) +
                                       " operators have a fast path");
  }
  if (k == g_num_operators) ++g_num_operators;
  delete g_operators[k];
  g_operators[k] = new Operator{std::move(slow), std::move(plan), py::str(name), {}};
  static std::string docs[kMaxOperators];
  g_names[k] = dunder;
  // The signature line gives inspect.signature "(self, other, /)".
  docs[k] = dunder + "($self, other, /)\n--\n\nThe operator " + name +
            " (a C++ fast path for compact operands, else the general path).\n\nParameters\n"
            "----------\nother : NDArray or scalar\n    The other operand.\n\nReturns\n-------\n"
            "NDArray\n";
  g_defs[k] = {g_names[k].c_str(),
               reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(methods[k])),
               METH_FASTCALL, docs[k].c_str()};
  PyTypeObject* type = py::detail::get_type_info(typeid(NDArray))->type;
  PyObject* descr = PyDescr_NewMethod(type, &g_defs[k]);
  if (descr == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(descr);
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
  PyMethodDef def{};
};

// The reduced axes of `axis` (None: all; an exact int; a tuple of exact ints) for ndim
// dimensions as a bit mask, or 0 where the general path must decide: a bad or repeated axis
// raises there, and axis=() reduces nothing.
uint64_t AxisMask(PyObject* axis, int ndim) {
  if (ndim > 64) return 0;
  if (axis == nullptr || axis == Py_None)
    return ndim == 64 ? ~uint64_t{0} : (uint64_t{1} << ndim) - 1;
  auto bit = [ndim](PyObject* a) -> uint64_t {
    if (!PyLong_CheckExact(a)) return 0;  // bool, NumPy integers, floats: the general path
    int overflow = 0;
    const long long k = PyLong_AsLongLongAndOverflow(a, &overflow);
    if (overflow != 0 || k < -ndim || k >= ndim) return 0;
    return uint64_t{1} << (k < 0 ? k + ndim : k);
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

PyObject* CallFunction(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  auto& f = *static_cast<Function*>(PyCapsule_GetPointer(self, nullptr));
  PyObject* axis = nullptr;
  bool keepdims = false;
  const bool simple = kwnames == nullptr ||
                      (f.whole && ReadReduceKeywords(kwnames, args + nargs, &axis, &keepdims));
  const NDArray* a = nargs == 1 && simple ? ExactInstance<NDArray>(args[0]) : nullptr;
  if (a != nullptr && a->array->is_compact()) {
    try {
      const Array& x = *a->array;
      const uint32_t key = DTypeKey(x.dtype());
      const Plan* found = f.plans.Find(key);
      if (found == nullptr) {
        CallGuard guard;  // the planner is Python code
        found = &f.plans.Add(key, ReadPlan(f.plan(f.name, DTypeToNumpy(x.dtype()))));
      }
      const Plan& plan = *found;
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
                        const std::string& doc, bool whole, bool one_axis) {
  // Lives as long as the process: the function object points into it.
  auto* f = new Function{
      std::move(general), std::move(plan), py::str(name), {}, name, doc, whole, one_axis, {}};
  f->def = {f->name_text.c_str(),
            reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&CallFunction)),
            METH_FASTCALL | METH_KEYWORDS, f->doc.c_str()};
  py::object self =
      py::reinterpret_steal<py::object>(PyCapsule_New(static_cast<void*>(f), nullptr, nullptr));
  if (!self) throw py::error_already_set();
  py::str module("dlarray");
  PyObject* fn = PyCFunction_NewEx(&f->def, self.ptr(), module.ptr());
  if (fn == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(fn);
}

}  // namespace

FastMethod FastOperatorMethod(const char* dunder) {
  for (int k = 0; k < g_num_operators; ++k) {
    if (g_names[k] == dunder) return MethodTable()[k];
  }
  return nullptr;
}

// What py::cast of a new NDArray does (a Python instance owning it through its holder), without
// the type lookups (hashes of the type's name) of py::cast and init_instance: a fifth of a
// 1-element op. The instance is not entered in pybind11's registry of live instances: that
// registry only lets a C++ pointer or reference to this very NDArray value be cast back to this
// instance, and no binding returns one (py::cast(self) of a method's `const NDArray&` then
// gives an NDArray of the same Array); entering and leaving it were a hash-map node's
// allocation and two hashed searches, a tenth of the op. pybind11 deregisters at deallocation
// only instances marked registered.
PyObject* NewInstance(NDArray&& value) {
  using Holder = py::class_<NDArray>::holder_type;
  static const py::detail::type_info* const info = py::detail::get_type_info(typeid(NDArray));
  auto inst = py::reinterpret_steal<py::object>(py::detail::make_new_instance(info->type));
  if (!inst) throw py::error_already_set();
  auto* wrapper = reinterpret_cast<py::detail::instance*>(inst.ptr());
  py::detail::value_and_holder v_h = wrapper->get_value_and_holder(info);
  v_h.value_ptr() = new NDArray(std::move(value));
  wrapper->owned = true;
  new (std::addressof(v_h.holder<Holder>())) Holder(v_h.value_ptr<NDArray>());
  v_h.set_holder_constructed();
  return inst.release().ptr();
}

void BindFastPath(py::module_& m) {
  m.def("_fast_function", &MakeFunction, py::arg("name"), py::arg("general"), py::arg("plan"),
        py::arg("doc"), py::arg("whole") = false, py::arg("one_axis") = false,
        R"doc(A function of one array with a C++ fast path (dlarray._elementwise_api uses it).

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
    then runs on the result in place with the count of reduced elements (mean's divide).
doc : str
    The help text; a first line ``name(signature)`` then ``--`` gives its signature.
whole : bool
    A reduction (``sum(x, axis=..., keepdims=...)``) rather than an elementwise function.
one_axis : bool
    With ``whole``: ``axis`` is one int or None (argmax); a tuple goes to the general path.

Returns
-------
builtin function
)doc");
  m.def("_fast_slots", &SetSlots,
        R"doc(Gives x + y, x - y, x * y, x / y and x[i] their fast path directly.

The interpreter then calls the C++ fast path of ``__add__`` (``__sub__``, ...) for an NDArray on
the left, and the view of ``x[i]`` for an int ``i``, without looking the methods up; every other
call goes to the slot Python made for the methods. Call after the methods are set (setting one
again gives it Python's slot back); dlarray/__init__.py does.
)doc");
  m.def("_fast_operator", &MakeOperator, py::arg("dunder"), py::arg("name"), py::arg("slow"),
        py::arg("plan"),
        R"doc(An arithmetic operator of NDArray with a C++ fast path (dlarray._operators uses it).

Parameters
----------
dunder : str
    The method's name (``"__add__"``).
name : str
    The operator's name, passed to ``plan``.
slow : callable
    ``slow(self, other)``: the general path, for every call the fast path does not take.
plan : callable
    ``plan(name, dtype, other)`` with ``other`` a dtype (an array of self's shape) or the type
    float or int: ``(op name, result dtype, sign of the scalar)`` where the general path would
    run exactly that op into a new array, else None. Asked once per combination.

Returns
-------
method descriptor
    To set as ``NDArray.<dunder>``.
)doc");
}

}  // namespace dlarray
