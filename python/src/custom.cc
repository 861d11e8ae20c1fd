// dlarray._core.AotLibrary and AotOp (aot_op.h), the C++ side of dlarray.custom. Calling an AotOp
// (dlarray.custom.Custom is its Python subclass) goes straight to its tp_call slot, not through
// pybind11's dispatcher: the call overhead of a custom op stays that of a built-in op.
#include <pybind11/stl.h>

#include <memory>
#include <new>
#include <string>
#include <vector>

#include "aot_op.h"
#include "binding.h"

namespace dlarray {
namespace {

// Looked up once when the module loads: pybind11's records of NDArray and AotOp, and the
// interned keyword "out".
const py::detail::type_info* g_ndarray_info = nullptr;
const py::detail::type_info* g_op_info = nullptr;
PyObject* g_out_keyword = nullptr;

// The C++ object of an instance of a bound class (or of a Python subclass), or nullptr.
void* ValueOf(PyObject* obj, const py::detail::type_info* info) {
  if (!PyObject_TypeCheck(obj, info->type)) return nullptr;
  auto* inst = reinterpret_cast<py::detail::instance*>(obj);
  if (inst->simple_layout) {  // one bound base (the case of NDArray and Custom): no look-up
    return inst->simple_holder_constructed ? inst->simple_value_holder[0] : nullptr;
  }
  py::detail::value_and_holder vh = inst->get_value_and_holder(info, false);
  return vh && vh.holder_constructed() ? vh.value_ptr() : nullptr;
}

const NDArray* NDArrayOf(PyObject* obj) {
  auto* nd = static_cast<NDArray*>(ValueOf(obj, g_ndarray_info));
  return nd != nullptr && nd->array != nullptr ? nd : nullptr;
}

DLArray* ArrayOf(PyObject* obj) {
  const NDArray* nd = NDArrayOf(obj);
  return nd != nullptr ? nd->dl() : nullptr;
}

// Output k's array; a read-only one (over a read-only NumPy array, a read-only DLPack import) is
// refused: the library function would write through its pointer.
DLArray* OutputOf(const AotOp& op, PyObject* obj, int k) {
  const NDArray* nd = NDArrayOf(obj);
  if (nd == nullptr) return nullptr;
  if (nd->array->read_only()) {
    throw Error(ErrorKind::kValue, "dlarray.custom: " + op.name() + ": output " +
                                       std::to_string(k) +
                                       " is read-only (it shares the memory of a read-only "
                                       "source); pass a writable array as out=");
  }
  return nd->dl();
}

std::string TypeName(PyObject* obj) { return Py_TYPE(obj)->tp_name; }

// Exceptions to Python errors, as pybind11's dispatcher does for the functions it binds.
void SetPythonError() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const Error& e) {
    PyObject* type = e.kind() == ErrorKind::kValue    ? PyExc_ValueError
                     : e.kind() == ErrorKind::kType   ? PyExc_TypeError
                     : e.kind() == ErrorKind::kMemory ? PyExc_MemoryError
                                                      : PyExc_RuntimeError;
    PyErr_SetString(type, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_SetString(PyExc_MemoryError, "dlarray.custom: out of host memory");
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "dlarray.custom: unknown C++ exception");
  }
}

// The arrays of out= (an NDArray, or a tuple or list of them) into outs.
void GivenOutputs(const AotOp& op, PyObject* out, DLArray** outs) {
  const int n = op.num_outputs();
  if (ArrayOf(out) != nullptr) {
    if (n != 1) {
      throw DTypeError("dlarray.custom: " + op.name() + " has " + std::to_string(n) +
                       " outputs: out= must be a tuple of as many NDArrays");
    }
    outs[0] = OutputOf(op, out, 0);
    return;
  }
  if (!PyTuple_Check(out) && !PyList_Check(out)) {
    throw DTypeError("dlarray.custom: " + op.name() +
                     ": out= must be an NDArray or a tuple of NDArrays, got " + TypeName(out));
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(out);
  if (static_cast<int>(py::len(seq)) != n) {
    throw DTypeError("dlarray.custom: " + op.name() + " has " + std::to_string(n) +
                     " output(s), out= gives " + std::to_string(py::len(seq)));
  }
  for (int k = 0; k < n; ++k) {
    py::object item = seq[k];
    outs[k] = OutputOf(op, item.ptr(), k);
    if (outs[k] == nullptr) {
      throw DTypeError("dlarray.custom: " + op.name() + ": output " + std::to_string(k) +
                       " must be an NDArray, got " + TypeName(item.ptr()));
    }
  }
}

// Runs op on inputs args[0..nin) and, when outs_in_args, outputs args[nin..); else out (None or
// out=) gives the outputs or they are allocated. Returns the output(s).
py::object Invoke(PyObject* self, AotOp& op, PyObject* const* args, Py_ssize_t nargs, PyObject* out,
                  bool outs_in_args) {
  constexpr int kFew = 8;
  const int nout = op.num_outputs();
  const Py_ssize_t nin_total = outs_in_args ? nargs - nout : nargs;
  if (nin_total < 0) {
    throw DTypeError("dlarray.custom: " + op.name() + " runs with its inputs, then " +
                     std::to_string(nout) + " output(s)");
  }
  const int nin = static_cast<int>(nin_total);
  DLArray* few_ins[kFew];
  DLArray* few_outs[kFew];
  std::vector<DLArray*> many_ins, many_outs;
  DLArray** ins = nin <= kFew ? few_ins : (many_ins.resize(nin), many_ins.data());
  DLArray** outs = nout <= kFew ? few_outs : (many_outs.resize(nout), many_outs.data());
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    DLArray* a = i < nin ? ArrayOf(args[i]) : OutputOf(op, args[i], static_cast<int>(i - nin));
    if (a == nullptr) {
      throw DTypeError("dlarray.custom: " + op.name() + ": argument " + std::to_string(i) +
                       " must be an NDArray, got " + TypeName(args[i]));
    }
    if (i < nin) {
      ins[i] = a;
    } else {
      outs[i - nin] = a;
    }
  }
  const bool outs_given = outs_in_args || out != Py_None;
  if (!outs_in_args && outs_given) GivenOutputs(op, out, outs);
  std::vector<std::shared_ptr<Array>> made;
  op.Run(self, ins, nin, outs, outs_given, &made);
  if (outs_in_args) return py::none();
  if (outs_given) return py::reinterpret_borrow<py::object>(out);
  if (nout == 1) return py::cast(NDArray{std::move(made[0])});
  py::tuple result(nout);
  for (int k = 0; k < nout; ++k) result[k] = py::cast(NDArray{std::move(made[k])});
  return result;
}

// Custom(...)(*inputs, out=None). Anything else than NDArrays and out= (graph nodes, NumPy
// arrays, other keywords) goes to the Python method _call_other.
PyObject* AotOpCall(PyObject* self, PyObject* args, PyObject* kwargs) {
  try {
    auto* op = static_cast<AotOp*>(ValueOf(self, g_op_info));
    if (op == nullptr) throw DTypeError("dlarray.custom: the op was not initialised");
    const Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject* const* items = &PyTuple_GET_ITEM(args, 0);
    bool plain = true;
    for (Py_ssize_t i = 0; i < n && plain; ++i) plain = ArrayOf(items[i]) != nullptr;
    PyObject* out = Py_None;
    if (kwargs != nullptr && PyDict_GET_SIZE(kwargs) > 0) {
      PyObject* given = PyDict_GetItemWithError(kwargs, g_out_keyword);
      if (given == nullptr && PyErr_Occurred()) return nullptr;
      if (given == nullptr || PyDict_GET_SIZE(kwargs) != 1) plain = false;
      if (given != nullptr) out = given;
    }
    if (!plain) {
      py::object other = py::reinterpret_borrow<py::object>(self).attr("_call_other");
      return PyObject_Call(other.ptr(), args, kwargs);
    }
    return Invoke(self, *op, items, n, out, false).release().ptr();
  } catch (...) {
    SetPythonError();
    return nullptr;
  }
}

}  // namespace

void BindCustom(py::module_& m) {
  py::class_<AotLibrary, std::shared_ptr<AotLibrary>>(
      m, "AotLibrary", "A shared library of AOT custom ops, loaded once (dlarray.custom).")
      .def(py::init<std::string>(), py::arg("path"))
      .def_property_readonly("path", &AotLibrary::path)
      .def(
          "has_symbol",
          [](const AotLibrary& l, const std::string& s) { return l.Symbol(s) != nullptr; },
          py::arg("name"));

  py::class_<AotOp>(m, "AotOp", py::custom_type_setup([](PyHeapTypeObject* heap_type) {
                      heap_type->ht_type.tp_call = &AotOpCall;
                    }),
                    "An AOT custom op: use dlarray.custom.Custom.")
      .def(py::init<std::string, std::vector<py::tuple>, int, std::vector<py::dtype>, int,
                    py::object, std::vector<py::tuple>>(),
           py::arg("name"), py::arg("impls"), py::arg("num_inputs"), py::arg("in_dtypes"),
           py::arg("num_outputs"), py::arg("fixed_specs"), py::arg("attrs"))
      .def_property_readonly("name", &AotOp::name)
      .def_property_readonly("num_inputs", &AotOp::num_inputs)
      .def_property_readonly("num_outputs", &AotOp::num_outputs)
      .def_property_readonly("device_types", &AotOp::device_types)
      .def("_has", &AotOp::Has, py::arg("device_type"), py::arg("what"))
      .def("_workspace_size", &AotOp::WorkspaceSize, py::arg("device_type"))
      .def("_library_infer", &AotOp::LibraryInfer, py::arg("device_type"), py::arg("shapes"),
           py::arg("dtypes"))
      .def(
          "_run",
          [](const py::object& self, const py::args& args) {
            Invoke(self.ptr(), self.cast<AotOp&>(), &PyTuple_GET_ITEM(args.ptr(), 0),
                   PyTuple_GET_SIZE(args.ptr()), Py_None, true);
          },
          "Runs the op on its inputs followed by its outputs (an executor's bound call).");

  g_ndarray_info = py::detail::get_type_info(typeid(NDArray));
  g_op_info = py::detail::get_type_info(typeid(AotOp));
  g_out_keyword = PyUnicode_InternFromString("out");
}

}  // namespace dlarray
