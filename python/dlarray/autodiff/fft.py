"""``dlarray.fft``'s ``fft``, ``ifft``, ``rfft`` and ``irfft`` as differentiable nodes of
``dlarray.autodiff`` graphs (CustomOps whose forward and backward run ``dlarray.fft`` on the
executor's device)::

    from dlarray.autodiff import fft as adfft
    y = adfft.rfft(x)                    # x (..., n) real; y (..., n // 2 + 1, 2)
    power = y * y                        # |y|^2 as (re^2, im^2) pairs

Graph values are real arrays (the executor's float32 buffers), so a complex value is a node with a
trailing axis of 2 holding (real, imaginary) parts: PyTorch's ``view_as_real`` layout. ``axis`` and
``n`` refer to the complex array (the axes before that trailing one).

Gradient convention: for a real loss L of a complex z = a + ib, the gradient of z is
dL/da + i dL/db -- in the pair layout simply (dL/da, dL/db) -- which is PyTorch's convention (the
conjugate Wirtinger derivative 2 dL/dz*). With F the unnormalised DFT matrix (symmetric) and s the
norm mode's scale, the backward passes are:

- ``y = fft(x) = s F x``: ``dx = s conj(F) dy`` = ``ifft(dy)`` under the dual norm mode
  (backward <-> forward, ortho stays); ``ifft`` likewise with ``fft``;
- ``y = rfft(x)`` (the first n // 2 + 1 rows of F, x real): ``dx = Re(ifft(dy zero-padded to n))``
  under the dual mode;
- ``y = irfft(c, n)``: every bin but 0 (and n / 2 for even n) stands for itself and its mirror
  image, so ``dc = w * rfft(dy)`` under the dual mode, with w 2 for those bins and 1 for the
  others;

then cut or zero-padded back from ``n`` to the input's length along ``axis``.
"""
from __future__ import annotations

import operator
from typing import Any, Optional

import numpy as np

import dlarray

from .custom_op import CustomOp
from .graph import Node
from .linalg import _store

__all__ = ["fft", "ifft", "irfft", "rfft"]

_DUAL = {"backward": "forward", "ortho": "ortho", "forward": "backward"}
_COMPLEX = {"float32": "complex64", "float64": "complex128"}  # pairs' dtype -> the complex one


def _complex(pairs: Any) -> Any:
    """The complex array of an (..., 2) array of (real, imaginary) parts."""
    ctype = getattr(dlarray, _COMPLEX[np.dtype(pairs.dtype).name])
    return (dlarray.astype(pairs[..., 0], ctype) +
            dlarray.astype(pairs[..., 1], ctype) * 1j)


def _pairs(c: Any) -> Any:
    """The (..., 2) array of (real, imaginary) parts of a complex array."""
    return dlarray.stack([dlarray.real(c), dlarray.imag(c)], axis=-1)


def _resize(x: Any, axis: int, length: int) -> Any:
    """``x`` cut or zero-padded to ``length`` along ``axis`` (>= 0): the adjoint of the
    transforms' own padding or cutting to ``n``."""
    have = x.shape[axis]
    if have >= length:
        return x[(slice(None),) * axis + (slice(0, length),)]
    pad = list(x.shape)
    pad[axis] = length - have
    return dlarray.concat([x, dlarray.zeros(tuple(pad), dtype=x.dtype, device=x.device)],
                          axis=axis)


class _Transform(CustomOp):
    """One of the four transforms along one axis; see the module docstring."""

    def __init__(self, kind: str, n: Optional[int], axis: int, norm: str) -> None:
        self.kind, self.n, self.axis, self.norm = kind, n, axis, norm
        self.complex_in = kind != "rfft"
        self.complex_out = kind != "irfft"

    def label(self) -> str:
        return "fft." + self.kind

    def _geometry(self, shape):
        """(axis >= 0 in the complex array, input length, n) for an input of ``shape``."""
        core = list(shape)
        if self.complex_in:
            if not core or core[-1] != 2:
                raise ValueError("%s: the input must hold complex values as a trailing axis of 2 "
                                 "(real, imaginary), got the shape %s"
                                 % (self.label(), tuple(shape)))
            core = core[:-1]
        if not -len(core) <= self.axis < len(core):
            raise ValueError("%s: axis %d is out of range for a %d-dimensional (complex) input"
                             % (self.label(), self.axis, len(core)))
        axis = self.axis % len(core)
        length = core[axis]
        n = self.n if self.n is not None else 2 * (length - 1) if self.kind == "irfft" else length
        if n < 1:
            raise ValueError("%s: n must be positive, got %d (from an input of length %d)"
                             % (self.label(), n, length))
        return axis, length, n

    def infer_shape(self, in_shape):
        shape = list(in_shape[0])
        axis, _, n = self._geometry(shape)
        out = shape[:-1] if self.complex_in else shape
        out[axis] = n // 2 + 1 if self.kind == "rfft" else n
        return in_shape, [out + [2] if self.complex_out else out]

    def forward(self, in_data, out_data):
        x = _complex(in_data[0]) if self.complex_in else in_data[0]
        y = getattr(dlarray.fft, self.kind)(x, n=self.n, axis=self.axis, norm=self.norm)
        _store(out_data[0], _pairs(y) if self.complex_out else y)

    def backward(self, out_grad, in_data, out_data, in_grad):
        axis, length, n = self._geometry(in_data[0].shape)
        g = _complex(out_grad[0]) if self.complex_out else out_grad[0]
        dual = _DUAL[self.norm]
        if self.kind in ("fft", "ifft"):
            inverse = dlarray.fft.ifft if self.kind == "fft" else dlarray.fft.fft
            dx = inverse(g, axis=axis, norm=dual)
        elif self.kind == "rfft":
            dx = dlarray.real(dlarray.fft.ifft(g, n=n, axis=axis, norm=dual))
        else:  # irfft: bins that stand for two count twice
            weights = np.full(n // 2 + 1, 2.0)
            weights[0] = 1.0
            if n % 2 == 0:
                weights[-1] = 1.0
            shape = [1] * g.ndim
            shape[axis] = weights.size
            w = dlarray.asarray(weights.reshape(shape).astype(_COMPLEX[np.dtype(g.dtype).name]),
                                device=g.device)
            dx = dlarray.fft.rfft(g, axis=axis, norm=dual) * w
        dx = _resize(dx, axis, length)
        _store(in_grad[0], _pairs(dx) if self.complex_in else dx)


def _node(kind: str, x: Node, n: Optional[int], axis: int, norm: str) -> Node:
    where = "dlarray.autodiff.fft." + kind
    if n is not None:
        n = operator.index(n)
        if n < 1:
            raise ValueError("%s: n must be positive, got %d" % (where, n))
    axis = operator.index(axis)
    if norm not in _DUAL:
        raise ValueError("%s: norm must be 'backward', 'ortho' or 'forward', got %r"
                         % (where, norm))
    return _Transform(kind, n, axis, norm)(x)


def fft(x: Node, n: Optional[int] = None, axis: int = -1, norm: str = "backward") -> Node:
    """The node ``dlarray.fft.fft`` of the complex node ``x`` ((..., 2) pairs); (..., 2) pairs."""
    return _node("fft", x, n, axis, norm)


def ifft(x: Node, n: Optional[int] = None, axis: int = -1, norm: str = "backward") -> Node:
    """The node ``dlarray.fft.ifft`` of the complex node ``x`` ((..., 2) pairs); (..., 2)
    pairs."""
    return _node("ifft", x, n, axis, norm)


def rfft(x: Node, n: Optional[int] = None, axis: int = -1, norm: str = "backward") -> Node:
    """The node ``dlarray.fft.rfft`` of the real node ``x``; (..., 2) pairs."""
    return _node("rfft", x, n, axis, norm)


def irfft(x: Node, n: Optional[int] = None, axis: int = -1, norm: str = "backward") -> Node:
    """The node ``dlarray.fft.irfft`` (real) of the half spectrum ``x`` ((..., 2) pairs); ``n``
    defaults to ``2 * (length - 1)``."""
    return _node("irfft", x, n, axis, norm)
