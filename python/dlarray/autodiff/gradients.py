"""Topological order and reverse-mode gradients of dlarray.autodiff graphs."""

import functools

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


def find_topo_sort(node_list):
    """Every node that ``node_list`` depends on, each after its inputs."""
    return _topo_sort(node_list)


def sum_node_list(node_list):
    """The sum of the nodes (add_op chain)."""
    return functools.reduce(add_op, node_list)


def gradients(output_node, node_list):
    """Gradient nodes of ``output_node`` with respect to each node of ``node_list``.

    A node that ``output_node`` does not depend on gets ``zeroslike_op(node)``.
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
