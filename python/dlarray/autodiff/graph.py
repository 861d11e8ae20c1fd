"""Graph nodes and the Op base class of dlarray.autodiff."""

from __future__ import annotations

import numbers
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from .._core import NDArray

_MAX_NAME = 60


class Node:
    """A node of the computation graph: ``op`` applied to ``inputs``.

    Nodes are made by calling ops (``matmul_op(a, b)``), by :func:`Variable`, and by ``+``
    and ``*`` between nodes and numbers. They compare and hash by identity.

    Parameters
    ----------
    op : Op
        What the node computes.
    inputs : list of Node
        The op's inputs.
    name : str
        What the node computes, for messages.
    const_attr : float, optional
        The op's constant operand, when it has one (``add_byconst_op``, ...).
    """

    def __init__(self, op: Op, inputs: Iterable[Node], name: str,
                 const_attr: Optional[float] = None) -> None:
        self.op = op
        self.inputs = list(inputs)
        self.name = name
        self.const_attr = const_attr

    def __add__(self, other: Union[Node, float]) -> Node:
        from .ops import add_byconst_op, add_op
        if isinstance(other, Node):
            return add_op(self, other)
        return add_byconst_op(self, other)

    def __mul__(self, other: Union[Node, float]) -> Node:
        from .ops import mul_byconst_op, mul_op
        if isinstance(other, Node):
            return mul_op(self, other)
        return mul_byconst_op(self, other)

    __radd__ = __add__
    __rmul__ = __mul__
    __array_ufunc__ = None  # NumPy scalars and arrays defer to __radd__ / __rmul__

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return "<Node %s %r>" % (self.op.label, self.name)


def Variable(name: str) -> Node:
    """A placeholder node, whose value is fed to :meth:`Executor.run`.

    Parameters
    ----------
    name : str
        The name shown in messages and node names.

    Returns
    -------
    Node

    Examples
    --------
    >>> from dlarray import autodiff as ad
    >>> x = ad.Variable("x")
    >>> (x + 1).name
    '(x+1.0)'
    """
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
    # The kernel only queues work on the device's stream (no host work, no waiting): the
    # executor may record it in a CUDA graph. Ops that run Python or NumPy code say False.
    graph_safe = False

    def infer_shape(self, node: Node, input_shapes: Sequence[Sequence[int]]) -> tuple[int, ...]:
        """The shape of ``node``'s value, from its inputs' shapes.

        Parameters
        ----------
        node : Node
        input_shapes : list of tuple of int

        Returns
        -------
        tuple of int
            By default the first input's shape.

        Raises
        ------
        ValueError
            When the inputs do not fit the op; the message names the node and the shapes.
        """
        return tuple(input_shapes[0])

    def compute(self, node: Node, input_vals: list[npt.NDArray[Any]]) -> npt.NDArray[Any]:
        """The NumPy reference: ``node``'s value from its inputs' values.

        Parameters
        ----------
        node : Node
        input_vals : list of numpy.ndarray

        Returns
        -------
        numpy.ndarray
            A new array.
        """
        raise NotImplementedError

    def kernel(self, node: Node, inputs: list[NDArray],
               out: NDArray) -> tuple[Callable[..., Any], list[Any]]:
        """The runtime call that writes ``node``'s value into ``out``, for the device plan.

        Parameters
        ----------
        node : Node
        inputs : list of NDArray
            The inputs' buffers.
        out : NDArray
            The node's buffer.

        Returns
        -------
        tuple
            ``(function, argument list)``, called as ``function(*arguments)`` at every run.
        """
        raise NotImplementedError

    def gradient(self, node: Node, output_grad: Node) -> list[Optional[Node]]:
        """The gradient nodes of ``node``'s inputs, given the gradient of its output.

        Parameters
        ----------
        node : Node
        output_grad : Node
            The gradient with respect to ``node``.

        Returns
        -------
        list
            One entry per input: a Node, or None for a zero gradient.
        """
        raise NotImplementedError


def _same_shapes(node, input_shapes):
    if tuple(input_shapes[0]) != tuple(input_shapes[1]):
        raise _error(node, "inputs must have the same shape, got %s"
                     % _describe(node.inputs, input_shapes))
    return tuple(input_shapes[0])
