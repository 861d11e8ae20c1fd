"""The ops of dlarray.autodiff: shape inference, NumPy reference, runtime kernel, gradient."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import numpy.typing as npt

import dlarray

from .graph import Node, Op, _check_number, _describe, _error, _name, _rows


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


# The NumPy executor's reference forms of built-ins (independent of the kernels it checks):
# inputs (and the shape-giving node of an op that needs one), then attributes. Other declared
# ops run their CPU kernel there.
_NUMPY_FORMS = {
    "matrix_elementwise_add": lambda a, b: a + b,
    "matrix_elementwise_multiply": lambda a, b: a * b,
    "matrix_elementwise_add_by_const": lambda a, c: a + c,
    "matrix_elementwise_multiply_by_const": lambda a, c: a * c,
    "relu": lambda a: np.maximum(a, 0),
    "relu_gradient": lambda a, g: g * (a > 0),
    "matrix_multiply": lambda a, b, ta, tb: np.matmul(a.T if ta else a, b.T if tb else b),
    "reduce_sum_axis_zero": lambda a: a.sum(axis=0) if a.ndim > 1 else a.sum(keepdims=True),
    "broadcast_to": lambda a, like: np.broadcast_to(a, like.shape),
    "softmax": softmax_func,
    "softmax_cross_entropy": lambda y, t: np.reshape(-(t * _log_softmax(y)).sum(-1).mean(), (1,)),
}

_ATTR_CASTS = {"bool": bool, "int": int, "float": float}


def _gradient_attrs(gop, spec, own):
    """The attributes of gradient op ``gop``: the forward node's by name (``own``), unless the
    declaration (``spec["attrs"]``) sets them to a number, a forward attribute or its negation."""
    values = dict(own)
    for name, (kind, v) in spec.get("attrs", {}).items():
        values[name] = v if kind == "value" else (not own[v]) if kind == "not" else own[v]
    names = gop.info["attr_names"]
    problems = ["has no attribute %r" % n for n in spec.get("attrs", {}) if n not in names]
    problems += ["needs attribute %r, which the forward op does not have" % n
                 for n in names if n not in values]
    return {n: values[n] for n in names if n in values}, problems


class DeclaredOp(Op):
    """A node kind for an op declared by a plugin (or the core): its shape comes from the op's
    declaration, its value from the op's kernel on the executor's device (on the CPU device for
    the NumPy executor), and its gradient from the gradient ops the declaration names (see
    ``DLArrayGradient`` in ``dlarray/plugin_api.h``: arguments, attributes and conditions).

    Made by attribute access on this module: ``ops.sigmoid(x)``, ``ops.c99_axpy(x, y,
    alpha=2.0)`` (attributes by keyword, or positionally after the inputs; declared defaults
    apply). An op that cannot infer its output's shape (``broadcast_to``) takes one node more,
    whose shape the output takes. The built-ins of the dlsys API are such nodes too:
    ``add_op``, ``mul_op``, ``add_byconst_op``, ``mul_byconst_op``, ``relu_op``,
    ``relu_gradient_op``, ``matmul_op``, ``reducesumaxiszero_op`` and ``broadcastto_op``.

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
        self.input_names = list(info["input_names"]) + ([] if info["infers_shape"] else ["like"])
        # attribute name -> default: the declared ones; _declared adds the dlsys API's
        self.defaults = {n: d for n, d in zip(info["attr_names"], info["attr_defaults"])
                         if d is not None}
        self.aliases = {}  # other keyword spellings of attributes (dlsys: trans_A)

    def __call__(self, *inputs: Any, **attrs: Any) -> Node:
        info = self.info
        names = info["attr_names"]
        n_in = len(self.input_names)
        attrs = {self.aliases.get(k, k): v for k, v in attrs.items()}
        if len(inputs) > n_in:  # attributes given positionally after the inputs
            extra = inputs[n_in:]
            inputs = inputs[:n_in]
            if len(extra) > len(names):
                raise TypeError("%s takes %d inputs and attributes %s, got %d arguments"
                                % (self.label, n_in, names, n_in + len(extra)))
            for n, v in zip(names, extra):
                if n in attrs:
                    raise TypeError("%s: attribute %r given twice" % (self.label, n))
                attrs[n] = v
        if len(inputs) != n_in:
            raise TypeError("%s takes %d input nodes (%s), got %d"
                            % (self.label, n_in, ", ".join(self.input_names), len(inputs)))
        for i, x in enumerate(inputs):
            if not isinstance(x, Node):
                raise TypeError("%s: input '%s' must be a graph Node, got %s"
                                % (self.label, self.input_names[i], type(x).__name__))
        attrs = {**{n: d for n, d in self.defaults.items() if n not in attrs}, **attrs}
        unknown = set(attrs) - set(names)
        missing = [n for n in names if n not in attrs]
        if unknown or missing:
            raise TypeError("%s: attributes are %s; unknown %s, missing %s"
                            % (self.label, names, sorted(unknown), missing))
        values = tuple(_ATTR_CASTS[t](_check_number(self.label, attrs[n]))
                       for n, t in zip(names, info["attr_types"]))
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
        by_name = dict(zip(info["input_names"], inputs))  # a shape-giving node is not passed
        by_name.update(zip(info["attr_names"], attrs))
        by_name.update(zip(info["output_names"], [out]))
        return [by_name[n] for n in info["call_order"] if n in by_name]

    def infer_shape(self, node, input_shapes):
        shapes = [tuple(s) for s in input_shapes]
        if not self.info["infers_shape"]:
            # The output takes the last node's shape; the inputs broadcast to it (NumPy rules),
            # the one meaning such an op has in graphs (broadcast_to).
            *sources, like = shapes
            for src in sources:
                if len(src) > len(like) or any(s not in (1, d)
                                               for s, d in zip(src[::-1], like[::-1])):
                    raise _error(node, "cannot broadcast %s to the shape %s of '%s'" % (
                        _describe(node.inputs[:-1], sources), like, node.inputs[-1].name))
            return like
        try:
            (shape, _), = dlarray.ops.infer_outputs(
                self.name, shapes, [np.dtype(np.float32)] * len(shapes), list(node.attrs))
        except ValueError as e:
            raise _error(node, "%s; got %s" % (e, _describe(node.inputs, shapes))) from None
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
        own = dict(zip(self.info["attr_names"], node.attrs))
        for g in self.info["gradients"]:
            if "when" in g and bool(own[g["when"][0]]) != g["when"][1]:
                continue  # declared for the other value of that attribute
            if g["op"] == "copy" and g["args"] == [("output_grad", 0)]:
                grads[g["input"]] = output_grad  # the identity: no node needed
                continue
            gop = DeclaredOp.get(g["op"])
            args = [node.inputs[i] if kind == "input" else node if kind == "output"
                    else output_grad for kind, i in g["args"]]
            attrs, problems = _gradient_attrs(gop, g, own)
            if problems:
                raise ValueError("%s: its gradient op %s %s"
                                 % (self.name, gop.name, "; ".join(problems)))
            grads[g["input"]] = gop(*args, **attrs)
        return grads


def _declared(name, label, node_name, cls=DeclaredOp, aliases=None, defaults=None):
    """A built-in op as a graph node maker, with the autodiff name, node names, keyword
    spellings and defaults of the dlsys API."""
    op = DeclaredOp._instances[name] = cls(name)
    op.label, op.node_name = label, node_name
    op.aliases.update(aliases or {})
    op.defaults.update(defaults or {})
    # help() and the API docs show the dlsys signature and the op's own line.
    spelling = {v: k for k, v in op.aliases.items()}
    kind, none = inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty
    op.__signature__ = inspect.Signature(
        [inspect.Parameter(n, kind) for n in op.input_names] +
        [inspect.Parameter(spelling.get(n, n), kind, default=op.defaults.get(n, none))
         for n in op.info["attr_names"]], return_annotation=Node)
    if cls is DeclaredOp:  # (the composite ones have their class's docstring)
        lines = ["The graph node of ``dlarray.ops.%s``: ``%s``." % (name, op.info["doc"]), "",
                 "Parameters", "----------"]
        params = list(op.__signature__.parameters.values())
        for p in params[:len(op.input_names)]:
            lines += ["%s : Node" % p.name, "    Input node."]
        for p, t in zip(params[len(op.input_names):], op.info["attr_types"]):
            lines += ["%s : %s%s" % (p.name, t, "" if p.default is none else ", optional"),
                      "    Attribute" + ("." if p.default is none else
                                         " (default %r)." % p.default)]
        op.__doc__ = "\n".join(lines + ["", "Returns", "-------", "Node"])
    return op


class _CompositeGradient(DeclaredOp):
    """A declared op whose gradient is hand-written because it takes several ops, which one
    declared gradient (one op per input) cannot say. Shape, value and kernel still come from
    the declaration."""


class SoftmaxCrossEntropyOp(_CompositeGradient):
    """Mean over rows of ``-sum(y_ * log_softmax(y))``; shape (1,).

    As in dlsys, ``y_`` (the labels) gets a zero gradient. The gradient of ``y``,
    ``(softmax(y) - y_) / rows * dout``, takes four ops, and the 1/rows depends on the shape.

    Parameters
    ----------
    y : Node
        Logits, ``(rows, classes)``.
    y_ : Node
        Target probabilities (one-hot labels), of the same shape.
    """

    def gradient(self, node, output_grad):
        y, y_ = node.inputs
        grad = _divbyrows_op(softmax_op(y) + -1 * y_)
        if output_grad.op is not oneslike_op:  # a gradient of ones needs no multiply
            grad = grad * broadcastto_op(output_grad, y)
        return [grad, None]


class SoftmaxOp(_CompositeGradient):
    """Softmax over the last axis. Its gradient, ``s * (g - rowsum(g * s))`` (five ops), is
    built for 2-D inputs.

    Parameters
    ----------
    a : Node
    """

    def gradient(self, node, output_grad):
        # The row sums as a product with a column of ones.
        row_sums = matmul_op(output_grad * node, _onescolumn_op(node))
        return [node * (output_grad + -1 * broadcastto_op(row_sums, node))]


class _DivByRowsOp(Op):
    """``a`` divided by its number of rows (the mean in softmax cross entropy's gradient): a
    multiply by a constant that the shape decides, which no declared attribute can say."""
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
    """A (n, 1) column of ones for a 2-D input of shape (m, n): a row-sum operand (a constant
    whose shape is not its input's, which _FillOp cannot make)."""
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


placeholder_op = PlaceholderOp()
oneslike_op = OnesLikeOp()
zeroslike_op = ZerosLikeOp()
add_op = _declared("matrix_elementwise_add", "add_op", "(%s+%s)")
mul_op = _declared("matrix_elementwise_multiply", "mul_op", "(%s*%s)")
add_byconst_op = _declared("matrix_elementwise_add_by_const", "add_byconst_op", "(%s+%s)")
mul_byconst_op = _declared("matrix_elementwise_multiply_by_const", "mul_byconst_op", "(%s*%s)")
relu_op = _declared("relu", "relu_op", "Relu(%s)")
relu_gradient_op = _declared("relu_gradient", "relu_gradient_op", "ReluGradient(%s,%s)")
matmul_op = _declared("matrix_multiply", "matmul_op", "MatMul(%s,%s,%d,%d)",
                      aliases={"trans_A": "trans_a", "trans_B": "trans_b"},
                      defaults={"trans_a": False, "trans_b": False})
reducesumaxiszero_op = _declared("reduce_sum_axis_zero", "reducesumaxiszero_op",
                                 "ReduceSumAxisZero(%s)")
broadcastto_op = _declared("broadcast_to", "broadcastto_op", "BroadcastTo(%s,%s.shape)")
softmax_op = _declared("softmax", "softmax_op", "Softmax(%s)", SoftmaxOp)
softmaxcrossentropy_op = _declared("softmax_cross_entropy", "softmaxcrossentropy_op",
                                   "SoftmaxXEntropy(%s,%s)", SoftmaxCrossEntropyOp)
_divbyrows_op = _DivByRowsOp()
_onescolumn_op = _OnesColumnOp()


def __getattr__(name: str) -> DeclaredOp:
    """Graph-node makers for ops declared by plugins: ``ops.sigmoid(x)``."""
    if name.startswith("_") or name not in dlarray.ops.op_names():
        raise AttributeError("module 'dlarray.autodiff.ops' has no attribute %r" % name)
    return DeclaredOp.get(name)
