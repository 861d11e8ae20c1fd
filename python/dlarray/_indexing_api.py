"""The array API standard's indexing, searching, sorting and set functions, composed from four
primitives every backend implements (declared in the core, ``runtime/src/index_ops.cc``):

- ``gather``: ``out[o, j, i] = x[o, indices[j], i]`` (int64 indices, negative from the end; an
  index out of bounds is detected on the device and reported, never read);
- ``scatter``: the reverse assignment into an existing array;
- ``nonzero``: a bool mask's count and flat positions;
- ``argsort``: a stable order of each row (NaN last; descending puts NaN first).

Everything here brings a call to those canonical shapes: ``take`` and ``take_along_axis``,
integer-array and boolean-mask indexing for ``x[key]`` and ``x[key] = value``, ``nonzero``,
``argsort``/``sort``, ``searchsorted`` and the four ``unique_*`` functions.
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any, NamedTuple, Optional, Tuple

import numpy as np

from . import _core, ops
from ._core import NDArray

_INT64 = np.dtype(np.int64)
_BOOL = np.dtype(np.bool_)


# --- Helpers ------------------------------------------------------------------------------


def _require_array(x: Any, name: str, where: str) -> NDArray:
    if not isinstance(x, NDArray):
        raise TypeError("%s: %s must be an NDArray, got %s" % (where, name, type(x).__name__))
    return x


def _same_device(where: str, **arrays: NDArray) -> None:
    items = list(arrays.items())
    first_name, first = items[0]
    for name, a in items[1:]:
        if a.ctx != first.ctx:
            raise ValueError("%s: %s is on %s but %s is on %s; move one with to_device"
                             % (where, first_name, first.ctx, name, a.ctx))


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
        return ops.gather(x3, idx, out)
    except ValueError as err:
        raise _index_error(err, where, axis) from None


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
    count = int(out[0:1].asnumpy()[0])
    return out[1:1 + count]


# --- take, take_along_axis ---------------------------------------------------------------


def take(x: NDArray, indices: NDArray, /, *, axis: Optional[int] = None) -> NDArray:
    """Elements of ``x`` at ``indices`` along ``axis`` (the standard's ``take``).

    Parameters
    ----------
    x : NDArray
        Any dtype.
    indices : NDArray
        1-D, integer dtype; negative entries count from the end.
    axis : int, optional
        Required when ``x`` has more than one dimension.

    Returns
    -------
    NDArray
        ``x.shape[:axis] + indices.shape + x.shape[axis + 1:]``, x's dtype, on x's device.

    Raises
    ------
    IndexError
        An index out of bounds, non-integer indices, ``axis`` out of range.
    TypeError, ValueError
        Non-arrays, indices not 1-D, missing axis, arrays on two devices.
    """
    x = _require_array(x, "x", "take")
    indices = _require_array(indices, "indices", "take")
    _same_device("take", x=x, indices=indices)
    if indices.ndim != 1:
        raise ValueError("take: indices must be 1-D, got shape %s" % (indices.shape,))
    if axis is None:
        if x.ndim > 1:
            raise ValueError("take: axis is required for an array of %d dimensions" % x.ndim)
        axis = 0
    if x.ndim == 0:
        raise IndexError("take: x is 0-d; it has no axis to take along")
    ax = _axis(axis, x.ndim, "take")
    idx = _as_index_array(indices, "take")
    outer = math.prod(x.shape[:ax])
    inner = math.prod(x.shape[ax + 1:])
    picked = _gather(_compact(x).reshape(outer, x.shape[ax], inner), idx, "take", ax)
    return picked.reshape(x.shape[:ax] + (idx.shape[0],) + x.shape[ax + 1:])


def take_along_axis(x: NDArray, indices: NDArray, /, *, axis: int = -1) -> NDArray:
    """``out[..., j, ...] = x[..., indices[..., j, ...], ...]`` along ``axis``.

    Parameters
    ----------
    x : NDArray
        At least 1-D.
    indices : NDArray
        Integer dtype, as many dimensions as ``x``; the other dimensions broadcast with x's.
    axis : int
        Default -1.

    Returns
    -------
    NDArray
        The broadcast shape with ``indices.shape[axis]`` along ``axis``.
    """
    x = _require_array(x, "x", "take_along_axis")
    indices = _require_array(indices, "indices", "take_along_axis")
    _same_device("take_along_axis", x=x, indices=indices)
    if x.ndim == 0 or indices.ndim != x.ndim:
        raise ValueError("take_along_axis: x and indices need the same number of dimensions "
                         "(at least 1), got %d and %d" % (x.ndim, indices.ndim))
    ax = _axis(axis, x.ndim, "take_along_axis")
    idx = _as_index_array(indices, "take_along_axis")
    xs, ks = list(x.shape), list(idx.shape)
    xs[ax] = ks[ax] = 1
    try:
        common = list(np.broadcast_shapes(tuple(xs), tuple(ks)))
    except ValueError:
        raise ValueError("take_along_axis: shapes %s and %s do not broadcast outside axis %d"
                         % (x.shape, indices.shape, ax)) from None
    out_shape = tuple(common[:ax] + [idx.shape[ax]] + common[ax + 1:])
    x_shape = tuple(common[:ax] + [x.shape[ax]] + common[ax + 1:])
    xb = _broadcast(x, x_shape)
    k = _normalized(_broadcast(idx, out_shape), x.shape[ax], "take_along_axis", ax)
    if k.size == 0:
        return _core.empty(out_shape, x.ctx, x.dtype)
    # flat = k * stride(axis) + the flat offset of every other coordinate
    base = np.zeros(out_shape, dtype=np.int64)
    strides = np.cumprod((x_shape[1:] + (1,))[::-1])[::-1]
    for d, n in enumerate(out_shape):
        if d != ax:
            shape = [1] * len(out_shape)
            shape[d] = n
            base = base + (np.arange(n, dtype=np.int64) * strides[d]).reshape(shape)
    flat = k * int(strides[ax]) + _core.array(base, x.ctx, _INT64)
    picked = _gather(xb.reshape(1, xb.size, 1), _compact(flat).reshape(flat.size),
                     "take_along_axis", ax)
    return picked.reshape(out_shape)


# --- nonzero, argsort, sort, searchsorted ------------------------------------------------


def nonzero(x: NDArray, /) -> Tuple[NDArray, ...]:
    """The indices of the non-zero (True) elements, one int64 array per dimension, in row-major
    order.

    Parameters
    ----------
    x : NDArray
        At least 1-D, any dtype (non-bool: compared with 0).

    Returns
    -------
    tuple of NDArray
        ``x.ndim`` int64 arrays of the same length.

    Raises
    ------
    ValueError
        For a 0-d array (the standard leaves it out; NumPy 2 refuses it too).
    """
    x = _require_array(x, "x", "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero: x is 0-d; use x[None] for a 1-D array")
    mask = x if x.dtype == _BOOL else x != 0
    flat = _compact(_flat_positions(mask))
    if x.ndim == 1:
        return (flat,)
    coords = []
    for d, n in enumerate(x.shape):
        shape = [1] * x.ndim
        shape[d] = n
        table = _broadcast(_arange(n, x.ctx).reshape(shape), x.shape)
        coords.append(_gather(table.reshape(1, x.size, 1), flat, "nonzero", d).reshape(flat.size)
                      if flat.size else flat.copy())
    return tuple(coords)


def _rows(x: NDArray, axis: int, where: str) -> Tuple[NDArray, list]:
    """x with `axis` last, compact, as (rows, n); and the permutation that put it there."""
    perm = [d for d in range(x.ndim) if d != axis] + [axis]
    moved = x if axis == x.ndim - 1 else x.transpose(perm)
    return _compact(moved).reshape(max(1, x.size // max(1, x.shape[axis])), x.shape[axis]), perm


def _restore(a: NDArray, shape: Tuple[int, ...], perm: list) -> NDArray:
    """The inverse of _rows: (rows, n) back to x's layout."""
    moved = a.reshape(tuple(shape[d] for d in perm))
    if perm == list(range(len(perm))):
        return moved
    return _compact(moved.transpose(list(np.argsort(perm))))


def _check_sortable(x: NDArray, where: str) -> None:
    if x.dtype.kind == "c":
        raise TypeError("%s: x must have a real dtype (complex numbers have no order), got %s"
                        % (where, x.dtype))


def argsort(x: NDArray, /, *, axis: int = -1, descending: builtins.bool = False,
            stable: builtins.bool = True) -> NDArray:
    """Indices (int64) that sort ``x`` along ``axis``; always stable.

    NaN sorts last ascending and first descending (descending is the reverse of sorting the
    reversed array, so equal elements keep their order).

    Parameters
    ----------
    x : NDArray
        A real dtype (complex raises TypeError).
    axis : int
        Default -1.
    descending : bool
        Default False.
    stable : bool
        Accepted for the standard; the sort is always stable.

    Returns
    -------
    NDArray
        int64, x's shape.

    Examples
    --------
    >>> import dlarray as xp
    >>> xp.argsort(xp.asarray(np.array([3.0, np.nan, 1.0, 3.0]))).asnumpy()
    array([2, 0, 3, 1])
    """
    x = _require_array(x, "x", "argsort")
    _check_sortable(x, "argsort")
    if x.ndim == 0:
        _axis(axis, 1, "argsort")
        return _core.array(np.zeros((), np.int64), x.ctx, _INT64)
    ax = _axis(axis, x.ndim, "argsort")
    rows, perm = _rows(x, ax, "argsort")
    if rows.size == 0:
        return _core.empty(x.shape, x.ctx, _INT64)
    order = _argsort_rows(rows, descending)
    return _restore(order, x.shape, perm)


def sort(x: NDArray, /, *, axis: int = -1, descending: builtins.bool = False,
         stable: builtins.bool = True) -> NDArray:
    """``x`` sorted along ``axis`` (stable; NaN last ascending, first descending).

    Parameters
    ----------
    x : NDArray
        A real dtype (complex raises TypeError).
    axis : int
        Default -1.
    descending : bool
        Default False.
    stable : bool
        Accepted for the standard; the sort is always stable.

    Returns
    -------
    NDArray
        x's shape and dtype.
    """
    x = _require_array(x, "x", "sort")
    _check_sortable(x, "sort")
    if x.ndim == 0:
        _axis(axis, 1, "sort")
        return x.copy()
    ax = _axis(axis, x.ndim, "sort")
    rows, perm = _rows(x, ax, "sort")
    if rows.size == 0:
        return x.copy()
    order = _argsort_rows(rows, descending)
    r, n = rows.shape
    flat = order.reshape(r * n)
    if r > 1:  # row r's positions start at r * n
        flat = _compact(order + _arange(r, x.ctx).reshape(r, 1) * n).reshape(r * n)
    values = _gather(rows.reshape(1, r * n, 1), flat, "sort", ax)
    return _restore(values.reshape(r, n), x.shape, perm)


def _inverse_permutation(perm: NDArray) -> NDArray:
    """inv[perm[j]] = j for a 1-D permutation."""
    n = perm.shape[0]
    inv = _core.empty((n,), perm.ctx, _INT64)
    if n:
        ops.scatter(_arange(n, perm.ctx).reshape(1, n, 1), perm, inv.reshape(1, n, 1))
    return inv


def searchsorted(x1: NDArray, x2: NDArray, /, *, side: str = "left",
                 sorter: Optional[NDArray] = None) -> NDArray:
    """Where ``x2``'s elements would be inserted into sorted 1-D ``x1`` (int64, x2's shape).

    ``side="left"``: the first suitable place; ``"right"``: the last. NaN counts as larger than
    every number (as sort orders it). Composed from argsort: x1 and x2 are sorted together, x2's
    elements placed before (left) or after (right) equal x1 elements by stability; an element's
    place in the merged order less its rank among x2's elements is its insertion point.

    Parameters
    ----------
    x1 : NDArray
        1-D, sorted ascending unless ``sorter`` is given; real dtype.
    x2 : NDArray
        The values to place, any shape; real dtype (both are compared in their promoted dtype).
    side : {"left", "right"}
    sorter : NDArray, optional
        Integer indices that sort ``x1``.

    Returns
    -------
    NDArray
        int64, x2's shape.

    Examples
    --------
    >>> import dlarray as xp
    >>> x1 = xp.asarray(np.array([1.0, 2.0, 2.0, 5.0]))
    >>> xp.searchsorted(x1, xp.asarray(np.array([2.0, 9.0])), side="right").asnumpy()
    array([3, 4])
    """
    x1 = _require_array(x1, "x1", "searchsorted")
    x2 = _require_array(x2, "x2", "searchsorted")
    _same_device("searchsorted", x1=x1, x2=x2)
    if x1.ndim != 1:
        raise ValueError("searchsorted: x1 must be 1-D, got shape %s" % (x1.shape,))
    if side not in ("left", "right"):
        raise ValueError("searchsorted: side must be 'left' or 'right', got %r" % (side,))
    _check_sortable(x1, "searchsorted")
    _check_sortable(x2, "searchsorted")
    if sorter is not None:
        sorter = _require_array(sorter, "sorter", "searchsorted")
        _same_device("searchsorted", x1=x1, sorter=sorter)
        if sorter.shape != x1.shape:
            raise ValueError("searchsorted: sorter must have x1's shape %s, got %s"
                             % (x1.shape, sorter.shape))
        x1 = take(x1, sorter)
    from ._operators import _promote
    dt = _promote(x1.dtype, x2.dtype)
    n1, n2 = x1.shape[0], x2.size
    if n2 == 0:
        return _core.empty(x2.shape, x2.ctx, _INT64)
    if n1 == 0:
        out = _core.empty(x2.shape, x2.ctx, _INT64)
        out[...] = 0
        return out
    both = _core.empty((n1 + n2,), x1.ctx, dt)
    first, second = (x2, x1) if side == "left" else (x1, x2)
    both[:first.size] = first.reshape(first.size).astype(dt)
    both[first.size:] = second.reshape(second.size).astype(dt)
    place = _inverse_permutation(_argsort_rows(both.reshape(1, n1 + n2), False).reshape(n1 + n2))
    x2_flat = _compact(x2.astype(dt)).reshape(1, n2)
    rank = _inverse_permutation(_argsort_rows(x2_flat, False).reshape(n2))
    start = 0 if side == "left" else n1
    return _compact(place[start:start + n2] - rank).reshape(x2.shape)


# --- unique_* ----------------------------------------------------------------------------


class UniqueAllResult(NamedTuple):
    values: NDArray
    indices: NDArray
    inverse_indices: NDArray
    counts: NDArray


class UniqueCountsResult(NamedTuple):
    values: NDArray
    counts: NDArray


class UniqueInverseResult(NamedTuple):
    values: NDArray
    inverse_indices: NDArray


def _unique(x: NDArray, where: str, inverse: builtins.bool):
    """(values, first positions in x, inverse or None, counts) of flattened x, by a stable sort:
    a value starts a group where it differs from its predecessor (NaN differs from NaN, so each
    NaN is its own group, as the standard asks)."""
    x = _require_array(x, "x", where)
    _check_sortable(x, where)
    n = x.size
    flat = _compact(x).reshape(1, n)
    if n == 0:
        empty = _core.empty((0,), x.ctx, _INT64)
        return (_core.empty((0,), x.ctx, x.dtype), empty,
                _core.empty(x.shape, x.ctx, _INT64), empty)
    order = _argsort_rows(flat, False).reshape(n)
    s = _gather(flat.reshape(1, n, 1), order, where, None).reshape(n)
    starts = _core.empty((n,), x.ctx, _BOOL)
    starts[0:1] = True
    if n > 1:
        ops.compare(s[1:], s[:-1], starts[1:], 1)
    pos = _compact(_flat_positions(starts))
    k = pos.shape[0]
    values = _gather(s.reshape(1, n, 1), pos, where, None).reshape(k)
    first = _gather(order.reshape(1, n, 1), pos, where, None).reshape(k)
    ends = _core.empty((k,), x.ctx, _INT64)
    ends[:k - 1] = pos[1:]
    ends[k - 1:] = n
    counts = ends - pos
    inv = None
    if inverse:
        # group of sorted element i: the last start <= i
        group = searchsorted(pos, _arange(n, x.ctx), side="right") - 1
        inv = _core.empty((n,), x.ctx, _INT64)
        ops.scatter(_compact(group).reshape(1, n, 1), order, inv.reshape(1, n, 1))
        inv = inv.reshape(x.shape)
    return values, first, inv, counts


def unique_values(x: NDArray, /) -> NDArray:
    """The distinct values of ``x`` (flattened), sorted; every NaN is distinct.

    Parameters
    ----------
    x : NDArray
        Any shape, real dtype.

    Returns
    -------
    NDArray
        1-D, x's dtype.
    """
    return _unique(x, "unique_values", False)[0]


def unique_counts(x: NDArray, /) -> UniqueCountsResult:
    """The distinct values of ``x`` and how often each occurs (int64).

    Parameters
    ----------
    x : NDArray
        Any shape, real dtype.

    Returns
    -------
    UniqueCountsResult
        ``values``, ``counts``.
    """
    values, _, _, counts = _unique(x, "unique_counts", False)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: NDArray, /) -> UniqueInverseResult:
    """The distinct values and, for each element of ``x``, the index of its value (x's shape).

    Parameters
    ----------
    x : NDArray
        Any shape, real dtype.

    Returns
    -------
    UniqueInverseResult
        ``values``, ``inverse_indices``.
    """
    values, _, inv, _ = _unique(x, "unique_inverse", True)
    return UniqueInverseResult(values, inv)


def unique_all(x: NDArray, /) -> UniqueAllResult:
    """Distinct values, the flat index of each one's first occurrence, the inverse indices and
    the counts.

    Parameters
    ----------
    x : NDArray
        Any shape, real dtype.

    Returns
    -------
    UniqueAllResult
        ``values``, ``indices``, ``inverse_indices``, ``counts``.
    """
    values, first, inv, counts = _unique(x, "unique_all", True)
    return UniqueAllResult(values, first, inv, counts)


# --- x[key] and x[key] = value with integer arrays and boolean masks ---------------------


def _advanced(key: Any) -> builtins.bool:
    items = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, NDArray) for k in items)


def _plan(x: NDArray, key: Any, where: str):
    """(positions, leading, result_shape): the flat positions (int64, 1-D) into x viewed as
    (prod(x.shape[:leading]), rest), for a boolean mask or a tuple of integer arrays and ints
    (the standard's subset) followed by full dimensions."""
    items = list(key) if isinstance(key, tuple) else [key]
    if items and items[-1] is Ellipsis:
        items.pop()
    for k in items:
        if isinstance(k, NDArray):
            _same_device(where, x=x, index=k)
    if len(items) == 1 and isinstance(items[0], NDArray) and items[0].dtype == _BOOL:
        mask = items[0]
        lead = x.shape[:mask.ndim]
        if mask.ndim > x.ndim or mask.shape != lead:
            raise IndexError("%s: boolean index of shape %s does not match the array's "
                             "leading dimensions %s" % (where, mask.shape, x.shape[:mask.ndim]))
        pos = _compact(_flat_positions(mask))
        return pos, mask.ndim, (pos.shape[0],) + x.shape[mask.ndim:]
    arrays = []
    for k in items:
        if isinstance(k, NDArray):
            if k.dtype == _BOOL:
                raise IndexError("%s: a boolean array index must be the only index" % where)
            arrays.append(_as_index_array(k, where))
        elif isinstance(k, builtins.bool) or not hasattr(k, "__index__"):
            raise IndexError("%s: with an array index, the other indices must be integers or "
                             "integer arrays, got %s" % (where, type(k).__name__))
        else:
            arrays.append(_core.array(np.array(operator.index(k), np.int64), x.ctx, _INT64))
    if len(arrays) > x.ndim:
        raise IndexError("%s: too many indices for an array of %d dimensions: %d were given"
                         % (where, x.ndim, len(arrays)))
    shape = _broadcast_shapes(*(a.shape for a in arrays))
    size = math.prod(shape)
    flat = _core.empty((size,), x.ctx, _INT64)
    flat[...] = 0
    step = 1
    for d in range(len(arrays) - 1, -1, -1):
        k = _normalized(_broadcast(arrays[d], shape), x.shape[d], where, d)
        if size:
            flat = flat + k.reshape(size) * step
        step *= x.shape[d]
    return _compact(flat), len(arrays), shape + x.shape[len(arrays):]


def getitem(x: NDArray, key: Any) -> NDArray:
    """x[key] for a key with an integer array or a boolean mask (see _plan)."""
    pos, lead, shape = _plan(x, key, "index")
    outer = math.prod(x.shape[:lead])
    rest = math.prod(x.shape[lead:])
    if pos.shape[0] == 0 or rest == 0:
        return _core.empty(shape, x.ctx, x.dtype)
    return _gather(_compact(x).reshape(1, outer, rest), pos, "index", None).reshape(shape)


def setitem(x: NDArray, key: Any, value: Any) -> None:
    """x[key] = value for a key with an integer array or a boolean mask; value is cast to x's
    dtype as ``x[...] = value`` casts, and broadcast to the indexed shape."""
    if x.readonly:
        raise ValueError("assignment destination is read-only")
    pos, lead, shape = _plan(x, key, "index assignment")
    k = pos.shape[0]
    rest = math.prod(x.shape[lead:])
    if isinstance(value, NDArray):
        _same_device("index assignment", x=x, value=value)
        values = _broadcast(value if value.dtype == x.dtype else value.astype(x.dtype), shape)
    else:
        values = _core.empty(shape, x.ctx, x.dtype)
        values[...] = value  # the checks and casts of basic assignment (OverflowError, ...)
    if k == 0 or rest == 0:
        return
    target = x if x.is_contiguous else x.copy()
    _scatter(values.reshape(1, k, rest), pos, target.reshape(1, math.prod(x.shape[:lead]), rest),
             "index assignment", None)
    if target is not x:
        x[...] = target


def install(cls: type) -> None:
    """Routes NDArray's [] to getitem/setitem when the key holds an array; basic indexing stays
    with the C++ views."""
    basic_get, basic_set = cls.__getitem__, cls.__setitem__

    # The binding's parameter names (arg0, arg1) and docstrings, so that introspection sees
    # what it saw before.
    def __getitem__(self, arg0):
        return getitem(self, arg0) if _advanced(arg0) else basic_get(self, arg0)

    def __setitem__(self, arg0, arg1):
        if _advanced(arg0):
            setitem(self, arg0, arg1)
        else:
            basic_set(self, arg0, arg1)

    __getitem__.__doc__ = basic_get.__doc__
    __setitem__.__doc__ = basic_set.__doc__
    cls.__getitem__ = __getitem__
    cls.__setitem__ = __setitem__


install(NDArray)

__all__ = ["argsort", "nonzero", "searchsorted", "sort", "take", "take_along_axis",
           "unique_all", "unique_counts", "unique_inverse", "unique_values"]
