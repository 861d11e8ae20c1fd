"""The ops of dlarray.autodiff: shape inference, NumPy reference, runtime kernel, gradient."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

import dlarray

from .graph import Node, Op, _check_number, _describe, _error, _name, _rows, _same_shapes


class MatMulOp(Op):
    """Matrix product ``op(a) @ op(b)``, ``op`` transposing when its flag is set.

    Parameters
    ----------
    a, b : Node
        2-D inputs whose inner dimensions agree.
    trans_A, trans_B : bool, optional
        Whether to transpose ``a``, ``b``.
    """
    graph_safe = True  # a runtime op on the device's stream

    label = "matmul_op"

    def __call__(self, a: Node, b: Node, trans_A: bool = False, trans_B: bool = False) -> Node:
        node = Node(self, [a, b], _name("MatMul(%s,%s,%s,%s)", a.name, b.name, trans_A, trans_B))
        node.matmul_attr_trans_A = bool(trans_A)
        node.matmul_attr_trans_B = bool(trans_B)
        return node

    def infer_shape(self, node, input_shapes):
        a, b = (tuple(s) for s in input_shapes)
        if len(a) != 2 or len(b) != 2:
            raise _error(node, "inputs must be 2-D, got %s" % _describe(node.inputs, input_shapes))
        m, k = a[::-1] if node.matmul_attr_trans_A else a
        k2, n = b[::-1] if node.matmul_attr_trans_B else b
        if k != k2:
            raise _error(node, "inner dimensions differ (%d vs %d), got %s (trans_A=%s, "
                         "trans_B=%s)" % (k, k2, _describe(node.inputs, input_shapes),
                                          node.matmul_attr_trans_A, node.matmul_attr_trans_B))
        return (m, n)

    def compute(self, node, input_vals):
        a, b = input_vals
        return np.matmul(a.T if node.matmul_attr_trans_A else a,
                         b.T if node.matmul_attr_trans_B else b)

    def kernel(self, node, inputs, out):
        return dlarray.ops.matrix_multiply, [inputs[0], node.matmul_attr_trans_A, inputs[1],
                                             node.matmul_attr_trans_B, out]

    def gradient(self, node, output_grad):
        # C = op(A) op(B): d op(A) = G op(B)^T and d op(B) = op(A)^T G, transposed back.
        a, b = node.inputs
        trans_a, trans_b = node.matmul_attr_trans_A, node.matmul_attr_trans_B
        grad_a = (matmul_op(b, output_grad, trans_b, True) if trans_a
                  else matmul_op(output_grad, b, False, not trans_b))
        grad_b = (matmul_op(output_grad, a, True, trans_a) if trans_b
                  else matmul_op(a, output_grad, not trans_a, False))
        return [grad_a, grad_b]


class PlaceholderOp(Op):
    """A node without inputs whose value is fed; :func:`Variable` makes named ones.
    """
    graph_safe = True  # a runtime op on the device's stream

    label = "placeholder_op"

    def __call__(self) -> Node:
        return Node(self, [], "placeholder")

    def gradient(self, node, output_grad):
        return []


class _FillOp(Op):
    """An array of the input's shape, filled with ``value``.

    Parameters
    ----------
    a : Node
        The node whose shape the result takes (its value is not read).
    """
    graph_safe = True  # a runtime op on the device's stream

    constant = True
    value = None

    def __call__(self, a: Node) -> Node:
        return Node(self, [a], _name("%s(%s)", self.label[:-3], a.name))

    def compute(self, node, input_vals):
        return np.full_like(input_vals[0], self.value)

    def kernel(self, node, inputs, out):
        return dlarray.ops.array_set, [out, self.value]

    def gradient(self, node, output_grad):
        return [None]


class OnesLikeOp(_FillOp):
    __doc__ = _FillOp.__doc__.replace("``value``", "ones")
    label = "oneslike_op"
    value = 1.0


class ZerosLikeOp(_FillOp):
    __doc__ = _FillOp.__doc__.replace("``value``", "zeros")
    label = "zeroslike_op"
    value = 0.0


class ReduceSumAxisZeroOp(Op):
    """The sum over the first axis: ``a.sum(axis=0)`` (shape ``(1,)`` for a 1-D ``a``).

    Parameters
    ----------
    a : Node
    """
    graph_safe = True  # a runtime op on the device's stream

    label = "reducesumaxiszero_op"

    def __call__(self, a: Node) -> Node:
        return Node(self, [a], _name("ReduceSumAxisZero(%s)", a.name))

    def infer_shape(self, node, input_shapes):
        shape = tuple(input_shapes[0])
        return shape[1:] if len(shape) > 1 else (1,)

    def compute(self, node, input_vals):
        a = input_vals[0]
        return a.sum(axis=0) if a.ndim > 1 else a.sum(keepdims=True)

    def kernel(self, node, inputs, out):
        return dlarray.ops.reduce_sum_axis_zero, [inputs[0], out]

    def gradient(self, node, output_grad):
        return [broadcastto_op(output_grad, node.inputs[0])]


class BroadcastToOp(Op):
    """``a`` broadcast (NumPy rules) to the shape of ``b``; ``b``'s value is not read.

    As in dlsys the gradient for ``a`` is ``reducesumaxiszero_op``, which is right for the
    common case of ``a`` of shape (k..) and ``b`` of shape (n, k..).

    Parameters
    ----------
    a : Node
    b : Node
        The node whose shape the result takes.
    """
    graph_safe = True  # a runtime op on the device's stream

    label = "broadcastto_op"

    def __call__(self, a: Node, b: Node) -> Node:
        return Node(self, [a, b], _name("BroadcastTo(%s,%s.shape)", a.name, b.name))

    def infer_shape(self, node, input_shapes):
        src, dst = (tuple(s) for s in input_shapes)
        if len(src) > len(dst) or any(s not in (1, d) for s, d in zip(src[::-1], dst[::-1])):
            raise _error(node, "cannot broadcast '%s' %s to the shape %s of '%s'"
                         % (node.inputs[0].name, src, dst, node.inputs[1].name))
        return dst

    def compute(self, node, input_vals):
        return np.broadcast_to(input_vals[0], input_vals[1].shape)

    def kernel(self, node, inputs, out):
        return dlarray.ops.broadcast_to, [inputs[0], out]

    def gradient(self, node, output_grad):
        return [reducesumaxiszero_op(output_grad), None]


def _log_softmax(y):
    z = y - y.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def softmax_func(y: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Numerically stable softmax over the last axis, in NumPy.

    Parameters
    ----------
    y : numpy.ndarray

    Returns
    -------
    numpy.ndarray
        ``exp(y - max) / sum(exp(y - max))`` row by row, of ``y``'s shape and dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from dlarray.autodiff import softmax_func
    >>> softmax_func(np.array([[0.0, 0.0]]))
    array([[0.5, 0.5]])
    """
    z = np.exp(y - y.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


class SoftmaxCrossEntropyOp(Op):
    """Mean over rows of ``-sum(y_ * log_softmax(y))``; shape (1,).

    As in dlsys, ``y_`` (the labels) gets a zero gradient.

    Parameters
    ----------
    y : Node
        Logits, ``(rows, classes)``.
    y_ : Node
        Target probabilities (one-hot labels), of the same shape.
    """
    graph_safe = True  # a runtime op on the device's stream

    label = "softmaxcrossentropy_op"

    def __call__(self, y: Node, y_: Node) -> Node:
        return Node(self, [y, y_], _name("SoftmaxXEntropy(%s,%s)", y.name, y_.name))

    def infer_shape(self, node, input_shapes):
        _same_shapes(node, input_shapes)
        return (1,)

    def compute(self, node, input_vals):
        y, y_ = input_vals
        loss = -(y_ * _log_softmax(y)).sum(axis=-1)
        return np.reshape(loss.mean(), (1,))

    def kernel(self, node, inputs, out):
        return dlarray.ops.softmax_cross_entropy, [inputs[0], inputs[1], out]

    def gradient(self, node, output_grad):
        y, y_ = node.inputs
        grad = _divbyrows_op(softmax_op(y) + -1 * y_)
        if output_grad.op is not oneslike_op:  # a gradient of ones needs no multiply
            grad = grad * broadcastto_op(output_grad, y)
        return [grad, None]


class SoftmaxOp(Op):
    """Softmax over the last axis. Its gradient is built for 2-D inputs.

    Parameters
    ----------
    a : Node
    """
    graph_safe = True  # a runtime op on the device's stream

    label = "softmax_op"
    inplace = True

    def __call__(self, a: Node) -> Node:
        return Node(self, [a], _name("Softmax(%s)", a.name))

    def compute(self, node, input_vals):
        return softmax_func(input_vals[0])

    def kernel(self, node, inputs, out):
        return dlarray.ops.softmax, [inputs[0], out]

    def gradient(self, node, output_grad):
        # dx = s * (g - rowsum(g * s)), the row sums as a product with a column of ones.
        row_sums = matmul_op(output_grad * node, _onescolumn_op(node))
        return [node * (output_grad + -1 * broadcastto_op(row_sums, node))]


class _DivByRowsOp(Op):
    """``a`` divided by its number of rows (the mean in softmax cross entropy's gradient)."""
    graph_safe = True  # a runtime op on the device's stream

    label = "divbyrows_op"
    inplace = True

    def __call__(self, a: Node) -> Node:
        return Node(self, [a], _name("DivByRows(%s)", a.name))

    def compute(self, node, input_vals):
        return input_vals[0] * (1.0 / _rows(input_vals[0].shape))

    def kernel(self, node, inputs, out):
        scale = 1.0 / _rows(out.shape)
        return dlarray.ops.matrix_elementwise_multiply_by_const, [inputs[0], scale, out]

    def gradient(self, node, output_grad):
        return [_divbyrows_op(output_grad)]


class _OnesColumnOp(Op):
    """A (n, 1) column of ones for a 2-D input of shape (m, n): a row-sum operand."""
    graph_safe = True  # a runtime op on the device's stream

    label = "onescolumn_op"
    constant = True

    def __call__(self, a: Node) -> Node:
        return Node(self, [a], _name("OnesColumn(%s)", a.name))

    def infer_shape(self, node, input_shapes):
        shape = tuple(input_shapes[0])
        if len(shape) != 2:
            raise _error(node, "the softmax_op gradient needs a 2-D input, got '%s' %s"
                         % (node.inputs[0].name, shape))
        return (shape[1], 1)

    def compute(self, node, input_vals):
        return np.ones((input_vals[0].shape[1], 1), dtype=input_vals[0].dtype)

    def kernel(self, node, inputs, out):
        return dlarray.ops.array_set, [out, 1.0]

    def gradient(self, node, output_grad):
        return [None]


matmul_op = MatMulOp()
placeholder_op = PlaceholderOp()
oneslike_op = OnesLikeOp()
zeroslike_op = ZerosLikeOp()
reducesumaxiszero_op = ReduceSumAxisZeroOp()
broadcastto_op = BroadcastToOp()
softmaxcrossentropy_op = SoftmaxCrossEntropyOp()
softmax_op = SoftmaxOp()
_divbyrows_op = _DivByRowsOp()
_onescolumn_op = _OnesColumnOp()


# The NumPy executor's reference forms of built-ins (independent of the kernels it checks);
# other declared ops run their CPU kernel there.
_NUMPY_FORMS = {
    "matrix_elementwise_add": lambda a, b: a + b,
    "matrix_elementwise_multiply": lambda a, b: a * b,
    "matrix_elementwise_add_by_const": lambda a, c: a + c,
    "matrix_elementwise_multiply_by_const": lambda a, c: a * c,
    "relu": lambda a: np.maximum(a, 0),
    "relu_gradient": lambda a, g: g * (a > 0),
}


class DeclaredOp(Op):
    """A node kind for an op declared by a plugin (or the core): its shape comes from the op's
    declaration, its value from the op's kernel on the executor's device (on the CPU device for
    the NumPy executor), and its gradient from the gradient ops the declaration names.

    Made by attribute access on this module: ``ops.sigmoid(x)``, ``ops.c99_axpy(x, y,
    alpha=2.0)`` (attributes by keyword, or positionally after the inputs). The elementwise
    built-ins are such nodes too: ``add_op``, ``mul_op``, ``add_byconst_op``,
    ``mul_byconst_op``, ``relu_op`` and ``relu_gradient_op``.

    Parameters
    ----------
    *inputs : Node
        The op's inputs, then (optionally) its attributes in declared order.
    **attrs : float
        Attributes by name.

    Returns
    -------
    Node
    """
    graph_safe = True  # a runtime op on the device's stream

    _instances = {}

    @classmethod
    def get(cls, name: str) -> DeclaredOp:
        op = cls._instances.get(name)
        if op is None:
            op = cls._instances[name] = cls(name)
        return op

    def __init__(self, name: str) -> None:
        info = dlarray.ops.op_info(name)
        if info["num_outputs"] != 1:
            raise TypeError("dlarray.autodiff: op '%s' has %d outputs; graph nodes have one"
                            % (name, info["num_outputs"]))
        self.name = self.label = name
        self.info = info
        self.inplace = bool(info["allow_inplace"])
        self.node_name = None  # a %-template over input names and attributes, e.g. "(%s+%s)"

    def __call__(self, *inputs: Any, **attrs: Any) -> Node:
        info = self.info
        names = info["attr_names"]
        n_in = info["num_inputs"]
        if len(inputs) > n_in:  # attributes given positionally after the inputs
            extra = inputs[n_in:]
            inputs = inputs[:n_in]
            if len(extra) > len(names):
                raise TypeError("%s takes %d inputs and attributes %s, got %d arguments"
                                % (self.name, n_in, names, n_in + len(extra)))
            for n, v in zip(names, extra):
                if n in attrs:
                    raise TypeError("%s: attribute %r given twice" % (self.name, n))
                attrs[n] = v
        if len(inputs) != n_in:
            raise TypeError("%s takes %d input nodes (%s), got %d"
                            % (self.name, n_in, ", ".join(info["input_names"]), len(inputs)))
        for i, x in enumerate(inputs):
            if not isinstance(x, Node):
                raise TypeError("%s: input '%s' must be a graph Node, got %s"
                                % (self.name, info["input_names"][i], type(x).__name__))
        unknown = set(attrs) - set(names)
        missing = [n for n in names if n not in attrs]
        if unknown or missing:
            raise TypeError("%s: attributes are %s; unknown %s, missing %s"
                            % (self.name, names, sorted(unknown), missing))
        values = tuple(_check_number(self.label, attrs[n]) for n in names)
        if self.node_name:
            title = _name(self.node_name, *[x.name for x in inputs], *values)
        else:
            title = _name("%s(%s)", self.name, ",".join(x.name for x in inputs))
        # const_attr: the one constant of ops such as add_byconst_op (graph.Node documents it)
        node = Node(self, list(inputs), title, values[0] if len(values) == 1 else None)
        node.attrs = values
        return node

    def _call_args(self, inputs, attrs, out):
        """The op's arguments in its positional order (dlarray.ops.op_info's call_order)."""
        info = self.info
        by_name = dict(zip(info["input_names"], inputs))
        by_name.update(zip(info["attr_names"], attrs))
        by_name.update(zip(info["output_names"], [out]))
        return [by_name[n] for n in info["call_order"] if n in by_name]

    def infer_shape(self, node, input_shapes):
        try:
            (shape, _), = dlarray.ops.infer_outputs(
                self.name, [tuple(s) for s in input_shapes],
                [np.dtype(np.float32)] * len(input_shapes), list(node.attrs))
        except ValueError as e:
            raise _error(node, str(e)) from None
        return tuple(shape)

    def compute(self, node, input_vals):
        form = _NUMPY_FORMS.get(self.name)
        if form is not None:
            return form(*input_vals, *node.attrs)
        # No NumPy form (a plugin's op): run its CPU kernel, in the inputs' dtype when the op
        # computes in it (float32 otherwise).
        cpu = dlarray.cpu(0)
        dtype = np.result_type(*input_vals) if input_vals else np.dtype(np.float32)
        work = dtype if dtype.name in self.info["dtypes"] else np.dtype(np.float32)
        arrays = [dlarray.array(np.asarray(v, dtype=work), cpu, work) for v in input_vals]
        out = getattr(dlarray.ops, self.name)(*self._call_args(arrays, node.attrs, None))
        return out.asnumpy().astype(dtype, copy=False)

    def kernel(self, node, inputs, out):
        return getattr(dlarray.ops, self.name), self._call_args(inputs, node.attrs, out)

    def gradient(self, node, output_grad):
        grads = [None] * len(node.inputs)
        for g in self.info["gradients"]:
            if g["op"] == "copy" and g["args"] == [("output_grad", 0)]:
                grads[g["input"]] = output_grad  # the identity: no node needed
                continue
            gop = DeclaredOp.get(g["op"])
            args = [node.inputs[i] if kind == "input" else node if kind == "output"
                    else output_grad for kind, i in g["args"]]
            own = dict(zip(self.info["attr_names"], node.attrs))
            missing = [n for n in gop.info["attr_names"] if n not in own]
            if missing:
                raise ValueError("%s: its gradient op %s needs attributes %s that %s does not have"
                                 % (self.name, gop.name, missing, self.name))
            grads[g["input"]] = gop(*args, **{n: own[n] for n in gop.info["attr_names"]})
        return grads


def _declared(name, label, node_name):
    """A built-in op as a graph node maker, with the autodiff name and node names of old."""
    op = DeclaredOp.get(name)
    op.label, op.node_name = label, node_name
    return op


add_op = _declared("matrix_elementwise_add", "add_op", "(%s+%s)")
mul_op = _declared("matrix_elementwise_multiply", "mul_op", "(%s*%s)")
add_byconst_op = _declared("matrix_elementwise_add_by_const", "add_byconst_op", "(%s+%s)")
mul_byconst_op = _declared("matrix_elementwise_multiply_by_const", "mul_byconst_op", "(%s*%s)")
relu_op = _declared("relu", "relu_op", "Relu(%s)")
relu_gradient_op = _declared("relu_gradient", "relu_gradient_op", "ReluGradient(%s,%s)")


def __getattr__(name: str) -> DeclaredOp:
    """Graph-node makers for ops declared by plugins: ``ops.sigmoid(x)``."""
    if name.startswith("_") or name not in dlarray.ops.op_names():
        raise AttributeError("module 'dlarray.autodiff.ops' has no attribute %r" % name)
    return DeclaredOp.get(name)
