// dlarray.ops' questions about the op table: op_names, op_info (a declaration as a dict) and
// infer_outputs (what an op would allocate).
#include <pybind11/stl.h>

#include <cmath>
#include <string>
#include <vector>

#include "binding.h"

namespace dlarray {

// The Python value of an attribute default, as the signature shows it.
py::object AttrDefault(DLArrayAttrType type, double v) {
  if (type == kDLArrayAttrBool) return py::bool_(v != 0.0);
  if (type == kDLArrayAttrInt) return py::int_(static_cast<long long>(v));
  return py::float_(v);
}

namespace {

const char* GradKind(int kind) {
  return kind == kDLArrayGradInput    ? "input"
         : kind == kDLArrayGradOutput ? "output"
                                      : "output_grad";
}

py::dict OpInfoDict(const std::string& name) {
  const int id = RequireOp(name);
  const OpInfo& s = GetOpInfo(id);
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
  static const char* const kRules[] = {"alike", "fixed", "per_operand"};
  d["dtype_rule"] = kRules[s.dtype_rule];
  d["output_dtype"] = s.dtype_rule == kDLArrayOutputsFixed
                          ? py::object(py::str(DTypeToString(s.output_dtype)))
                          : py::object(py::none());
  static const char* const kTypes[] = {"float", "bool", "int"};
  py::list types, defaults;
  for (size_t a = 0; a < s.attr_names.size(); ++a) {
    types.append(kTypes[s.attr_types[a]]);
    defaults.append(std::isnan(s.attr_defaults[a])
                        ? py::object(py::none())
                        : AttrDefault(s.attr_types[a], s.attr_defaults[a]));
  }
  d["attr_types"] = types;
  d["attr_defaults"] = defaults;
  std::vector<std::string> all = s.input_names;
  all.insert(all.end(), s.attr_names.begin(), s.attr_names.end());
  all.insert(all.end(), s.output_names.begin(), s.output_names.end());
  py::list order;
  for (int k : s.call_order) order.append(all[k]);
  d["call_order"] = order;
  d["accepts_strided"] = s.accepts_strided;
  d["fills_when_empty"] = s.fills_when_empty;
  // InferOutputs' rule: without either the caller shapes the outputs (broadcast_to).
  d["infers_shape"] = s.infer_shape != nullptr || s.validate == nullptr;
  py::list grads;
  for (const GradientInfo& g : s.gradients) {
    py::list args;
    for (const GradArg& a : g.args) args.append(py::make_tuple(GradKind(a.kind), a.index));
    py::dict gd;
    gd["input"] = g.input;
    gd["op"] = g.op;
    gd["args"] = args;
    // Present only when declared (ABI 3.1): attrs, name -> ("value", number) | ("attr", forward
    // name) | ("not", forward name); when, (forward name, holds where nonzero).
    if (!g.attrs.empty()) {
      py::dict attrs;
      for (const GradientInfo::Attr& a : g.attrs) {
        if (a.source < 0) {
          attrs[py::str(a.name)] = py::make_tuple("value", a.value);
        } else {
          attrs[py::str(a.name)] =
              py::make_tuple(a.negate ? "not" : "attr", s.attr_names[a.source]);
        }
      }
      gd["attrs"] = attrs;
    }
    if (g.when_attr >= 0) gd["when"] = py::make_tuple(s.attr_names[g.when_attr], g.when_nonzero);
    grads.append(gd);
  }
  d["gradients"] = grads;
  d["doc"] = s.doc;
  std::vector<std::string> devices;
  for (int t = 1; t < DLARRAY_MAX_DEVICE_TYPES; ++t) {
    if (HasKernel(id, t)) devices.push_back(DeviceTypeName(t));
  }
  d["devices"] = devices;
  return d;
}

}  // namespace

void BindOpTable(py::module_& m) {
  m.def("op_names", &ListOps,
        R"doc(Names of every declared op: the core's, then those plugins declared.

Returns
-------
list of str

Examples
--------
>>> import dlarray
>>> "matrix_multiply" in dlarray.ops.op_names()
True
)doc",
        Guard());
  m.def(
      "infer_outputs",
      [](const std::string& name, const std::vector<std::vector<int64_t>>& shapes,
         const std::vector<py::object>& dtypes, const std::vector<double>& attrs) {
        std::vector<DLArrayDType> types;
        for (const py::object& d : dtypes) types.push_back(DTypeFromNumpy(d));
        py::list out;
        for (const OutputSpec& o : InferOutputs(RequireOp(name), shapes, types, attrs)) {
          out.append(py::make_tuple(py::tuple(py::cast(o.shape)), DTypeToNumpy(o.dtype)));
        }
        return out;
      },
      py::arg("op"), py::arg("shapes"), py::arg("dtypes"), py::arg("attrs"),
      R"doc(The shape and dtype of each output of an op, for inputs of these shapes and dtypes.

From the op's declared shape inference or, for ops whose operands all share one shape, the first
input's. The ops use it to allocate outputs that a call leaves out.

Parameters
----------
op : str
    A declared op's name.
shapes : list of tuple of int
    The inputs' shapes.
dtypes : list of numpy dtype or name
    The inputs' dtypes (any spelling ``astype`` takes).
attrs : list of float
    The op's attributes, in declared order.

Returns
-------
list of (tuple of int, numpy.dtype)
    One entry per output.

Raises
------
ValueError
    An unknown op, wrong counts, shapes the op refuses, or an op that cannot infer its outputs
    (then the outputs must be given).

Examples
--------
>>> import dlarray, numpy as np
>>> dlarray.ops.infer_outputs("matrix_multiply", [(2, 3), (4, 3)], [np.float32] * 2, [0, 1])
[((2, 4), dtype('float32'))]
)doc",
      Guard());
  m.def("op_info", &OpInfoDict, py::arg("name"), R"doc(What an op takes and where it runs.

Parameters
----------
name : str
    The op's name, one of :func:`op_names`.

Returns
-------
dict
    ``name``, ``doc`` (one line) and ``owner`` (``"core"`` or the declaring plugin);
    ``input_names``, ``attr_names`` and ``output_names`` (the keyword names) and ``call_order``
    (the positional order); ``attr_types`` (``"float"``, ``"bool"`` or ``"int"``) and
    ``attr_defaults`` (None: required); ``dtypes``, ``dtype_rule`` (``"alike"``,
    ``"fixed"``: outputs of ``output_dtype``, or ``"per_operand"``); ``allow_inplace``,
    ``accepts_strided``, ``fills_when_empty``; ``infers_shape`` (False: the caller shapes the
    outputs, as for ``broadcast_to``); ``gradients``; ``devices`` (the device types
    with a kernel for it, e.g. ``["cpu", "gpu"]``).

Raises
------
ValueError
    When no op has that name (the message lists them).

Examples
--------
>>> import dlarray
>>> info = dlarray.ops.op_info("matrix_multiply")
>>> info["call_order"], info["attr_types"]
(['a', 'trans_a', 'b', 'trans_b', 'out'], ['bool', 'bool'])
)doc",
        Guard());
}

}  // namespace dlarray
