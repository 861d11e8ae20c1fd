"""The array API standard's reductions: ``all``, ``any``, ``sum``, ``prod``, ``min``, ``max``,
``mean``, ``var``, ``std``, ``argmin``, ``argmax`` and ``count_nonzero``, all composed from one
device primitive, the ``reduce`` op (see ``dlarray.ops.reduce``): it sees its input as a
contiguous ``[outer, n, inner]`` array and reduces the middle axis with a ``kind`` (sum, prod,
min, max, any, all, argmin, argmax).

A set of adjacent axes is one such reduction. Axes that are not adjacent (``axis=(0, 2)``) are
reduced group by group, the last group first, so no transposed copy is made. Results follow
NumPy: sums and products of bool and signed integers are int64, of unsigned integers uint64
(unless ``dtype=`` says otherwise); float16 and bfloat16 accumulate in float32; NaN propagates
through ``min``/``max`` and is the answer of ``argmin``/``argmax`` (its first index); ``min``,
``max``, ``argmin`` and ``argmax`` of nothing raise ValueError; ``mean`` of nothing is NaN.
"""
from __future__ import annotations

import inspect
import math
from typing import Any, Optional, Union

import numpy as np

from . import _core, ops
from ._core import NDArray
from ._cumulative_api import cumulative_prod, cumulative_sum, diff
from ._reduction import (_KINDS, BOOL, HALVES, INT64, AxisLike, check_array, compute_dtype,
                         documented, normalize_axes, reduce, sum_dtype)

__all__ = ["all", "any", "argmax", "argmin", "count_nonzero", "cumulative_prod", "cumulative_sum",
           "diff", "max", "mean", "min", "prod", "std", "sum", "var"]


def _accumulate(x: NDArray, kind: str, axis: AxisLike, keepdims: bool, dtype: Any,
                where: str) -> NDArray:
    x = check_array(x, where, complex_ok=True)
    result = sum_dtype(x, dtype, where)
    compute = compute_dtype(result)
    y = reduce(x if x.dtype == compute else x.astype(compute), kind, axis, keepdims, compute,
               where)
    return y if y.dtype == result else y.astype(result)


@documented("x", "axis", "dtype", "keepdims", returns="The sums, on x's device.")
def sum(x: NDArray, /, *, axis: AxisLike = None, dtype: Any = None,  # noqa: A001
        keepdims: bool = False) -> NDArray:
    """The sum over ``axis`` (None: every axis; an int or a tuple of ints; ``()``: none).

    ``dtype``: the result's (and the computation's) dtype; default int64 for bool and signed
    integers, uint64 for unsigned, the input's for floats (float16/bfloat16 add in float32).
    The sum of nothing is 0. Raises AxisError (ValueError, IndexError) for a bad axis.
    """
    return _accumulate(x, "sum", axis, keepdims, dtype, "sum")


@documented("x", "axis", "dtype", "keepdims", returns="The products, on x's device.")
def prod(x: NDArray, /, *, axis: AxisLike = None, dtype: Any = None,
         keepdims: bool = False) -> NDArray:
    """The product over ``axis``; dtype rules as :func:`sum`; the product of nothing is 1."""
    return _accumulate(x, "prod", axis, keepdims, dtype, "prod")


def _extreme(x: NDArray, kind: str, axis: AxisLike, keepdims: bool) -> NDArray:
    x = check_array(x, kind)
    return reduce(x, kind, axis, keepdims, x.dtype, kind)


@documented("x", "axis", "keepdims", returns="The minima, of x's dtype.")
def min(x: NDArray, /, *, axis: AxisLike = None, keepdims: bool = False) -> NDArray:  # noqa: A001
    """The minimum over ``axis`` (NaN if any element is NaN); ValueError for an empty reduction."""
    return _extreme(x, "min", axis, keepdims)


@documented("x", "axis", "keepdims", returns="The maxima, of x's dtype.")
def max(x: NDArray, /, *, axis: AxisLike = None, keepdims: bool = False) -> NDArray:  # noqa: A001
    """The maximum over ``axis`` (NaN if any element is NaN); ValueError for an empty reduction."""
    return _extreme(x, "max", axis, keepdims)


def _logical(x: NDArray, kind: str, axis: AxisLike, keepdims: bool) -> NDArray:
    x = check_array(x, kind, complex_ok=True)
    if x.dtype.kind == "c":  # true where either part is non-zero (the reduce op is real-only)
        x = x != 0
    return reduce(x, kind, axis, keepdims, BOOL, kind)


@documented("x", "axis", "keepdims", returns="bool.")
def all(x: NDArray, /, *, axis: AxisLike = None, keepdims: bool = False) -> NDArray:  # noqa: A001
    """Whether every element over ``axis`` is non-zero (NaN counts as True); True for nothing."""
    return _logical(x, "all", axis, keepdims)


@documented("x", "axis", "keepdims", returns="bool.")
def any(x: NDArray, /, *, axis: AxisLike = None, keepdims: bool = False) -> NDArray:  # noqa: A001
    """Whether some element over ``axis`` is non-zero (NaN counts as True); False for nothing."""
    return _logical(x, "any", axis, keepdims)


def _arg(x: NDArray, kind: str, axis: Optional[int], keepdims: bool) -> NDArray:
    x = check_array(x, kind)
    if axis is not None and not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError("%s: axis must be an int or None, got %r" % (kind, axis))
    if not isinstance(keepdims, (bool, np.bool_)):
        raise TypeError("%s: keepdims must be a bool, got %r" % (kind, keepdims))
    if x.size == 0:
        raise ValueError("%s: attempt to get %s of an empty sequence (x.shape %s)"
                         % (kind, kind, x.shape))
    if axis is None:
        y = reduce(x.reshape(-1) if x.is_contiguous else x.copy().reshape(-1), kind, 0, False,
                   INT64, kind)
        return y.reshape((1,) * x.ndim) if keepdims else y
    axes = normalize_axes(axis, x.ndim, kind)
    if x.shape[axes[0]] == 0:
        raise ValueError("%s: attempt to get %s of an empty sequence (axis %d of x.shape %s)"
                         % (kind, kind, axes[0], x.shape))
    return reduce(x, kind, axes, keepdims, INT64, kind)


@documented("x", "axis1", "keepdims", returns="int64 indices.")
def argmin(x: NDArray, /, *, axis: Optional[int] = None, keepdims: bool = False) -> NDArray:
    """The index (int64) of the first minimum over ``axis`` (None: of the flattened array); the
    first NaN if there is one. ValueError for an empty reduction."""
    return _arg(x, "argmin", axis, keepdims)


@documented("x", "axis1", "keepdims", returns="int64 indices.")
def argmax(x: NDArray, /, *, axis: Optional[int] = None, keepdims: bool = False) -> NDArray:
    """The index (int64) of the first maximum over ``axis``; as :func:`argmin`."""
    return _arg(x, "argmax", axis, keepdims)


@documented("x", "axis", "keepdims", returns="int64 counts.")
def count_nonzero(x: NDArray, /, *, axis: AxisLike = None, keepdims: bool = False) -> NDArray:
    """The number (int64) of non-zero elements over ``axis`` (NaN counts)."""
    x = check_array(x, "count_nonzero")
    nonzero = x if x.dtype == np.bool_ else (x != 0)
    return reduce(nonzero.astype(np.int64), "sum", axis, keepdims, INT64,
                  "count_nonzero")


def _float_result(x: NDArray, dtype: Any, where: str) -> tuple[np.dtype, np.dtype]:
    """(result dtype, compute dtype) of mean / var: floats keep theirs (float16 and bfloat16
    compute in float32), integers and bool give float64, as in NumPy."""
    result = np.dtype(_core.parse_dtype(dtype)) if dtype is not None else (
        x.dtype if x.dtype.kind in "fc" or x.dtype in HALVES else np.dtype(np.float64))
    if where == "mean" and result.kind == "c":  # the mean of complex values is complex
        return result, result
    if result.kind != "f" and result not in HALVES:
        raise TypeError("%s: the result dtype must be a real floating type, got %s"
                        % (where, result))
    return result, compute_dtype(result)


def _count(x: NDArray, axis: AxisLike, where: str) -> int:
    return math.prod(x.shape[a] for a in normalize_axes(axis, x.ndim, where))


def _divide(total: NDArray, count: float) -> NDArray:
    # An empty reduction divides 0 by 0: NaN, as NumPy's mean (without its warning).
    if count == 0 and total.dtype.kind == "c":  # nan + nan j, as NumPy
        return _core.array(np.full(total.shape, complex(math.nan, math.nan), total.dtype),
                           total.ctx, total.dtype)
    if count == 0:
        out = _core.empty(total.shape, total.ctx, total.dtype)
        ops.array_set(out, math.nan)
        return out
    if total.dtype.kind == "f" and total.is_contiguous:
        # The scalar op that `total / float(count)` comes to, without the operator's promotion
        # steps (a reduction's result is compact and of a float dtype).
        out = _core.empty(total.shape, total.ctx, total.dtype)
        ops.matrix_elementwise_divide_by_const(total, float(count), out)
        return out
    return total / float(count)


@documented("x", "axis", "keepdims", returns="The means (float64 for integer or bool input).")
def mean(x: NDArray, /, *, axis: AxisLike = None, keepdims: bool = False) -> NDArray:
    """The arithmetic mean over ``axis`` (float64 for integer input; float16 and bfloat16 add in
    float32); NaN for an empty reduction."""
    x = check_array(x, "mean", complex_ok=True)
    result, compute = _float_result(x, None, "mean")
    y = x if x.dtype == compute else x.astype(compute)
    m = _divide(reduce(y, "sum", axis, keepdims, compute, "mean"), _count(x, axis, "mean"))
    return m if m.dtype == result else m.astype(result)


@documented("x", "axis", "correction", "keepdims",
            returns="The variances (float64 for integer or bool input).")
def var(x: NDArray, /, *, axis: AxisLike = None, correction: Union[int, float] = 0.0,
        keepdims: bool = False) -> NDArray:
    """The variance over ``axis``: sum((x - mean)**2) / (N - correction); NaN where
    N - correction <= 0 and the sum is 0, inf where it is positive (NumPy's result)."""
    x = check_array(x, "var")
    if isinstance(correction, bool) or not isinstance(correction, (int, float, np.number)):
        raise TypeError("var: correction must be a real number, got %r" % (correction,))
    result, compute = _float_result(x, None, "var")
    y = x if x.dtype == compute else x.astype(compute)
    n = _count(x, axis, "var")
    m = _divide(reduce(y, "sum", axis, True, compute, "var"), n)
    d = y - m
    s = reduce(d * d, "sum", axis, keepdims, compute, "var")
    # No degrees of freedom left: s / 0, inf or NaN (0 / 0) as in NumPy.
    denominator = n - correction
    v = s / float(denominator if denominator > 0 else 0.0)
    return v if v.dtype == result else v.astype(result)


@documented("x", "axis", "correction", "keepdims", returns="The standard deviations.")
def std(x: NDArray, /, *, axis: AxisLike = None, correction: Union[int, float] = 0.0,
        keepdims: bool = False) -> NDArray:
    """The standard deviation: the square root of :func:`var`."""
    v = var(x, axis=axis, correction=correction, keepdims=keepdims)
    return ops.sqrt(v)  # the sqrt op of the elementwise table, in v's dtype (float16 too)


def _install_methods(cls: type) -> None:
    """The reductions as NDArray methods, NumPy's way: ``x.sum(1)``, every parameter after
    ``self`` positional or keyword (the function's keyword-only ones too)."""
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD

    def method(fn: Any) -> Any:
        params = list(inspect.signature(fn).parameters.values())
        sig = inspect.Signature([inspect.Parameter("self", positional)] +
                                [p.replace(kind=positional) for p in params[1:]])

        def bound(*args: Any, **kwargs: Any) -> NDArray:
            arguments = sig.bind(*args, **kwargs).arguments
            self = arguments.pop("self")
            # None means "the default" for every parameter of a method (NumPy's habit).
            return fn(self, **{k: v for k, v in arguments.items() if v is not None})
        bound.__name__ = bound.__qualname__ = fn.__name__
        bound.__signature__ = sig  # type: ignore[attr-defined]
        bound.__doc__ = "The same as ``dlarray.%s(self, ...)``.\n\n%s" % (fn.__name__, fn.__doc__)
        return bound
    for fn in (sum, prod, min, max, mean, var, std, argmin, argmax, all, any):
        setattr(cls, fn.__name__, method(fn))


_install_methods(NDArray)


def _whole_plan(name: str, dtype: np.dtype) -> Optional[tuple]:
    """The reduce calls ``sum/prod/min/max/mean(x, axis=..., keepdims=...)`` make for a compact,
    non-empty array of dtype with at least one dimension: ("reduce", dtype, kind), and for mean
    the op that then divides the sums by the count in place; None where the general path casts
    (the sum of int8 is int64, float16 adds in float32, the mean of integers is float64) or
    raises (complex min). The C++ fast path (_core._fast_function) asks once per dtype; it plans
    the calls over the axes as reduce() does."""
    if name in ("all", "any", "argmax", "argmin"):  # bool or int64 results, any real input
        return None if dtype.kind == "c" else (
            "reduce", BOOL if name in ("all", "any") else INT64, float(_KINDS[name]))
    if name in ("min", "max"):
        result = None if dtype.kind == "c" else dtype
    elif name == "mean":
        result = dtype if dtype.kind == "f" else None
    else:
        result = {"b": INT64, "i": INT64, "u": np.dtype(np.uint64)}.get(dtype.kind, dtype)
    if result != dtype or compute_dtype(dtype) != dtype:
        return None
    if name == "mean":  # as _divide: the sums divided by the count through the scalar op
        return ("reduce", dtype, float(_KINDS["sum"]), "matrix_elementwise_divide_by_const",
                "reduce_mean")
    return "reduce", dtype, float(_KINDS[name])


def _with_fast_path(fn: Any) -> Any:
    signature = "(x, /, *, axis=None, dtype=None, keepdims=False)" if fn.__name__ in (
        "sum", "prod") else "(x, /, *, axis=None, keepdims=False)"
    return _core._fast_function(fn.__name__, fn, _whole_plan,
                                "%s%s\n--\n\n%s" % (fn.__name__, signature, fn.__doc__), True,
                                fn.__name__ in ("argmax", "argmin"))


# The general paths, by name (the tests compare the fast path with them).
_GENERAL = {_fn.__name__: _fn for _fn in (sum, prod, min, max, mean, all, any, argmax, argmin)}
# Replaced through globals(): the typed definitions above stay what type checkers see.
for _fn in _GENERAL.values():
    globals()[_fn.__name__] = _with_fast_path(_fn)
del _fn
