"""The ops, with the seed's names and argument order. Every op writes into output arrays given by
the caller and runs on the device of its operands (all on one device).

Ops declared by plugins are functions of this module too (``dlarray.ops.sigmoid``, listed by
``dir(dlarray.ops)``), with the signature their declaration gives: inputs, then attributes, then
outputs, each also by keyword. Outputs may be left out: they are then allocated on the inputs'
device with the shapes the op infers, and returned. ``invoke`` runs any op by name.
"""

import inspect
from typing import Any

from . import _core
from ._core import infer_outputs  # noqa: F401
from ._core import (array_set, astype, broadcast_to, compare, compare_by_const,  # noqa: F401
                    copy, invoke, matrix_elementwise_add, matrix_elementwise_add_by_const,
                    matrix_elementwise_divide, matrix_elementwise_divide_by_const,
                    matrix_elementwise_multiply,
                    matrix_elementwise_multiply_by_const, matrix_multiply, op_info, op_names, relu,
                    reduce_sum_axis_zero, relu_gradient, softmax, softmax_cross_entropy)

__all__ = ["array_set", "astype", "broadcast_to", "compare", "compare_by_const", "copy",
           "infer_outputs", "invoke", "matrix_elementwise_add", "matrix_elementwise_add_by_const",
           "matrix_elementwise_divide", "matrix_elementwise_divide_by_const",
           "matrix_elementwise_multiply",
           "matrix_elementwise_multiply_by_const", "matrix_multiply", "op_info", "op_names", "relu",
           "reduce_sum_axis_zero", "relu_gradient", "softmax", "softmax_cross_entropy"]

_wrappers = {}


def _doc(info, devices_text):
    lines = [info["doc"] or info["name"], ""]
    lines += ["Declared by %s; kernels on: %s; dtypes: %s." % (
        "the core" if info["owner"] == "core" else "plugin '%s'" % info["owner"], devices_text,
        ", ".join(info["dtypes"]))]
    for g in info["gradients"]:
        args = ", ".join(
            ("d" if kind == "output_grad" else "") +
            (info["input_names"] if kind == "input" else info["output_names"])[i]
            for kind, i in g["args"])
        lines.append("Gradient of %s: %s(%s)." % (info["input_names"][g["input"]], g["op"], args))
    lines += ["", "Parameters", "----------"]
    for n in info["input_names"]:
        lines += ["%s : NDArray" % n, "    Input (all operands on one device)."]
    for n in info["attr_names"]:
        lines += ["%s : float" % n, "    Scalar attribute."]
    for n in info["output_names"]:
        lines += ["%s : NDArray, optional" % n,
                  "    Where to write the output; allocated on the inputs' device when omitted."]
    lines += ["", "Returns", "-------",
              "NDArray or tuple of NDArray", "    The output array(s).", "",
              "Raises", "------",
              "ValueError", "    Shapes that do not fit, operands on different devices.",
              "TypeError", "    A dtype the op does not support, a non-array operand.",
              "RuntimeError", "    No kernel for the operands' device, or the kernel failed."]
    return "\n".join(lines)


def _make_wrapper(name):
    info = op_info(name)
    ins, attrs, outs = info["input_names"], info["attr_names"], info["output_names"]
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = ([inspect.Parameter(n, kind) for n in ins] + [inspect.Parameter(n, kind) for n in attrs]
              + [inspect.Parameter(n, kind, default=None) for n in outs])
    signature = inspect.Signature(params)
    n_in, n_attr, n_out = len(ins), len(attrs), len(outs)
    n_all = n_in + n_attr + n_out

    def op(*args, **kwargs):
        if kwargs or len(args) != n_all:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError("%s%s: %s" % (name, signature, e)) from None
            bound.apply_defaults()
            args = tuple(bound.arguments[p.name] for p in params)
        inputs, values, outputs = args[:n_in], args[n_in:n_in + n_attr], list(args[n_in + n_attr:])
        try:
            values = [float(v) for v in values]
        except (TypeError, ValueError):
            raise TypeError("%s: attributes %s must be numbers, got %r"
                            % (name, attrs, list(args[n_in:n_in + n_attr]))) from None
        if any(o is None for o in outputs):
            for i, x in enumerate(inputs):
                if not isinstance(x, _core.NDArray):
                    raise TypeError("%s: input '%s' must be an NDArray, got %s"
                                    % (name, ins[i], type(x).__name__))
            if not inputs:
                raise TypeError("%s: an op without inputs needs its outputs given" % name)
            specs = _core.infer_outputs(name, [x.shape for x in inputs], [x.dtype for x in inputs],
                                        values)
            for i, (shape, dtype) in enumerate(specs):
                if outputs[i] is None:
                    outputs[i] = _core.empty(shape, inputs[0].ctx, dtype)
        invoke(name, list(inputs), outputs, values)
        return outputs[0] if n_out == 1 else tuple(outputs)

    devices = ", ".join(_core.op_info(name)["devices"]) or "none yet"
    op.__name__ = op.__qualname__ = name
    op.__module__ = __name__
    op.__signature__ = signature
    op.__doc__ = _doc(info, devices)
    return op


def __getattr__(name: str) -> Any:
    """Ops declared by plugins, as functions with their declared signature."""
    if name.startswith("_"):
        raise AttributeError(name)
    op = _wrappers.get(name)
    if op is None:
        if name not in op_names():
            raise AttributeError("module 'dlarray.ops' has no op %r (declared: %s)"
                                 % (name, ", ".join(op_names())))
        op = _wrappers[name] = _make_wrapper(name)
    return op


def __dir__() -> list[str]:
    return sorted(set(__all__) | set(op_names()) | set(globals()))
