"""The optimizer step as a node of the graph: ``sgd_update_op(params, grads, lr)``.

An Executor that evaluates the node runs forward, backward and the update in one ``run``, the
way a ``tf.train`` step op or ``optimizer.step()`` after ``loss.backward()`` does: the update
comes after every other node of the run (nothing reads a parameter once it has changed), and on
a device it is one multi-tensor kernel for all the parameters (``dlarray.sgd_update``'s, built
when the plan is made), inside the plan's CUDA graph when the executor records one.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import numpy.typing as npt

from .graph import Node, Op, _check_number, _error, _name
from .ops import placeholder_op


class SGDUpdateOp(Op):
    """``p -= lr * g`` for every (parameter, gradient) pair, in place; no value of its own."""

    label = "sgd_update_op"
    graph_safe = True  # on a device: kernel launches on the stream, nothing allocated per run

    def __call__(self, params: Sequence[Node], grads: Sequence[Node], lr: float) -> Node:
        params, grads = list(params), list(grads)
        if isinstance(lr, (bool, np.bool_)):
            raise TypeError("sgd_update_op: lr must be a real number, not bool")
        lr = _check_number(self.label, lr)
        if len(params) != len(grads) or not params:
            raise ValueError("sgd_update_op: %d parameters and %d gradients; give one gradient "
                             "per parameter, at least one" % (len(params), len(grads)))
        for what, nodes in (("parameters", params), ("gradients", grads)):
            for n in nodes:
                if not isinstance(n, Node):
                    raise TypeError("sgd_update_op: the %s must be Nodes, got %s"
                                    % (what, type(n).__name__))
        for p in params:
            if p.op is not placeholder_op:
                raise ValueError("sgd_update_op: parameter '%s' is a %s node; the parameters "
                                 "are Variables, whose fed arrays are updated in place"
                                 % (p.name, p.op.label))
        if len(set(params)) != len(params):
            raise ValueError("sgd_update_op: a parameter is given twice")
        node = Node(self, params + grads,
                    _name("sgd_update(%s)", ", ".join(p.name for p in params)), const_attr=lr)
        return node

    @staticmethod
    def pairs(node: Node) -> tuple[list[Node], list[Node]]:
        """The node's parameters and gradients."""
        half = len(node.inputs) // 2
        return node.inputs[:half], node.inputs[half:]

    def infer_shape(self, node, input_shapes):
        half = len(input_shapes) // 2
        for p, ps, gs in zip(node.inputs, input_shapes[:half], input_shapes[half:]):
            if tuple(ps) != tuple(gs):
                raise _error(node, "parameter '%s' is %s but its gradient is %s"
                             % (p.name, tuple(ps), tuple(gs)))
        return ()

    def compute(self, node: Node, input_vals: list[npt.NDArray[Any]]) -> None:
        """The NumPy reference: each fed parameter array becomes ``p + g * s`` in place, ``s``
        being ``-lr`` in its dtype (what the device kernels compute)."""
        half = len(input_vals) // 2
        for p, value, g in zip(node.inputs, input_vals[:half], input_vals[half:]):
            if (not isinstance(value, np.ndarray) or value.dtype.kind != "f"
                    or not value.flags.writeable):
                raise TypeError("sgd_update_op: parameter '%s' must be fed as a writable NumPy "
                                "float array (it is updated in place), got %s"
                                % (p.name, getattr(value, "dtype", type(value).__name__)))
            step = np.multiply(g, value.dtype.type(-node.const_attr), dtype=value.dtype)
            np.add(value, step, out=value)
        return None

    def kernel(self, node, inputs, out):
        raise NotImplementedError("the Executor's plan runs sgd_update_op itself")

    def gradient(self, node, output_grad):
        raise _error(node, "an update has no gradient (it is the step, not part of the loss)")


sgd_update_op_instance = SGDUpdateOp()


def sgd_update_op(params: Sequence[Node], grads: Sequence[Node], lr: float) -> Node:
    """The SGD step ``p -= lr * g`` of every parameter, as a node an Executor evaluates after
    the rest of its run (``optimizer.step()`` after ``loss.backward()`` in PyTorch).

    Evaluate it with the loss and the executor's ``run`` does forward, backward and the update;
    its value in ``run``'s result is None. Each parameter is a Variable whose fed array is
    updated in place: on a device, feed the parameters as NDArrays on the executor's device
    (float32, contiguous; keep feeding the same arrays), with NumPy (``ctx=None``) as writable
    NumPy float arrays. Each becomes ``p + g * s``, ``s`` being ``-lr`` rounded to the dtype:
    ``matrix_elementwise_multiply_by_const(g, -lr)`` then ``matrix_elementwise_add``'s result,
    bit for bit. On a device the update of all the parameters is one multi-tensor kernel
    (``dlarray.sgd_update``'s; ``graph_stats()`` counts it in ``multi_tensor_kernels``), or
    those two ops per parameter with ``Executor(..., fuse=False)``.

    Parameters
    ----------
    params : sequence of Node
        Variables, each once.
    grads : sequence of Node
        One per parameter, of its shape (``gradients(loss, params)``).
    lr : float
        The learning rate (a new rate needs a new node and executor).

    Returns
    -------
    Node

    Raises
    ------
    TypeError
        An element is not a Node, or ``lr`` is not a real number.
    ValueError
        The lists differ in length or are empty, a parameter is not a Variable or is given
        twice. At run time (from ``Executor.run``): a gradient's shape differs from its
        parameter's, or a parameter is fed in a way it cannot be updated in place.

    Examples
    --------
    >>> import numpy as np
    >>> from dlarray import autodiff as ad
    >>> w = ad.Variable("w")
    >>> loss = w * w
    >>> grad_w, = ad.gradients(loss, [w])
    >>> step = ad.sgd_update_op([w], [grad_w], lr=0.25)
    >>> w_val = np.array([2.0, -4.0])
    >>> _ = ad.Executor([loss, step]).run({w: w_val})
    >>> w_val   # w - 0.25 * 2w
    array([ 1., -2.])
    """
    return sgd_update_op_instance(params, grads, lr)


def is_update(node: Node) -> bool:
    """Whether ``node`` is an ``sgd_update_op`` node."""
    return isinstance(node.op, SGDUpdateOp)
