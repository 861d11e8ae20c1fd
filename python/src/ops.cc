// The ops, with the seed's names and argument order; invoke() runs any declared op by name.
#include <pybind11/stl.h>

#include <array>
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

template <size_t NI, size_t NA>
void Run(int op, const std::array<const NDArray*, NI>& in, const NDArray& out,
         const std::array<double, NA>& attrs) {
  std::array<const DLArray*, NI == 0 ? 1 : NI> ins{};
  for (size_t i = 0; i < NI; ++i) ins[i] = in[i]->dl();
  DLArray* outs[1] = {out.dl()};
  InvokeOp(op, ins.data(), NI, outs, 1, attrs.data(), NA);
}

using A = const NDArray&;

// A transpose flag: bool, numpy.bool_, or the int 0 or 1. None, floats and strings are refused
// (pybind11's bool conversion would take None as False).
double Flag(const py::handle& v, const char* name) {
  if (PyBool_Check(v.ptr())) return v.ptr() == Py_True ? 1.0 : 0.0;
  if (PyLong_Check(v.ptr())) {
    const long long i = PyLong_AsLongLong(v.ptr());
    if ((i == 0 || i == 1) && !PyErr_Occurred()) return static_cast<double>(i);
    PyErr_Clear();
    throw Error(ErrorKind::kValue, std::string("matrix_multiply: ") + name +
                                       " must be True or False (or 1 or 0), got " +
                                       std::string(py::repr(v)));
  }
  if (py::hasattr(v, "dtype") && py::str(v.attr("dtype")).cast<std::string>() == "bool") {
    return PyObject_IsTrue(v.ptr()) == 1 ? 1.0 : 0.0;
  }
  throw DTypeError(std::string("matrix_multiply: ") + name + " must be a bool, got " +
                   std::string(py::str(py::type::of(v).attr("__name__"))) + " (" +
                   std::string(py::repr(v)) + ")");
}

void InvokeByName(const std::string& name, const std::vector<const NDArray*>& inputs,
                  const std::vector<const NDArray*>& outputs, const std::vector<double>& attrs) {
  const int op = RequireOp(name);
  std::vector<const DLArray*> ins;
  std::vector<DLArray*> outs;
  for (const auto* list : {&inputs, &outputs}) {
    for (const NDArray* a : *list) {
      if (a == nullptr)
        throw DTypeError("invoke(" + name + "): operands must be NDArrays, got None");
    }
  }
  for (const NDArray* a : inputs) ins.push_back(a->dl());
  for (const NDArray* a : outputs) outs.push_back(a->dl());
  InvokeOp(op, ins.data(), static_cast<int>(ins.size()), outs.data(), static_cast<int>(outs.size()),
           attrs.data(), static_cast<int>(attrs.size()));
}

}  // namespace

void BindOps(py::module_& m) {
  // Core op ids are looked up once; the lambdas below capture them.
  const int set = RequireOp("array_set"), bcast = RequireOp("broadcast_to"),
            rsum = RequireOp("reduce_sum_axis_zero"), add = RequireOp("matrix_elementwise_add"),
            addc = RequireOp("matrix_elementwise_add_by_const"),
            mul = RequireOp("matrix_elementwise_multiply"),
            mulc = RequireOp("matrix_elementwise_multiply_by_const"),
            mm = RequireOp("matrix_multiply"), relu = RequireOp("relu"),
            relug = RequireOp("relu_gradient"), smax = RequireOp("softmax"),
            sce = RequireOp("softmax_cross_entropy"), copy = RequireOp("copy");

  m.def(
      "array_set", [set](A arr, double v) { Run<0, 1>(set, {}, arr, {v}); }, py::arg("arr"),
      py::arg("value"), "arr[:] = value", Guard());
  m.def(
      "broadcast_to", [bcast](A in, A out) { Run<1, 0>(bcast, {&in}, out, {}); }, py::arg("in_arr"),
      py::arg("out_arr"), "out_arr = in_arr broadcast to out_arr's shape", Guard());
  m.def(
      "reduce_sum_axis_zero", [rsum](A in, A out) { Run<1, 0>(rsum, {&in}, out, {}); },
      py::arg("in_arr"), py::arg("out_arr"), "out_arr = in_arr.sum(axis=0)", Guard());
  m.def(
      "matrix_elementwise_add",
      [add](A a, A b, A c) {
        Run<2, 0>(add, {&a, &b}, c, {});
      },
      py::arg("matA"), py::arg("matB"), py::arg("matC"), "matC = matA + matB", Guard());
  m.def(
      "matrix_elementwise_add_by_const",
      [addc](A in, double v, A out) { Run<1, 1>(addc, {&in}, out, {v}); }, py::arg("in_mat"),
      py::arg("val"), py::arg("out_mat"), "out_mat = in_mat + val", Guard());
  m.def(
      "matrix_elementwise_multiply",
      [mul](A a, A b, A c) {
        Run<2, 0>(mul, {&a, &b}, c, {});
      },
      py::arg("matA"), py::arg("matB"), py::arg("matC"), "matC = matA * matB", Guard());
  m.def(
      "matrix_elementwise_multiply_by_const",
      [mulc](A in, double v, A out) { Run<1, 1>(mulc, {&in}, out, {v}); }, py::arg("in_mat"),
      py::arg("val"), py::arg("out_mat"), "out_mat = in_mat * val", Guard());
  m.def(
      "matrix_multiply",
      [mm](A a, const py::object& ta, A b, const py::object& tb, A c) {
        Run<2, 2>(mm, {&a, &b}, c, {Flag(ta, "transA"), Flag(tb, "transB")});
      },
      py::arg("matA"), py::arg("transA"), py::arg("matB"), py::arg("transB"), py::arg("matC"),
      "matC = op(matA) @ op(matB), op transposes when its flag is set", Guard());
  m.def(
      "relu", [relu](A in, A out) { Run<1, 0>(relu, {&in}, out, {}); }, py::arg("in_arr"),
      py::arg("out_arr"), "out_arr = max(in_arr, 0)", Guard());
  m.def(
      "relu_gradient",
      [relug](A in, A grad, A out) {
        Run<2, 0>(relug, {&in, &grad}, out, {});
      },
      py::arg("in_arr"), py::arg("in_grad_arr"), py::arg("out_arr"),
      "out_arr = in_grad_arr * (in_arr > 0)", Guard());
  m.def(
      "softmax", [smax](A in, A out) { Run<1, 0>(smax, {&in}, out, {}); }, py::arg("in_arr"),
      py::arg("out_arr"), "row-wise softmax over the last axis", Guard());
  m.def(
      "softmax_cross_entropy",
      [sce](A y, A y_, A out) {
        Run<2, 0>(sce, {&y, &y_}, out, {});
      },
      py::arg("in_arr_a"), py::arg("in_arr_b"), py::arg("out_arr"),
      "out_arr (1 element) = mean over rows of -sum(b * log softmax(a))", Guard());
  m.def(
      "copy", [copy](A in, A out) { Run<1, 0>(copy, {&in}, out, {}); }, py::arg("in_arr"),
      py::arg("out_arr"), "out_arr = in_arr", Guard());

  m.def("invoke", &InvokeByName, py::arg("op"), py::arg("inputs"), py::arg("outputs"),
        py::arg("attrs") = std::vector<double>{}, "Runs any declared op (core or plugin) by name.",
        Guard());
  m.def("op_names", &ListOps, "Names of every declared op, core and plugin.");
  m.def(
      "op_info",
      [](const std::string& name) {
        const OpSchema& s = GetOpSchema(RequireOp(name));
        py::dict d;
        d["name"] = s.name;
        d["num_inputs"] = s.num_inputs;
        d["num_outputs"] = s.num_outputs;
        d["attr_names"] = s.attr_names;
        d["allow_inplace"] = s.allow_inplace;
        d["doc"] = s.doc;
        std::vector<std::string> devices;
        for (int t = 1; t < DLARRAY_MAX_DEVICE_TYPES; ++t) {
          if (HasKernel(RequireOp(name), t)) devices.push_back(DeviceTypeName(t));
        }
        d["devices"] = devices;
        return d;
      },
      py::arg("name"));
}

}  // namespace dlarray
