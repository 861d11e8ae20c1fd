"""``dlarray.linalg``: the array API standard's (2024.12) linear algebra extension, on stacks of
matrices (leading batch dimensions) on every device, for float32, float64, complex64 and
complex128 (integers compute in float64). For complex input the standard's transposes are
conjugate transposes (``cholesky``, ``svd``'s ``Vh``, ``pinv``), symmetric means Hermitian
(``eigh``, ``cholesky``), and eigenvalues, singular values and ``slogdet``'s ``logabsdet`` are real
of the input's precision.

The factorizations run the ``linalg_*`` ops (LAPACK on cpu, cuSOLVER on cuda; devices without
kernels copy to the CPU and back: the host fallback, ``__array_namespace_info__().capabilities()
["linalg host fallback"]``); everything else is composed from them and the namespace's views,
elementwise functions, reductions and ``matmul``. docs/linalg.md has the design.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple, Optional, Tuple, Union

import numpy as np

from . import _core
from ._core import NDArray
from ._linalg_primitives import (LinAlgError, check_info, float_dtype, matrices, real_dtype,
                                 require_array, run)
from ._linear_algebra_api import matmul, tensordot, vecdot
from ._manipulation_api import matrix_transpose

__all__ = ["LinAlgError", "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv",
           "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer",
           "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
           "vector_norm"]


class EighResult(NamedTuple):
    eigenvalues: NDArray
    eigenvectors: NDArray


class QRResult(NamedTuple):
    Q: NDArray
    R: NDArray


class SlogdetResult(NamedTuple):
    sign: NDArray
    logabsdet: NDArray


class SVDResult(NamedTuple):
    U: NDArray
    S: NDArray
    Vh: NDArray


def _xp() -> Any:
    import dlarray
    return dlarray


def _eye_stack(n: int, m: int, batch: Tuple[int, ...], like: NDArray) -> NDArray:
    """Identity-like (n, m) matrices (ones on the main diagonal) broadcast to batch + (n, m)."""
    xp = _xp()
    eye = xp.eye(n, m, dtype=like.dtype, device=like.device)
    return xp.broadcast_to(eye, batch + (n, m)).copy()


def _compact_stack(x: NDArray, shape: Tuple[int, ...], dtype: Any) -> NDArray:
    """x in dtype, broadcast to shape and compact: x itself when it already is (the ops do not
    write their inputs), else one copy."""
    xp = _xp()
    if x.dtype != dtype:
        x = x.astype(dtype)
    if tuple(x.shape) == shape and x.is_contiguous:
        return x
    return xp.broadcast_to(x, shape).copy()


def _zeros(shape: Tuple[int, ...], like: NDArray, dtype: Any = None) -> NDArray:
    return _xp().zeros(shape, dtype=like.dtype if dtype is None else dtype, device=like.device)


def _conj_transpose(x: NDArray) -> NDArray:
    """The conjugate transpose of each matrix (the transpose for real x), compact."""
    if np.dtype(x.dtype).kind == "c":
        x = _xp().conj(x)
    return matrix_transpose(x).copy()


# --- Factorizations ------------------------------------------------------------------------------

def cholesky(x: NDArray, /, *, upper: bool = False) -> NDArray:
    """The Cholesky factor of each symmetric (complex: Hermitian) positive-definite matrix of
    ``x`` (..., n, n).

    Lower triangular (``x = L @ L^H``) by default; ``upper=True`` gives ``U = L^H`` with ``x = U^H
    @ U`` (``^H``: the conjugate transpose, the transpose for real x). Only the lower triangle of
    ``x`` is read. Raises LinAlgError naming the batch index of a matrix that is not positive
    definite."""
    a, batch = matrices(x, "x", "cholesky", square=True)
    factor, info = run("linalg_cholesky", [a])
    check_info(info, batch, "cholesky", "is not positive definite")
    factor = factor.reshape(batch + a.shape[1:])
    return _conj_transpose(factor) if upper else factor


def _lu(x: NDArray, where: str) -> Tuple[NDArray, NDArray, NDArray, Tuple[int, ...]]:
    """The diagonal of U (batch, n), the parity sign of the pivots (batch,) and the batch."""
    xp = _xp()
    a, batch = matrices(x, "x", where, square=True)
    n = a.shape[-1]
    lu, pivots, _ = run("linalg_lu", [a])  # a singular matrix has an exact 0 on U's diagonal
    diag = diagonal(lu)
    swaps = xp.sum(xp.not_equal(pivots, xp.arange(1, n + 1, dtype=xp.int64, device=a.device)),
                   axis=-1)
    parity = 1.0 - 2.0 * xp.astype(swaps % 2, a.dtype)
    return diag, parity, batch


def det(x: NDArray, /) -> NDArray:
    """The determinant of each square matrix of ``x`` (..., n, n), from its LU factors (0 for a
    singular matrix, 1 for 0 x 0)."""
    xp = _xp()
    diag, parity, batch = _lu(x, "det")
    return (xp.prod(diag, axis=-1) * parity).reshape(batch)


def slogdet(x: NDArray, /) -> SlogdetResult:
    """``(sign, logabsdet)`` of each square matrix: ``det = sign * exp(logabsdet)``; a singular
    matrix gives sign 0 and logabsdet -inf. For complex x, sign is complex of modulus 1 (x's
    dtype) and logabsdet real."""
    xp = _xp()
    diag, parity, batch = _lu(x, "slogdet")
    sign = xp.prod(xp.sign(diag), axis=-1) * parity
    logabsdet = xp.sum(xp.log(xp.abs(diag)), axis=-1)
    return SlogdetResult(sign.reshape(batch), logabsdet.reshape(batch))


def _solve_stacks(a: NDArray, b: NDArray, batch: Tuple[int, ...], where: str) -> NDArray:
    x, info = run("linalg_solve", [a, b])
    check_info(info, batch, where, "is singular")
    return x


def inv(x: NDArray, /) -> NDArray:
    """The inverse of each square matrix of ``x`` (..., n, n): ``solve(x, I)``. Raises
    LinAlgError naming the batch index of a singular matrix."""
    a, batch = matrices(x, "x", "inv", square=True)
    n = a.shape[-1]
    out = _solve_stacks(a, _eye_stack(n, n, (a.shape[0],), a), batch, "inv")
    return out.reshape(batch + (n, n))


def solve(x1: NDArray, x2: NDArray, /) -> NDArray:
    """The solution ``x`` of ``x1 @ x = x2`` for each square matrix of ``x1`` (..., M, M).

    ``x2`` is a vector (M,) when it is 1-D (the result is then x1.shape[:-1]); otherwise a stack
    of (M, K) matrices whose batch dimensions broadcast with those of ``x1``. Raises LinAlgError
    naming the batch index of a singular matrix."""
    require_array(x1, "x1", "solve")
    require_array(x2, "x2", "solve")
    if x1.ctx != x2.ctx:
        raise ValueError("solve: x1 is on %s and x2 on %s; move one with to_device"
                         % (x1.ctx, x2.ctx))
    if x1.ndim < 2 or x1.shape[-1] != x1.shape[-2]:
        raise ValueError("solve: x1 must be a stack of square matrices, got shape %s"
                         % (x1.shape,))
    if x2.ndim == 0:
        raise ValueError("solve: x2 must have at least one dimension, got a 0-d array")
    dtype = np.result_type(float_dtype(x1, "x1", "solve"), float_dtype(x2, "x2", "solve"))
    n = x1.shape[-1]
    vector = x2.ndim == 1
    b = x2.reshape((x2.shape[0], 1)) if vector else x2
    if b.shape[-2] != n:
        raise ValueError("solve: x2 %s does not fit x1 %s: it needs %d rows"
                         % (x2.shape, x1.shape, n))
    try:
        batch = tuple(np.broadcast_shapes(x1.shape[:-2], b.shape[:-2]))
    except ValueError:
        raise ValueError("solve: the batch dimensions of x1 %s and x2 %s do not broadcast"
                         % (x1.shape, x2.shape)) from None
    k = b.shape[-1]
    count = int(np.prod(batch, dtype=np.int64))
    out = _solve_stacks(_compact_stack(x1, batch + (n, n), dtype).reshape((count, n, n)),
                        _compact_stack(b, batch + (n, k), dtype).reshape((count, n, k)),
                        batch, "solve")
    return out.reshape(batch + (n,)) if vector else out.reshape(batch + (n, k))


def _eigh_info(a: NDArray, info: NDArray, outs: Tuple[NDArray, ...]) -> NDArray:
    """info with the matrices holding NaN or inf cleared, their outputs set to NaN: LAPACK's syevd
    (and NumPy's eigh) give NaN for them, cuSOLVER reports them as not converged; every device
    answers as LAPACK does."""
    if info.size == 0 or not info.asnumpy().any():
        return info
    from . import all as all_, isfinite  # the package's (imported after this module)
    codes = info.asnumpy().reshape(-1).copy()
    finite = all_(isfinite(a), axis=(-2, -1)).asnumpy().reshape(-1)
    nan_input = (codes != 0) & ~finite
    if nan_input.any():
        for out in outs:
            out.reshape((codes.size, -1))[np.flatnonzero(nan_input).tolist(), :] = np.nan
        codes[nan_input] = 0
    return _core.array(codes.reshape(info.shape), info.ctx, codes.dtype)


def eigh(x: NDArray, /) -> EighResult:
    """Eigenvalues (ascending, real) and eigenvectors (columns) of each symmetric (complex:
    Hermitian) matrix of ``x`` (..., n, n); only the lower triangle is read. Raises LinAlgError
    when the solver reports that it did not converge (NaN input gives NaN, as NumPy's eigh)."""
    a, batch = matrices(x, "x", "eigh", square=True)
    w, v, info = run("linalg_eigh", [a], 1)
    check_info(_eigh_info(a, info, (w, v)), batch, "eigh", "did not converge (eigenvalues)")
    n = a.shape[-1]
    return EighResult(w.reshape(batch + (n,)), v.reshape(batch + (n, n)))


def eigvalsh(x: NDArray, /) -> NDArray:
    """The eigenvalues (ascending, real) of each symmetric (complex: Hermitian) matrix of ``x``:
    ``eigh`` without vectors."""
    a, batch = matrices(x, "x", "eigvalsh", square=True)
    w, _, info = run("linalg_eigh", [a], 0)
    check_info(_eigh_info(a, info, (w,)), batch, "eigvalsh", "did not converge")
    return w.reshape(batch + (a.shape[-1],))


def _nan_as_failure(info: NDArray, s: NDArray) -> NDArray:
    """info, with NaN singular values counted as a failure: LAPACK reports NaN input (info -4,
    made a failure by the cpu kernel), other solvers (cuSOLVER's gesvdj) may return NaN."""
    xp = _xp()
    return info + xp.astype(xp.any(xp.isnan(s), axis=-1), xp.int64)


def svd(x: NDArray, /, *, full_matrices: bool = True) -> SVDResult:
    """``U, S, Vh`` with ``x = U @ diag(S) @ Vh`` for each matrix of ``x`` (..., M, N); S
    descending and real, K = min(M, N) values; for complex x, ``Vh`` is the conjugate transpose
    of V. ``full_matrices`` gives U (M, M) and Vh (N, N), else (M, K) and (K, N). Raises
    LinAlgError when the SVD does not converge (NaN input)."""
    a, batch = matrices(x, "x", "svd")
    m, n = a.shape[-2:]
    k = min(m, n)
    full = bool(full_matrices)
    if k == 0:  # no values; the full factors of an empty matrix are identities
        u = _eye_stack(m, m if full else 0, batch, a)
        vh = _eye_stack(n if full else 0, n, batch, a)
        return SVDResult(u, _zeros(batch + (0,), a, real_dtype(a.dtype)), vh)
    u, s, vh, info = run("linalg_svd", [a], 1, int(full))
    check_info(_nan_as_failure(info, s), batch, "svd", "did not converge (NaN or inf input?)")
    return SVDResult(u.reshape(batch + u.shape[1:]), s.reshape(batch + (k,)),
                     vh.reshape(batch + vh.shape[1:]))


def svdvals(x: NDArray, /) -> NDArray:
    """The singular values (descending, min(M, N) of them, real) of each matrix of ``x``."""
    a, batch = matrices(x, "x", "svdvals")
    k = min(a.shape[-2:])
    if k == 0:
        return _zeros(batch + (0,), a, real_dtype(a.dtype))
    _, s, _, info = run("linalg_svd", [a], 0, 0)
    check_info(_nan_as_failure(info, s), batch, "svdvals", "did not converge (NaN or inf input?)")
    return s.reshape(batch + (k,))


def qr(x: NDArray, /, *, mode: str = "reduced") -> QRResult:
    """``Q, R`` with ``x = Q @ R`` for each matrix of ``x`` (..., M, N): Q orthonormal (complex:
    unitary) columns, R upper triangular. ``mode="reduced"``: Q (M, K), R (K, N), K = min(M, N);
    ``"complete"``: Q (M, M), R (M, N)."""
    if mode not in ("reduced", "complete"):
        raise ValueError("qr: mode must be 'reduced' or 'complete', got %r" % (mode,))
    a, batch = matrices(x, "x", "qr")
    m, n = a.shape[-2:]
    q_cols = m if mode == "complete" else min(m, n)
    if min(m, n) == 0:
        return QRResult(_eye_stack(m, q_cols, batch, a), _zeros(batch + (q_cols, n), a))
    q, r = run("linalg_qr", [a], int(mode == "complete"))
    return QRResult(q.reshape(batch + (m, q_cols)), r.reshape(batch + (q_cols, n)))


# --- Functions of the singular values ------------------------------------------------------------

def _rtol(rtol: Any, x: NDArray, where: str) -> Any:
    """The relative tolerance: max(M, N) * eps of x's dtype by default; a float or an array that
    broadcasts against the batch."""
    if rtol is None:
        return max(x.shape[-2:]) * float(np.finfo(float_dtype(x, "x", where)).eps)
    if isinstance(rtol, NDArray):
        return _xp().expand_dims(rtol, axis=-1)
    if isinstance(rtol, bool) or not isinstance(rtol, (int, float, np.floating, np.integer)):
        raise TypeError("%s: rtol must be a float or an NDArray, got %s"
                        % (where, type(rtol).__name__))
    return float(rtol)


def matrix_rank(x: NDArray, /, *, rtol: Optional[Union[float, NDArray]] = None) -> NDArray:
    """The number of singular values of each matrix larger than ``rtol * largest`` (int64)."""
    xp = _xp()
    s = svdvals(x)
    if s.shape[-1] == 0:
        return _zeros(s.shape[:-1], s, xp.int64)
    cutoff = xp.max(s, axis=-1, keepdims=True) * _rtol(rtol, x, "matrix_rank")
    return xp.sum(xp.astype(s > cutoff, xp.int64), axis=-1)


def pinv(x: NDArray, /, *, rtol: Optional[Union[float, NDArray]] = None) -> NDArray:
    """The Moore-Penrose pseudo-inverse (..., N, M) of each matrix of ``x`` (..., M, N), from its
    SVD (``V diag(1/S) U^H``); singular values at or below ``rtol * largest`` count as zero."""
    xp = _xp()
    u, s, vh = svd(x, full_matrices=False)
    m, n = x.shape[-2:]
    if s.shape[-1] == 0:
        return _zeros(tuple(x.shape[:-2]) + (n, m), u)
    cutoff = xp.max(s, axis=-1, keepdims=True) * _rtol(rtol, x, "pinv")
    big = s > cutoff
    s_inv = xp.where(big, 1.0 / xp.where(big, s, xp.ones_like(s)), xp.zeros_like(s))
    return matmul(_conj_transpose(vh) * xp.expand_dims(s_inv, axis=-2), _conj_transpose(u))


# --- Norms ---------------------------------------------------------------------------------------

def _norm_operand(x: NDArray, name: str, where: str) -> NDArray:
    """x in the dtype of its factorizations (float_dtype); norms of complex x are of ``abs(x)``,
    real of x's precision."""
    dtype = float_dtype(require_array(x, name, where), name, where)
    return x if x.dtype == dtype else x.astype(dtype)


def matrix_norm(x: NDArray, /, *, keepdims: bool = False,
                ord: Optional[Union[int, float, str]] = "fro") -> NDArray:
    """The norm of each matrix of ``x`` (..., M, N): ``ord`` "fro" (default), "nuc" (sum of
    singular values), 1 / -1 (max / min column sum of ``abs(x)``), inf / -inf (rows), 2 / -2
    (largest / smallest singular value). ``keepdims`` keeps the two axes as size 1."""
    xp = _xp()
    x = _norm_operand(x, "x", "matrix_norm")
    if x.ndim < 2:
        raise ValueError("matrix_norm: x must have at least 2 dimensions, got shape %s"
                         % (x.shape,))
    if ord == "fro" or ord is None:
        mag = xp.abs(x)
        out = xp.sqrt(xp.sum(mag * mag, axis=(-2, -1)))
    elif ord == "nuc":
        out = xp.sum(svdvals(x), axis=-1)
    elif ord in (2, -2):
        s = svdvals(x)
        out = xp.max(s, axis=-1) if ord == 2 else xp.min(s, axis=-1)
    elif ord in (1, -1, math.inf, -math.inf):
        sums = xp.sum(xp.abs(x), axis=-2 if ord in (1, -1) else -1)
        out = xp.max(sums, axis=-1) if ord > 0 else xp.min(sums, axis=-1)
    else:
        raise ValueError("matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got "
                         "%r" % (ord,))
    return xp.expand_dims(out, axis=(-2, -1)) if keepdims else out


def vector_norm(x: NDArray, /, *, axis: Optional[Union[int, Tuple[int, ...]]] = None,
                keepdims: bool = False, ord: Union[int, float] = 2) -> NDArray:
    """The p-norm of the vectors along ``axis`` (all of x when None; a tuple treats those axes
    as one vector): ord 2 (default), 1, inf (max ``abs(x)``), -inf (min ``abs(x)``), 0 (count of
    nonzeros), or any other real p (``sum(abs(x)**p) ** (1/p)``)."""
    xp = _xp()
    x = _norm_operand(x, "x", "vector_norm")
    if isinstance(ord, bool) or not isinstance(ord, (int, float, np.integer, np.floating)):
        raise TypeError("vector_norm: ord must be a number, got %s" % type(ord).__name__)
    ord = float(ord)
    if axis is not None and not isinstance(axis, tuple):
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise TypeError("vector_norm: axis must be an int, a tuple of ints or None, got %s"
                            % type(axis).__name__)
        axis = int(axis)
    mag = xp.abs(x)  # real, of x's precision for complex x
    if ord == math.inf:
        return xp.max(mag, axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return xp.min(mag, axis=axis, keepdims=keepdims)
    if ord == 0:
        return xp.sum(xp.astype(xp.not_equal(x, 0), mag.dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return xp.sum(mag, axis=axis, keepdims=keepdims)
    if ord == 2:
        return xp.sqrt(xp.sum(mag * mag, axis=axis, keepdims=keepdims))
    return xp.pow(xp.sum(xp.pow(mag, ord), axis=axis, keepdims=keepdims), 1.0 / ord)


# --- Composed from views, elementwise functions and matmul --------------------------------------

def diagonal(x: NDArray, /, *, offset: int = 0) -> NDArray:
    """The diagonal of each matrix of ``x`` (..., M, N): ``offset`` > 0 above the main one,
    < 0 below."""
    x = require_array(x, "x", "diagonal")
    if x.ndim < 2:
        raise ValueError("diagonal: x must have at least 2 dimensions, got shape %s" % (x.shape,))
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)):
        raise TypeError("diagonal: offset must be an int, got %s" % type(offset).__name__)
    offset = int(offset)
    m, n = x.shape[-2:]
    batch = tuple(x.shape[:-2])
    start = offset if offset >= 0 else -offset * n
    length = max(0, min(m, n - offset) if offset >= 0 else min(m + offset, n))
    if length == 0:
        return _zeros(batch + (0,), x)
    flat = (x if x.is_contiguous else x.copy()).reshape(batch + (m * n,))
    return flat[..., start:start + (length - 1) * (n + 1) + 1:n + 1]


def trace(x: NDArray, /, *, offset: int = 0, dtype: Any = None) -> NDArray:
    """The sum of the ``offset`` diagonal of each matrix of ``x`` (the dtype as ``sum``'s)."""
    return _xp().sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def outer(x1: NDArray, x2: NDArray, /) -> NDArray:
    """The outer product (N, M) of two vectors (N,) and (M,)."""
    xp = _xp()
    for x, name in ((x1, "x1"), (x2, "x2")):
        if require_array(x, name, "outer").ndim != 1:
            raise ValueError("outer: %s must be 1-D, got shape %s" % (name, x.shape))
    return xp.multiply(xp.expand_dims(x1, axis=-1), xp.expand_dims(x2, axis=0))


def cross(x1: NDArray, x2: NDArray, /, *, axis: int = -1) -> NDArray:
    """The cross product of 3-element vectors along ``axis`` of the broadcast shapes."""
    xp = _xp()
    require_array(x1, "x1", "cross")
    require_array(x2, "x2", "cross")
    try:
        shape = tuple(np.broadcast_shapes(x1.shape, x2.shape))
    except ValueError:
        raise ValueError("cross: shapes %s and %s do not broadcast" % (x1.shape, x2.shape)) \
            from None
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError("cross: axis must be an int, got %s" % type(axis).__name__)
    axis = int(axis)
    if not -len(shape) <= axis < len(shape):
        raise ValueError("cross: axis %d is out of range for shape %s" % (axis, shape))
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError("cross: the vectors along axis %d must have 3 elements, got shapes %s "
                         "and %s" % (axis, x1.shape, x2.shape))
    a = xp.unstack(xp.moveaxis(xp.broadcast_to(x1, shape), axis, -1), axis=-1)
    b = xp.unstack(xp.moveaxis(xp.broadcast_to(x2, shape), axis, -1), axis=-1)
    parts = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    return xp.moveaxis(xp.stack(parts, axis=-1), -1, axis)


def matrix_power(x: NDArray, n: int, /) -> NDArray:
    """``x`` multiplied by itself ``n`` times for each square matrix (n = 0: the identity;
    n < 0: powers of ``inv(x)``), by repeated squaring."""
    x = require_array(x, "x", "matrix_power")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError("matrix_power: n must be an int, got %s" % type(n).__name__)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError("matrix_power: x must be a stack of square matrices, got shape %s"
                         % (x.shape,))
    n = int(n)
    if n == 0:
        size = x.shape[-1]
        return _eye_stack(size, size, tuple(x.shape[:-2]), x)
    base = inv(x) if n < 0 else x
    result = None
    for bit in bin(abs(n))[2:]:
        result = None if result is None else matmul(result, result)
        if bit == "1":
            result = base if result is None else matmul(result, base)
    return result
