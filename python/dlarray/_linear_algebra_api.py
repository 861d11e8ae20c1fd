"""The array API standard's linear algebra functions of the main namespace: ``matmul``,
``tensordot``, ``vecdot`` (the ``linalg`` extension is issue 22), and ``astype``.

All are composed from device primitives. ``matmul`` of float dtypes runs the ``matrix_multiply``
op (BLAS, cuBLAS, the OpenCL GEMM) once per matrix of the broadcast batch, passing a transposed
view of a compact matrix as that matrix with a transpose flag; every other dtype (integers, bool,
complex) multiplies elementwise with broadcasting and sums the shared axis with the ``reduce``
op, in the result dtype (integers wrap as NumPy's do); large complex products run as four real
GEMMs of the parts instead. ``tensordot`` is a ``matmul`` of the
operands permuted and reshaped to matrices; ``vecdot`` is ``sum(conj(x1) * x2, axis)``.
"""
from __future__ import annotations

import operator
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core, ops
from ._core import NDArray

__all__ = ["astype", "matmul", "tensordot", "vecdot"]


def _check(x: Any, where: str, name: str) -> NDArray:
    if not isinstance(x, NDArray):
        raise TypeError("%s: %s must be an NDArray, got %s" % (where, name, type(x).__name__))
    return x


def _common(x1: NDArray, x2: NDArray, where: str) -> Tuple[NDArray, NDArray, np.dtype]:
    """The operands in their promoted dtype, on one device (else a ValueError naming both)."""
    from ._dtypes import result_type
    _check(x1, where, "x1")
    _check(x2, where, "x2")
    if x1.ctx != x2.ctx:
        raise ValueError("%s: x1 is on %s and x2 on %s; move one with to_device"
                         % (where, x1.ctx, x2.ctx))
    if x1.dtype == np.bool_ or x2.dtype == np.bool_:
        raise TypeError("%s: needs numeric dtypes, got %s and %s" % (where, x1.dtype, x2.dtype))
    dtype = result_type(x1.dtype, x2.dtype)
    return (x1 if x1.dtype == dtype else x1.astype(dtype),
            x2 if x2.dtype == dtype else x2.astype(dtype), dtype)


def _gemm_operand(m: NDArray) -> Tuple[NDArray, bool]:
    # A transposed view of a compact matrix is passed as that matrix with a transpose flag.
    if m.is_contiguous:
        return m, False
    if m.T.is_contiguous:
        return m.T, True
    return m.copy(), False


# Complex matmuls of more products than this run as four real GEMMs of the parts (the
# elementwise products of the multiply-and-sum path would take n * k * m elements of memory).
_COMPLEX_PRODUCTS = 1 << 20


def _complex_by_parts(x1: NDArray, x2: NDArray, dtype: np.dtype) -> NDArray:
    """x1 @ x2 for complex operands: (ar br - ai bi) + (ar bi + ai br) j, each product a real
    matmul (the device's GEMM). Finite values as the schoolbook sums; an infinite or NaN part
    spreads NaN further than NumPy's zgemm would."""
    from ._elementwise_api import imag, real
    part = np.dtype(np.float32) if np.dtype(dtype) == np.complex64 else np.dtype(np.float64)
    ar, ai, br, bi = real(x1), imag(x1), real(x2), imag(x2)
    re = _stacked(ar, br, part) - _stacked(ai, bi, part)
    im = _stacked(ar, bi, part) + _stacked(ai, br, part)
    return re.astype(dtype) + im.astype(dtype) * 1j


def _stacked(x1: NDArray, x2: NDArray, dtype: np.dtype) -> NDArray:
    """matmul of (..., n, k) and (..., k, m) operands whose batch shapes broadcast."""
    from ._manipulation_api import broadcast_to, expand_dims
    from ._statistics_api import sum as sum_
    batch = np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    n, k, m = x1.shape[-2], x1.shape[-1], x2.shape[-1]
    shape = tuple(batch) + (n, m)
    gemm_dtypes = ops.op_info("matrix_multiply")["dtypes"]
    if (np.dtype(dtype).kind == "c" and k > 0
            and int(np.prod(batch, dtype=np.int64)) * n * k * m > _COMPLEX_PRODUCTS):
        return _complex_by_parts(x1, x2, dtype)
    if np.dtype(dtype).name not in gemm_dtypes or k == 0:
        if k == 0:
            return _core.array(np.zeros(shape, dtype), x1.ctx, dtype)
        from ._elementwise_api import multiply
        products = multiply(expand_dims(x1, axis=-1), expand_dims(x2, axis=-3))
        return sum_(products, axis=-2, dtype=dtype)
    a = broadcast_to(x1, tuple(batch) + (n, k))
    b = broadcast_to(x2, tuple(batch) + (k, m))
    out = _core.empty(shape, x1.ctx, dtype)
    if out.size == 0:
        return out
    for index in np.ndindex(*batch):
        (xa, ta), (xb, tb) = _gemm_operand(a[index]), _gemm_operand(b[index])
        target = out[index]
        ops.matrix_multiply(xa, ta, xb, tb, target)
    return out


def matmul(x1: NDArray, x2: NDArray, /) -> NDArray:
    """The matrix product of two arrays, NumPy's ``matmul`` (also ``x1 @ x2``).

    Parameters
    ----------
    x1 : NDArray
        At least one dimension; a 1-D array is a row vector (its added axis is removed again).
    x2 : NDArray
        At least one dimension; a 1-D array is a column vector. The leading (batch) dimensions of
        both broadcast; ``x1.shape[-1]`` must equal ``x2.shape[-2]`` (``x2.shape[0]`` for 1-D).

    Returns
    -------
    NDArray
        The product in the promoted dtype, on the operands' device.

    Raises
    ------
    TypeError
        An operand is not an NDArray, or is bool.
    ValueError
        A 0-d operand, shapes that do not match or broadcast, or operands on two devices.
    """
    x1, x2, dtype = _common(x1, x2, "matmul")
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("matmul: operands need at least one dimension, got shapes %s and %s; "
                         "use multiply for scalars" % (x1.shape, x2.shape))
    a = x1.reshape((1,) + x1.shape) if x1.ndim == 1 else x1
    b = x2.reshape(x2.shape + (1,)) if x2.ndim == 1 else x2
    if a.shape[-1] != b.shape[-2]:
        raise ValueError("matmul: the last dimension of x1 (%d) differs from the %s dimension "
                         "of x2 (%d), shapes %s and %s"
                         % (a.shape[-1], "first" if x2.ndim == 1 else "second to last",
                            b.shape[-2], x1.shape, x2.shape))
    try:
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError("matmul: the batch dimensions of shapes %s and %s do not broadcast"
                         % (x1.shape, x2.shape)) from None
    out = _stacked(a, b, dtype)
    if x1.ndim == 1:
        out = out.reshape(out.shape[:-2] + out.shape[-1:])
    if x2.ndim == 1:
        out = out.reshape(out.shape[:-1])
    return out


def _tensordot_axes(axes: Any, nd1: int, nd2: int) -> Tuple[Sequence[int], Sequence[int]]:
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        n = int(axes)
        if n < 0 or n > min(nd1, nd2):
            raise ValueError("tensordot: axes=%d is outside [0, %d]" % (n, min(nd1, nd2)))
        return list(range(nd1 - n, nd1)), list(range(n))
    try:
        first, second = axes
        a1 = [operator.index(i) for i in first]
        a2 = [operator.index(i) for i in second]
    except (TypeError, ValueError):
        raise TypeError("tensordot: axes must be an int or a pair of sequences of ints, got %r"
                        % (axes,)) from None
    if len(a1) != len(a2):
        raise ValueError("tensordot: axes pairs %r and %r differ in length" % (a1, a2))
    for axs, nd, name in ((a1, nd1, "x1"), (a2, nd2, "x2")):
        for i in axs:
            if not -nd <= i < nd:
                raise ValueError("tensordot: axis %d is out of range for %s of %d dimensions"
                                 % (i, name, nd))
    a1 = [i % nd1 for i in a1]
    a2 = [i % nd2 for i in a2]
    if len(set(a1)) != len(a1) or len(set(a2)) != len(a2):
        raise ValueError("tensordot: an axis is repeated in %r" % (axes,))
    return a1, a2


def tensordot(x1: NDArray, x2: NDArray, /, *,
              axes: Union[int, Tuple[Sequence[int], Sequence[int]]] = 2) -> NDArray:
    """The sum of products over the given axes, NumPy's ``tensordot``.

    Parameters
    ----------
    x1, x2 : NDArray
        The operands (numeric dtypes, one device).
    axes : int or (sequence of int, sequence of int)
        An int n contracts the last n axes of x1 with the first n of x2; a pair names the axes of
        each, in matching order (negative counts from the end). Contracted sizes must be equal.

    Returns
    -------
    NDArray
        The free axes of x1, then those of x2, in the promoted dtype.

    Raises
    ------
    TypeError
        Operands that are not numeric NDArrays, or axes of the wrong type.
    ValueError
        Axes out of range or repeated, contracted sizes that differ, or two devices.
    """
    from ._manipulation_api import permute_dims
    x1, x2, dtype = _common(x1, x2, "tensordot")
    a1, a2 = _tensordot_axes(axes, x1.ndim, x2.ndim)
    for i, j in zip(a1, a2):
        if x1.shape[i] != x2.shape[j]:
            raise ValueError("tensordot: axis %d of x1 (size %d) and axis %d of x2 (size %d) "
                             "differ" % (i, x1.shape[i], j, x2.shape[j]))
    free1 = [i for i in range(x1.ndim) if i not in a1]
    free2 = [j for j in range(x2.ndim) if j not in a2]
    def size(shape: Sequence[int]) -> int:
        return int(np.prod(shape, dtype=np.int64))

    k = size([x1.shape[i] for i in a1])
    left = permute_dims(x1, tuple(free1 + a1)).reshape((size([x1.shape[i] for i in free1]), k))
    right = permute_dims(x2, tuple(a2 + free2)).reshape((k, size([x2.shape[j] for j in free2])))
    out = _stacked(left, right, dtype)
    return out.reshape(tuple(x1.shape[i] for i in free1) + tuple(x2.shape[j] for j in free2))


def vecdot(x1: NDArray, x2: NDArray, /, *, axis: int = -1) -> NDArray:
    """The dot product of vectors along ``axis``: ``sum(conj(x1) * x2, axis)``.

    Parameters
    ----------
    x1, x2 : NDArray
        Numeric operands on one device whose shapes broadcast; the size of ``axis`` must be the
        same in both (it is not broadcast).
    axis : int
        The axis of the broadcast shape holding the vectors, negative to count from the end.

    Returns
    -------
    NDArray
        The broadcast shape without ``axis``, in the promoted dtype.

    Raises
    ------
    TypeError
        Operands that are not numeric NDArrays, or an axis that is not an int.
    ValueError
        Shapes that do not broadcast, vector sizes that differ, an axis out of range, or two
        devices.
    """
    from ._elementwise_api import multiply
    from ._statistics_api import sum as sum_
    x1, x2, dtype = _common(x1, x2, "vecdot")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError("vecdot: axis must be an int, got %s" % type(axis).__name__)
    try:
        shape = np.broadcast_shapes(x1.shape, x2.shape)
    except ValueError:
        raise ValueError("vecdot: shapes %s and %s do not broadcast" % (x1.shape, x2.shape)) \
            from None
    nd = len(shape)
    if not -nd <= axis < nd:
        raise ValueError("vecdot: axis %d is out of range for %d dimensions" % (axis, nd))
    ax = axis % nd

    def size(x: NDArray) -> Optional[int]:  # None: x lacks the axis (it would be broadcast)
        i = ax - (nd - x.ndim)
        return x.shape[i] if i >= 0 else None

    if size(x1) is None or size(x1) != size(x2):
        raise ValueError("vecdot: the vectors along axis %d differ in size (shapes %s and %s)"
                         % (axis, x1.shape, x2.shape))
    if np.dtype(dtype).kind == "c":
        from ._elementwise_api import conj
        x1 = conj(x1)
    return sum_(multiply(x1, x2), axis=ax, dtype=dtype)


def astype(x: NDArray, dtype: Any, /, *, copy: bool = True,
           device: Optional[Any] = None) -> NDArray:
    """``x`` converted to ``dtype`` (and moved to ``device``), the standard's ``astype``.

    Parameters
    ----------
    x : NDArray
        The array.
    dtype : dtype
        The target dtype; any conversion is allowed (floats to integers truncate, as NumPy's
        ``astype``; complex to real raises TypeError).
    copy : bool
        False returns ``x`` itself where nothing changes.
    device : device, optional
        Where the result goes (default: x's device).

    Returns
    -------
    NDArray
        The converted array.

    Raises
    ------
    TypeError
        x is not an NDArray, or the conversion is not allowed.
    """
    from ._dtypes import _as_dtype
    _check(x, "astype", "x")
    target = _as_dtype(dtype, "astype: dtype")
    y = x if target == x.dtype and not copy else x.astype(target, copy=copy)
    if device is not None and y.ctx != device:
        y = y.to_device(device)
    return y
