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

}  // namespace

// A planner's answer: None, or (op name, result dtype[, number]).
Plan ReadPlan(const py::object& answer) {
  Plan plan;
  if (answer.is_none()) return plan;
  const py::tuple t = answer.cast<py::tuple>();
  plan.op = RequireOp(t[0].cast<std::string>());
  plan.out = DTypeFromNumpy(t[1]);
  if (t.size() > 2) plan.number = t[2].cast<double>();
  if (t.size() > 3 && py::isinstance<py::str>(t[3])) {
    plan.post = RequireOp(t[3].cast<std::string>());
    if (t.size() > 4) plan.fold = RequireOp(t[4].cast<std::string>());
  } else if (t.size() > 3) {
    plan.has_second = true;
    plan.second = t[3].cast<double>();
  }
  return plan;
}

// One validated invoke of plan's op into a new array of x's shape; the result as a new reference.
PyObject* Run(const Plan& plan, const Array& x, const DLArray* const* ins, int num_inputs,
              const double* attrs, int num_attrs) {
  NDArray out{Array::Empty(x.shape(), x.ctx(), plan.out)};
  return Finish(plan, x, ins, num_inputs, attrs, num_attrs, std::move(out), out.dl());
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

namespace {

// Python scalars as the right operand's key, next to dtype codes (which are below 256).
constexpr uint32_t kPyFloat = 1u << 30, kPyInt = 1u << 31;

struct Operator {
  py::object slow;  // the general path: slow(self, other)
  py::object plan;  // the planner: plan(name, left dtype, right dtype or float or int)
  py::str name;     // the operator's name for the planner ("add", "sub", ...)
  Plans<uint64_t> plans;
};

// The methods are C functions of fixed identity (a method descriptor has no closure): one per
// slot, instantiated from a template.
constexpr int kMaxOperators = 16;
Operator* g_operators[kMaxOperators] = {};
PyMethodDef g_defs[kMaxOperators] = {};
std::string g_names[kMaxOperators];  // the methods' dunder names
int g_num_operators = 0;

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
  // The int's range against x's dtype: an arithmetic plan's result has it, a comparison's is bool.
  if (plan.op < 0 || !HasKernel(plan.op, x.ctx().device_type) ||
      (right == kPyInt && !IntFits(int_value, x.dtype()))) {
    return nullptr;
  }
  *taken = true;
  if (plan.number < 0) attr = -attr;  // as Python negates: a NaN's sign flips too
  // A comparison's code follows the scalar (compare_by_const) or is the only attribute (compare).
  double attrs[2] = {attr, plan.second};
  if (num_inputs == 2) {
    return Run(plan, x, ins, 2, attrs + 1, plan.has_second ? 1 : 0);
  }
  return Run(plan, x, ins, 1, attrs, plan.has_second ? 2 : 1);
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

}  // namespace

FastMethod FastOperatorMethod(const char* dunder) {
  for (int k = 0; k < g_num_operators; ++k) {
    if (g_names[k] == dunder) return MethodTable()[k];
  }
  return nullptr;
}

void BindFastPath(py::module_& m) {
  SetInstanceDealloc();
  BindFastFunction(m);
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
    float or int: ``(op name, result dtype, sign of the scalar[, code])`` where the general path
    would run exactly that op into a new array, else None; ``code``, a comparison's, is the op's
    attribute after the scalar (or its only one, for two arrays). Asked once per combination.

Returns
-------
method descriptor
    To set as ``NDArray.<dunder>``.
)doc");
}

}  // namespace dlarray
