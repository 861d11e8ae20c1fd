"""The array API's creation functions that views compose: ``eye`` (zeros, then its diagonal, a
strided view, set to one), ``tril``/``triu`` (rows copied as views), ``meshgrid`` (broadcast views
made compact), and ``linspace`` (made on the host from its two scalars, as ``arange`` is, and
copied once)."""
from __future__ import annotations

import builtins
from typing import Any, List, Optional, Union

import numpy as np

from . import _core
from ._core import DLContext, NDArray
from ._creation_api import zeros
from ._devices import device as _device
from ._manipulation_api import (_array, _int, _same_device, broadcast_to,
                                reshape)

DeviceLike = Union[DLContext, str]


def eye(n_rows: int, n_cols: Optional[int] = None, /, *, k: int = 0, dtype: Any = None,
        device: Optional[DeviceLike] = None) -> NDArray:
    """A 2-D array with ones on diagonal ``k`` (0 the main, > 0 above, < 0 below), else zeros.

    Parameters
    ----------
    n_rows, n_cols : int
        The extents (n_cols defaults to n_rows).
    k : int
        The diagonal.
    dtype : dtype, optional
        Default float64.
    device : DLContext or str, optional
        Default: ``dlarray.default_device()``.

    Returns
    -------
    NDArray
    """
    n = _int(n_rows, "eye", "n_rows")
    m = n if n_cols is None else _int(n_cols, "eye", "n_cols")
    k = _int(k, "eye", "k")
    if n < 0 or m < 0:
        raise ValueError("eye: n_rows and n_cols must not be negative, got %d and %d" % (n, m))
    out = zeros((n, m), dtype=np.float64 if dtype is None else dtype, device=device)
    row, col = (0, k) if k >= 0 else (-k, 0)
    length = max(0, min(n - row, m - col))
    if length:
        out._view([length], [m + 1], row * m + col)[...] = 1
    return out


def _triangle(x: NDArray, k: Any, fn: str, lower: bool) -> NDArray:
    x = _array(x, fn)
    if x.ndim < 2:
        raise ValueError("%s: x must have at least 2 dimensions, got %d" % (fn, x.ndim))
    k = _int(k, fn, "k")
    n, m = x.shape[-2], x.shape[-1]
    out = zeros(x.shape, dtype=x.dtype, device=x.ctx)
    # Row i keeps columns [0, i + k] (tril) or [i + k, m) (triu). Rows kept whole, or not at
    # all, go in one block; the rest (at most min(n, m) rows) one by one.
    for i in range(n):
        lo, hi = (0, min(m, max(0, i + k + 1))) if lower else (min(m, max(0, i + k)), m)
        if hi <= lo:
            continue
        j = i + 1
        if hi - lo == m:  # whole rows: extend the block while they stay whole
            while j < n and (lower and j + k + 1 >= m or not lower and j + k <= 0):
                j += 1
        out[..., i:j, lo:hi] = x[..., i:j, lo:hi]
    return out


def tril(x: NDArray, /, *, k: int = 0) -> NDArray:
    """x's matrices with the elements above a diagonal set to zero.

    Parameters
    ----------
    x : NDArray
        At least 2-D (a stack of matrices).
    k : int
        The diagonal kept last: 0 the main, > 0 above it, < 0 below.

    Returns
    -------
    NDArray
        A new array.
    """
    return _triangle(x, k, "tril", True)


def triu(x: NDArray, /, *, k: int = 0) -> NDArray:
    """x's matrices with the elements below a diagonal set to zero.

    Parameters
    ----------
    x : NDArray
        At least 2-D (a stack of matrices).
    k : int
        The diagonal kept first: 0 the main, > 0 above it, < 0 below.

    Returns
    -------
    NDArray
        A new array.
    """
    return _triangle(x, k, "triu", False)


def meshgrid(*arrays: NDArray, indexing: str = "xy") -> List[NDArray]:
    """Coordinate matrices from 1-D arrays.

    Parameters
    ----------
    *arrays : NDArray
        1-D, on one device.
    indexing : {"xy", "ij"}
        "ij": each result has the shape ``(len(a0), len(a1), ...)``; "xy" (default): the first
        two extents swapped (Cartesian).

    Returns
    -------
    list of NDArray
        New compact arrays, one per input, in its dtype.
    """
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: indexing must be 'xy' or 'ij', got %r" % (indexing,))
    arrays = tuple(_array(a, "meshgrid", "arrays[%d]" % i) for i, a in enumerate(arrays))
    _same_device(arrays, "meshgrid")
    for i, a in enumerate(arrays):
        if a.ndim != 1:
            raise ValueError("meshgrid: arrays[%d] must be 1-D, got shape %s" % (i, a.shape))
    shape = [a.shape[0] for a in arrays]
    swap = indexing == "xy" and len(arrays) >= 2
    if swap:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrays):
        axis = {0: 1, 1: 0}.get(i, i) if swap else i
        lead = [1] * len(shape)
        lead[axis] = a.shape[0]
        out.append(broadcast_to(reshape(a, lead), tuple(shape)).copy())
    return out


def linspace(start: Union[int, float, complex], stop: Union[int, float, complex], /, num: int,
             *, dtype: Any = None, device: Optional[DeviceLike] = None,
             endpoint: builtins.bool = True) -> NDArray:
    """``num`` evenly spaced values from start to stop (included when ``endpoint``).

    Parameters
    ----------
    start, stop : int, float or complex
    num : int
        How many (>= 0).
    dtype : dtype, optional
        Default: complex128 when start or stop is complex, else float64.
    device : DLContext or str, optional
        Default: ``dlarray.default_device()``.
    endpoint : bool

    Returns
    -------
    NDArray
    """
    for name, v in (("start", start), ("stop", stop)):
        if isinstance(v, builtins.bool) or not isinstance(v, (int, float, complex)):
            raise TypeError("linspace: %s must be an int, float or complex, got %s"
                            % (name, type(v).__name__))
    num = _int(num, "linspace", "num")
    if num < 0:
        raise ValueError("linspace: num must not be negative, got %d" % num)
    if not isinstance(endpoint, (builtins.bool, np.bool_)):
        raise TypeError("linspace: endpoint must be a bool, got %s" % type(endpoint).__name__)
    is_complex = isinstance(start, complex) or isinstance(stop, complex)
    if dtype is None:
        dtype = np.complex128 if is_complex else np.float64
    dt = np.dtype(_core.parse_dtype(dtype))
    if is_complex and dt.kind != "c":
        raise TypeError("linspace: complex start or stop needs a complex dtype, got %s" % dt)
    values = np.linspace(start, stop, num, endpoint=builtins.bool(endpoint),
                         dtype=np.complex128 if is_complex else np.float64)
    return _core.array(values.astype(dt), _device(device), dt)

