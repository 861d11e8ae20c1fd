// dlarray.ops: every declared op, built-in or from a plugin, is one OpFunction made from its
// schema (names, positional order, attribute types and defaults), plus invoke() by name. The
// questions about the table (op_names, op_info, infer_outputs) are in op_table.cc.
#include <pybind11/stl.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "binding.h"

namespace dlarray {
namespace {

// Runs op, with the GIL released when any operand is large enough for it to pay.
void InvokeOp(int op, const DLArray* const* ins, int nin, DLArray* const* outs, int nout,
              const double* attrs, int nattrs) {
  bool release = false;
  for (int i = 0; i < nin && !release; ++i) release = ShouldReleaseGilForOp(ins[i]);
  for (int i = 0; i < nout && !release; ++i) release = ShouldReleaseGilForOp(outs[i]);
  if (release) {
    ReleaseGil r;
    Invoke(op, ins, nin, outs, nout, attrs, nattrs);
  } else {
    Invoke(op, ins, nin, outs, nout, attrs, nattrs);
  }
}

void RequireWritable(const NDArray& out, int op) {
  if (out.array->read_only()) {
    throw Error(ErrorKind::kValue, GetOpInfo(op).name +
                                       ": the output is read-only (it shares the memory of a "
                                       "read-only source); write into a writable array");
  }
}

std::string Repr(const py::handle& v) { return py::repr(v); }

// A bool attribute: bool, numpy.bool_, or the int 0 or 1. None, floats and strings are refused
// (truthiness would take None as False and 0.5 as True).
double FlagValue(const OpInfo& s, const std::string& name, PyObject* v) {
  if (PyBool_Check(v)) return v == Py_True ? 1.0 : 0.0;
  if (PyLong_Check(v)) {
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow == 0 && (i == 0 || i == 1)) return static_cast<double>(i);
    throw Error(ErrorKind::kValue,
                s.name + ": " + name + " must be True or False (or 1 or 0), got " + Repr(v));
  }
  const py::handle h(v);
  if (py::hasattr(h, "dtype") && py::str(h.attr("dtype")).cast<std::string>() == "bool") {
    return PyObject_IsTrue(v) == 1 ? 1.0 : 0.0;
  }
  throw DTypeError(s.name + ": " + name + " must be a bool, got " + TypeName(h) + " (" + Repr(v) +
                   ")");
}

double IntValue(const OpInfo& s, const std::string& name, PyObject* v) {
  if (!PyLong_Check(v) && !PyIndex_Check(v)) {
    throw DTypeError(s.name + ": " + name + " must be an integer, got " + TypeName(v));
  }
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(v));
  if (!i) {  // e.g. a NumPy array of several elements
    PyErr_Clear();
    throw DTypeError(s.name + ": " + name + " must be an integer, got " + TypeName(v));
  }
  const double d = PyLong_AsDouble(i.ptr());
  if (d == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    throw Error(ErrorKind::kValue, s.name + ": " + name + " = " + Repr(v) + " is out of range");
  }
  return d;
}

double FloatValue(const OpInfo& s, const std::string& name, PyObject* v) {
  const double d = PyFloat_AsDouble(v);  // floats, ints, anything with __float__ or __index__
  if (d == -1.0 && PyErr_Occurred()) {
    const bool overflow = PyErr_ExceptionMatches(PyExc_OverflowError);
    PyErr_Clear();
    std::string names;
    for (const std::string& n : s.attr_names) names += (names.empty() ? "" : ", ") + n;
    if (overflow) {
      throw Error(ErrorKind::kValue, s.name + ": " + name + " = " + Repr(v) + " is out of range");
    }
    throw DTypeError(s.name + ": attributes (" + names + ") must be numbers; " + name + " is " +
                     TypeName(v));
  }
  return d;
}

// One op as a Python callable: the exact positional call (the seed's form) and calls with
// keywords are bound here, in C++, from the schema's names.
class OpFunction {
 public:
  explicit OpFunction(const std::string& name) : id_(RequireOp(name)), s_(GetOpInfo(id_)) {
    const int n_attr = static_cast<int>(s_.attr_names.size());
    for (const auto* list : {&s_.input_names, &s_.attr_names, &s_.output_names}) {
      for (const std::string& n : *list) names_.push_back(py::str(n));
    }
    n_all_ = s_.num_inputs + n_attr + s_.num_outputs;
    std::ostringstream sig;
    sig << s_.name << "(";
    for (size_t k = 0; k < s_.call_order.size(); ++k) {
      const int index = s_.call_order[k];
      sig << (k ? ", " : "") << names_[index].cast<std::string>();
      const int attr = index - s_.num_inputs;
      if (index >= s_.num_inputs + n_attr && s_.num_inputs > 0) {
        sig << "=None";
      } else if (attr >= 0 && attr < n_attr && !std::isnan(s_.attr_defaults[attr])) {
        sig << "=" << Repr(AttrDefault(s_.attr_types[attr], s_.attr_defaults[attr]));
      }
    }
    sig << ")";
    signature_ = sig.str();
  }

  const std::string& signature() const { return signature_; }
  const OpInfo& info() const { return s_; }

  // CPython's vectorcall convention: nargs positional values, then one per name in kwnames.
  py::object Call(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) const {
    PyObject* slot[3 * DLARRAY_MAX_OPERANDS] = {};
    if (nargs > n_all_) {
      throw DTypeError(signature_ + ": takes " + std::to_string(n_all_) +
                       " positional arguments but " + std::to_string(nargs) + " were given");
    }
    for (Py_ssize_t k = 0; k < nargs; ++k) slot[s_.call_order[k]] = args[k];
    if (kwnames != nullptr) BindKeywords(args + nargs, kwnames, slot);
    const int n_attr = static_cast<int>(s_.attr_names.size());
    const int first_out = s_.num_inputs + n_attr;
    const DLArray* ins[DLARRAY_MAX_OPERANDS];
    DLArray* outs[DLARRAY_MAX_OPERANDS];
    double attrs[DLARRAY_MAX_OPERANDS];
    for (int i = 0; i < s_.num_inputs; ++i) ins[i] = Array(slot[i], "input", i).dl();
    for (int a = 0; a < n_attr; ++a) attrs[a] = Attr(slot[s_.num_inputs + a], a);
    py::object results[DLARRAY_MAX_OPERANDS];
    bool allocate = false;
    for (int o = 0; o < s_.num_outputs; ++o) {
      if ((slot[first_out + o] == nullptr || slot[first_out + o] == Py_None) &&
          s_.num_inputs > 0) {  // None, the signature's default, allocates too
        allocate = true;
        continue;
      }
      const NDArray& out = Array(slot[first_out + o], "output", o);
      RequireWritable(out, id_);
      outs[o] = out.dl();
      results[o] = py::reinterpret_borrow<py::object>(slot[first_out + o]);
    }
    if (allocate) Allocate(ins, attrs, outs, results);
    InvokeOp(id_, ins, s_.num_inputs, outs, s_.num_outputs, attrs, n_attr);
    if (s_.num_outputs == 1) return results[0];
    py::tuple t(s_.num_outputs);
    for (int o = 0; o < s_.num_outputs; ++o) t[o] = results[o];
    return std::move(t);
  }

 private:
  void BindKeywords(PyObject* const* values, PyObject* kwnames, PyObject** slot) const {
    for (Py_ssize_t w = 0; w < PyTuple_GET_SIZE(kwnames); ++w) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, w);
      PyObject* value = values[w];
      int index = -1;
      for (int k = 0; k < n_all_ && index < 0; ++k) {
        if (key == names_[k].ptr() || PyUnicode_Compare(key, names_[k].ptr()) == 0) index = k;
      }
      if (index < 0) {
        throw DTypeError(signature_ + ": got an unexpected keyword argument " + Repr(key));
      }
      if (slot[index] != nullptr) {
        throw DTypeError(signature_ + ": got multiple values for argument " + Repr(key));
      }
      slot[index] = value;
    }
  }

  [[noreturn]] void Missing(int index) const {
    throw DTypeError(signature_ + ": missing a required argument: '" +
                     names_[index].cast<std::string>() + "'");
  }

  const NDArray& Array(PyObject* obj, const char* kind, int i) const {
    const int index =
        kind[0] == 'i' ? i : s_.num_inputs + static_cast<int>(s_.attr_names.size()) + i;
    if (obj == nullptr) Missing(index);
    // The common case, an NDArray itself (no subclass) made by its constructor, without
    // pybind11's two type lookups; anything else goes through the caster.
    if (const NDArray* a = ExactInstance<NDArray>(obj)) return *a;
    py::detail::make_caster<NDArray> caster;
    if (!caster.load(obj, false)) {
      throw DTypeError(s_.name + ": " + kind + " '" + names_[index].cast<std::string>() +
                       "' must be an NDArray, got " + TypeName(obj));
    }
    return py::detail::cast_op<const NDArray&>(caster);
  }

  double Attr(PyObject* obj, int a) const {
    const std::string& name = s_.attr_names[a];
    if (obj == nullptr) {
      if (std::isnan(s_.attr_defaults[a])) Missing(s_.num_inputs + a);
      return s_.attr_defaults[a];
    }
    switch (s_.attr_types[a]) {
      case kDLArrayAttrBool:
        return FlagValue(s_, name, obj);
      case kDLArrayAttrInt:
        return IntValue(s_, name, obj);
      default:
        return FloatValue(s_, name, obj);
    }
  }

  // Outputs left out: new arrays on the inputs' device, shaped by the op's shape inference.
  void Allocate(const DLArray* const* ins, const double* attrs, DLArray** outs,
                py::object* results) const {
    Shapes shapes;
    std::vector<DLArrayDType> dtypes;
    for (int i = 0; i < s_.num_inputs; ++i) {
      shapes.emplace_back(ins[i]->shape, ins[i]->shape + ins[i]->ndim);
      dtypes.push_back(ins[i]->dtype);
    }
    const std::vector<OutputSpec> specs =
        InferOutputs(id_, shapes, dtypes, std::vector<double>(attrs, attrs + s_.attr_names.size()));
    for (int o = 0; o < s_.num_outputs; ++o) {
      if (results[o]) continue;
      NDArray made{Array::Empty(specs[o].shape, ins[0]->ctx, specs[o].dtype)};
      outs[o] = made.dl();
      results[o] = py::cast(std::move(made));
    }
  }

  int id_;
  const OpInfo& s_;
  std::vector<py::str> names_;  // inputs, attributes, outputs
  int n_all_ = 0;
  std::string signature_;
};

// One list argument of invoke() as NDArrays. The items are held in `keep` for the call: a
// sequence may make its items as it is read (an NDArray's rows are new objects), and pybind11's
// caster for std::vector<const NDArray*> kept pointers into items it had already released.
std::vector<const NDArray*> OperandList(const std::string& name, const char* what,
                                        const py::handle& seq, py::list* keep) {
  static PyTypeObject* const nd_type = py::detail::get_type_info(typeid(NDArray))->type;
  if (PyObject_TypeCheck(seq.ptr(), nd_type) || PyUnicode_Check(seq.ptr()) ||
      !PySequence_Check(seq.ptr())) {
    throw DTypeError("invoke(" + name + "): " + what + " must be a list of NDArrays, got " +
                     TypeName(seq));
  }
  *keep = py::list(py::reinterpret_borrow<py::object>(seq));
  std::vector<const NDArray*> out;
  for (size_t i = 0; i < keep->size(); ++i) {
    const py::handle item = (*keep)[i];
    const std::string label = std::string(what) + "[" + std::to_string(i) + "]";
    if (!PyObject_TypeCheck(item.ptr(), nd_type)) {
      throw DTypeError("invoke(" + name + "): " + label + " must be an NDArray, got " +
                       TypeName(item));
    }
    RequireConstructed<NDArray>(item, "NDArray");
    out.push_back(&item.cast<const NDArray&>());
  }
  return out;
}

std::vector<double> AttrList(const std::string& name, const py::handle& seq) {
  if (PyUnicode_Check(seq.ptr()) || !PySequence_Check(seq.ptr())) {
    throw DTypeError("invoke(" + name + "): attrs must be a list of numbers, got " + TypeName(seq));
  }
  const py::list items(py::reinterpret_borrow<py::object>(seq));
  std::vector<double> out;
  for (size_t i = 0; i < items.size(); ++i) {
    const double d = PyFloat_AsDouble(items[i].ptr());
    if (d == -1.0 && PyErr_Occurred()) {
      const bool overflow = PyErr_ExceptionMatches(PyExc_OverflowError);
      PyErr_Clear();
      const std::string label = "invoke(" + name + "): attrs[" + std::to_string(i) + "]";
      if (overflow) throw Error(ErrorKind::kValue, label + " is out of a double's range");
      throw DTypeError(label + " must be a number, got " + TypeName(items[i]));
    }
    out.push_back(d);
  }
  return out;
}

void InvokeByName(const std::string& name, const py::object& inputs, const py::object& outputs,
                  const py::object& attrs) {
  const int op = RequireOp(name);
  py::list keep_in, keep_out;
  const std::vector<const NDArray*> in = OperandList(name, "inputs", inputs, &keep_in);
  const std::vector<const NDArray*> out = OperandList(name, "outputs", outputs, &keep_out);
  std::vector<const DLArray*> ins;
  for (const NDArray* a : in) ins.push_back(a->dl());
  RunOp(op, ins, out, attrs.is_none() ? std::vector<double>{} : AttrList(name, attrs));
}

}  // namespace

void RunOp(int op, const std::vector<const DLArray*>& ins, const std::vector<const NDArray*>& outs,
           const std::vector<double>& attrs) {
  std::vector<DLArray*> out_dl;
  for (const NDArray* o : outs) {
    RequireWritable(*o, op);
    out_dl.push_back(o->dl());
  }
  InvokeOp(op, ins.data(), static_cast<int>(ins.size()), out_dl.data(),
           static_cast<int>(out_dl.size()), attrs.data(), static_cast<int>(attrs.size()));
}

namespace {

// An op as a builtin function: CPython calls it with vectorcall (no argument tuple), and its
// docstring's first line "name(signature)\n--\n\n" gives inspect.signature and help() the
// schema's parameters. The method definition and the OpFunction live as long as the process.
PyObject* CallOp(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  try {
    CallGuard guard;
    const auto* f = static_cast<const OpFunction*>(PyCapsule_GetPointer(self, nullptr));
    return f->Call(args, nargs, kwnames).release().ptr();
  } catch (...) {
    return RaiseCurrentException();
  }
}

py::object MakeOp(const std::string& name, const std::string& doc) {
  struct Made {
    OpFunction f;
    std::string name, doc;
    PyMethodDef def;
  };
  auto* made = new Made{OpFunction(name), name, "", {}};
  made->doc = made->f.signature() + "\n--\n\n" + doc;
  made->def = {made->name.c_str(),
               reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&CallOp)),
               METH_FASTCALL | METH_KEYWORDS, made->doc.c_str()};
  return NewBuiltin(&made->def, &made->f, "dlarray.ops");
}

}  // namespace

void BindOps(py::module_& m) {
  m.def("_make_op", &MakeOp, py::arg("name"), py::arg("doc"),
        R"doc(A declared op as a function (dlarray.ops makes one per op, on first use).

Parameters
----------
name : str
    A declared op's name, one of :func:`op_names`.
doc : str
    Its help text; the signature line comes from the op's declaration.

Returns
-------
builtin function
    Takes the op's inputs, attributes and outputs in its positional order or by keyword;
    outputs left out are allocated; returns the output(s).
)doc",
        Guard());
  m.def("invoke", &InvokeByName, py::arg("op"), py::arg("inputs"), py::arg("outputs"),
        py::arg("attrs") = py::none(),
        R"doc(Runs any declared op by name, on the device of its operands.

The inputs, outputs and attributes are given as lists in the op's declared order (inputs, outputs,
attributes), with every output given; the functions of :mod:`dlarray.ops` are the friendlier form.

Parameters
----------
op : str
    The op's name, one of :func:`op_names`.
inputs : list of NDArray
    The inputs, in declared order.
outputs : list of NDArray
    The outputs, written in place.
attrs : list of float, optional
    The scalar attributes, in declared order.

Raises
------
ValueError
    An unknown op, wrong counts, shapes the op refuses, operands on different devices, a
    read-only output.
TypeError
    A dtype the op does not support; an operand that is not an NDArray or an attribute that is
    not a number (the message names it, e.g. ``inputs[1]``).
RuntimeError
    No kernel for the operands' device.

Examples
--------
>>> import dlarray, numpy as np
>>> x = dlarray.array(np.arange(3, dtype=np.float32))
>>> y = dlarray.empty((3,))
>>> dlarray.ops.invoke("matrix_elementwise_multiply_by_const", [x], [y], [3.0])
>>> y.asnumpy()
array([0., 3., 6.], dtype=float32)
)doc",
        Guard());
  BindOpTable(m);
}

}  // namespace dlarray
