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
    py::gil_scoped_release r;
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

template <size_t NI, size_t NA>
void Run(int op, const std::array<const NDArray*, NI>& in, const NDArray& out,
         const std::array<double, NA>& attrs) {
  RequireWritable(out, op);
  std::array<const DLArray*, NI == 0 ? 1 : NI> ins{};
  for (size_t i = 0; i < NI; ++i) ins[i] = in[i]->dl();
  DLArray* outs[1] = {out.dl()};
  InvokeOp(op, ins.data(), NI, outs, 1, attrs.data(), NA);
}

using A = const NDArray&;

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
  for (const NDArray* a : outputs) {
    RequireWritable(*a, op);
    outs.push_back(a->dl());
  }
  InvokeOp(op, ins.data(), static_cast<int>(ins.size()), outs.data(), static_cast<int>(outs.size()),
           attrs.data(), static_cast<int>(attrs.size()));
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

void BindOps(py::module_& m) {
  // Core op ids are looked up once; the lambdas below capture them.
  const int set = RequireOp("array_set"), bcast = RequireOp("broadcast_to"),
            rsum = RequireOp("reduce_sum_axis_zero"), add = RequireOp("matrix_elementwise_add"),
            addc = RequireOp("matrix_elementwise_add_by_const"),
            mul = RequireOp("matrix_elementwise_multiply"),
            mulc = RequireOp("matrix_elementwise_multiply_by_const"),
            mm = RequireOp("matrix_multiply"), relu = RequireOp("relu"),
            relug = RequireOp("relu_gradient"), smax = RequireOp("softmax"),
            sce = RequireOp("softmax_cross_entropy"), copy = RequireOp("copy"),
            astype = RequireOp("astype"), cmp = RequireOp("compare"),
            cmpc = RequireOp("compare_by_const"), div = RequireOp("matrix_elementwise_divide"),
            divc = RequireOp("matrix_elementwise_divide_by_const");

  m.def(
      "array_set", [set](A arr, double v) { Run<0, 1>(set, {}, arr, {v}); }, py::arg("arr"),
      py::arg("value"), "arr[:] = value");
  m.def(
      "broadcast_to", [bcast](A in, A out) { Run<1, 0>(bcast, {&in}, out, {}); }, py::arg("in_arr"),
      py::arg("out_arr"), "out_arr = in_arr broadcast to out_arr's shape");
  m.def(
      "reduce_sum_axis_zero", [rsum](A in, A out) { Run<1, 0>(rsum, {&in}, out, {}); },
      py::arg("in_arr"), py::arg("out_arr"), "out_arr = in_arr.sum(axis=0)");
  m.def(
      "matrix_elementwise_add",
      [add](A a, A b, A c) {
        Run<2, 0>(add, {&a, &b}, c, {});
      },
      py::arg("matA"), py::arg("matB"), py::arg("matC"), "matC = matA + matB");
  m.def(
      "matrix_elementwise_add_by_const",
      [addc](A in, double v, A out) { Run<1, 1>(addc, {&in}, out, {v}); }, py::arg("in_mat"),
      py::arg("val"), py::arg("out_mat"), "out_mat = in_mat + val");
  m.def(
      "matrix_elementwise_multiply",
      [mul](A a, A b, A c) {
        Run<2, 0>(mul, {&a, &b}, c, {});
      },
      py::arg("matA"), py::arg("matB"), py::arg("matC"), "matC = matA * matB");
  m.def(
      "matrix_elementwise_multiply_by_const",
      [mulc](A in, double v, A out) { Run<1, 1>(mulc, {&in}, out, {v}); }, py::arg("in_mat"),
      py::arg("val"), py::arg("out_mat"), "out_mat = in_mat * val");
  m.def(
      "matrix_multiply",
      [mm](A a, bool ta, A b, bool tb, A c) {
        Run<2, 2>(mm, {&a, &b}, c, {ta ? 1.0 : 0.0, tb ? 1.0 : 0.0});
      },
      py::arg("matA"), py::arg("transA"), py::arg("matB"), py::arg("transB"), py::arg("matC"),
      "matC = op(matA) @ op(matB), op transposes when its flag is set");
  m.def(
      "relu", [relu](A in, A out) { Run<1, 0>(relu, {&in}, out, {}); }, py::arg("in_arr"),
      py::arg("out_arr"), "out_arr = max(in_arr, 0)");
  m.def(
      "relu_gradient",
      [relug](A in, A grad, A out) {
        Run<2, 0>(relug, {&in, &grad}, out, {});
      },
      py::arg("in_arr"), py::arg("in_grad_arr"), py::arg("out_arr"),
      "out_arr = in_grad_arr * (in_arr > 0)");
  m.def(
      "softmax", [smax](A in, A out) { Run<1, 0>(smax, {&in}, out, {}); }, py::arg("in_arr"),
      py::arg("out_arr"), "row-wise softmax over the last axis");
  m.def(
      "softmax_cross_entropy",
      [sce](A y, A y_, A out) {
        Run<2, 0>(sce, {&y, &y_}, out, {});
      },
      py::arg("in_arr_a"), py::arg("in_arr_b"), py::arg("out_arr"),
      "out_arr (1 element) = mean over rows of -sum(b * log softmax(a))");
  m.def(
      "copy", [copy](A in, A out) { Run<1, 0>(copy, {&in}, out, {}); }, py::arg("in_arr"),
      py::arg("out_arr"), "out_arr = in_arr");

  m.def(
      "astype", [astype](A in, A out) { Run<1, 0>(astype, {&in}, out, {}); }, py::arg("in_arr"),
      py::arg("out_arr"), "out_arr = in_arr converted to out_arr's dtype (NumPy's casts)");
  m.def(
      "compare",
      [cmp](A a, A b, A out, int op) {
        Run<2, 1>(cmp, {&a, &b}, out, {double(op)});
      },
      py::arg("a"), py::arg("b"), py::arg("out"), py::arg("cmp"),
      "out (bool) = a <cmp> b; cmp: 0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >=");
  m.def(
      "compare_by_const",
      [cmpc](A in, double v, A out, int op) {
        Run<1, 2>(cmpc, {&in}, out, {v, double(op)});
      },
      py::arg("x"), py::arg("value"), py::arg("out"), py::arg("cmp"),
      "out (bool) = x <cmp> value; cmp: 0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >=");
  m.def(
      "matrix_elementwise_divide",
      [div](A a, A b, A c) {
        Run<2, 0>(div, {&a, &b}, c, {});
      },
      py::arg("matA"), py::arg("matB"), py::arg("matC"), "matC = matA / matB");
  m.def(
      "matrix_elementwise_divide_by_const",
      [divc](A in, double v, A out) { Run<1, 1>(divc, {&in}, out, {v}); }, py::arg("in_mat"),
      py::arg("val"), py::arg("out_mat"), "out_mat = in_mat / val");

  m.def("invoke", &InvokeByName, py::arg("op"), py::arg("inputs"), py::arg("outputs"),
        py::arg("attrs") = std::vector<double>{}, "Runs any declared op (core or plugin) by name.");
  m.def("op_names", &ListOps, "Names of every declared op, core and plugin.");
  m.def(
      "infer_outputs",
      [](const std::string& name, const std::vector<std::vector<int64_t>>& shapes,
         const std::vector<py::dtype>& dtypes, const std::vector<double>& attrs) {
        std::vector<DLArrayDType> types;
        for (const py::dtype& d : dtypes) types.push_back(DTypeFromNumpy(d));
        py::list out;
        for (const OutputSpec& o : InferOutputs(RequireOp(name), shapes, types, attrs)) {
          out.append(py::make_tuple(py::tuple(py::cast(o.shape)), DTypeToNumpy(o.dtype)));
        }
        return out;
      },
      py::arg("op"), py::arg("shapes"), py::arg("dtypes"), py::arg("attrs"),
      "(shape, dtype) of each output of op for inputs of these shapes and dtypes.");
  m.def(
      "op_info",
      [](const std::string& name) {
        const OpInfo& s = GetOpInfo(RequireOp(name));
        py::dict d;
        d["name"] = s.name;
        d["num_inputs"] = s.num_inputs;
        d["num_outputs"] = s.num_outputs;
        d["attr_names"] = s.attr_names;
        d["allow_inplace"] = s.allow_inplace;
        d["input_names"] = s.input_names;
        d["output_names"] = s.output_names;
        d["owner"] = s.owner;
        py::list dtypes;
        for (const DLArrayDType& t : s.dtypes) dtypes.append(DTypeToString(t));
        if (s.dtypes.empty()) dtypes.append("float32");
        d["dtypes"] = dtypes;
        py::list grads;
        for (const GradientInfo& g : s.gradients) {
          py::list args;
          for (const GradArg& a : g.args) {
            const char* kind = a.kind == kDLArrayGradInput    ? "input"
                               : a.kind == kDLArrayGradOutput ? "output"
                                                              : "output_grad";
            args.append(py::make_tuple(kind, a.index));
          }
          py::dict gd;
          gd["input"] = g.input;
          gd["op"] = g.op;
          gd["args"] = args;
          grads.append(gd);
        }
        d["gradients"] = grads;
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
