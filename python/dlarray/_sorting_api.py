"""The array API standard's searching, sorting and set functions on the indexing primitives
(``dlarray._index_primitives``): ``nonzero``, ``argsort``, ``sort``, ``searchsorted`` and the
four ``unique_*`` functions. Sorting is the ``argsort`` primitive and a ``gather``; searchsorted
and the set functions are composed from sorts, gathers and scatters.
"""
from __future__ import annotations

import builtins
import math
from typing import List, NamedTuple, Optional, Tuple

import numpy as np

from . import _core, ops
from ._core import NDArray
from ._dtypes import result_type
from ._kernels import has_kernel
from ._index_primitives import (_BOOL, _INT64, _arange, _argsort_rows, _as_index_array, _axis,
                                _broadcast, _compact, _flat_positions, _gather, _require_array,
                                _same_device)


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


def _rows(x: NDArray, axis: int, where: str) -> Tuple[NDArray, List[int]]:
    """x with `axis` last, compact, as (rows, n); and the permutation that put it there."""
    perm = [d for d in range(x.ndim) if d != axis] + [axis]
    moved = x if axis == x.ndim - 1 else x.transpose(perm)
    rows = math.prod(x.shape[d] for d in perm[:-1])  # (0 for an empty x whatever the axis)
    return _compact(moved).reshape(rows, x.shape[axis]), perm


def _restore(a: NDArray, shape: Tuple[int, ...], perm: List[int]) -> NDArray:
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
    if has_kernel("sort", x.ctx):  # the backend sorts values: no positions, no gather
        out = _core.empty(rows.shape, x.ctx, x.dtype)
        ops.sort(rows, 1 if descending else 0, out)
        return _restore(out, x.shape, perm)
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
        x1 = _gather(x1.reshape(1, x1.shape[0], 1), _as_index_array(sorter, "searchsorted"),
                     "searchsorted", 0).reshape(x1.shape[0])
    dt = result_type(x1.dtype, x2.dtype)
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


def _group_order(flat: NDArray, where: str) -> NDArray:
    """A stable ascending order of the (1, n) row ``flat``: complex values by real part, then
    imaginary part (NumPy's order; only unique uses it, to bring equal values together)."""
    n = flat.shape[1]
    if flat.dtype.kind != "c":
        return _argsort_rows(flat, False).reshape(n)
    from ._elementwise_api import imag, real
    by_imag = _argsort_rows(imag(flat), False).reshape(n)
    re = _gather(real(flat).reshape(1, n, 1), by_imag, where, None).reshape(1, n)
    by_real = _argsort_rows(re, False).reshape(n)
    return _gather(by_imag.reshape(1, n, 1), by_real, where, None).reshape(n)


def _unique(x: NDArray, where: str, inverse: builtins.bool
            ) -> Tuple[NDArray, NDArray, Optional[NDArray], NDArray]:
    """(values, first positions in x, inverse or None, counts) of flattened x, by a stable sort:
    a value starts a group where it differs from its predecessor (NaN differs from NaN, so each
    NaN is its own group, as the standard asks)."""
    x = _require_array(x, "x", where)
    n = x.size
    flat = _compact(x).reshape(1, n)
    if n == 0:
        empty = _core.empty((0,), x.ctx, _INT64)
        return (_core.empty((0,), x.ctx, x.dtype), empty,
                _core.empty(x.shape, x.ctx, _INT64), empty)
    order = _group_order(flat, where)
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
        Any shape, any dtype (complex values ordered by real, then imaginary part).

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
        Any shape, any dtype (complex values ordered by real, then imaginary part).

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
        Any shape, any dtype (complex values ordered by real, then imaginary part).

    Returns
    -------
    UniqueInverseResult
        ``values``, ``inverse_indices``.
    """
    values, _, inv, _ = _unique(x, "unique_inverse", True)
    assert inv is not None
    return UniqueInverseResult(values, inv)


def unique_all(x: NDArray, /) -> UniqueAllResult:
    """Distinct values, the flat index of each one's first occurrence, the inverse indices and
    the counts.

    Parameters
    ----------
    x : NDArray
        Any shape, any dtype (complex values ordered by real, then imaginary part).

    Returns
    -------
    UniqueAllResult
        ``values``, ``indices``, ``inverse_indices``, ``counts``.
    """
    values, first, inv, counts = _unique(x, "unique_all", True)
    assert inv is not None
    return UniqueAllResult(values, first, inv, counts)
