"""Topological order and reverse-mode gradients of dlarray.autodiff graphs."""

from __future__ import annotations

import functools
from typing import Iterable

from .graph import Node
from .ops import add_op, oneslike_op, zeroslike_op


def _topo_sort(node_list, leaves=()):
    """Depth-first post-order over inputs, not descending below ``leaves``."""
    visited, order = set(), []
    for root in node_list:
        if root in visited:
            continue
        visited.add(root)
        stack = [(root, iter(() if root in leaves else root.inputs))]
        while stack:
            node, inputs = stack[-1]
            for inp in inputs:
                if inp not in visited:
                    visited.add(inp)
                    stack.append((inp, iter(() if inp in leaves else inp.inputs)))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def find_topo_sort(node_list: Iterable[Node]) -> list[Node]:
    """Every node that the nodes of ``node_list`` depend on, each after its inputs.

    Parameters
    ----------
    node_list : list of Node

    Returns
    -------
    list of Node
        A topological order (depth-first post-order), each node once.
    """
    return _topo_sort(node_list)


def sum_node_list(node_list: Iterable[Node]) -> Node:
    """The sum of nodes, as a chain of ``add_op``.

    Parameters
    ----------
    node_list : list of Node
        At least one node, all of one shape.

    Returns
    -------
    Node
    """
    return functools.reduce(add_op, node_list)


def gradients(output_node: Node, node_list: Iterable[Node]) -> list[Node]:
    """Gradient nodes of ``output_node`` with respect to each node of ``node_list``.

    Builds the backward graph by reverse-mode differentiation: each op says how to
    differentiate its inputs (:meth:`Op.gradient`), and gradients reaching a node along several
    paths are summed.

    Parameters
    ----------
    output_node : Node
        What to differentiate, usually a loss of shape (1,); its own gradient is ones.
    node_list : list of Node
        The nodes to differentiate with respect to, usually parameters.

    Returns
    -------
    list of Node
        One gradient node per element of ``node_list``, of its shape; a node that
        ``output_node`` does not depend on gets ``zeroslike_op(node)``.

    Examples
    --------
    >>> import numpy as np
    >>> from dlarray import autodiff as ad
    >>> x = ad.Variable("x")
    >>> y = x * x + x
    >>> grad, = ad.gradients(y, [x])
    >>> ad.Executor([grad]).run({x: np.array([1.0, 2.0])})[0]   # 2x + 1
    array([3., 5.])
    """
    grads = {output_node: [oneslike_op(output_node)]}
    node_to_grad = {}
    for node in reversed(find_topo_sort([output_node])):
        if node not in grads:  # only zero gradients reach it
            continue
        grad = node_to_grad[node] = sum_node_list(grads[node])
        for inp, inp_grad in zip(node.inputs, node.op.gradient(node, grad)):
            if inp_grad is not None:
                grads.setdefault(inp, []).append(inp_grad)
    return [node_to_grad[n] if n in node_to_grad else zeroslike_op(n) for n in node_list]
