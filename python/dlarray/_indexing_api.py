"""The array API standard's ``take`` and ``take_along_axis``, and NDArray's integer-array and
boolean-mask indexing (``x[key]``, ``x[key] = value``), on the indexing primitives
(``dlarray._index_primitives``); basic indexing stays with the C++ views. The searching, sorting
and set functions (``dlarray._sorting_api``) are exported from here too.
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any, Optional, Tuple

import numpy as np

from . import _core, ops
from ._core import NDArray
from ._elementwise_api import where as _where
from ._kernels import has_kernel
from ._index_primitives import (_INT64, _BOOL, _as_index_array, _axis, _broadcast,
                                _broadcast_shapes, _compact, _flat_positions, _gather,
                                _index_error, _normalized, _require_array, _same_device,
                                _scatter)
from ._sorting_api import (UniqueAllResult, UniqueCountsResult, UniqueInverseResult,  # noqa: F401
                           argsort, nonzero, searchsorted, sort, unique_all, unique_counts,
                           unique_inverse, unique_values)


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


def _take_plan(name: str, dtype: np.dtype) -> tuple:
    """The op take makes for x of ``dtype`` with compact int64 1-D indices: a gather into a new
    array of x's dtype (any dtype: gather moves elements by size); for take_along_axis with
    indices of x's shape outside the axis, gather_along, or for one row the gather (the post op).
    The C++ fast path (_core._fast_function(gather=name)) asks once per dtype;
    test_speed_fast_path compares it with the general path."""
    if name == "take":
        return "gather", dtype
    return "gather_along", dtype, 1.0, "gather"


_take_general = take
# Replaced through globals(): the typed definition above stays what type checkers see.
globals()["take"] = _core._fast_function(
    "take", take, _take_plan, "take(x, indices, /, *, axis=None)\n--\n\n%s" % take.__doc__,
    gather="take")


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
    xs, ks = x.shape, idx.shape
    common = []  # the broadcast outside the axis, by hand: np.broadcast_shapes took 1.2 us a call
    for d, (a, b) in enumerate(zip(xs, ks)):
        if d != ax and a != b and a != 1 and b != 1:
            raise ValueError("take_along_axis: shapes %s and %s do not broadcast outside axis %d"
                             % (xs, ks, ax))
        common.append(a if b == 1 else b)
    out_shape = tuple(common[:ax] + [ks[ax]] + common[ax + 1:])
    x_shape = tuple(common[:ax] + [xs[ax]] + common[ax + 1:])
    xb = _broadcast(x, x_shape)
    n, m = x.shape[ax], idx.shape[ax]
    outer, inner = math.prod(out_shape[:ax]), math.prod(out_shape[ax + 1:])
    if outer * m * inner == 0:
        return _core.empty(out_shape, x.ctx, x.dtype)
    k = _broadcast(idx, out_shape)
    if outer == 1 and inner == 1:  # one row: take itself (the gather checks against n)
        return _gather(xb.reshape(1, n, 1), k.reshape(m), "take_along_axis", ax).reshape(
            out_shape)
    if has_kernel("gather_along", x.ctx):  # one pass: an index per element, checked in it
        out = _core.empty((outer, m, inner), x.ctx, x.dtype)
        try:
            ops.gather_along(xb.reshape(outer, n, inner), k.reshape(outer, m, inner), out)
        except ValueError as err:
            raise _index_error(err, "take_along_axis", ax) from None
        return out.reshape(out_shape)
    # The composite of a backend without gather_along: the flat position of out[o, j, i] in xb
    # is k * inner + (o * n * inner + i), that offset one small (outer, 1, inner) array broadcast
    # by the add; then one gather of the flat positions.
    k = _normalized(k, n, "take_along_axis", ax).reshape(outer, m, inner)
    offset = (np.arange(outer, dtype=np.int64)[:, None] * (n * inner)
              + np.arange(inner, dtype=np.int64)[None, :]).reshape(outer, 1, inner)
    flat = (k * inner if inner > 1 else k) + _core.array(offset, x.ctx, _INT64)
    picked = _gather(xb.reshape(1, xb.size, 1), _compact(flat).reshape(flat.size),
                     "take_along_axis", ax)
    return picked.reshape(out_shape)


_take_along_axis_general = take_along_axis
globals()["take_along_axis"] = _core._fast_function(
    "take_along_axis", take_along_axis, _take_plan,
    "take_along_axis(x, indices, /, *, axis=-1)\n--\n\n%s" % take_along_axis.__doc__,
    gather="take_along_axis")


# --- x[key] and x[key] = value with integer arrays and boolean masks ---------------------


def _is_array_index(k: Any) -> builtins.bool:
    """Whether NumPy reads the index item k as an array: an NDArray, a list or a NumPy array."""
    return isinstance(k, (NDArray, list, np.ndarray))


def _advanced(key: Any) -> builtins.bool:
    items = key if isinstance(key, tuple) else (key,)
    return any(_is_array_index(k) for k in items)


def _index_array(k: Any, x: NDArray, where: str) -> NDArray:
    """An array index item as an NDArray on x's device (a list or NumPy array is copied there)."""
    if isinstance(k, NDArray):
        _same_device(where, x=x, index=k)
        return k
    a = np.asarray(k)
    if a.size == 0 and a.dtype.kind == "f":
        a = a.astype(np.int64)  # [] is an empty integer index, as in NumPy
    if a.dtype.kind not in "biu":
        raise IndexError("%s: arrays used as indices must be of integer or boolean type, got %s"
                         % (where, a.dtype))
    return _core.array(a, x.ctx, a.dtype)


def _simple(items: list) -> builtins.bool:
    """Whether _plan takes the key as it is: one boolean mask, or integers and integer arrays
    only (a trailing ... allowed)."""
    if items and items[-1] is Ellipsis:
        items = items[:-1]
    if len(items) == 1 and isinstance(items[0], NDArray):
        return True
    return all(isinstance(k, NDArray) and k.dtype != _BOOL
               or (not isinstance(k, (builtins.bool, NDArray)) and hasattr(k, "__index__"))
               for k in items)


def _expand(x: NDArray, items: list, where: str) -> list:
    """The key's items with the ellipsis spelled out as slices, every dimension indexed, and each
    boolean mask replaced by one integer array per dimension it covers (its nonzero)."""
    if sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("%s: an index can only have a single ellipsis ('...')" % where)
    used = sum(k.ndim if isinstance(k, NDArray) and k.dtype == _BOOL else 1
               for k in items if k is not None and k is not Ellipsis)
    if used > x.ndim:
        raise IndexError("%s: too many indices for an array of %d dimensions: %d were given"
                         % (where, x.ndim, used))
    fill = [slice(None)] * (x.ndim - used)
    if Ellipsis in items:
        at = next(i for i, k in enumerate(items) if k is Ellipsis)
        items = items[:at] + fill + items[at + 1:]
    else:
        items = items + fill
    out, dim = [], 0
    for k in items:
        if isinstance(k, NDArray) and k.dtype == _BOOL:
            if k.ndim == 0:
                raise IndexError("%s: a 0-d boolean index must be the only index" % where)
            if k.shape != x.shape[dim:dim + k.ndim]:
                raise IndexError("%s: boolean index of shape %s does not match the indexed "
                                 "dimensions %s" % (where, k.shape, x.shape[dim:dim + k.ndim]))
            out.extend(nonzero(k))
            dim += k.ndim
        else:
            out.append(k)
            dim += k is not None
    return out


def _split(x: NDArray, key: Any, where: str) -> Tuple[NDArray, Tuple[Any, ...], int]:
    """NumPy's rules for a key that mixes arrays with slices, None or ...: (w, arrays, at), where
    w is the view of x that the basic items select, with the array-indexed dimensions moved
    first, arrays index w's leading dimensions (_plan's form), and the broadcast dimensions of
    the result go to position `at` (where the array indices stand when they are adjacent, else
    first)."""
    items = [_index_array(k, x, where) if _is_array_index(k) else k
             for k in (key if isinstance(key, tuple) else (key,))]
    if _simple(items):
        return x, tuple(items), 0
    basic, picked, positions = [], [], []
    for k in _expand(x, items, where):
        if k is None or isinstance(k, slice):
            basic.append(k)
            continue
        if not isinstance(k, NDArray) and (isinstance(k, builtins.bool)
                                           or not hasattr(k, "__index__")):
            raise IndexError("%s: only integers, slices (:), ellipsis (...), None and integer or "
                             "boolean arrays are valid indices, got %s" % (where, type(k).__name__))
        positions.append(len(basic))  # an integer counts as a 0-d array index, as in NumPy
        picked.append(k)
        basic.append(slice(None))
    view = x[tuple(basic)]
    order = positions + [d for d in range(view.ndim) if d not in positions]
    adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
    w = view if order == list(range(view.ndim)) else view.transpose(tuple(order))
    return w, tuple(picked), positions[0] if adjacent else 0


def _order(ndim: int, first: int, count: int, to: int) -> list:
    """The dimension order that moves dimensions [first, first + count) to start at `to`."""
    dims = [d for d in range(ndim) if not first <= d < first + count]
    return dims[:to] + list(range(first, first + count)) + dims[to:]


def _move(a: NDArray, first: int, count: int, to: int) -> NDArray:
    """a with its dimensions [first, first + count) moved to start at position `to` (a view)."""
    order = _order(a.ndim, first, count, to)
    return a if order == list(range(a.ndim)) else a.transpose(tuple(order))


def _plan(x: NDArray, key: Any, where: str) -> Tuple[NDArray, int, Tuple[int, ...]]:
    """(positions, leading, result_shape): the flat positions (int64, 1-D) into x viewed as
    (prod(x.shape[:leading]), rest), for a boolean mask or a tuple of integer arrays and ints
    followed by full dimensions (the form _split brings every key to)."""
    items = list(key) if isinstance(key, tuple) else [key]
    if items and items[-1] is Ellipsis:
        items.pop()
    for k in items:
        if isinstance(k, NDArray):
            _same_device(where, x=x, index=k)
    if len(items) == 1 and isinstance(items[0], NDArray) and items[0].dtype == _BOOL:
        mask = items[0]
        lead = x.shape[:mask.ndim]
        # A mask dimension of 0 selects nothing whatever the array's extent (the standard's
        # suite allows it where NumPy refuses it).
        if mask.ndim > x.ndim or any(m not in (n, 0) for m, n in zip(mask.shape, lead)):
            raise IndexError("%s: boolean index of shape %s does not match the array's "
                             "leading dimensions %s" % (where, mask.shape, x.shape[:mask.ndim]))
        if mask.shape != lead:
            return _core.empty((0,), x.ctx, _INT64), mask.ndim, (0,) + x.shape[mask.ndim:]
        pos = _compact(_flat_positions(mask))
        return pos, mask.ndim, (pos.shape[0],) + x.shape[mask.ndim:]
    # What _split leaves: integer arrays and integers (a mask only alone, handled above).
    arrays = [_as_index_array(k, where) if isinstance(k, NDArray) else
              _core.array(np.array(operator.index(k), np.int64), x.ctx, _INT64) for k in items]
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
    """x[key] for a key with integer arrays or boolean masks, mixed with any basic items."""
    w, arrays, at = _split(x, key, "index")
    got = _getitem(w, arrays)
    return _move(got, 0, got.ndim - (w.ndim - len(arrays)), at) if at else got


def _getitem(x: NDArray, key: Any) -> NDArray:
    """x[key] for a key that _plan takes."""
    pos, lead, shape = _plan(x, key, "index")
    outer = math.prod(x.shape[:lead])
    rest = math.prod(x.shape[lead:])
    if pos.shape[0] == 0 or rest == 0:
        return _core.empty(shape, x.ctx, x.dtype)
    return _gather(_compact(x).reshape(1, outer, rest), pos, "index", None).reshape(shape)


def setitem(x: NDArray, key: Any, value: Any) -> None:
    """x[key] = value for a key with integer arrays or boolean masks, mixed with any basic items;
    value is cast to x's dtype as ``x[...] = value`` casts, and broadcast to x[key]'s shape."""
    if x.readonly:
        raise ValueError("assignment destination is read-only")
    w, arrays, at = _split(x, key, "index assignment")
    if _scalar_into_mask(w, arrays, value):
        return
    pos, lead, shape = _plan(w, arrays, "index assignment")
    if isinstance(value, NDArray):
        _same_device("index assignment", x=x, value=value)
        if at:  # broadcast to x[key]'s shape, then its broadcast dimensions first, as in w
            count = len(shape) - (w.ndim - lead)
            seen = tuple(shape[d] for d in _order(len(shape), 0, count, at))
            value = _move(_broadcast(value, seen), at, count, 0)
        values = _broadcast(value if value.dtype == x.dtype else value.astype(x.dtype), shape)
    else:
        values = _core.empty(shape, x.ctx, x.dtype)
        values[...] = value  # the checks and casts of basic assignment (OverflowError, ...)
    k = pos.shape[0]
    rest = math.prod(w.shape[lead:])
    if k == 0 or rest == 0:
        return
    target = w if w.is_contiguous else w.copy()
    _scatter(values.reshape(1, k, rest), pos, target.reshape(1, math.prod(w.shape[:lead]), rest),
             "index assignment", None)
    if target is not w:
        w[...] = target


# The largest integer every int a float64 attribute carries exactly is at most.
_EXACT_INT = 2 ** 53


def _scalar_into_mask(w: NDArray, arrays: Tuple[Any, ...], value: Any) -> builtins.bool:
    """x[mask] = scalar for a mask of x's whole shape, as one pass: the backend's masked_fill
    where it has one and the value is exact as the op's float64 attribute, else w = where(mask,
    value, w). The positions, a value per True and a one-thread scatter cost 1.9x NumPy at
    10**7. False (nothing done) for any other key or value."""
    if (len(arrays) != 1 or not isinstance(arrays[0], NDArray) or arrays[0].dtype != _BOOL
            or arrays[0].shape != w.shape or isinstance(value, NDArray)
            or type(value) not in (builtins.bool, int, float, complex)):
        return False
    mask = arrays[0]
    _same_device("index assignment", x=w, index=mask)
    exact = type(value) is not int or abs(value) <= _EXACT_INT  # as the op's float64 attribute
    one_pass = (w.size and w.is_contiguous and type(value) is not complex
                and w.dtype.kind != "c" and exact and has_kernel("masked_fill", w.ctx))
    # A bool, or a float or exact int into a float array, the op checks itself (the range, with
    # basic assignment's message); the rest takes basic assignment's checks (its OverflowError
    # and NumPy's message for an integer out of bounds, NaN into an integer array, ...).
    if not (one_pass and (type(value) is builtins.bool or w.dtype.kind == "f")):
        v = _core.empty((), w.ctx, w.dtype)
        v[...] = value
    if w.size == 0:
        return True
    if one_pass:
        ops.masked_fill(_compact(mask), value, w)
        return True
    if not w.is_contiguous:
        w[...] = _where(mask, v, w)
        return True
    values = _core.empty(w.shape, w.ctx, w.dtype)
    values[...] = value
    ops.where(_compact(mask), values, w, w)  # in place: each element reads only itself
    return True


def _mask_get(x: NDArray, mask: NDArray) -> NDArray:
    """x[mask] for a bool mask of x's whole shape (what getitem does for this key, without the
    walk over the key's items: the per-call time): compress where the device has it, else the
    positions of the Trues and one gather."""
    _same_device("index", x=x, index=mask)
    if x.size == 0:
        return _core.empty((0,), x.ctx, x.dtype)
    if has_kernel("compress", x.ctx):
        return _compress(_compact(x).reshape(x.size), _compact(mask).reshape(x.size))
    pos = _flat_positions(mask)
    if pos.shape[0] == 0:
        return _core.empty((0,), x.ctx, x.dtype)
    picked = _gather(_compact(x).reshape(1, x.size, 1), pos, "index", None)
    return picked.reshape(pos.shape[0])


def _compress(flat: NDArray, mask: NDArray) -> NDArray:
    """ops.compress into an array of flat's size, then the picked prefix (one count read back);
    copied to an array of its own unless every element was picked, so that a few picked elements
    do not hold a block of the whole size."""
    out = _core.empty(flat.shape, flat.ctx, flat.dtype)
    count = _core.empty((1,), flat.ctx, _INT64)
    ops.compress(flat, mask, out, count)
    n = count[0].item()
    return out if n == flat.shape[0] else out[:n].copy()


# NDArray's Python __getitem__ (set by install).
python_getitem: Any = None

# Keys of basic indexing alone, told by their exact type.
_BASIC_KEYS = frozenset({int, slice, type(Ellipsis), type(None)})


def install(cls: Any) -> None:
    """Routes NDArray's [] to getitem/setitem when the key holds an array; basic indexing stays
    with the C++ views."""
    basic_get, basic_set = cls.__getitem__, cls.__setitem__

    # The binding's parameter names (arg0, arg1) and docstrings, so that introspection sees
    # what it saw before.
    def __getitem__(self: NDArray, arg0: Any) -> NDArray:
        if type(arg0) in _BASIC_KEYS:  # x[0], x[1:]: no item to look at (the per-call time)
            view: NDArray = basic_get(self, arg0)
            return view
        if type(arg0) is NDArray and arg0.dtype == _BOOL and arg0.shape == self.shape:
            return _mask_get(self, arg0)
        if _advanced(arg0):
            return getitem(self, arg0)
        result: NDArray = basic_get(self, arg0)
        return result

    def __setitem__(self: NDArray, arg0: Any, arg1: Any) -> None:
        if type(arg0) is NDArray and not self.readonly and _scalar_into_mask(self, (arg0,), arg1):
            return  # x[mask] = scalar, its most common form, without setitem's walk of the key
        if type(arg0) not in _BASIC_KEYS and _advanced(arg0):
            setitem(self, arg0, arg1)
        else:
            basic_set(self, arg0, arg1)

    __getitem__.__doc__ = basic_get.__doc__
    __setitem__.__doc__ = basic_set.__doc__
    global python_getitem
    python_getitem = __getitem__  # _core._fast_slots puts a C method before it (views.cc)
    cls.__getitem__ = __getitem__
    cls.__setitem__ = __setitem__


install(NDArray)

__all__ = ["argsort", "nonzero", "searchsorted", "sort", "take", "take_along_axis",
           "unique_all", "unique_counts", "unique_inverse", "unique_values"]
