"""The array API standard's creation functions over the existing kernels: ``zeros``, ``ones``,
``full`` (an empty array set by ``array_set``, or copied from the host for a complex value),
``arange`` (made on the host, copied once), and ``empty_like``, ``zeros_like``, ``ones_like``,
``full_like``. Unlike the seed's ``empty``/``array`` (float32 by default, ``ctx=``), these take
the standard's ``device=`` keyword and its default dtypes (float64, int64, complex128, bool for
Python floats, ints, complex numbers and bools).
"""
from __future__ import annotations

import builtins
import math
from typing import Any, Optional, Sequence, SupportsIndex, Union

import numpy as np

from . import _core
from ._core import DLContext, NDArray
from ._devices import device as _device

DeviceLike = Union[DLContext, str]
ShapeLike = Union[SupportsIndex, Sequence[SupportsIndex]]
Scalar = Union[builtins.bool, int, float, complex]


def _default_dtype(value: Any, where: str) -> np.dtype:
    """The standard's default dtype for a Python scalar."""
    if isinstance(value, builtins.bool):
        return np.dtype(np.bool_)
    if isinstance(value, int):
        return np.dtype(np.int64)
    if isinstance(value, float):
        return np.dtype(np.float64)
    if isinstance(value, complex):
        return np.dtype(np.complex128)
    raise TypeError("%s: fill_value must be a bool, int, float or complex, got %s"
                    % (where, type(value).__name__))


def _dtype(dtype: Any) -> Optional[np.dtype]:
    return None if dtype is None else np.dtype(_core.parse_dtype(dtype))


def full(shape: ShapeLike, fill_value: Scalar, *, dtype: Any = None,
         device: Optional[DeviceLike] = None) -> NDArray:
    """An array of ``shape`` with every element ``fill_value``.

    Parameters
    ----------
    shape : int or sequence of int
        Extents (0 allowed).
    fill_value : bool, int, float or complex
        The value, converted to ``dtype`` as NumPy converts it (an int out of an integer dtype's
        range raises OverflowError; complex into a real dtype raises TypeError).
    dtype : dtype, optional
        Default: bool, int64, float64 or complex128 by the type of ``fill_value``.
    device : DLContext or str, optional
        Default: ``dlarray.default_device()``.

    Returns
    -------
    NDArray
    """
    if dtype is None:
        dtype = _default_dtype(fill_value, "full")
    out = _core.empty(shape, _device(device), _dtype(dtype))
    out[...] = fill_value
    return out


def zeros(shape: ShapeLike, *, dtype: Any = None,
          device: Optional[DeviceLike] = None) -> NDArray:
    """An array of zeros.

    Parameters
    ----------
    shape : int or sequence of int
        Extents (0 allowed).
    dtype : dtype, optional
        Default float64.
    device : DLContext or str, optional
        Default: ``dlarray.default_device()``.

    Returns
    -------
    NDArray
    """
    return full(shape, 0, dtype=np.float64 if dtype is None else dtype, device=device)


def ones(shape: ShapeLike, *, dtype: Any = None,
         device: Optional[DeviceLike] = None) -> NDArray:
    """An array of ones.

    Parameters
    ----------
    shape : int or sequence of int
        Extents (0 allowed).
    dtype : dtype, optional
        Default float64.
    device : DLContext or str, optional
        Default: ``dlarray.default_device()``.

    Returns
    -------
    NDArray
    """
    return full(shape, 1, dtype=np.float64 if dtype is None else dtype, device=device)


def _like(x: Any, where: str) -> NDArray:
    if not isinstance(x, NDArray):
        raise TypeError("%s: x must be an NDArray, got %s" % (where, type(x).__name__))
    return x


def empty_like(x: NDArray, /, *, dtype: Any = None,
               device: Optional[DeviceLike] = None) -> NDArray:
    """An uninitialised array of x's shape.

    Parameters
    ----------
    x : NDArray
        Gives the shape, and the dtype and device unless they are given.
    dtype : dtype, optional
        Default: x's.
    device : DLContext or str, optional
        Default: x's.

    Returns
    -------
    NDArray
    """
    x = _like(x, "empty_like")
    return _core.empty(x.shape, x.ctx if device is None else _device(device),
                       x.dtype if dtype is None else _dtype(dtype))


def full_like(x: NDArray, /, fill_value: Scalar, *, dtype: Any = None,
              device: Optional[DeviceLike] = None) -> NDArray:
    """An array of x's shape with every element ``fill_value``.

    Parameters
    ----------
    x : NDArray
        Gives the shape, and the dtype and device unless they are given.
    fill_value : bool, int, float or complex
        The value, converted to the dtype as in :func:`full`.
    dtype : dtype, optional
        Default: x's.
    device : DLContext or str, optional
        Default: x's.

    Returns
    -------
    NDArray
    """
    x = _like(x, "full_like")
    return full(x.shape, fill_value, dtype=x.dtype if dtype is None else dtype,
                device=x.ctx if device is None else device)


def zeros_like(x: NDArray, /, *, dtype: Any = None,
               device: Optional[DeviceLike] = None) -> NDArray:
    """An array of zeros of x's shape.

    Parameters
    ----------
    x : NDArray
        Gives the shape, and the dtype and device unless they are given.
    dtype : dtype, optional
        Default: x's.
    device : DLContext or str, optional
        Default: x's.

    Returns
    -------
    NDArray
    """
    return full_like(x, 0, dtype=dtype, device=device)


def ones_like(x: NDArray, /, *, dtype: Any = None,
              device: Optional[DeviceLike] = None) -> NDArray:
    """An array of ones of x's shape.

    Parameters
    ----------
    x : NDArray
        Gives the shape, and the dtype and device unless they are given.
    dtype : dtype, optional
        Default: x's.
    device : DLContext or str, optional
        Default: x's.

    Returns
    -------
    NDArray
    """
    return full_like(x, 1, dtype=dtype, device=device)


def arange(start: Union[int, float], /, stop: Optional[Union[int, float]] = None,
           step: Union[int, float] = 1, *, dtype: Any = None,
           device: Optional[DeviceLike] = None) -> NDArray:
    """Evenly spaced values in [start, stop): ``ceil((stop - start) / step)`` of them.

    Parameters
    ----------
    start : int or float
        The first value; with ``stop`` None, the end (and the start is 0).
    stop : int or float, optional
        The end, excluded.
    step : int or float
        The spacing, not 0.
    dtype : dtype, optional
        Default: int64 when start, stop and step are ints, else float64.
    device : DLContext or str, optional
        Default: ``dlarray.default_device()``.

    Returns
    -------
    NDArray
        1-D.

    Raises
    ------
    TypeError
        An argument that is not an int or a float.
    ValueError
        ``step`` is 0.
    """
    if stop is None:
        start, stop = 0, start
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, (builtins.bool, complex)) or not isinstance(v, (int, float)):
            raise TypeError("arange: %s must be an int or a float, got %s"
                            % (name, type(v).__name__))
    if step == 0:
        raise ValueError("arange: step must not be 0")
    if dtype is None:
        ints = all(isinstance(v, int) for v in (start, stop, step))
        dtype = np.int64 if ints else np.float64
    n = max(0, math.ceil((stop - start) / step))
    # start + i * step in float64 (ints exactly), as NumPy computes it, then one copy over.
    values = start + np.arange(n, dtype=np.int64 if isinstance(step, int) and isinstance(
        start, int) else np.float64) * step
    return _core.array(np.asarray(values).astype(_dtype(dtype)), _device(device), _dtype(dtype))
