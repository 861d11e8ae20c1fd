"""The array API standard's manipulation functions, composed from views and the strided ``copy``.

A view (``NDArray._view``: any shape, element strides, negative ones included, and a first-element
offset, checked by the core against the array's memory) gives ``permute_dims``, ``expand_dims``,
``squeeze``, ``flip``, ``moveaxis``, ``broadcast_to`` (stride 0), ``unstack``; the ``copy`` op,
which reads and writes any strides on the device, turns views into results: ``concat``,
``stack``, ``roll``, ``repeat`` and ``tile`` write views of their input into views of a new
array. Nothing passes through the host but shapes (and ``repeat``'s counts, which decide the
result's shape).
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._core import NDArray
from ._devices import device as _device
from ._operators import _promote

AxisLike = Union[int, Sequence[int]]


class AxisError(ValueError, IndexError):
    """An axis out of range: a ValueError and an IndexError, as NumPy's AxisError is (the
    standard leaves the type to the library; consumers catch either)."""


def _array(x: Any, fn: str, name: str = "x") -> NDArray:
    if not isinstance(x, NDArray):
        raise TypeError("%s: %s must be an NDArray, got %s" % (fn, name, type(x).__name__))
    return x


def _int(v: Any, fn: str, name: str) -> int:
    if isinstance(v, (builtins.bool, np.bool_)):
        raise TypeError("%s: %s must be an integer, got bool" % (fn, name))
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError("%s: %s must be an integer, got %s"
                        % (fn, name, type(v).__name__)) from None


def _ints(v: Any, fn: str, name: str) -> Tuple[int, ...]:
    """An int or a sequence of ints, as a tuple."""
    if isinstance(v, (tuple, list)):
        return tuple(_int(e, fn, name) for e in v)
    return (_int(v, fn, name),)


def _axis(axis: Any, ndim: int, fn: str, name: str = "axis") -> int:
    a = _int(axis, fn, name)
    if not -ndim <= a < ndim:
        raise AxisError("%s: %s %d is out of bounds for an array of %d dimension%s"
                        % (fn, name, a, ndim, "" if ndim == 1 else "s"))
    return a % ndim


def _axes(axis: Any, ndim: int, fn: str, name: str = "axis") -> Tuple[int, ...]:
    """Normalised, distinct axes (ValueError naming the repeated one)."""
    out = tuple(_axis(a, ndim, fn, name) for a in _ints(axis, fn, name))
    if len(set(out)) != len(out):
        raise ValueError("%s: repeated %s in %r" % (fn, name, axis))
    return out


def _strides(x: NDArray) -> List[int]:
    """x's strides in elements."""
    return [s // x.itemsize for s in x.strides]


def _same_device(arrays: Sequence[NDArray], fn: str) -> None:
    for i, a in enumerate(arrays[1:], 1):
        if a.ctx != arrays[0].ctx:
            raise ValueError("%s: arrays[0] is on %s but arrays[%d] is on %s; move them to one "
                             "device first (to_device)" % (fn, arrays[0].ctx, i, a.ctx))


def _sequence(arrays: Any, fn: str) -> List[NDArray]:
    if isinstance(arrays, NDArray) or not isinstance(arrays, (tuple, list)):
        raise TypeError("%s: arrays must be a tuple or list of NDArrays, got %s"
                        % (fn, type(arrays).__name__))
    if not arrays:
        raise ValueError("%s: arrays must not be empty" % fn)
    out = [_array(a, fn, "arrays[%d]" % i) for i, a in enumerate(arrays)]
    _same_device(out, fn)
    return out


def _copy_into(target: NDArray, src: NDArray) -> None:
    """target[...] = src on the device (any layouts; src converted to target's dtype first)."""
    if target.size:
        target[...] = src if src.dtype == target.dtype else src.astype(target.dtype)


def _take_range(x: NDArray, axis: int, start: int, stop: int) -> NDArray:
    """x[..., start:stop, ...] along axis, a view."""
    return x[(slice(None),) * axis + (slice(start, stop),)]


def reshape(x: NDArray, /, shape: Sequence[int], *, copy: Optional[bool] = None) -> NDArray:
    """The elements of x in another shape, in row-major order.

    Parameters
    ----------
    x : NDArray
    shape : tuple of int
        The new extents; one may be -1 (inferred).
    copy : bool, optional
        True: always a copy. False: a view or ValueError. None (default): a view when x's layout
        allows it, else a compact copy on x's device.

    Returns
    -------
    NDArray

    Raises
    ------
    TypeError
        x is not an NDArray, shape is not a sequence of ints, copy is not a bool or None.
    ValueError
        The sizes differ, more than one -1, or copy=False where a copy is needed.
    """
    x = _array(x, "reshape")
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, builtins.bool):
        dims = [int(shape)]
    elif isinstance(shape, (tuple, list)):
        dims = [_int(d, "reshape", "shape") for d in shape]
    else:
        raise TypeError("reshape: shape must be a tuple of ints, got %s" % type(shape).__name__)
    if copy is not None and not isinstance(copy, (builtins.bool, np.bool_)):
        raise TypeError("reshape: copy must be True, False or None, got %s"
                        % type(copy).__name__)
    return x._reshape(dims, -1 if copy is None else int(builtins.bool(copy)))


def permute_dims(x: NDArray, /, axes: Tuple[int, ...]) -> NDArray:
    """A view of x with its axes reordered.

    Parameters
    ----------
    x : NDArray
    axes : tuple of int
        A permutation of ``range(x.ndim)`` (negative axes count from the end).

    Returns
    -------
    NDArray
        A view: axis i of the result is axis ``axes[i]`` of x.

    Raises
    ------
    ValueError
        ``axes`` is not a permutation (too few, or repeated).
    IndexError
        An axis out of range (the error is also a ValueError).

    Examples
    --------
    >>> import numpy as np, dlarray as xp
    >>> xp.permute_dims(xp.asarray(np.zeros((2, 3, 4))), (2, 0, 1)).shape
    (4, 2, 3)
    """
    x = _array(x, "permute_dims")
    if not isinstance(axes, (tuple, list)):
        raise TypeError("permute_dims: axes must be a tuple of ints, got %s"
                        % type(axes).__name__)
    order = _axes(axes, x.ndim, "permute_dims", "axes")
    if len(order) != x.ndim:
        raise ValueError("permute_dims: axes %r is not a permutation of the %d axes"
                         % (tuple(axes), x.ndim))
    st = _strides(x)
    return x._view([x.shape[a] for a in order], [st[a] for a in order], 0)


def matrix_transpose(x: NDArray, /) -> NDArray:
    """A view of x with its last two axes swapped (``x.mT``).

    Parameters
    ----------
    x : NDArray
        At least 2-D (a stack of matrices).

    Returns
    -------
    NDArray

    Raises
    ------
    ValueError
        x has fewer than 2 dimensions.
    """
    return _array(x, "matrix_transpose").mT


def expand_dims(x: NDArray, /, axis: AxisLike = 0) -> NDArray:
    """A view of x with extents of 1 inserted.

    Parameters
    ----------
    x : NDArray
    axis : int or tuple of int
        Positions of the new axes in the result (negative count from its end).

    Returns
    -------
    NDArray
        A view of ``x.ndim + len(axis)`` dimensions.

    Raises
    ------
    IndexError
        An axis outside the result's dimensions (also a ValueError).
    ValueError
        A repeated axis.
    """
    x = _array(x, "expand_dims")
    new = _axes(axis, x.ndim + len(_ints(axis, "expand_dims", "axis")), "expand_dims")
    shape, strides = list(x.shape), _strides(x)
    for a in sorted(new):
        shape.insert(a, 1)
        strides.insert(a, 0)
    return x._view(shape, strides, 0)


def squeeze(x: NDArray, /, axis: AxisLike) -> NDArray:
    """A view of x without some axes of extent 1.

    Parameters
    ----------
    x : NDArray
    axis : int or tuple of int
        The axes to drop; each must have extent 1.

    Returns
    -------
    NDArray

    Raises
    ------
    ValueError
        An axis whose extent is not 1, or a repeated axis.
    IndexError
        An axis out of range (also a ValueError).
    """
    x = _array(x, "squeeze")
    drop = _axes(axis, x.ndim, "squeeze")
    for a in drop:
        if x.shape[a] != 1:
            raise ValueError("squeeze: axis %d has extent %d, not 1" % (a, x.shape[a]))
    keep = [d for d in range(x.ndim) if d not in drop]
    st = _strides(x)
    return x._view([x.shape[d] for d in keep], [st[d] for d in keep], 0)


def flip(x: NDArray, /, *, axis: Optional[AxisLike] = None) -> NDArray:
    """A view of x with the order of its elements reversed along some axes.

    Parameters
    ----------
    x : NDArray
    axis : int or tuple of int, optional
        The axes to reverse (default: all of them).

    Returns
    -------
    NDArray
        A view with negative strides; ``.copy()`` makes it compact on the device.

    Examples
    --------
    >>> import numpy as np, dlarray as xp
    >>> xp.flip(xp.asarray(np.arange(4))).asnumpy()
    array([3, 2, 1, 0])
    """
    x = _array(x, "flip")
    axes = range(x.ndim) if axis is None else _axes(axis, x.ndim, "flip")
    strides, offset = _strides(x), 0
    for a in axes:
        if x.shape[a] > 0:
            offset += (x.shape[a] - 1) * strides[a]
        strides[a] = -strides[a]
    return x._view(list(x.shape), strides, offset if x.size else 0)


def moveaxis(x: NDArray, source: AxisLike, destination: AxisLike, /) -> NDArray:
    """A view of x with some axes moved to new positions, the others keeping their order.

    Parameters
    ----------
    x : NDArray
    source : int or tuple of int
        The axes to move.
    destination : int or tuple of int
        Their positions in the result (as many as ``source``).

    Returns
    -------
    NDArray

    Raises
    ------
    ValueError
        ``source`` and ``destination`` differ in length, or repeat an axis.
    """
    x = _array(x, "moveaxis")
    src = _axes(source, x.ndim, "moveaxis", "source")
    dst = _axes(destination, x.ndim, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of "
                         "axes, got %d and %d" % (len(src), len(dst)))
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute_dims(x, tuple(order))


def broadcast_shapes(*shapes: Sequence[int]) -> Tuple[int, ...]:
    """The shape that shapes broadcast to, by NumPy's rules.

    Parameters
    ----------
    *shapes : tuple of int

    Returns
    -------
    tuple of int

    Raises
    ------
    ValueError
        Two extents that differ and are not 1.
    """
    dims: List[int] = []
    for i, shape in enumerate(shapes):
        shape = _ints(shape, "broadcast_shapes", "shapes[%d]" % i)
        if any(d < 0 for d in shape):
            raise ValueError("broadcast_shapes: shapes[%d] %r has a negative extent" % (i, shape))
        pad = len(shape) - len(dims)
        dims = [1] * pad + dims if pad > 0 else dims
        for j, d in enumerate(shape, len(dims) - len(shape)):
            if dims[j] == 1:
                dims[j] = d
            elif d != 1 and d != dims[j]:
                raise ValueError("broadcast_shapes: shapes %s cannot be broadcast together "
                                 "(extents %d and %d)" % (", ".join(
                                     str(tuple(s)) for s in shapes), dims[j], d))
    return tuple(dims)


def broadcast_to(x: NDArray, /, shape: Sequence[int]) -> NDArray:
    """A view of x repeated to a shape, with stride 0 along the broadcast axes.

    Parameters
    ----------
    x : NDArray
    shape : tuple of int
        A shape x broadcasts to (NumPy's rules).

    Returns
    -------
    NDArray
        A view; writing through it writes the shared elements.

    Raises
    ------
    ValueError
        x's shape does not broadcast to ``shape``.
    """
    x = _array(x, "broadcast_to")
    if not isinstance(shape, (tuple, list)):
        shape = _ints(shape, "broadcast_to", "shape")
    shape = tuple(_int(d, "broadcast_to", "shape") for d in shape)
    lead = len(shape) - x.ndim
    if lead < 0 or any(d < 0 for d in shape) or any(
            d != 1 and d != shape[lead + i] for i, d in enumerate(x.shape)):
        raise ValueError("broadcast_to: an array of shape %s cannot be broadcast to %s"
                         % (x.shape, shape))
    st = _strides(x)
    strides = [0] * lead + [0 if x.shape[i] != shape[lead + i] else st[i]
                            for i in range(x.ndim)]
    return x._view(list(shape), strides, 0)


def broadcast_arrays(*arrays: NDArray) -> List[NDArray]:
    """The arrays broadcast to their common shape.

    Parameters
    ----------
    *arrays : NDArray
        Arrays on one device.

    Returns
    -------
    list of NDArray
        Views (stride 0 along broadcast axes).

    Raises
    ------
    ValueError
        The shapes do not broadcast together, or the arrays are on two devices.
    """
    if not arrays:
        return []
    arrays = tuple(_sequence(list(arrays), "broadcast_arrays"))
    shape = broadcast_shapes(*[a.shape for a in arrays])
    return [broadcast_to(a, shape) for a in arrays]


def concat(arrays: Sequence[NDArray], /, *, axis: Optional[int] = 0) -> NDArray:
    """The arrays joined along an existing axis.

    Parameters
    ----------
    arrays : tuple or list of NDArray
        On one device, of one shape but along ``axis``.
    axis : int or None
        The axis (default 0); None flattens each array first and joins them into one 1-D array.

    Returns
    -------
    NDArray
        A new array in the arrays' promoted dtype (NEP 50), on their device.

    Raises
    ------
    ValueError
        No arrays, shapes that differ off ``axis``, 0-d arrays with an axis, or two devices.
    TypeError
        ``arrays`` is not a sequence of NDArrays.
    """
    parts = _sequence(arrays, "concat")
    if axis is None:
        parts = [reshape(p, (-1,)) for p in parts]
        axis = 0
    dtype = _promote(*[p.dtype for p in parts])  # type: ignore[no-untyped-call]
    ndim = parts[0].ndim
    if ndim == 0:
        raise ValueError("concat: 0-d arrays cannot be joined along an axis; use axis=None")
    axis = _axis(axis, ndim, "concat")
    for i, p in enumerate(parts):
        if p.ndim != ndim or any(p.shape[d] != parts[0].shape[d]
                                 for d in range(ndim) if d != axis):
            raise ValueError("concat: arrays[%d] has shape %s, which differs from arrays[0]'s %s "
                             "off axis %d" % (i, p.shape, parts[0].shape, axis))
    shape = list(parts[0].shape)
    shape[axis] = sum(p.shape[axis] for p in parts)
    out = _core.empty(shape, parts[0].ctx, dtype)
    start = 0
    for p in parts:
        _copy_into(_take_range(out, axis, start, start + p.shape[axis]), p)
        start += p.shape[axis]
    return out


def stack(arrays: Sequence[NDArray], /, *, axis: int = 0) -> NDArray:
    """The arrays joined along a new axis.

    Parameters
    ----------
    arrays : tuple or list of NDArray
        Of one shape, on one device.
    axis : int
        The new axis's position in the result (default 0).

    Returns
    -------
    NDArray
        A new array in the arrays' promoted dtype.

    Raises
    ------
    ValueError
        Shapes that differ, no arrays, or two devices.
    """
    parts = _sequence(arrays, "stack")
    for i, p in enumerate(parts):
        if p.shape != parts[0].shape:
            raise ValueError("stack: arrays[%d] has shape %s, which differs from arrays[0]'s %s"
                             % (i, p.shape, parts[0].shape))
    axis = _axis(axis, parts[0].ndim + 1, "stack")
    return concat([expand_dims(p, axis=axis) for p in parts], axis=axis)


def unstack(x: NDArray, /, *, axis: int = 0) -> Tuple[NDArray, ...]:
    """x's slices along an axis.

    Parameters
    ----------
    x : NDArray
        At least 1-D.
    axis : int
        The axis to split along (default 0).

    Returns
    -------
    tuple of NDArray
        ``x.shape[axis]`` views.
    """
    x = _array(x, "unstack")
    if x.ndim == 0:
        raise ValueError("unstack: x must have at least one dimension")
    axis = _axis(axis, x.ndim, "unstack")
    return tuple(x[(slice(None),) * axis + (i,)] for i in range(x.shape[axis]))


def _roll_axis(x: NDArray, shift: int, axis: int) -> NDArray:
    n = x.shape[axis]
    out = _core.empty(x.shape, x.ctx, x.dtype)
    s = shift % n if n else 0
    _copy_into(_take_range(out, axis, s, n), _take_range(x, axis, 0, n - s))
    _copy_into(_take_range(out, axis, 0, s), _take_range(x, axis, n - s, n))
    return out


def roll(x: NDArray, /, shift: AxisLike, *, axis: Optional[AxisLike] = None) -> NDArray:
    """x's elements shifted along axes, those pushed past the end coming back at the start.

    Parameters
    ----------
    x : NDArray
    shift : int or tuple of int
        Steps per axis (one int applies to every axis of ``axis``).
    axis : int or tuple of int, optional
        The axes; None (default) rolls the flattened array and restores the shape. Shifts along
        a repeated axis add up.

    Returns
    -------
    NDArray
        A new array.

    Raises
    ------
    ValueError
        ``shift`` and ``axis`` differ in length, or ``shift`` is a tuple with axis None.
    """
    x = _array(x, "roll")
    shifts = _ints(shift, "roll", "shift")
    if axis is None:
        if len(shifts) != 1:
            raise ValueError("roll: shift must be an int when axis is None, got %r" % (shift,))
        return reshape(_roll_axis(reshape(x, (-1,)), shifts[0], 0), x.shape)
    axes = tuple(_axis(a, x.ndim, "roll") for a in _ints(axis, "roll", "axis"))
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError("roll: shift and axis must have the same length, got %d and %d"
                         % (len(shifts), len(axes)))
    total: Dict[int, int] = {}
    for s, a in zip(shifts, axes):
        total[a] = total.get(a, 0) + s
    out = x
    for a, s in total.items():
        out = _roll_axis(out, s, a)
    return out if out is not x else x.copy()


def _repeat_counts(repeats: Any, n: int) -> List[int]:
    """repeat's counts as Python ints, one per slice (ValueError/TypeError naming repeats)."""
    if isinstance(repeats, NDArray):
        if repeats.dtype.kind not in "iu":
            raise TypeError("repeat: repeats must have an integer dtype, got %s" % repeats.dtype)
        if repeats.ndim > 1:
            raise ValueError("repeat: repeats must be 0-d or 1-D, got shape %s" % (repeats.shape,))
        counts = [int(c) for c in repeats.asnumpy().reshape(-1)]  # they decide the shape
    else:
        counts = [_int(repeats, "repeat", "repeats")]
    if len(counts) == 1:
        counts = counts * n
    if len(counts) != n:
        raise ValueError("repeat: repeats has %d counts for an axis of extent %d"
                         % (len(counts), n))
    if any(c < 0 for c in counts):
        raise ValueError("repeat: repeats must not be negative")
    return counts


def repeat(x: NDArray, repeats: Union[int, NDArray], /, *, axis: Optional[int] = None) -> NDArray:
    """x with each element, or each slice along an axis, repeated.

    Parameters
    ----------
    x : NDArray
    repeats : int or NDArray
        One count for all, or an integer array of one count per slice (or of one count). An
        array's counts are read to the host: they decide the result's shape.
    axis : int, optional
        The axis; None (default) repeats the elements of the flattened x.

    Returns
    -------
    NDArray
        A new array.

    Raises
    ------
    ValueError
        A negative count, or as many counts as slices.
    TypeError
        ``repeats`` is neither an int nor an integer array.
    """
    x = _array(x, "repeat")
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = _axis(axis, x.ndim, "repeat")
    n, st = x.shape[axis], _strides(x)
    counts = _repeat_counts(repeats, n)
    shape = list(x.shape)
    shape[axis] = sum(counts)
    out = _core.empty(shape, x.ctx, x.dtype)
    # One strided copy per run of equal counts: the run's slices, each seen c times through a
    # new axis of stride 0, into the matching stretch of out split into (slices, c).
    start = i = 0
    while i < n:
        c, j = counts[i], i + 1
        while j < n and counts[j] == c:
            j += 1
        if c:
            src = _take_range(x, axis, i, j)
            src = src._view(shape[:axis] + [j - i, c] + shape[axis + 1:],
                            st[:axis] + [st[axis], 0] + st[axis + 1:], 0)
            dst = _take_range(out, axis, start, start + (j - i) * c)
            _copy_into(reshape(dst, src.shape, copy=False), src)
        start += (j - i) * c
        i = j
    return out


def tile(x: NDArray, repetitions: Tuple[int, ...], /) -> NDArray:
    """x repeated along each axis.

    Parameters
    ----------
    x : NDArray
    repetitions : tuple of int
        Repetitions per axis; the shorter of it and x's shape is padded with 1s in front.

    Returns
    -------
    NDArray
        A new array.

    Raises
    ------
    ValueError
        A negative repetition.
    """
    x = _array(x, "tile")
    if not isinstance(repetitions, (tuple, list)):
        raise TypeError("tile: repetitions must be a tuple of ints, got %s"
                        % type(repetitions).__name__)
    reps = [_int(r, "tile", "repetitions") for r in repetitions]
    if any(r < 0 for r in reps):
        raise ValueError("tile: repetitions must not be negative, got %r" % (tuple(reps),))
    ndim = max(len(reps), x.ndim)
    reps = [1] * (ndim - len(reps)) + reps
    shape = [1] * (ndim - x.ndim) + list(x.shape)
    st = [0] * (ndim - x.ndim) + _strides(x)
    # Axes (r0, n0, r1, n1, ...), each repetition axis of stride 0: one strided copy.
    view = x._view([v for pair in zip(reps, shape) for v in pair],
                   [v for s in st for v in (0, s)], 0)
    return reshape(view, tuple(r * n for r, n in zip(reps, shape)), copy=True)


def _to_device(self: NDArray, device: Any, /, stream: Any = None) -> NDArray:
    """The array on ``device``: itself when it is there already, else a copy made there.

    Parameters
    ----------
    device : DLContext or str
    stream : None
        dlarray orders work per device itself; only None is accepted.

    Returns
    -------
    NDArray
    """
    if device is None:
        raise TypeError("to_device: device must be a DLContext or a device string, got None")
    if stream is not None:
        raise ValueError("to_device: stream must be None (dlarray orders each device's work "
                         "itself), got %s" % type(stream).__name__)
    target = _device(device)
    return self if target == self.ctx else self.copyto(target)


_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


# stream and api_version are keywords in the standard; taking them by position too is a superset.
def _array_namespace(self: NDArray, /, api_version: Optional[str] = None) -> Any:
    """The ``dlarray`` module, the namespace of the array API standard (``api_version`` None or
    one of 2021.12-2024.12)."""
    if api_version is not None and api_version not in _API_VERSIONS:
        raise ValueError("__array_namespace__: api_version must be None or one of %s, got %r"
                         % (", ".join(_API_VERSIONS), api_version))
    import dlarray
    return dlarray


setattr(NDArray, "to_device", _to_device)
setattr(NDArray, "__array_namespace__", _array_namespace)

# The standard's constants.
e = math.e
pi = math.pi
inf = math.inf
nan = math.nan
newaxis = None

# Re-exported for __init__'s one import line; they are composed from the views above.
from ._creation_more import eye as eye, linspace as linspace, meshgrid as meshgrid  # noqa: E402
from ._creation_more import tril as tril, triu as triu  # noqa: E402
