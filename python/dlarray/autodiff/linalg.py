"""``dlarray.linalg``'s ``solve``, ``inv``, ``cholesky``, ``det``, ``slogdet`` and ``matmul`` as
differentiable nodes of ``dlarray.autodiff`` graphs (CustomOps whose forward and backward run
``dlarray.linalg`` on the executor's device)::

    from dlarray.autodiff import linalg as adla
    x = adla.solve(a, b)                 # a (..., n, n), b (..., n, k) graph nodes

The backward passes are the standard matrix-calculus results for real matrices:

- ``X = solve(A, B)``: ``dB = solve(A.T, dX)``, ``dA = -dB @ X.T``;
- ``Y = inv(A)``: ``dA = -Y.T @ dY @ Y.T``;
- ``L = cholesky(A)``: ``S = L^-T Phi(L.T @ dL) L^-1`` with Phi the lower triangle, its diagonal
  halved; ``dA = (S + S.T) / 2`` (symmetric: the gradient along symmetric perturbations);
- ``d = det(A)``: ``dA = dd * d * inv(A).T``; ``logabsdet(A)``: ``dA = dl * inv(A).T``;
- ``C = matmul(A, B)`` (stacks, batch dimensions broadcast): ``dA = dC @ B.T`` and
  ``dB = A.T @ dC``, each summed over the batch dimensions its input was broadcast along.

(``dlarray.autodiff.fft`` has the FFT nodes.)
"""
from __future__ import annotations

from typing import Any

import numpy as np

import dlarray

from .custom_op import CustomOp
from .graph import Node

__all__ = ["cholesky", "det", "inv", "logabsdet", "matmul", "solve"]


def _t(x: Any) -> Any:
    return dlarray.matrix_transpose(x)


def _store(target: Any, value: Any) -> None:
    dlarray.ops.copy(value.reshape(tuple(target.shape)), target)


class _Solve(CustomOp):
    def list_arguments(self):
        return ["a", "b"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[1]]

    def forward(self, in_data, out_data):
        _store(out_data[0], dlarray.linalg.solve(in_data[0], in_data[1]))

    def backward(self, out_grad, in_data, out_data, in_grad):
        a, x, g = in_data[0], out_data[0], out_grad[0]
        gb = dlarray.linalg.solve(_t(a), g)
        if x.ndim == 1:
            ga = -dlarray.linalg.outer(gb, x)
        else:
            ga = -dlarray.matmul(gb, _t(x))
        _store(in_grad[0], ga)
        _store(in_grad[1], gb)


class _Inv(CustomOp):
    def forward(self, in_data, out_data):
        _store(out_data[0], dlarray.linalg.inv(in_data[0]))

    def backward(self, out_grad, in_data, out_data, in_grad):
        yt = _t(out_data[0])
        _store(in_grad[0], -dlarray.matmul(dlarray.matmul(yt, out_grad[0]), yt))


class _Cholesky(CustomOp):
    def forward(self, in_data, out_data):
        _store(out_data[0], dlarray.linalg.cholesky(in_data[0]))

    def backward(self, out_grad, in_data, out_data, in_grad):
        la = dlarray.linalg
        lower = out_data[0]
        p = dlarray.tril(dlarray.matmul(_t(lower), out_grad[0]))
        p = p - 0.5 * dlarray.tril(dlarray.triu(p))  # the diagonal halved
        l_inv = la.inv(lower)
        s = dlarray.matmul(dlarray.matmul(_t(l_inv), p), l_inv)
        _store(in_grad[0], 0.5 * (s + _t(s)))


class _Det(CustomOp):
    def infer_shape(self, in_shape):
        return in_shape, [list(in_shape[0][:-2])]

    def forward(self, in_data, out_data):
        _store(out_data[0], dlarray.linalg.det(in_data[0]))

    def backward(self, out_grad, in_data, out_data, in_grad):
        scale = dlarray.expand_dims(out_grad[0] * out_data[0], axis=(-2, -1))
        _store(in_grad[0], scale * _t(dlarray.linalg.inv(in_data[0])))


class _LogAbsDet(_Det):
    def forward(self, in_data, out_data):
        _store(out_data[0], dlarray.linalg.slogdet(in_data[0]).logabsdet)

    def backward(self, out_grad, in_data, out_data, in_grad):
        scale = dlarray.expand_dims(out_grad[0], axis=(-2, -1))
        _store(in_grad[0], scale * _t(dlarray.linalg.inv(in_data[0])))


def _sum_to(x: Any, shape: Any) -> Any:
    """``x`` summed over the leading dimensions that broadcasting added or stretched from 1,
    down to ``shape`` (the adjoint of broadcasting ``shape`` to ``x.shape``)."""
    shape = tuple(shape)
    lead = x.ndim - len(shape)
    if lead:
        x = dlarray.sum(x, axis=tuple(range(lead)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and x.shape[i] != 1)
    return dlarray.sum(x, axis=stretched, keepdims=True) if stretched else x


class _MatMul(CustomOp):
    def list_arguments(self):
        return ["a", "b"]

    def infer_shape(self, in_shape):
        a, b = (tuple(s) for s in in_shape)
        if len(a) < 2 or len(b) < 2:
            raise ValueError("matmul: a and b must be stacks of matrices (2 or more "
                             "dimensions), got %s and %s" % (a, b))
        if a[-1] != b[-2]:
            raise ValueError("matmul: inner dimensions differ: a %s, b %s" % (a, b))
        try:
            batch = np.broadcast_shapes(a[:-2], b[:-2])
        except ValueError:
            raise ValueError("matmul: the batch dimensions of a %s and b %s do not broadcast"
                             % (a, b)) from None
        return in_shape, [list(batch) + [a[-2], b[-1]]]

    def forward(self, in_data, out_data):
        _store(out_data[0], dlarray.matmul(in_data[0], in_data[1]))

    def backward(self, out_grad, in_data, out_data, in_grad):
        a, b, g = in_data[0], in_data[1], out_grad[0]
        _store(in_grad[0], _sum_to(dlarray.matmul(g, _t(b)), a.shape))
        _store(in_grad[1], _sum_to(dlarray.matmul(_t(a), g), b.shape))


def matmul(a: Node, b: Node) -> Node:
    """The node ``dlarray.matmul(a, b)`` of stacks of matrices (batch dimensions broadcast; for
    plain 2-D matrices ``dlarray.autodiff.matmul_op`` is the same without the copies)."""
    return _MatMul()(a, b)


def solve(a: Node, b: Node) -> Node:
    """The node ``dlarray.linalg.solve(a, b)`` (b a stack of matrices or, with a 2-D a, a
    vector)."""
    return _Solve()(a, b)


def inv(a: Node) -> Node:
    """The node ``dlarray.linalg.inv(a)``."""
    return _Inv()(a)


def cholesky(a: Node) -> Node:
    """The node ``dlarray.linalg.cholesky(a)`` (lower factor; a symmetric gradient)."""
    return _Cholesky()(a)


def det(a: Node) -> Node:
    """The node ``dlarray.linalg.det(a)``."""
    return _Det()(a)


def logabsdet(a: Node) -> Node:
    """The node ``dlarray.linalg.slogdet(a).logabsdet`` (graph nodes have one output; the sign
    has no gradient)."""
    return _LogAbsDet()(a)
