"""Custom ops defined in Python: graph nodes whose forward and backward are the user's code.

This is the one way any Python-level op becomes a node of a ``dlarray.autodiff`` graph: MXNet's
``NDArrayOp`` / PyTorch's ``autograd.Function`` written as a class, AOT kernels with a MindSpore
``bprop`` (``dlarray.custom.Custom``), runtime-compiled kernels (``dlarray.rtc``) inside a layer.
Subclass :class:`CustomOp`, then call an instance on graph nodes::

    class Scale(CustomOp):                       # y = 3 x
        def forward(self, in_data, out_data):    # NDArrays on the executor's device
            dlarray.ops.matrix_elementwise_multiply_by_const(in_data[0], 3.0, out_data[0])

        def backward(self, out_grad, in_data, out_data, in_grad):
            dlarray.ops.matrix_elementwise_multiply_by_const(out_grad[0], 3.0, in_grad[0])

        def forward_numpy(self, in_data, out_data):  # NumPy arrays (the NumPy executor)
            out_data[0][:] = 3 * in_data[0]

        def backward_numpy(self, out_grad, in_data, out_data, in_grad):
            in_grad[0][:] = 3 * out_grad[0]

    y = Scale()(x)                               # a Node; gradients() goes through it

``forward(in_data, out_data)`` writes each output into ``out_data[k]``; ``backward(out_grad,
in_data, out_data, in_grad)`` writes the gradient of the loss for input ``i`` into ``in_grad[i]``
(every one of them: the arrays are not cleared first), given the gradient flowing into each output
(``out_grad``; ``None`` entries when :meth:`CustomOp.need_top_grad` is False, as for a loss layer).
The arrays are the executor's own buffers, planned once per set of feed shapes like every other
node's: nothing is allocated per run (the extra ``in_grad`` buffers of an op with several inputs
too; each gradient then costs one device copy).

Per-device implementations. For an executor on a device of type ``T`` ("cpu", a plugin's device
name, but "gpu" for CUDA devices as in the seed) the first of these methods that the class defines
runs:

1. ``forward_T`` / ``backward_T`` (e.g. ``forward_gpu`` launching a compiled kernel), with NDArrays;
2. ``forward`` / ``backward``: code for any device (dlarray ops, Custom ops), with NDArrays;
3. ``forward_numpy`` / ``backward_numpy``: NumPy code, given host copies of the operands (the
   results are copied back), so a NumPy layer also runs on every device, slowly.

For the NumPy executor (``Executor(ctx=None)``) the order is ``*_numpy`` with the NumPy values as
they are (float64 too), then the NDArray implementations of ``fallback_ctx`` (the CPU, by default)
on float32 copies. A layer with a GPU kernel and a NumPy twin thus defines ``forward_gpu`` and
``forward_numpy``: GPU executors launch the kernel, CPU and NumPy executors run NumPy.

Graph nodes have one output each, so ``list_outputs`` must name one output.
"""

from __future__ import annotations

from typing import Any, ClassVar, Optional

import numpy as np

import dlarray
from dlarray import _log
from dlarray._core import DLContext

from .graph import Node, Op, _error, _name

__all__ = ["CustomOp", "NDArrayOp"]


def _device_kind(ctx):
    """The device's name as it prints ("cpu", "cuda", ...; None: "numpy"), for messages."""
    if ctx is None:
        return "numpy"
    return repr(ctx).split("(")[0]


def _method_suffix(ctx):
    """The suffix of a per-device method: the device's name, except that CUDA devices keep the
    seed's ``forward_gpu`` / ``backward_gpu`` (layers written for the seed run unchanged)."""
    return "gpu" if ctx is not None and ctx.device_type == 2 else _device_kind(ctx)


class CustomOp:
    """Base class of ops written in Python (MXNet's ``NDArrayOp``; PyTorch's ``autograd.Function``).

    Override ``forward`` and ``backward`` (or their per-device variants, see the module docstring),
    and where the defaults do not fit, ``list_arguments``, ``list_outputs``, ``infer_shape`` and
    ``need_top_grad``. Calling an instance on graph nodes makes a node: ``y = MyOp()(x)``.
    """

    #: Where the NDArray implementations run for the NumPy executor (None: ``dlarray.cpu(0)``).
    fallback_ctx: ClassVar[Optional[DLContext]] = None

    def list_arguments(self) -> list[str]:
        """Names of the inputs, in order (default: ``["data"]``)."""
        return ["data"]

    def list_outputs(self) -> list[str]:
        """Names of the outputs (default: ``["output"]``); graph nodes have one."""
        return ["output"]

    def infer_shape(self, in_shape: list[list[int]]) -> tuple[Any, Any]:
        """The output shapes for inputs of shapes ``in_shape`` (MXNet's convention).

        Parameters
        ----------
        in_shape : list of list of int
            The input shapes, in ``list_arguments()`` order.

        Returns
        -------
        tuple
            ``(input shapes, output shapes)``: the inputs' as given, and one shape per output.
            The default gives the one output the first input's shape.

        Raises
        ------
        ValueError
            When the inputs do not fit the op (the executor adds the node's name).
        """
        return in_shape, [in_shape[0]]

    def need_top_grad(self) -> bool:
        """Whether ``backward`` reads ``out_grad`` (False for a loss layer: out_grad is None)."""
        return True

    def forward(self, in_data: list[Any], out_data: list[Any]) -> None:
        """Computes the outputs (for any device; see the module docstring for per-device ones).

        Parameters
        ----------
        in_data : list of NDArray
            The inputs, on the executor's device.
        out_data : list of NDArray
            The outputs to write (the executor's buffers, not cleared).
        """
        raise NotImplementedError

    def backward(self, out_grad: list[Any], in_data: list[Any], out_data: list[Any],
                 in_grad: list[Any]) -> None:
        """Computes the gradient of the loss for every input.

        Parameters
        ----------
        out_grad : list of NDArray or None
            The gradient flowing into each output (None entries when ``need_top_grad()`` is
            False).
        in_data : list of NDArray
            The inputs of the forward call.
        out_data : list of NDArray
            Its outputs.
        in_grad : list of NDArray
            Where to write the gradient for each input (every one; they are not cleared).
        """
        raise NotImplementedError

    def label(self) -> str:
        """The op's name in node names and messages (default: the class name)."""
        return type(self).__name__

    def __call__(self, *inputs: Node, name: Optional[str] = None) -> Node:
        """A graph node applying this op to the nodes ``inputs``.

        Parameters
        ----------
        *inputs : Node
            One node per entry of ``list_arguments()``.
        name : str, optional
            The node's name (default: ``Label(input names)``).

        Returns
        -------
        Node
            The op's output.

        Raises
        ------
        TypeError
            A wrong number of inputs, an input that is not a Node, or several outputs.
        """
        label = self.label()
        args = list(self.list_arguments())
        if len(inputs) != len(args):
            raise TypeError("%s takes %d inputs (%s), got %d"
                            % (label, len(args), ", ".join(args), len(inputs)))
        for arg, x in zip(args, inputs):
            if not isinstance(x, Node):
                raise TypeError("%s: input '%s' must be a graph Node, got %s"
                                % (label, arg, type(x).__name__))
        outputs = list(self.list_outputs())
        if len(outputs) != 1:
            raise TypeError("%s: graph nodes have one output, list_outputs() gives %d (%s)"
                            % (label, len(outputs), ", ".join(outputs)))
        op = _ForwardOp(self)
        return Node(op, inputs, name or _name("%s(%s)", label, ",".join(x.name for x in inputs)))

    # How the executors reach the user's code -------------------------------------------------

    def _implementation(self, kind, ctx):
        """``(function, how)`` to run ``kind`` ("forward" or "backward") for the executor of
        ``ctx``: ``how`` is "ndarray", "numpy" (NumPy values as they are) or "host" (NumPy code
        on host copies of device arrays) or "fallback" (NDArray code on ``fallback_ctx``)."""
        cls = type(self)

        def defined(method):
            impl = getattr(cls, method, None)
            return impl is not None and impl is not getattr(CustomOp, method, None)

        device = _device_kind(ctx)
        suffix = _method_suffix(ctx)
        if ctx is None:
            if defined(kind + "_numpy"):
                return getattr(self, kind + "_numpy"), "numpy"
            fallback = _method_suffix(self._fallback_ctx())
            for method in (kind + "_" + fallback, kind):
                if defined(method):
                    return getattr(self, method), "fallback"
            tried = [kind + "_numpy", kind + "_" + fallback, kind]
        else:
            for method in (kind + "_" + suffix, kind):
                if defined(method):
                    return getattr(self, method), "ndarray"
            if defined(kind + "_numpy"):
                return getattr(self, kind + "_numpy"), "host"
            tried = [kind + "_" + suffix, kind, kind + "_numpy"]
        raise NotImplementedError("%s has no %s for %s executors: define one of %s"
                                  % (self.label(), kind, device, ", ".join(tried)))

    def _has_backward(self):
        return any(name.startswith("backward") and getattr(type(self), name) is not
                   getattr(CustomOp, name, None) for name in dir(type(self)))

    def _no_backward_message(self):
        return ("%s has no backward: define backward (or backward_numpy, backward_gpu, ...)"
                % self.label())

    def _fallback_ctx(self):
        return self.fallback_ctx if self.fallback_ctx is not None else dlarray.cpu(0)


#: MXNet's name for the same base class.
NDArrayOp = CustomOp


def _run(op, kind, ctx, arrays, n_out):
    """Calls ``op``'s ``kind`` implementation on ``arrays`` (flat: see _ForwardOp/_BackwardOp),
    where the last ``n_out`` lists are written. ``arrays`` is a list of lists of arrays."""
    impl, how = op._implementation(kind, ctx)
    if how in ("host", "fallback"):
        _log.log_fallback(
            "%s: %s runs %s" % (op.label(), kind, "as NumPy code on host copies of the arrays"
                                if how == "host" else "as NDArray code on %r" % op._fallback_ctx()),
            once_key=(type(op), kind, how))
    if how in ("ndarray", "numpy"):
        impl(*arrays)
        return
    if how == "host":  # NumPy code on host copies; written lists are copied back
        host = [[None if a is None else a.asnumpy() for a in group] for group in arrays]
        impl(*host)
        for group, copies in zip(arrays[-n_out:], host[-n_out:]):
            for a, h in zip(group, copies):
                a[:] = h
        return
    # "fallback": NDArray code on fallback_ctx for the NumPy executor, in float32.
    dev = op._fallback_ctx()
    dev_arrays = [[None if a is None else dlarray.array(np.asarray(a, np.float32), dev)
                   for a in group] for group in arrays]
    impl(*dev_arrays)
    for group, dev_group in zip(arrays[-n_out:], dev_arrays[-n_out:]):
        for a, d in zip(group, dev_group):
            a[...] = d.asnumpy()


class _ForwardOp(Op):
    """The node kind of a CustomOp's output."""

    def __init__(self, custom):
        self.custom = custom
        self.label = "custom_op:%s" % custom.label()

    def infer_shape(self, node, input_shapes):
        shapes = [list(s) for s in input_shapes]
        try:
            result = self.custom.infer_shape([list(s) for s in shapes])
            in_shapes, out_shapes = result
            in_shapes = [tuple(int(d) for d in s) for s in in_shapes]
            out_shapes = [tuple(int(d) for d in s) for s in out_shapes]
        except (TypeError, ValueError) as e:
            raise _error(node, "infer_shape must return (input shapes, output shapes), lists of "
                               "shapes (%s)" % e) from None
        if in_shapes != [tuple(s) for s in shapes]:
            raise _error(node, "infer_shape expects input shapes %s, got %s"
                         % (in_shapes, [tuple(s) for s in shapes]))
        if len(out_shapes) != 1:
            raise _error(node, "infer_shape gave %d output shapes for 1 output" % len(out_shapes))
        return out_shapes[0]

    def compute(self, node, input_vals):
        out = np.empty(self.infer_shape(node, [np.shape(v) for v in input_vals]),
                       dtype=np.result_type(*input_vals) if input_vals else np.float32)
        _run(self.custom, "forward", None, [list(input_vals), [out]], 1)
        return out

    def kernel(self, node, inputs, out):
        custom, ctx, n = self.custom, out.ctx, len(inputs)
        impl, how = custom._implementation("forward", ctx)
        if how == "ndarray":
            def run(*arrays):
                impl(list(arrays[:n]), [arrays[n]])
        else:
            def run(*arrays):
                _run(custom, "forward", ctx, [list(arrays[:n]), [arrays[n]]], 1)
        return run, [*inputs, out]

    def gradient(self, node, output_grad):
        custom = self.custom
        if not custom._has_backward():
            raise _error(node, custom._no_backward_message())
        top = [output_grad] if custom.need_top_grad() else []
        backward = Node(_BackwardOp(custom), [*node.inputs, node, *top],
                        _name("%sGrad(%s)", custom.label(), node.name))
        select = _SelectGradOp(custom)
        grads = [backward]
        for i in range(1, len(node.inputs)):
            grads.append(Node(select, [backward], _name("%s[%d]", backward.name, i)))
            grads[-1].custom_index = i
        return grads


class _BackwardOp(Op):
    """A CustomOp's backward: its value is the first input's gradient; the others wait in buffers
    of its own (allocated once per plan) for the _SelectGradOp nodes."""

    def __init__(self, custom):
        self.custom = custom
        self.label = "custom_op_backward:%s" % custom.label()

    def _split(self, node, values):
        """(in_data, out_data, out_grad) from the node's input values."""
        n = len(node.inputs) - 1 - (1 if self.custom.need_top_grad() else 0)
        out_grad = list(values[n + 1:]) or [None]
        return list(values[:n]), [values[n]], out_grad

    def infer_shape(self, node, input_shapes):
        in_shapes, _, _ = self._split(node, [tuple(s) for s in input_shapes])
        node.custom_in_shapes = in_shapes  # read by kernel() and the _SelectGradOp nodes
        return in_shapes[0]

    def compute(self, node, input_vals):
        in_data, out_data, out_grad = self._split(node, input_vals)
        dtype = np.result_type(*in_data)
        in_grad = [np.zeros(np.shape(x), dtype=dtype) for x in in_data]
        _run(self.custom, "backward", None, [out_grad, in_data, out_data, in_grad], 1)
        node.custom_numpy_grads = in_grad
        return in_grad[0]

    def kernel(self, node, inputs, out):
        custom, ctx = self.custom, out.ctx
        others = [dlarray.empty(s, ctx) for s in node.custom_in_shapes[1:]]
        node.custom_device_grads = (out, others)
        split = self._split
        impl, how = custom._implementation("backward", ctx)

        def run(*arrays):
            in_data, out_data, out_grad = split(node, arrays)
            if how == "ndarray":
                impl(out_grad, in_data, out_data, [out, *others])
            else:
                _run(custom, "backward", ctx, [out_grad, in_data, out_data, [out, *others]], 1)
        return run, list(inputs)

    def gradient(self, node, output_grad):
        raise _error(node, "the backward of a custom op has no gradient (second derivatives of "
                           "custom ops are not supported)")


class _SelectGradOp(Op):
    """The gradient of a CustomOp's input i >= 1, computed by its _BackwardOp node."""

    def __init__(self, custom):
        self.custom = custom
        self.label = "custom_op_grad:%s" % custom.label()

    def infer_shape(self, node, input_shapes):
        shapes = getattr(node.inputs[0], "custom_in_shapes", None)
        if shapes is None:
            raise _error(node, "the backward node of a custom op cannot be fed")
        return shapes[node.custom_index]

    def compute(self, node, input_vals):
        return node.inputs[0].custom_numpy_grads[node.custom_index]

    def kernel(self, node, inputs, out):
        backward = node.inputs[0]
        planned = getattr(backward, "custom_device_grads", None)
        if planned is None or planned[0] is not inputs[0]:
            raise _error(node, "the gradient node of a custom op cannot be fed or planned "
                               "without its backward node")
        return dlarray.ops.copy, [planned[1][node.custom_index - 1], out]

    def gradient(self, node, output_grad):
        raise _error(node, "the backward of a custom op has no gradient (second derivatives of "
                           "custom ops are not supported)")
