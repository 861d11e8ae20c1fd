"""Graph nodes and the Op base class of dlarray.autodiff."""

import numbers

import numpy as np

_MAX_NAME = 60


class Node:
    """A node of the computation graph: ``op`` applied to ``inputs``.

    ``name`` says what the node computes (for messages); ``const_attr`` holds an op's
    constant operand, when it has one. Nodes compare and hash by identity.
    """

    def __init__(self, op, inputs, name, const_attr=None):
        self.op = op
        self.inputs = list(inputs)
        self.name = name
        self.const_attr = const_attr

    def __add__(self, other):
        from .ops import add_byconst_op, add_op
        if isinstance(other, Node):
            return add_op(self, other)
        return add_byconst_op(self, other)

    def __mul__(self, other):
        from .ops import mul_byconst_op, mul_op
        if isinstance(other, Node):
            return mul_op(self, other)
        return mul_byconst_op(self, other)

    __radd__ = __add__
    __rmul__ = __mul__
    __array_ufunc__ = None  # NumPy scalars and arrays defer to __radd__ / __rmul__

    def __str__(self):
        return self.name

    def __repr__(self):
        return "<Node %s %r>" % (self.op.label, self.name)


def Variable(name):
    """A placeholder node: its value is given to ``Executor.run`` in the feed dict."""
    from .ops import placeholder_op
    node = placeholder_op()
    node.name = name
    return node


def _name(template, *parts):
    """A node name from its inputs' names, kept short so deep graphs stay readable."""
    name = template % parts
    if len(name) > _MAX_NAME:
        name = name[: _MAX_NAME - 3] + "..."
    return name


def _error(node, message):
    """A ValueError that names the node and its op."""
    return ValueError("%s node '%s': %s" % (node.op.label, node.name, message))


def _describe(nodes, shapes):
    return ", ".join("'%s' %s" % (n.name, tuple(s)) for n, s in zip(nodes, shapes))


def _check_number(op_label, const):
    if not isinstance(const, numbers.Real):
        raise TypeError("%s: the constant must be a real number, not %s"
                        % (op_label, type(const).__name__))
    return float(const)


def _rows(shape):
    """Rows of an array whose rows run over the last axis (numel / last dim)."""
    return int(np.prod(shape[:-1], dtype=np.int64))


class Op:
    """A kind of node: how to make one, infer its shape, compute it and differentiate it.

    ``compute`` is the NumPy reference and returns a new array; ``kernel`` returns the
    runtime call ``(function, argument list)`` that writes the node's value into ``out``.
    """

    label = "op"
    inplace = False  # the runtime kernel may write its output over an input of equal shape
    constant = False  # the value depends on the input shapes only: computed once per plan

    def infer_shape(self, node, input_shapes):
        """The output shape; raises ValueError naming the node when the inputs do not fit."""
        return tuple(input_shapes[0])

    def compute(self, node, input_vals):
        raise NotImplementedError

    def kernel(self, node, inputs, out):
        raise NotImplementedError

    def gradient(self, node, output_grad):
        """Gradient nodes for each input, given the output's; None means a zero gradient."""
        raise NotImplementedError


def _same_shapes(node, input_shapes):
    if tuple(input_shapes[0]) != tuple(input_shapes[1]):
        raise _error(node, "inputs must have the same shape, got %s"
                     % _describe(node.inputs, input_shapes))
    return tuple(input_shapes[0])
