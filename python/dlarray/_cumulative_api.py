"""The array API standard's ``cumulative_sum``, ``cumulative_prod`` and ``diff``.

The cumulative functions are one device primitive, the ``scan`` op (``dlarray.ops.scan``): the
input seen as a contiguous ``[outer, n, inner]`` array, scanned along the middle axis, with the
identity as an extra first row when ``include_initial``. Their dtype rules are ``sum``'s (int64
for bool and signed integers, uint64 for unsigned, float16/bfloat16 computed in float32).
``diff`` is composed from ``concat``, slicing and subtraction (``!=`` for bool, as NumPy does).
"""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from . import _core, ops
from ._core import NDArray
from ._manipulation_api import concat
from ._operators import _promote
from ._reduction import check_array, compute_dtype, documented, normalize_axes, sum_dtype


def _scan(x: NDArray, kind: int, axis: Optional[int], dtype: Any, include_initial: bool,
          where: str) -> NDArray:
    x = check_array(x, where, complex_ok=True)
    if not isinstance(include_initial, (bool, np.bool_)):
        raise TypeError("%s: include_initial must be a bool, got %r" % (where, include_initial))
    if x.ndim == 0:
        raise ValueError("%s: x must have at least one dimension (got a 0-d array)" % where)
    if axis is None:
        if x.ndim > 1:
            raise ValueError("%s: axis must be given for an array of %d dimensions"
                             % (where, x.ndim))
        axis = 0
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError("%s: axis must be an int or None, got %r" % (where, axis))
    (a,) = normalize_axes(axis, x.ndim, where)
    result = sum_dtype(x, dtype, where)
    compute = compute_dtype(result)
    y = x if x.dtype == compute else x.astype(compute)
    if not y.is_contiguous:
        y = y.copy()
    shape = y.shape
    outer, n, inner = math.prod(shape[:a]), shape[a], math.prod(shape[a + 1:])
    extra = 1 if include_initial else 0
    out_shape = shape[:a] + (n + extra,) + shape[a + 1:]
    out = _core.empty((outer, n + extra, inner), x.ctx, compute)
    if n == 0 and out.size:
        ops.array_set(out, 0.0 if kind == 0 else 1.0)  # only the initial row: the identity
    elif out.size:
        ops.scan(y.reshape(outer, n, inner), kind, bool(include_initial), out)
    out = out.reshape(out_shape)
    return out if out.dtype == result else out.astype(result)


@documented("x", "axis1", "dtype", "include_initial", returns="The running sums.")
def cumulative_sum(x: NDArray, /, *, axis: Optional[int] = None, dtype: Any = None,
                   include_initial: bool = False) -> NDArray:
    """Running sums along ``axis`` (optional for 1-D input); ``include_initial`` puts a 0 first
    (the result is then one longer along ``axis``). dtype rules as :func:`dlarray.sum`."""
    return _scan(x, 0, axis, dtype, include_initial, "cumulative_sum")


@documented("x", "axis1", "dtype", "include_initial", returns="The running products.")
def cumulative_prod(x: NDArray, /, *, axis: Optional[int] = None, dtype: Any = None,
                    include_initial: bool = False) -> NDArray:
    """Running products along ``axis``; ``include_initial`` puts a 1 first."""
    return _scan(x, 1, axis, dtype, include_initial, "cumulative_prod")


def _along(x: NDArray, axis: int, start: Optional[int], stop: Optional[int]) -> NDArray:
    key = (slice(None),) * axis + (slice(start, stop),)
    return x[key]


def _edge(value: Any, x: NDArray, axis: int, dtype: np.dtype, what: str) -> NDArray:
    """prepend / append as an array of x's shape but along axis (a scalar is one slice)."""
    if isinstance(value, NDArray):
        if value.ctx != x.ctx:
            raise ValueError("diff: x is on %s but %s is on %s" % (x.ctx, what, value.ctx))
        if value.ndim != x.ndim or any(s != t for i, (s, t) in
                                       enumerate(zip(value.shape, x.shape)) if i != axis):
            raise ValueError("diff: %s of shape %s does not match x.shape %s but along axis %d"
                             % (what, value.shape, x.shape, axis))
        return value if value.dtype == dtype else value.astype(dtype)
    if isinstance(value, (bool, int, float, np.generic)):
        shape = x.shape[:axis] + (1,) + x.shape[axis + 1:]
        out = _core.empty(shape, x.ctx, dtype)
        out[...] = value
        return out
    raise TypeError("diff: %s must be an NDArray or a Python scalar, got %s"
                    % (what, type(value).__name__))


@documented("x", "diff_axis", "n", "prepend", returns="The differences, in x's dtype (promoted "
            "with prepend/append arrays); bool for bool input.")
def diff(x: NDArray, /, *, axis: int = -1, n: int = 1, prepend: Any = None,
         append: Any = None) -> NDArray:
    """The n-th discrete difference along ``axis``: out[i] = x[i + 1] - x[i], n times, after
    ``prepend`` and ``append`` (arrays or scalars) are joined to x along ``axis``. bool input
    gives x[i + 1] != x[i]."""
    x = check_array(x, "diff")
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise TypeError("diff: n must be an int, got %r" % (n,))
    if n < 0:
        raise ValueError("diff: n must be non-negative, got %d" % n)
    if x.ndim == 0:
        raise ValueError("diff: x must have at least one dimension (got a 0-d array)")
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError("diff: axis must be an int, got %r" % (axis,))
    (a,) = normalize_axes(axis, x.ndim, "diff")
    parts = [x]
    dtype = x.dtype
    for value in (prepend, append):
        if isinstance(value, NDArray):
            dtype = _promote(dtype, value.dtype)
    if prepend is not None:
        parts.insert(0, _edge(prepend, x, a, dtype, "prepend"))
    if append is not None:
        parts.append(_edge(append, x, a, dtype, "append"))
    y = concat(parts, axis=a) if len(parts) > 1 else x  # concat promotes x to dtype
    for _ in range(n):
        if y.shape[a] == 0:
            break
        later, earlier = _along(y, a, 1, None), _along(y, a, None, -1)
        y = (later != earlier) if y.dtype == np.bool_ else _subtract(later, earlier)
    return y


def _subtract(a: NDArray, b: NDArray) -> NDArray:
    """a - b, wrapping for unsigned integers: uint16/32/64 through int64 (the same bits modulo
    2**64; the elementwise table's arithmetic covers the other integers itself)."""
    if a.dtype.kind == "u" and a.dtype.itemsize > 1:
        wide = np.dtype(np.int64)
        return (a.astype(wide) - b.astype(wide)).astype(a.dtype)
    return a - b


__all__ = ["cumulative_prod", "cumulative_sum", "diff"]
