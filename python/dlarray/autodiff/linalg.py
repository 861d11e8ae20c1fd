"""``dlarray.linalg``'s ``solve``, ``inv``, ``cholesky``, ``det`` and ``slogdet`` as
differentiable nodes of ``dlarray.autodiff`` graphs (CustomOps whose forward and backward run
``dlarray.linalg`` on the executor's device)::

    from dlarray.autodiff import linalg as adla
    x = adla.solve(a, b)                 # a (..., n, n), b (..., n, k) graph nodes

The backward passes are the standard matrix-calculus results for real matrices:

- ``X = solve(A, B)``: ``dB = solve(A.T, dX)``, ``dA = -dB @ X.T``;
- ``Y = inv(A)``: ``dA = -Y.T @ dY @ Y.T``;
- ``L = cholesky(A)``: ``S = L^-T Phi(L.T @ dL) L^-1`` with Phi the lower triangle, its diagonal
  halved; ``dA = (S + S.T) / 2`` (symmetric: the gradient along symmetric perturbations);
- ``d = det(A)``: ``dA = dd * d * inv(A).T``; ``logabsdet(A)``: ``dA = dl * inv(A).T``.
"""
from __future__ import annotations

from typing import Any

import dlarray

from .custom_op import CustomOp
from .graph import Node

__all__ = ["cholesky", "det", "inv", "logabsdet", "solve"]


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
