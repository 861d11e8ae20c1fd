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
  for (const NDArray* a : outputs) {
    RequireWritable(*a, op);
    outs.push_back(a->dl());
  }
  InvokeOp(op, ins.data(), static_cast<int>(ins.size()), outs.data(), static_cast<int>(outs.size()),
           attrs.data(), static_cast<int>(attrs.size()));
}

// The errors every op can raise (docstrings).
#define DLARRAY_OP_RAISES                                                                        \
  "\nRaises\n------\n"                                                                           \
  "ValueError\n    When the shapes do not fit the op, or the operands are not all on one "       \
  "device.\n"                                                                                    \
  "TypeError\n    When an operand is not an NDArray, or has a dtype the op does not compute in " \
  "(see the op's dtypes in its help).\n"                                                         \
  "RuntimeError\n    When no loaded plugin has a kernel for the operands' device.\n"

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
      py::arg("value"), R"doc(Fills an array with one value: ``arr[:] = value``.

Parameters
----------
arr : NDArray
    The array to fill (the op's output).
value : float
    The value, converted to the array's dtype (truncated for integers).
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import dlarray
>>> x = dlarray.empty((2, 3))
>>> dlarray.ops.array_set(x, 1.5)
>>> x.asnumpy()
array([[1.5, 1.5, 1.5],
       [1.5, 1.5, 1.5]], dtype=float32)
)doc",
      Guard());
  m.def(
      "broadcast_to", [bcast](A in, A out) { Run<1, 0>(bcast, {&in}, out, {}); }, py::arg("in_arr"),
      py::arg("out_arr"), R"doc(Copies ``in_arr`` broadcast to ``out_arr``'s shape (NumPy's rules).

Parameters
----------
in_arr : NDArray
    The input: its dimensions, aligned to the right, are each 1 or ``out_arr``'s.
out_arr : NDArray
    The output; its shape is the target shape.
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import dlarray
>>> row, out = dlarray.array([1, 2, 3]), dlarray.empty((2, 3))
>>> dlarray.ops.broadcast_to(row, out)
>>> out.asnumpy()
array([[1., 2., 3.],
       [1., 2., 3.]], dtype=float32)
)doc",
      Guard());
  m.def(
      "reduce_sum_axis_zero", [rsum](A in, A out) { Run<1, 0>(rsum, {&in}, out, {}); },
      py::arg("in_arr"), py::arg("out_arr"),
      R"doc(Sums over the first axis: ``out_arr = in_arr.sum(axis=0)``.

Parameters
----------
in_arr : NDArray
    The input, of shape ``(n, *rest)``.
out_arr : NDArray
    The output, of shape ``rest`` (``(1,)`` for a 1-D input).
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import dlarray
>>> x, out = dlarray.array([[1, 2], [3, 4]]), dlarray.empty((2,))
>>> dlarray.ops.reduce_sum_axis_zero(x, out)
>>> out.asnumpy()
array([4., 6.], dtype=float32)
)doc",
      Guard());
  m.def(
      "matrix_elementwise_add",
      [add](A a, A b, A c) {
        Run<2, 0>(add, {&a, &b}, c, {});
      },
      py::arg("matA"), py::arg("matB"), py::arg("matC"),
      R"doc(Elementwise sum: ``matC = matA + matB``.

Parameters
----------
matA, matB : NDArray
    The inputs, of one shape.
matC : NDArray
    The output, of the same shape; may be ``matA`` or ``matB`` (in place).
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import dlarray
>>> a, b = dlarray.array([1, 2]), dlarray.array([10, 20])
>>> dlarray.ops.matrix_elementwise_add(a, b, a)
>>> a.asnumpy()
array([11., 22.], dtype=float32)
)doc",
      Guard());
  m.def(
      "matrix_elementwise_add_by_const",
      [addc](A in, double v, A out) { Run<1, 1>(addc, {&in}, out, {v}); }, py::arg("in_mat"),
      py::arg("val"), py::arg("out_mat"), R"doc(Adds a constant: ``out_mat = in_mat + val``.

Parameters
----------
in_mat : NDArray
    The input.
val : float
    The constant, converted to the array's dtype (truncated for integers).
out_mat : NDArray
    The output, of the input's shape; may be ``in_mat``.
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import dlarray
>>> x = dlarray.array([1, 2])
>>> dlarray.ops.matrix_elementwise_add_by_const(x, 0.5, x)
>>> x.asnumpy()
array([1.5, 2.5], dtype=float32)
)doc",
      Guard());
  m.def(
      "matrix_elementwise_multiply",
      [mul](A a, A b, A c) {
        Run<2, 0>(mul, {&a, &b}, c, {});
      },
      py::arg("matA"), py::arg("matB"), py::arg("matC"),
      R"doc(Elementwise product: ``matC = matA * matB``.

Parameters
----------
matA, matB : NDArray
    The inputs, of one shape.
matC : NDArray
    The output, of the same shape; may be ``matA`` or ``matB`` (in place).
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import dlarray
>>> a, b, c = dlarray.array([1, 2]), dlarray.array([3, 4]), dlarray.empty((2,))
>>> dlarray.ops.matrix_elementwise_multiply(a, b, c)
>>> c.asnumpy()
array([3., 8.], dtype=float32)
)doc",
      Guard());
  m.def(
      "matrix_elementwise_multiply_by_const",
      [mulc](A in, double v, A out) { Run<1, 1>(mulc, {&in}, out, {v}); }, py::arg("in_mat"),
      py::arg("val"), py::arg("out_mat"),
      R"doc(Multiplies by a constant: ``out_mat = in_mat * val``.

Parameters
----------
in_mat : NDArray
    The input.
val : float
    The constant, converted to the array's dtype (truncated for integers).
out_mat : NDArray
    The output, of the input's shape; may be ``in_mat``.
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import dlarray
>>> x = dlarray.array([1, 2])
>>> dlarray.ops.matrix_elementwise_multiply_by_const(x, -2.0, x)
>>> x.asnumpy()
array([-2., -4.], dtype=float32)
)doc",
      Guard());
  m.def(
      "matrix_multiply",
      [mm](A a, const py::object& ta, A b, const py::object& tb, A c) {
        Run<2, 2>(mm, {&a, &b}, c, {Flag(ta, "transA"), Flag(tb, "transB")});
      },
      py::arg("matA"), py::arg("transA"), py::arg("matB"), py::arg("transB"), py::arg("matC"),
      R"doc(Matrix product: ``matC = op(matA) @ op(matB)``, where ``op`` transposes when its flag is set.

Runs on the BLAS of the device (OpenBLAS on the CPU, cuBLAS on CUDA GPUs). On a GPU,
:func:`dlarray.set_matmul_precision` may allow TF32 tensor cores.

Parameters
----------
matA : NDArray
    A 2-D input: ``(m, k)``, or ``(k, m)`` when ``transA``.
transA : bool
    Whether to use the transpose of ``matA``.
matB : NDArray
    A 2-D input: ``(k, n)``, or ``(n, k)`` when ``transB``.
transB : bool
    Whether to use the transpose of ``matB``.
matC : NDArray
    The output, ``(m, n)``; it must not be an input.
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import numpy as np
>>> import dlarray
>>> a = dlarray.array([[1, 2], [3, 4]])
>>> b = dlarray.array(np.eye(2))
>>> c = dlarray.empty((2, 2))
>>> dlarray.ops.matrix_multiply(a, True, b, False, c)
>>> c.asnumpy()
array([[1., 3.],
       [2., 4.]], dtype=float32)
)doc",
      Guard());
  m.def(
      "relu", [relu](A in, A out) { Run<1, 0>(relu, {&in}, out, {}); }, py::arg("in_arr"),
      py::arg("out_arr"), R"doc(Rectified linear unit: ``out_arr = max(in_arr, 0)``, elementwise.

Parameters
----------
in_arr : NDArray
    The input.
out_arr : NDArray
    The output, of the input's shape; may be ``in_arr``.
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import dlarray
>>> x, y = dlarray.array([-1.0, 0.5]), dlarray.empty((2,))
>>> dlarray.ops.relu(x, y)
>>> y.asnumpy()
array([0. , 0.5], dtype=float32)
)doc",
      Guard());
  m.def(
      "relu_gradient",
      [relug](A in, A grad, A out) {
        Run<2, 0>(relug, {&in, &grad}, out, {});
      },
      py::arg("in_arr"), py::arg("in_grad_arr"), py::arg("out_arr"),
      R"doc(Gradient of :func:`relu`: ``out_arr = in_grad_arr * (in_arr > 0)``.

Parameters
----------
in_arr : NDArray
    The input of the relu.
in_grad_arr : NDArray
    The gradient with respect to the relu's output, of the same shape.
out_arr : NDArray
    The gradient with respect to ``in_arr``; may be an input.
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import dlarray
>>> x, g, out = dlarray.array([-1, 2]), dlarray.array([5, 5]), dlarray.empty((2,))
>>> dlarray.ops.relu_gradient(x, g, out)
>>> out.asnumpy()
array([0., 5.], dtype=float32)
)doc",
      Guard());
  m.def(
      "softmax", [smax](A in, A out) { Run<1, 0>(smax, {&in}, out, {}); }, py::arg("in_arr"),
      py::arg("out_arr"),
      R"doc(Softmax over the last axis: each row becomes ``exp(x - max) / sum(exp(x - max))``.

Parameters
----------
in_arr : NDArray
    The input; its rows run over the last axis.
out_arr : NDArray
    The output, of the input's shape; may be ``in_arr``.
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import dlarray
>>> x, y = dlarray.array([[0.0, 0.0], [0.0, 100.0]]), dlarray.empty((2, 2))
>>> dlarray.ops.softmax(x, y)
>>> y.asnumpy().round(3)
array([[0.5, 0.5],
       [0. , 1. ]], dtype=float32)
)doc",
      Guard());
  m.def(
      "softmax_cross_entropy",
      [sce](A y, A y_, A out) {
        Run<2, 0>(sce, {&y, &y_}, out, {});
      },
      py::arg("in_arr_a"), py::arg("in_arr_b"), py::arg("out_arr"),
      R"doc(Softmax cross-entropy, averaged over the rows: ``mean(-sum(b * log_softmax(a), axis=-1))``.

Parameters
----------
in_arr_a : NDArray
    The logits, ``(rows, classes)``.
in_arr_b : NDArray
    The target probabilities (one-hot labels), of the same shape.
out_arr : NDArray
    The loss, of shape ``(1,)``.
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import dlarray
>>> logits, labels = dlarray.array([[0.0, 0.0]]), dlarray.array([[1.0, 0.0]])
>>> loss = dlarray.empty((1,))
>>> dlarray.ops.softmax_cross_entropy(logits, labels, loss)
>>> round(float(loss.asnumpy()[0]), 4)  # log(2)
0.6931
)doc",
      Guard());
  m.def(
      "copy", [copy](A in, A out) { Run<1, 0>(copy, {&in}, out, {}); }, py::arg("in_arr"),
      py::arg("out_arr"), R"doc(Copies an array into another of the same shape on the same device.

Parameters
----------
in_arr : NDArray
    The input.
out_arr : NDArray
    The output, of the same shape; use :meth:`NDArray.copyto` to copy across devices.
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import dlarray
>>> x, y = dlarray.array([1, 2]), dlarray.empty((2,))
>>> dlarray.ops.copy(x, y)
>>> y.asnumpy()
array([1., 2.], dtype=float32)
)doc",
      Guard());

  m.def(
      "astype", [astype](A in, A out) { Run<1, 0>(astype, {&in}, out, {}); }, py::arg("in_arr"),
      py::arg("out_arr"), R"doc(Converts dtypes: ``out_arr = in_arr.astype(out_arr.dtype)``.

NumPy's casts: float16 and bfloat16 round to nearest even, floats to integers truncate, anything
to bool is ``!= 0``; out-of-range floats and NaN (undefined in NumPy) saturate and give 0.

Parameters
----------
in_arr : NDArray
    The input, of any dtype.
out_arr : NDArray
    The output, of the input's shape and any dtype.
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import numpy as np
>>> import dlarray
>>> x = dlarray.array([1.7, -2.5])
>>> y = dlarray.empty((2,), dtype=np.int32)
>>> dlarray.ops.astype(x, y)
>>> y.asnumpy()
array([ 1, -2], dtype=int32)
)doc",
      Guard());
  m.def(
      "compare",
      [cmp](A a, A b, A out, int op) {
        Run<2, 1>(cmp, {&a, &b}, out, {double(op)});
      },
      py::arg("a"), py::arg("b"), py::arg("out"), py::arg("cmp"),
      R"doc(Compares elementwise: ``out = a <cmp> b`` as bool.

Parameters
----------
a, b : NDArray
    The inputs: one shape, one dtype (any).
out : NDArray
    The output: bool, of the inputs' shape.
cmp : int
    0 ``==``, 1 ``!=``, 2 ``<``, 3 ``<=``, 4 ``>``, 5 ``>=`` (NaN compares unequal).
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import numpy as np
>>> import dlarray
>>> a, b = dlarray.array([1, 2, 3]), dlarray.array([3, 2, 1])
>>> out = dlarray.empty((3,), dtype=bool)
>>> dlarray.ops.compare(a, b, out, 2)
>>> out.asnumpy()
array([ True, False, False])
)doc",
      Guard());
  m.def(
      "compare_by_const",
      [cmpc](A in, double v, A out, int op) {
        Run<1, 2>(cmpc, {&in}, out, {v, double(op)});
      },
      py::arg("x"), py::arg("value"), py::arg("out"), py::arg("cmp"),
      R"doc(Compares with a constant: ``out = x <cmp> value`` as bool.

Parameters
----------
x : NDArray
    The input, of any dtype.
value : float
    The constant (compared exactly, in double precision).
out : NDArray
    The output: bool, of the input's shape.
cmp : int
    0 ``==``, 1 ``!=``, 2 ``<``, 3 ``<=``, 4 ``>``, 5 ``>=``.
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import dlarray
>>> x = dlarray.array([0.5, 1.5])
>>> out = dlarray.empty((2,), dtype=bool)
>>> dlarray.ops.compare_by_const(x, 1.0, out, 4)
>>> out.asnumpy()
array([False,  True])
)doc",
      Guard());
  m.def(
      "matrix_elementwise_divide",
      [div](A a, A b, A c) {
        Run<2, 0>(div, {&a, &b}, c, {});
      },
      py::arg("matA"), py::arg("matB"), py::arg("matC"),
      R"doc(Divides elementwise: ``matC = matA / matB`` (float dtypes; IEEE results for zeros).

Parameters
----------
matA, matB : NDArray
    The inputs: one shape, one float dtype.
matC : NDArray
    The output; may be one of the inputs.
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import dlarray
>>> c = dlarray.empty((2,))
>>> dlarray.ops.matrix_elementwise_divide(dlarray.array([1, 3]), dlarray.array([2, 4]), c)
>>> c.asnumpy()
array([0.5 , 0.75], dtype=float32)
)doc",
      Guard());
  m.def(
      "matrix_elementwise_divide_by_const",
      [divc](A in, double v, A out) { Run<1, 1>(divc, {&in}, out, {v}); }, py::arg("in_mat"),
      py::arg("val"), py::arg("out_mat"),
      R"doc(Divides by a constant: ``out_mat = in_mat / val`` (a true division).

Parameters
----------
in_mat : NDArray
    The input (a float dtype).
val : float
    The divisor, rounded to the array's dtype first (as NumPy does).
out_mat : NDArray
    The output, of the input's shape; may be ``in_mat``.
)doc" DLARRAY_OP_RAISES R"doc(
Examples
--------
>>> import dlarray
>>> x = dlarray.array([1, 2])
>>> dlarray.ops.matrix_elementwise_divide_by_const(x, 4, x)
>>> x.asnumpy()
array([0.25, 0.5 ], dtype=float32)
)doc",
      Guard());

  m.def("invoke", &InvokeByName, py::arg("op"), py::arg("inputs"), py::arg("outputs"),
        py::arg("attrs") = std::vector<double>{},
        R"doc(Runs any declared op, core or plugin, by name.

Ops that plugins declare are also reachable as ``dlarray.ops.<name>(*inputs, *outputs,
*attrs)``; :func:`op_info` says what an op takes.

Parameters
----------
op : str
    The op's name, one of :func:`op_names`.
inputs : sequence of NDArray
    The inputs, as many as the op declares.
outputs : sequence of NDArray
    The outputs, as many as the op declares.
attrs : sequence of float, optional
    The op's scalar attributes, in its declared order.

Raises
------
ValueError
    When no op has that name (the message lists them), the operand or attribute counts are
    wrong, the shapes do not fit, or the operands are not all on one device.
TypeError
    When an operand is not an NDArray, or its dtype is not supported by the op.
RuntimeError
    When no loaded plugin has a kernel for the operands' device.

Examples
--------
>>> import dlarray
>>> x, y = dlarray.array([-1.0, 2.0]), dlarray.empty((2,))
>>> dlarray.ops.invoke("matrix_elementwise_multiply_by_const", [x], [y], [3.0])
>>> y.asnumpy()
array([-3.,  6.], dtype=float32)
)doc",
        Guard());
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
input's. Python uses it to allocate outputs that a call leaves out.

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
)doc",
      Guard());
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
      py::arg("name"), R"doc(What an op takes and where it runs.

Parameters
----------
name : str
    The op's name, one of :func:`op_names`.

Returns
-------
dict
    ``name``; ``num_inputs`` and ``num_outputs``; ``attr_names`` (its scalar attributes, in
    order); ``allow_inplace`` (whether an output may be an input); ``doc`` (one line);
    ``devices`` (the device types with a kernel for it, e.g. ``["cpu", "gpu"]``).

Raises
------
ValueError
    When no op has that name (the message lists them).

Examples
--------
>>> import dlarray
>>> info = dlarray.ops.op_info("matrix_multiply")
>>> info["num_inputs"], info["attr_names"]
(2, ['trans_a', 'trans_b'])
)doc",
      Guard());
}

}  // namespace dlarray
