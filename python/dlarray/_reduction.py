"""The reduce primitive as the array API functions use it: axes normalised, adjacent reduced axes
merged into one ``[outer, n, inner]`` call of the ``reduce`` op (``dlarray.ops.reduce``), runs of
non-adjacent axes reduced one after another (the last first, so that no transposed copy is
made; on CUDA the leading run first where the last one would make short rows), empty reductions
answered with the kind's identity or a ValueError.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _core, _dtypes, ops
from ._core import NDArray

AxisLike = Optional[Union[int, Sequence[int]]]

_KINDS = {"sum": 0, "prod": 1, "min": 2, "max": 3, "any": 4, "all": 5, "argmin": 6,
          "argmax": 7}
_IDENTITY = {"sum": 0.0, "prod": 1.0, "any": 0.0, "all": 1.0}
FLOAT32 = np.dtype(np.float32)
INT64 = np.dtype(np.int64)
BOOL = np.dtype(np.bool_)
# The 16-bit floats, which compute in float32 (a set of dtypes: dtype.name costs microseconds).
HALVES = frozenset(d for d in (np.dtype(np.float16), _dtypes.bfloat16) if d is not None)


def compute_dtype(d: np.dtype) -> np.dtype:
    """The dtype d's reductions compute in: float32 for the 16-bit floats, d otherwise."""
    return FLOAT32 if d in HALVES else d


def check_array(x: Any, where: str, complex_ok: bool = False) -> NDArray:
    """x itself when it is an NDArray (complex only where complex_ok: the sums and products),
    else a TypeError naming the function."""
    if not isinstance(x, NDArray):
        raise TypeError("%s: x must be a dlarray NDArray, got %s" % (where, type(x).__name__))
    if x.dtype.kind == "c" and not complex_ok:
        raise TypeError("%s: x must have a real dtype (complex numbers have no order), got %s"
                        % (where, x.dtype))
    return x


def normalize_axes(axis: AxisLike, ndim: int, where: str) -> tuple[int, ...]:
    """axis (None, an int or a sequence of ints) as sorted non-negative axes of an ndim-array.
    Raises TypeError for non-integers and AxisError (a ValueError and an IndexError) for axes out
    of range or repeated."""
    if axis is None:
        return tuple(range(ndim))
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in items:
        if isinstance(a, (bool, np.bool_)):
            raise TypeError("%s: axis must be an int or a tuple of ints, got %r" % (where, a))
        try:
            a = operator.index(a)
        except TypeError:
            raise TypeError("%s: axis must be an int or a tuple of ints, got %r"
                            % (where, a)) from None
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(
                "%s: axis %d is out of bounds for an array of dimension %d" % (where, a, ndim))
        a %= ndim if ndim else 1
        if a in out:
            raise np.exceptions.AxisError("%s: axis %d is repeated in %r" % (where, a, axis))
        out.append(a)
    return tuple(sorted(out))


def _groups(axes: tuple[int, ...]) -> list[tuple[int, int]]:
    """Runs of adjacent axes as (first, last + 1)."""
    runs: list[tuple[int, int]] = []
    for a in axes:
        if runs and runs[-1][1] == a:
            runs[-1] = (runs[-1][0], a + 1)
        else:
            runs.append((a, a + 1))
    return runs


# Plans of earlier calls: (shape, axis, keepdims) -> ([(outer, n, inner, shape after)], final
# shape), for axes given as None, an int or a tuple of ints (exact types: True == 1 and 1.0 == 1
# as keys, and those must still raise). Only reductions with a reduced axis and elements to reduce
# and to write are planned; the rest take the general path, which also validates.
_PLANS: dict = {}
_PLAN_LIMIT = 4096


def _plan_key(x: NDArray, axis: AxisLike, keepdims: Any) -> Optional[tuple]:
    if type(keepdims) is not bool:
        return None
    if axis is None or type(axis) is int:
        return x.shape, axis, keepdims
    if type(axis) is tuple and all(type(a) is int for a in axis):
        # The order of the runs may depend on the device.
        return x.shape, axis, keepdims, x.ctx.device_type
    return None


# CUDA's reduce reads rows shorter than this with a warp each, at 0.75x the bandwidth of its
# column kernel down a wide array: sum over (0, 2) of 256 x 256 x 256 took 1.33x torch's time
# as rows of 256 then 256 columns, where 256 x 65536 columns then rows of 256 read the same
# bytes once, the bulk of them as columns (backends/cuda/reduce.cu; H200).
_CUDA_SHORT_ROW = 2048
_CUDA_WIDE_COLUMNS = 4096


def _order(shape: tuple, runs: list, device_type: int) -> list:
    """The runs in the order they are reduced: the last first, or on CUDA the leading run first
    when the last run's rows are short and the leading run's columns are wide."""
    order = list(reversed(runs))
    if (device_type == 2 and len(runs) > 1 and runs[0][0] == 0
            and math.prod(shape[runs[-1][0]:runs[-1][1]]) < _CUDA_SHORT_ROW
            and math.prod(shape[runs[0][1]:]) >= _CUDA_WIDE_COLUMNS):
        order = [runs[0]] + order[:-1]
    return order


def _make_plan(shape: tuple, axes: tuple[int, ...], final: tuple,
               device_type: int) -> tuple[list, tuple]:
    runs = _groups(axes)
    # The dims left, each with the run it belongs to (None: kept).
    dims = [(size, next((k for k, (a, b) in enumerate(runs) if a <= i < b), None))
            for i, size in enumerate(shape)]
    steps = []
    for run in _order(shape, runs, device_type):
        k = runs.index(run)
        at = [i for i, (_, r) in enumerate(dims) if r == k]
        first, stop = at[0], at[-1] + 1
        outer = math.prod(size for size, _ in dims[:first])
        n = math.prod(size for size, _ in dims[first:stop])
        inner = math.prod(size for size, _ in dims[stop:])
        dims = dims[:first] + dims[stop:]
        steps.append((outer, n, inner, tuple(size for size, _ in dims)))
    return steps, final


def reduce(x: NDArray, kind: str, axis: AxisLike, keepdims: bool, out_dtype: np.dtype,
           where: str) -> NDArray:
    """x reduced by `kind` over `axis` (x already of the dtype to compute in); the result of
    dtype out_dtype (the kind's: x's, bool or int64)."""
    key = _plan_key(x, axis, keepdims)
    plan = _PLANS.get(key) if key is not None else None
    if plan is None:
        plan = _general(x, kind, axis, keepdims, out_dtype, where)
        if isinstance(plan, NDArray):  # an empty or axis-free reduction, done
            return plan
        if key is not None and len(_PLANS) < _PLAN_LIMIT:
            _PLANS[key] = plan
    steps, final = plan
    y = x if x.is_contiguous else x.copy()
    code = _KINDS[kind]
    for outer, n, inner, shape in steps:
        out = _core.empty((outer, inner), y.ctx, out_dtype)
        if outer * inner:
            ops.reduce(y.reshape(outer, n, inner), code, out)
        y = out.reshape(shape)
    return y.reshape(final)


def _general(x: NDArray, kind: str, axis: AxisLike, keepdims: bool, out_dtype: np.dtype,
             where: str) -> Union[NDArray, tuple[list, tuple]]:
    """The checks of a reduction, then the plan of its reduce calls, or the result itself where
    nothing is reduced or nothing is written (no plan)."""
    if not isinstance(keepdims, (bool, np.bool_)):
        raise TypeError("%s: keepdims must be a bool, got %r" % (where, keepdims))
    axes = normalize_axes(axis, x.ndim, where)
    kept = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    final = kept if keepdims else tuple(s for i, s in enumerate(x.shape) if i not in axes)
    count = math.prod(x.shape[a] for a in axes)
    if count == 0 or not axes:
        if count == 0 and math.prod(final) > 0:
            if kind not in _IDENTITY:
                raise ValueError("%s: zero-size array to a reduction operation that has no "
                                 "identity (reduced axes of x.shape %s: %s)"
                                 % (where, x.shape, axes))
            out = _core.empty(final, x.ctx, out_dtype)
            ops.array_set(out, _IDENTITY[kind])
            return out
        # Nothing reduced (axis=()), or no outputs: one reduction over a length-1 axis.
        y = x if x.is_contiguous else x.copy()
        out = _core.empty((y.size, 1), x.ctx, out_dtype)
        if out.size:
            ops.reduce(y.reshape(y.size, 1, 1), _KINDS[kind], out)
        return out.reshape(final)
    return _make_plan(tuple(x.shape), axes, final, x.ctx.device_type)


def sum_dtype(x: NDArray, dtype: Any, where: str) -> np.dtype:
    """The result dtype of sum / prod / cumulative_sum: dtype, else NumPy's default (bool and
    signed integers int64, unsigned uint64, floats their own)."""
    if dtype is not None:
        d = np.dtype(_core.parse_dtype(dtype))
        if x.dtype.kind == "c" and d.kind != "c":
            raise TypeError("%s: dtype=%s would drop the imaginary part of %s x"
                            % (where, d, x.dtype))
        return d
    if x.dtype.kind in "bi":
        return INT64
    if x.dtype.kind == "u":
        return np.dtype(np.uint64)
    return x.dtype


# The parameters of the reductions, described once; `documented` adds them to each docstring.
_PARAMETERS = {
    "x": "x : NDArray\n    The input (any dtype; complex only for the sums, products and mean).",
    "axis": "axis : int, tuple of ints or None, optional\n    The axes to reduce: None (default) "
            "every axis, ``()`` none. Negative axes count from the end; an axis out of range or "
            "repeated raises ``numpy.exceptions.AxisError`` (a ValueError and an IndexError).",
    "axis1": "axis : int or None, optional\n    The one axis; None: over the flattened array "
             "(``argmin``/``argmax``) or, for 1-D input, axis 0 (the cumulative functions).",
    "keepdims": "keepdims : bool, optional\n    Keep the reduced axes, of length 1 (default "
                "False).",
    "dtype": "dtype : dtype, optional\n    The result's dtype, which the computation uses too. "
             "Default: int64 for bool and signed integers, uint64 for unsigned integers, the "
             "input's for floats (float16 and bfloat16 are computed in float32).",
    "correction": "correction : int or float, optional\n    Subtracted from the number of "
                  "elements N in the divisor (0: population, 1: sample); default 0.",
    "include_initial": "include_initial : bool, optional\n    Put the identity (0 for sums, 1 "
                       "for products) first, so the result is one longer along ``axis``.",
    "n": "n : int, optional\n    How many times to take the difference (default 1; 0 returns x).",
    "diff_axis": "axis : int, optional\n    The axis (default -1, the last).",
    "prepend": "prepend, append : NDArray or scalar, optional\n    Joined to x before / after "
               "along ``axis`` first (an array: x's shape off ``axis``; a scalar: one slice).",
}


def documented(*names: str, returns: str) -> Any:
    """Appends NumPy-style Parameters and Returns sections to a function's docstring."""
    def wrap(fn: Any) -> Any:
        body = "\n".join(_PARAMETERS[n] for n in names)
        fn.__doc__ = "%s\n\nParameters\n----------\n%s\n\nReturns\n-------\nNDArray\n    %s\n" % (
            fn.__doc__.rstrip(), body, returns)
        return fn
    return wrap
