"""The ops, with the seed's names and argument order. Every op writes into output arrays given by
the caller and runs on the device of its operands (all on one device). Ops added by plugins are
reachable as ``dlarray.ops.<name>(*inputs, *outputs, *attrs)`` or through ``invoke``."""

from ._core import (array_set, broadcast_to, copy, invoke, matrix_elementwise_add,  # noqa: F401
                    matrix_elementwise_add_by_const, matrix_elementwise_multiply,
                    matrix_elementwise_multiply_by_const, matrix_multiply, op_info, op_names, relu,
                    reduce_sum_axis_zero, relu_gradient, softmax, softmax_cross_entropy)

__all__ = ["array_set", "broadcast_to", "copy", "invoke", "matrix_elementwise_add",
           "matrix_elementwise_add_by_const", "matrix_elementwise_multiply",
           "matrix_elementwise_multiply_by_const", "matrix_multiply", "op_info", "op_names", "relu",
           "reduce_sum_axis_zero", "relu_gradient", "softmax", "softmax_cross_entropy"]


def __getattr__(name):
    """An op that a plugin declared, as a function: ``dlarray.ops.sigmoid(x, y)``.

    The function takes the op's inputs, then its outputs, then its scalar attributes,
    positionally, and calls :func:`invoke`; its docstring is the op's (:func:`op_info`).

    Raises
    ------
    AttributeError
        When no op has that name (the message lists the declared ones).
    """
    if name.startswith("_") or name not in op_names():
        raise AttributeError(f"module 'dlarray.ops' has no op {name!r} (declared: {op_names()})")
    info = op_info(name)
    n_in, n_out, n_attr = info["num_inputs"], info["num_outputs"], len(info["attr_names"])

    def op(*args):
        if len(args) != n_in + n_out + n_attr:
            raise TypeError(f"{name}() takes {n_in} inputs, {n_out} outputs and attributes "
                            f"{info['attr_names']}: {n_in + n_out + n_attr} arguments, "
                            f"got {len(args)}")
        invoke(name, list(args[:n_in]), list(args[n_in:n_in + n_out]),
               [float(a) for a in args[n_in + n_out:]])

    op.__name__ = name
    attrs = ", ".join(info["attr_names"]) or "none"
    op.__doc__ = (f"{info['doc']}\n\nAn op declared by a plugin; kernels for: "
                  f"{', '.join(info['devices']) or 'no device'}.\n\n"
                  f"Parameters\n----------\n*args\n    {n_in} input NDArray(s), then {n_out} "
                  f"output NDArray(s), then the scalar attributes ({attrs}).\n\n"
                  f"Raises\n------\nTypeError\n    For a wrong number of arguments.\n"
                  f"ValueError, RuntimeError\n    As :func:`dlarray.ops.invoke`.\n")
    return op
