"""dlarray.linalg's composed functions (norms, matrix_rank, pinv, matrix_power, cross, outer,
diagonal, trace and the re-exported matmul/tensordot/vecdot/matrix_transpose) against NumPy on
every device: odd shapes, empty and 1-element arrays, every ord and offset, and the errors."""
import math

import numpy as np
import pytest

import dlarray as xp
from dlarray import linalg as la

DTYPES = [np.float32, np.float64]


def tol(dtype, n=1):
    return (2e-4 if dtype == np.float32 else 1e-10) * max(n, 1)


def arr(a, ctx):
    return xp.asarray(a, device=ctx)


def close(got, ref, dtype, n=1):
    got = got.asnumpy()
    assert got.shape == np.shape(ref), (got.shape, np.shape(ref))
    np.testing.assert_allclose(got, ref, rtol=tol(dtype, n), atol=tol(dtype, n))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (2, 4, 4), (2, 3, 7, 2), (40, 33)], ids=str)
@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
def test_matrix_norm(ctx, rng, shape, dtype, ord):
    a = rng.standard_normal(shape).astype(dtype)
    ref = np.linalg.norm(a.astype(np.float64), ord=ord, axis=(-2, -1))
    got = la.matrix_norm(arr(a, ctx), ord=ord)
    assert got.dtype == dtype
    close(got, ref, dtype, max(shape))
    kept = la.matrix_norm(arr(a, ctx), ord=ord, keepdims=True)
    assert kept.shape == shape[:-2] + (1, 1)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,axis", [((5,), None), ((1,), None), ((3, 4), 1), ((3, 4), 0),
                                        ((2, 3, 4), (0, 2)), ((2, 3, 4), None),
                                        ((1100,), None), ((70000,), 0), ((2, 0, 3), 2)], ids=str)
@pytest.mark.parametrize("ord", [2, 1, math.inf, -math.inf, 0, 3, 0.5, -1])
def test_vector_norm(ctx, rng, shape, axis, dtype, ord):
    a = rng.standard_normal(shape).astype(dtype)
    if a.size:
        a.flat[0] = 0.0  # ord 0 counts it out; negative ords give 0
    if a.size == 0 and ord in (math.inf, -math.inf):
        return  # NumPy has no max of nothing
    flat = a.astype(np.float64)
    axes = axis if axis is not None else tuple(range(a.ndim))
    axes = axes if isinstance(axes, tuple) else (axes,)
    moved = np.moveaxis(flat, axes, tuple(range(-len(axes), 0)))
    kept = moved.shape[:moved.ndim - len(axes)]
    vectors = moved.reshape(kept + (int(np.prod(moved.shape[len(kept):])),))
    with np.errstate(divide="ignore"):
        ref = np.linalg.norm(vectors, ord=ord, axis=-1)
    got = la.vector_norm(arr(a, ctx), axis=axis, ord=ord)
    assert got.dtype == dtype
    close(got, ref, dtype, int(np.sqrt(a.size)) + 1)
    kept = la.vector_norm(arr(a, ctx), axis=axis, ord=ord, keepdims=True)
    assert kept.shape == tuple(1 if i in [x % a.ndim for x in axes] else s
                               for i, s in enumerate(shape))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_matrix_rank_and_pinv(ctx, rng, dtype):
    a = rng.standard_normal((3, 6, 2)) @ rng.standard_normal((3, 2, 5))  # rank 2
    a[1] = 0.0
    a = a.astype(dtype)
    np.testing.assert_array_equal(la.matrix_rank(arr(a, ctx)).asnumpy(), [2, 0, 2])
    assert la.matrix_rank(arr(a, ctx)).dtype == np.int64
    np.testing.assert_array_equal(la.matrix_rank(arr(a, ctx), rtol=0.99).asnumpy(),
                                  np.linalg.matrix_rank(a, rtol=0.99))
    ref = np.linalg.pinv(a.astype(np.float64), rcond=6 * np.finfo(dtype).eps)
    close(la.pinv(arr(a, ctx)), ref, dtype, 100)
    b = rng.standard_normal((4, 7)).astype(dtype)
    close(la.pinv(arr(b, ctx)), np.linalg.pinv(b.astype(np.float64)), dtype, 10)
    assert la.pinv(arr(np.zeros((2, 0, 3), dtype), ctx)).shape == (2, 3, 0)
    assert la.matrix_rank(arr(np.zeros((0, 3), dtype), ctx)).shape == ()


@pytest.mark.parametrize("n", [0, 1, 2, 3, 6, -1, -3])
def test_matrix_power(ctx, rng, n):
    a = (rng.standard_normal((2, 4, 4)) + 4 * np.eye(4))
    got = la.matrix_power(arr(a, ctx), n)
    close(got, np.linalg.matrix_power(a, n), np.float64, 10 ** abs(n))
    assert la.matrix_power(arr(np.ones((0, 3, 3)), ctx), 2).shape == (0, 3, 3)


@pytest.mark.parametrize("shapes,axis", [(((3,), (3,)), -1), (((4, 3), (3,)), -1),
                                         (((3, 5), (3, 1)), 0), (((2, 3, 4), (1, 3, 4)), -2),
                                         (((0, 3), (0, 3)), -1)], ids=str)
def test_cross(ctx, rng, shapes, axis):
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    close(la.cross(arr(a, ctx), arr(b, ctx), axis=axis), np.cross(a, b, axis=axis), np.float64)
    ia, ib = np.arange(6, dtype=np.int32).reshape(2, 3), np.ones(3, np.int32)
    got = la.cross(arr(ia, ctx), arr(ib, ctx))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got.asnumpy(), np.cross(ia, ib))


def test_outer_diagonal_trace(ctx, rng):
    a, b = rng.standard_normal(5), rng.standard_normal(3).astype(np.float32)
    close(la.outer(arr(a, ctx), arr(b, ctx)), np.outer(a, b), np.float64)
    assert la.outer(arr(a[:0], ctx), arr(b, ctx)).shape == (0, 3)
    for shape in [(4, 4), (3, 5), (5, 3), (2, 3, 4), (1, 1), (0, 3), (2, 0, 0)]:
        m = rng.standard_normal(shape)
        for offset in range(-shape[-2] - 1, shape[-1] + 2):
            ref = np.diagonal(m, offset, axis1=-2, axis2=-1)
            close(la.diagonal(arr(m, ctx), offset=offset), ref, np.float64)
            close(la.trace(arr(m, ctx), offset=offset),
                  np.trace(m, offset, axis1=-2, axis2=-1), np.float64)
        # a view of a transposed matrix
        close(la.diagonal(xp.matrix_transpose(arr(m, ctx))), np.diagonal(m, axis1=-1, axis2=-2),
              np.float64)
    ints = np.arange(9, dtype=np.int32).reshape(3, 3)
    assert la.trace(arr(ints, ctx)).dtype == np.int64
    assert la.trace(arr(ints, ctx), dtype=xp.float32).dtype == np.float32
    assert int(la.trace(arr(ints, ctx)).asnumpy()) == 12


def test_reexports(ctx, rng):
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))
    close(la.matmul(arr(a, ctx), arr(b, ctx)), a @ b, np.float64)
    close(la.tensordot(arr(a, ctx), arr(b, ctx), axes=1), np.tensordot(a, b, axes=1), np.float64)
    close(la.vecdot(arr(a, ctx), arr(a, ctx)), np.sum(a * a, axis=-1), np.float64)
    close(la.matrix_transpose(arr(a, ctx)), np.swapaxes(a, -1, -2), np.float64)


def test_argument_errors(ctx):
    x = arr(np.ones((3, 3)), ctx)
    with pytest.raises(ValueError, match="matrix_norm: ord must be"):
        la.matrix_norm(x, ord=3)
    with pytest.raises(ValueError, match="matrix_norm: x must have at least 2"):
        la.matrix_norm(arr(np.ones(3), ctx))
    with pytest.raises(TypeError, match="vector_norm: ord must be a number"):
        la.vector_norm(x, ord="fro")
    with pytest.raises(ValueError, match="cross: the vectors along axis -1 must have 3"):
        la.cross(arr(np.ones(2), ctx), arr(np.ones(2), ctx))
    with pytest.raises(ValueError, match="outer: x1 must be 1-D"):
        la.outer(x, arr(np.ones(2), ctx))
    with pytest.raises(TypeError, match="matrix_power: n must be an int"):
        la.matrix_power(x, 1.5)
    with pytest.raises(ValueError, match="diagonal: x must have at least 2"):
        la.diagonal(arr(np.ones(3), ctx))
    with pytest.raises(TypeError, match="matrix_rank: rtol must be"):
        la.matrix_rank(x, rtol="a")
    with pytest.raises(TypeError, match="vector_norm: axis must be an int"):
        la.vector_norm(x, axis="0")
    with pytest.raises(TypeError, match="diagonal: offset must be an int, got float"):
        la.diagonal(x, offset=1.0)
    with pytest.raises(TypeError, match="cross: axis must be an int, got str"):
        la.cross(arr(np.ones(3), ctx), arr(np.ones(3), ctx), axis="x")


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_norms_of_complex_arrays(ctx, dtype):
    """vector_norm and the |x|-based matrix norms take complex input and give the real dtype of
    its precision (the singular-value norms: test_linalg_complex.py)."""
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((4, 1025)) + 1j * rng.standard_normal((4, 1025))).astype(dtype)
    x = xp.asarray(a, device=ctx)
    real = np.float32 if dtype == np.complex64 else np.float64
    for ord in (2, 1, np.inf, -np.inf, 0, 3):
        got = la.vector_norm(x, axis=-1, ord=ord)
        assert got.dtype == real
        np.testing.assert_allclose(got.asnumpy(), np.linalg.vector_norm(a, axis=-1, ord=ord),
                                   rtol=1e-5 if real == np.float32 else 1e-12)
    for ord in ("fro", 1, -1, np.inf, -np.inf):
        got = la.matrix_norm(x[:, :7].reshape(2, 2, 7), ord=ord)
        assert got.dtype == real
        np.testing.assert_allclose(got.asnumpy(),
                                   np.linalg.matrix_norm(a[:, :7].reshape(2, 2, 7), ord=ord),
                                   rtol=1e-5 if real == np.float32 else 1e-12)
