"""Python's side of the four indexing primitives the core declares (``runtime/src/index_ops.cc``;
kernels in every backend's ``gather.*`` and ``sort.*``), and the small helpers the indexing,
searching, sorting and set functions share:

- ``gather``: ``out[o, j, i] = x[o, indices[j], i]`` (int64 indices, negative from the end; an
  index out of bounds is detected on the device and reported, never read), raised here as
  IndexError;
- ``scatter``: the reverse assignment into an existing array;
- ``nonzero``: a bool mask's count and flat positions;
- ``argsort``: a stable order of each row (NaN last; descending puts NaN first).
"""
from __future__ import annotations

import builtins
import operator
from typing import Any, Optional, Tuple

import numpy as np

from . import _core, ops
from ._core import NDArray

_INT64 = np.dtype(np.int64)
_BOOL = np.dtype(np.bool_)


def _require_array(x: Any, name: str, where: str) -> NDArray:
    if not isinstance(x, NDArray):
        raise TypeError("%s: %s must be an NDArray, got %s" % (where, name, type(x).__name__))
    return x


def _same_device(where: str, **arrays: NDArray) -> None:
    first_name, ctx = "", None
    for name, a in arrays.items():
        if ctx is None:
            first_name, ctx = name, a.ctx
        elif a.ctx != ctx:
            raise ValueError("%s: %s is on %s but %s is on %s; move one with to_device"
                             % (where, first_name, ctx, name, a.ctx))


def _compact(a: NDArray) -> NDArray:
    return a if a.is_contiguous else a.copy()


def _axis(axis: Any, ndim: int, where: str) -> int:
    if isinstance(axis, builtins.bool) or not hasattr(axis, "__index__"):
        raise TypeError("%s: axis must be an integer, got %s" % (where, type(axis).__name__))
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise IndexError("%s: axis %d is out of bounds for an array of %d dimension%s"
                         % (where, a, ndim, "" if ndim == 1 else "s"))
    return a % ndim


def _is_integer_dtype(dt: np.dtype) -> builtins.bool:
    return dt.kind in "iu"


def _as_index_array(idx: NDArray, where: str) -> NDArray:
    """Integer indices as compact int64."""
    if not _is_integer_dtype(idx.dtype):
        raise IndexError("%s: indices must have an integer dtype, got %s" % (where, idx.dtype))
    return _compact(idx if idx.dtype == _INT64 else idx.astype(_INT64))


def _arange(n: int, ctx: Any) -> NDArray:
    return _core.array(np.arange(n, dtype=np.int64), ctx, _INT64)


def _index_error(err: ValueError, where: str, axis: Optional[int]) -> Exception:
    """A kernel's out-of-bounds report as NumPy's IndexError (other errors unchanged)."""
    msg = str(err)
    at = msg.find("index ")
    if "out of bounds" not in msg or at < 0:
        return err
    text = msg[at:].replace(" for size ", " for axis %d with size " % axis
                            if axis is not None else " for size ")
    return IndexError("%s: %s" % (where, text))


def _gather(x3: NDArray, idx: NDArray, where: str, axis: Optional[int]) -> NDArray:
    """ops.gather with its report turned into IndexError."""
    out = _core.empty((x3.shape[0], idx.shape[0], x3.shape[2]), x3.ctx, x3.dtype)
    try:
        ops.gather(x3, idx, out)
    except ValueError as err:
        raise _index_error(err, where, axis) from None
    return out


def _scatter(values3: NDArray, idx: NDArray, out3: NDArray, where: str,
             axis: Optional[int]) -> None:
    try:
        ops.scatter(values3, idx, out3)
    except ValueError as err:
        raise _index_error(err, where, axis) from None


def _normalized(idx: NDArray, n: int, where: str, axis: Optional[int]) -> NDArray:
    """idx (int64, any shape) with negative entries counted from the end, each checked against n
    (a gather from arange(n): the bounds check of the device, no host round trip)."""
    flat = _compact(idx).reshape(idx.size)
    if idx.size == 0:
        return flat.reshape(idx.shape)
    table = _arange(n, idx.ctx).reshape(1, n, 1)
    return _gather(table, flat, where, axis).reshape(idx.shape)


def _broadcast_shapes(*shapes: Tuple[int, ...]) -> Tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                         "with shapes %s" % " ".join(str(s) for s in shapes)) from None


def _broadcast(a: NDArray, shape: Tuple[int, ...]) -> NDArray:
    if a.shape == shape:
        return _compact(a)
    out = _core.empty(shape, a.ctx, a.dtype)
    ops.broadcast_to(_compact(a), out)
    return out


def _argsort_rows(rows: NDArray, descending: builtins.bool) -> NDArray:
    """ops.argsort of a compact (rows, n) array."""
    out = _core.empty(rows.shape, rows.ctx, _INT64)
    ops.argsort(rows, 1 if descending else 0, out)
    return out


def _flat_positions(mask: NDArray) -> NDArray:
    """The flat positions of the Trues of a compact bool mask (one count read back)."""
    out = _core.empty((mask.size + 1,), mask.ctx, _INT64)
    ops.nonzero(_compact(mask), out)
    count = out[0].item()
    return out[1:1 + count]
