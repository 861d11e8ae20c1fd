"""``dlarray.fft``: the array API standard's FFT extension (2024.12).

Every transform is brought to one of three device primitives along axis 1 of a compact
(outer, n, inner) layout (``runtime/src/fft_ops.cc``): ``fft_c2c`` (complex to complex, either
sign), ``fft_r2c`` (real to the half spectrum) and ``fft_c2r`` (half spectrum to real). Any axis of
a compact array is such a layout, so no transpose is needed; the axis is padded with zeros or
truncated to ``n``, and the norm mode becomes the primitive's ``scale`` attribute, so it costs no
extra pass. Any length works
(the backends use mixed radix plus Bluestein's algorithm: O(n log n) for primes too). Adjacent
axes of ``fftn``/``rfftn``/``irfftn`` run as one call of the primitives' ``_nd`` forms (2 or 3
axes at once: one cuFFT plan on cuda) where the device has them.

Devices: cpu (pocketfft), cuda (cuFFT). A device whose plugin has no kernel for a primitive
(OpenCL today, and any third-party backend) uses the **host fallback**: the operand is copied to
the CPU, transformed there and copied back. ``__array_namespace_info__().capabilities()["fft host
fallback"]`` lists the device types that fall back. See docs/fft.md.

Dtypes: float32 and complex64 transform in single precision (complex64 / float32 results),
float64 and complex128 in double precision; other dtypes raise TypeError.
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from . import _core, _devices, _dtypes, ops
from ._core import NDArray
from ._index_primitives import _axis
from ._kernels import fallback_devices, has_kernel

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")
_REAL = {np.dtype(np.float32): np.dtype(np.complex64),
         np.dtype(np.float64): np.dtype(np.complex128)}
_COMPLEX = {c: r for r, c in _REAL.items()}
_PRIMITIVES = ("fft_c2c", "fft_r2c", "fft_c2r")


# --- checks ---------------------------------------------------------------------------------

def _require(x: Any, where: str) -> NDArray:
    if not isinstance(x, NDArray):
        raise TypeError("%s: x must be an NDArray, got %s" % (where, type(x).__name__))
    if x.ndim == 0:
        raise ValueError("%s: x must have at least one dimension, got a 0-d array" % where)
    return x


def _norm(norm: Any, where: str) -> str:
    if norm not in _NORMS:
        raise ValueError("%s: norm must be 'backward', 'ortho' or 'forward', got %r"
                         % (where, norm))
    return norm


def _length(n: Any, name: str, where: str) -> int:
    if isinstance(n, builtins.bool) or not hasattr(n, "__index__"):
        raise TypeError("%s: %s must be an integer, got %s" % (where, name, type(n).__name__))
    value = operator.index(n)
    if value < 1:
        raise ValueError("%s: %s must be >= 1, got %d" % (where, name, value))
    return value


def _complex_input(x: NDArray, where: str) -> NDArray:
    """x as the complex dtype of its precision (real floats are widened, as NumPy does)."""
    if x.dtype in _COMPLEX:
        return x
    if x.dtype in _REAL:
        return x.astype(_REAL[x.dtype])
    raise TypeError("%s: x must have a floating-point dtype (float32, float64, complex64 or "
                    "complex128), got %s" % (where, x.dtype))


def _real_input(x: NDArray, where: str) -> NDArray:
    if x.dtype not in _REAL:
        raise TypeError("%s: x must have a real floating-point dtype (float32 or float64), got %s"
                        % (where, x.dtype))
    return x


def _scale(norm: str, n: int, forward: builtins.bool) -> float:
    """The factor of one transform of length n: 1/n on the side the norm mode names."""
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    return 1.0 / n if (norm == "forward") == forward else 1.0


# --- the primitives on any device -----------------------------------------------------------

def _host_fallback_devices() -> List[str]:
    """The device types (of the devices now usable) whose FFTs run on the CPU and are copied
    back, because their plugin has no kernel for an FFT primitive."""
    return fallback_devices(_PRIMITIVES)


def _run(op: str, x: NDArray, out_shape: Tuple[int, ...], out_dtype: np.dtype,
         forward: builtins.bool, scale: float) -> NDArray:
    """The primitive on x's device, or on the CPU (the host fallback) when that device has no
    kernel for it; x is compact, 3-D (the 1-D forms) or 4-D/5-D (the _nd forms)."""
    ctx = x.ctx
    where = ctx
    if not has_kernel(op, ctx):
        where = _devices.cpu(0)  # host fallback (docs/fft.md)
        x = x.to_device(where)
    out = _core.empty(out_shape, where, out_dtype)
    if out.size:
        getattr(ops, op)(x, 1 if forward else 0, scale, out)
    return out if where == ctx else out.to_device(ctx)


def _resize(a: NDArray, n: int) -> NDArray:
    """a (outer, m, inner) truncated or zero-padded to (outer, n, inner), compact."""
    m = a.shape[1]
    if m == n:
        return a
    if m > n:
        return a[:, :n, :].copy()
    out = _core.empty((a.shape[0], n, a.shape[2]), a.ctx, a.dtype)
    out[...] = 0
    if m and out.size:
        out[:, :m, :] = a
    return out


def _along(x: NDArray, axis: int, fn) -> NDArray:
    """fn applied to x as a compact (outer, length, inner) array split at `axis`; its result
    (outer, new length, inner) is reshaped back, the new length at `axis`."""
    outer = int(np.prod(x.shape[:axis], dtype=np.int64))
    inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
    compact = x if x.is_contiguous else x.copy()
    result = fn(compact.reshape((outer, x.shape[axis], inner)))
    return result.reshape(x.shape[:axis] + (result.shape[1],) + x.shape[axis + 1:])


def _c2c(x: NDArray, axis: int, n: Optional[int], norm: str, forward: builtins.bool,
         where: str) -> NDArray:
    length = x.shape[axis] if n is None else _length(n, "n", where)
    if length < 1:
        raise ValueError("%s: the transformed axis %d has length 0; pass n >= 1" % (where, axis))
    scale = _scale(norm, length, forward)
    return _along(x, axis, lambda a: _run("fft_c2c", _resize(a, length),
                                          (a.shape[0], length, a.shape[2]), a.dtype, forward,
                                          scale))


def _r2c(x: NDArray, axis: int, n: Optional[int], norm: str, forward: builtins.bool,
         where: str) -> NDArray:
    length = x.shape[axis] if n is None else _length(n, "n", where)
    if length < 1:
        raise ValueError("%s: the transformed axis %d has length 0; pass n >= 1" % (where, axis))
    scale = _scale(norm, length, forward)
    return _along(x, axis, lambda a: _run("fft_r2c", _resize(a, length),
                                          (a.shape[0], length // 2 + 1, a.shape[2]),
                                          _REAL[a.dtype], forward, scale))


def _c2r_length(x: NDArray, axis: int, n: Optional[int], where: str) -> int:
    """The real output's length along axis: n, or 2 * (m - 1) for m half-spectrum values."""
    if n is not None:
        return _length(n, "n", where)
    length = 2 * (x.shape[axis] - 1)
    if length < 1:
        raise ValueError("%s: x has %d element%s along axis %d, which gives an output "
                         "length of %d; pass n >= 1" % (where, x.shape[axis], "" if
                                                        x.shape[axis] == 1 else "s",
                                                        axis, length))
    return length


def _c2r(x: NDArray, axis: int, n: Optional[int], norm: str, forward: builtins.bool,
         where: str) -> NDArray:
    length = _c2r_length(x, axis, n, where)
    scale = _scale(norm, length, forward)
    return _along(x, axis, lambda a: _run("fft_c2r", _resize(a, length // 2 + 1),
                                          (a.shape[0], length, a.shape[2]), _COMPLEX[a.dtype],
                                          forward, scale))


# --- one axis -------------------------------------------------------------------------------

def fft(x: NDArray, /, *, n: Optional[int] = None, axis: int = -1,
        norm: str = "backward") -> NDArray:
    """The one-dimensional discrete Fourier transform along ``axis``.

    Parameters
    ----------
    x : NDArray
        float32/complex64 (complex64 result) or float64/complex128 (complex128 result).
    n : int, optional
        The transform's length: ``x`` is truncated or zero-padded to it along ``axis``.
    axis : int
        The axis transformed (default the last).
    norm : {"backward", "ortho", "forward"}
        Which direction is scaled: by nothing here ("backward"), 1/sqrt(n), or 1/n.

    Returns
    -------
    NDArray
        Complex, ``x``'s shape with ``n`` along ``axis``, on ``x``'s device.
    """
    x = _require(x, "fft")
    norm, axis = _norm(norm, "fft"), _axis(axis, x.ndim, "fft")
    return _c2c(_complex_input(x, "fft"), axis, n, norm, True, "fft")


def ifft(x: NDArray, /, *, n: Optional[int] = None, axis: int = -1,
         norm: str = "backward") -> NDArray:
    """The inverse of :func:`fft` (``norm="backward"`` scales by 1/n here); arguments as in fft.
    """
    x = _require(x, "ifft")
    norm, axis = _norm(norm, "ifft"), _axis(axis, x.ndim, "ifft")
    return _c2c(_complex_input(x, "ifft"), axis, n, norm, False, "ifft")


def rfft(x: NDArray, /, *, n: Optional[int] = None, axis: int = -1,
         norm: str = "backward") -> NDArray:
    """The FFT of real ``x`` (float32 or float64) along ``axis``: the ``n // 2 + 1`` values of
    non-negative frequency (the rest is their conjugate). Other arguments as in :func:`fft`."""
    x = _require(x, "rfft")
    norm, axis = _norm(norm, "rfft"), _axis(axis, x.ndim, "rfft")
    return _r2c(_real_input(x, "rfft"), axis, n, norm, True, "rfft")


def irfft(x: NDArray, /, *, n: Optional[int] = None, axis: int = -1,
          norm: str = "backward") -> NDArray:
    """The inverse of :func:`rfft`: a real signal of length ``n`` (default ``2 * (m - 1)`` for
    ``m`` values along ``axis``) from its half spectrum; ``x`` is truncated or zero-padded to
    ``n // 2 + 1`` values. The imaginary parts of the zero (and, for even n, the Nyquist)
    frequency are ignored."""
    x = _require(x, "irfft")
    norm, axis = _norm(norm, "irfft"), _axis(axis, x.ndim, "irfft")
    return _c2r(_complex_input(x, "irfft"), axis, n, norm, False, "irfft")


def hfft(x: NDArray, /, *, n: Optional[int] = None, axis: int = -1,
         norm: str = "backward") -> NDArray:
    """The FFT of a signal with Hermitian symmetry, given by its first half ``x`` (as
    :func:`irfft` reads it): a real result of length ``n`` (default ``2 * (m - 1)``)."""
    x = _require(x, "hfft")
    norm, axis = _norm(norm, "hfft"), _axis(axis, x.ndim, "hfft")
    return _c2r(_complex_input(x, "hfft"), axis, n, norm, True, "hfft")


def ihfft(x: NDArray, /, *, n: Optional[int] = None, axis: int = -1,
          norm: str = "backward") -> NDArray:
    """The inverse of :func:`hfft`: the ``n // 2 + 1`` values of the half spectrum of real ``x``
    (float32 or float64) under the inverse transform."""
    x = _require(x, "ihfft")
    norm, axis = _norm(norm, "ihfft"), _axis(axis, x.ndim, "ihfft")
    return _r2c(_real_input(x, "ihfft"), axis, n, norm, False, "ihfft")


# --- several axes ---------------------------------------------------------------------------

def _axes_and_sizes(x: NDArray, s: Optional[Sequence[int]], axes: Optional[Sequence[int]],
                    where: str) -> Tuple[List[int], List[Optional[int]]]:
    """The axes to transform and the length along each (None: keep x's), as the standard and
    NumPy read s and axes: axes default to every axis, or the last len(s) when s is given; -1 in
    s keeps that axis's length."""
    if s is not None and (isinstance(s, (str, bytes)) or not isinstance(s, Sequence)):
        raise TypeError("%s: s must be a sequence of integers, got %s" % (where, type(s).__name__))
    if axes is not None and (isinstance(axes, (str, bytes)) or not isinstance(axes, Sequence)):
        raise TypeError("%s: axes must be a sequence of integers, got %s"
                        % (where, type(axes).__name__))
    if axes is None:
        count = x.ndim if s is None else len(s)
        if count > x.ndim:
            raise ValueError("%s: s has %d entries but x has only %d dimensions"
                             % (where, count, x.ndim))
        resolved = list(range(x.ndim - count, x.ndim))
    else:
        resolved = [_axis(a, x.ndim, where) for a in axes]
    if len(set(resolved)) != len(resolved):
        raise ValueError("%s: axes must be unique, got %s" % (where, list(axes or resolved)))
    if s is None:
        return resolved, [None] * len(resolved)
    if len(s) != len(resolved):
        raise ValueError("%s: s and axes must have the same length, got %d and %d"
                         % (where, len(s), len(resolved)))
    sizes: List[Optional[int]] = []
    for v in s:
        if not isinstance(v, builtins.bool) and hasattr(v, "__index__") and operator.index(v) == -1:
            sizes.append(None)
        else:
            sizes.append(_length(v, "every entry of s", where))
    return resolved, sizes


# --- several axes: adjacent axes as one _nd primitive call ------------------------------------

_MAX_RANK = 3  # the _nd primitives' k (cuFFT's plans go to rank 3)


def _lengths(x: NDArray, axes: Sequence[int], sizes: Sequence[Optional[int]],
             where: str) -> List[int]:
    """The transform length along each axis (x's where the size is None), each >= 1."""
    lengths = [x.shape[a] if n is None else n for a, n in zip(axes, sizes)]
    for a, n in zip(axes, lengths):
        if n < 1:
            raise ValueError("%s: the transformed axis %d has length 0; pass n >= 1" % (where, a))
    return lengths


def _resize_axes(x: NDArray, axes: Sequence[int], lengths: Sequence[int]) -> NDArray:
    """x zero-padded or truncated to lengths along axes (before any transform: padding along one
    axis commutes with a transform along another)."""
    for a, n in zip(axes, lengths):
        if x.shape[a] != n:
            x = _along(x, a, lambda c, n=n: _resize(c, n))
    return x


def _has_nd(op: str, x: NDArray) -> builtins.bool:
    """Whether x's device has the _nd form of op (a backend without it runs one axis at a time,
    on the device, rather than every axis on the host)."""
    return has_kernel(op + "_nd", x.ctx)


def _block(op: str, x: NDArray, first: int, last: int, out_last: int, out_dtype: np.dtype,
           norm: str, forward: builtins.bool, full_last: int) -> NDArray:
    """The _nd primitive op over the adjacent axes first..last of x, seen as the compact
    (outer, n_first, ..., n_last, inner); out_last is the output's length along last, full_last
    the transform's (the real side's for the real forms)."""
    outer = int(np.prod(x.shape[:first], dtype=np.int64))
    inner = int(np.prod(x.shape[last + 1:], dtype=np.int64))
    lengths = tuple(x.shape[first:last]) + (full_last,)
    scale = 1.0
    for n in lengths:
        scale *= _scale(norm, n, forward)
    compact = x if x.is_contiguous else x.copy()
    a = compact.reshape((outer,) + tuple(x.shape[first:last + 1]) + (inner,))
    y = _run(op + "_nd", a, (outer,) + tuple(x.shape[first:last]) + (out_last, inner), out_dtype,
             forward, scale)
    return y.reshape(x.shape[:last] + (out_last,) + x.shape[last + 1:])


def _runs(axes: Sequence[int]) -> List[Tuple[int, int]]:
    """The axes (distinct) as (first, last) runs of adjacent axes at most _MAX_RANK long, the
    last axes first."""
    runs: List[Tuple[int, int]] = []
    for a in sorted(axes, reverse=True):
        if runs and runs[-1][0] == a + 1 and runs[-1][1] - a < _MAX_RANK:
            runs[-1] = (a, runs[-1][1])
        else:
            runs.append((a, a))
    return runs


def _c2c_axes(y: NDArray, axes: Sequence[int], norm: str, forward: builtins.bool,
              where: str) -> NDArray:
    """The complex transform over axes (already of their lengths): a run of adjacent axes is one
    fft_c2c_nd call where the device has it, else one fft_c2c call per axis."""
    nd = _has_nd("fft_c2c", y)
    for first, last in _runs(axes):
        if nd and first < last:
            y = _block("fft_c2c", y, first, last, y.shape[last], y.dtype, norm, forward,
                       y.shape[last])
        else:
            for a in range(last, first - 1, -1):
                y = _c2c(y, a, None, norm, forward, where)
    return y


def _real_block(last: int, others: Sequence[int]) -> int:
    """The first axis of the _nd block of a real transform along `last`: the axes just before it
    that are transformed too, at most _MAX_RANK in all."""
    first = last
    while first - 1 in others and last - first + 1 < _MAX_RANK:
        first -= 1
    return first


def _c2c_n(x: NDArray, s: Any, axes: Any, norm: Any, forward: builtins.bool,
           where: str) -> NDArray:
    x = _require(x, where)
    norm = _norm(norm, where)
    resolved, sizes = _axes_and_sizes(x, s, axes, where)
    y = _complex_input(x, where)
    y = _resize_axes(y, resolved, _lengths(y, resolved, sizes, where))
    y = _c2c_axes(y, resolved, norm, forward, where)
    return y.copy() if y is x else y  # no axes: a new array all the same


def fftn(x: NDArray, /, *, s: Optional[Sequence[int]] = None,
         axes: Optional[Sequence[int]] = None, norm: str = "backward") -> NDArray:
    """The n-dimensional FFT over ``axes`` (default every axis, or the last ``len(s)``), each
    truncated or zero-padded to the matching entry of ``s`` (-1: keep). Dtypes as :func:`fft`."""
    return _c2c_n(x, s, axes, norm, True, "fftn")


def ifftn(x: NDArray, /, *, s: Optional[Sequence[int]] = None,
          axes: Optional[Sequence[int]] = None, norm: str = "backward") -> NDArray:
    """The inverse of :func:`fftn`; arguments as there."""
    return _c2c_n(x, s, axes, norm, False, "ifftn")


def rfftn(x: NDArray, /, *, s: Optional[Sequence[int]] = None,
          axes: Optional[Sequence[int]] = None, norm: str = "backward") -> NDArray:
    """The n-dimensional FFT of real ``x``: :func:`rfft` over the last of ``axes``, then
    :func:`fft` over the others. Arguments as in :func:`fftn`."""
    x = _real_input(_require(x, "rfftn"), "rfftn")
    norm = _norm(norm, "rfftn")
    resolved, sizes = _axes_and_sizes(x, s, axes, "rfftn")
    if not resolved:
        raise ValueError("rfftn: axes must name at least one axis (the real transform's)")
    y = _resize_axes(x, resolved, _lengths(x, resolved, sizes, "rfftn"))
    last = resolved[-1]
    first = _real_block(last, resolved[:-1]) if _has_nd("fft_r2c", y) else last
    if first < last:  # the real axis and the transformed ones just before it: one call
        y = _block("fft_r2c", y, first, last, y.shape[last] // 2 + 1, _REAL[y.dtype], norm, True,
                   y.shape[last])
    else:
        y = _r2c(y, last, None, norm, True, "rfftn")
    return _c2c_axes(y, [a for a in resolved[:-1] if not first <= a <= last], norm, True,
                     "rfftn")


def irfftn(x: NDArray, /, *, s: Optional[Sequence[int]] = None,
           axes: Optional[Sequence[int]] = None, norm: str = "backward") -> NDArray:
    """The inverse of :func:`rfftn`: :func:`ifft` over all but the last of ``axes``, then
    :func:`irfft` over the last (length ``s[-1]``, default ``2 * (m - 1)``)."""
    x = _complex_input(_require(x, "irfftn"), "irfftn")
    norm = _norm(norm, "irfftn")
    resolved, sizes = _axes_and_sizes(x, s, axes, "irfftn")
    if not resolved:
        raise ValueError("irfftn: axes must name at least one axis (the real transform's)")
    last = resolved[-1]
    length = _c2r_length(x, last, sizes[-1], "irfftn")
    lengths = _lengths(x, resolved[:-1], sizes[:-1], "irfftn") + [length // 2 + 1]
    y = _resize_axes(x, resolved, lengths)
    first = _real_block(last, resolved[:-1]) if _has_nd("fft_c2r", y) else last
    y = _c2c_axes(y, [a for a in resolved[:-1] if not first <= a <= last], norm, False, "irfftn")
    if first < last:  # the real axis and the transformed ones just before it: one call
        return _block("fft_c2r", y, first, last, length, _COMPLEX[y.dtype], norm, False, length)
    return _c2r(y, last, length, norm, False, "irfftn")


# --- frequencies and shifts -----------------------------------------------------------------

def _frequencies(n: Any, d: Any, dtype: Any, device: Any, where: str,
                 half: builtins.bool) -> NDArray:
    n = _length(n, "n", where)
    if isinstance(d, builtins.bool) or not isinstance(d, (int, float, np.integer, np.floating)):
        raise TypeError("%s: d must be a real number, got %s" % (where, type(d).__name__))
    if d == 0:
        raise ValueError("%s: d (the sample spacing) must not be 0" % where)
    out_dtype = (np.dtype(np.float64) if dtype is None
                 else _dtypes._as_dtype(dtype, where + ": dtype"))
    if out_dtype not in _REAL:
        raise TypeError("%s: dtype must be a real floating-point dtype (float32 or float64), "
                        "got %s" % (where, out_dtype))
    ctx = _devices.device(device)  # None: the default device
    k = np.arange(n // 2 + 1) if half else np.concatenate(
        [np.arange((n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    values = (k / (n * float(d))).astype(out_dtype)
    return _core.array(values, ctx, out_dtype)


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> NDArray:
    """The sample frequencies of an FFT of length ``n`` with sample spacing ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (n * d)``, float64 unless ``dtype`` (a
    real floating dtype) says otherwise, on ``device`` (default: the default device)."""
    return _frequencies(n, d, dtype, device, "fftfreq", False)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> NDArray:
    """The non-negative sample frequencies of :func:`rfft` of length ``n``:
    ``[0, 1, ..., n // 2] / (n * d)``; arguments as in :func:`fftfreq`."""
    return _frequencies(n, d, dtype, device, "rfftfreq", True)


def _shift(x: Any, axes: Any, where: str, sign: int) -> NDArray:
    if not isinstance(x, NDArray):
        raise TypeError("%s: x must be an NDArray, got %s" % (where, type(x).__name__))
    if axes is None:
        resolved = list(range(x.ndim))
    elif hasattr(axes, "__index__") and not isinstance(axes, builtins.bool):
        resolved = [_axis(axes, x.ndim, where)]
    elif isinstance(axes, Sequence) and not isinstance(axes, (str, bytes)):
        resolved = [_axis(a, x.ndim, where) for a in axes]
    else:
        raise TypeError("%s: axes must be an integer or a sequence of integers, got %s"
                        % (where, type(axes).__name__))
    if not resolved or x.size == 0:
        return x.copy()
    from ._manipulation_api import roll  # the package's roll (a gather per axis)
    shifts = [sign * (x.shape[a] // 2) for a in resolved]
    return roll(x, tuple(shifts), axis=tuple(resolved))


def fftshift(x: NDArray, /, *, axes: Any = None) -> NDArray:
    """The zero frequency moved to the middle: ``x`` rolled by ``n // 2`` along each of ``axes``
    (default every axis)."""
    return _shift(x, axes, "fftshift", 1)


def ifftshift(x: NDArray, /, *, axes: Any = None) -> NDArray:
    """The inverse of :func:`fftshift`: rolled by ``-(n // 2)`` along each of ``axes``."""
    return _shift(x, axes, "ifftshift", -1)
