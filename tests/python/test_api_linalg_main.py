"""matmul, tensordot, vecdot and astype of the array API's main namespace, and NDArray.__index__,
against NumPy on every device: stacks that broadcast, 1-D operands, empty and odd shapes, the
GEMM path (floats) and the multiply-and-sum path (integers), and the errors."""
import operator

import numpy as np
import pytest

import dlarray as xp

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int8]
MATMUL_SHAPES = [
    ((3, 4), (4, 5)), ((1, 1), (1, 1)), ((4,), (4,)), ((4,), (4, 3)), ((3, 4), (4,)),
    ((2, 3, 4), (4, 5)), ((5, 1, 3, 4), (2, 4, 2)), ((4,), (2, 4, 3)), ((3, 0), (0, 2)),
    ((0, 3), (3, 2)), ((2, 0, 3), (3, 4)), ((33, 65), (65, 17)), ((7, 129, 3), (7, 3, 2)),
]


def data(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if np.dtype(dtype).kind == "u":
        return rng.integers(0, 200, shape).astype(dtype)  # products wrap as NumPy's do
    return rng.integers(-100, 100, shape).astype(dtype)


def check(got, ref, dtype):
    assert got.shape == ref.shape and got.dtype == ref.dtype
    if np.dtype(dtype).kind == "f":
        tol = 1e-4 if np.dtype(dtype) == np.float32 else 1e-10
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=tol, atol=tol * 10)
    else:
        np.testing.assert_array_equal(got.asnumpy(), ref)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_matches_numpy(ctx, rng, shapes, dtype):
    a, b = data(rng, shapes[0], dtype), data(rng, shapes[1], dtype)
    x1, x2 = xp.asarray(a, device=ctx), xp.asarray(b, device=ctx)
    with np.errstate(over="ignore"):
        ref = np.matmul(a, b)
    check(xp.matmul(x1, x2), ref, dtype)
    check(x1 @ x2, ref, dtype)


def test_matmul_of_views_and_mixed_dtypes(ctx, rng):
    a = rng.standard_normal((6, 5)).astype(np.float32)
    b = rng.standard_normal((6, 4))
    x1 = xp.asarray(a, device=ctx)
    got = xp.matmul(xp.matrix_transpose(x1), xp.asarray(b, device=ctx))  # a transposed view
    check(got, a.T @ b, np.float64)
    got = xp.matmul(x1[::2, 1:], xp.asarray(b, device=ctx)[2:, ::-1])  # strided views
    check(got, a[::2, 1:] @ b[2:, ::-1], np.float64)


def test_matmul_errors(ctx):
    m = xp.ones((2, 3), device=ctx)
    with pytest.raises(ValueError, match="last dimension of x1 \\(3\\)"):
        xp.matmul(m, m)
    with pytest.raises(ValueError, match="at least one dimension"):
        xp.matmul(xp.asarray(1.0, device=ctx), m)
    with pytest.raises(ValueError, match="batch dimensions"):
        xp.matmul(xp.ones((2, 2, 3), device=ctx), xp.ones((3, 3, 2), device=ctx))
    with pytest.raises(TypeError, match="numeric"):
        xp.matmul(xp.ones((2, 2), dtype=xp.bool, device=ctx), xp.ones((2, 2), device=ctx))
    with pytest.raises(TypeError, match="x2 must be an NDArray"):
        xp.matmul(m, [[1.0]])


def test_matmul_on_two_devices_names_both():
    if len({d.device_type for d in xp.devices()}) < 2:
        pytest.skip("one device type here")
    other = next(d for d in xp.devices() if d.device_type != 1)
    with pytest.raises(ValueError, match="x1 is on cpu.*x2 on"):
        xp.matmul(xp.ones((2, 2), device=xp.cpu()), xp.ones((2, 2), device=other))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32], ids=lambda d: d.__name__)
@pytest.mark.parametrize("case", [
    ((3, 4, 5), (4, 5, 2), 2), ((3, 4), (4, 3), 1), ((2, 3), (4,), 0),
    ((3, 4, 5), (4, 3, 2), ([0, 1], [1, 0])), ((3, 4, 5), (5, 4), ([-1, 1], [0, -1])),
    ((0, 3), (3, 0), 1), ((2, 3), (2, 3), ([], [])),
], ids=str)
def test_tensordot_matches_numpy(ctx, rng, case, dtype):
    s1, s2, axes = case
    a, b = data(rng, s1, dtype), data(rng, s2, dtype)
    got = xp.tensordot(xp.asarray(a, device=ctx), xp.asarray(b, device=ctx), axes=axes)
    check(got, np.tensordot(a, b, axes=axes), dtype)


def test_tensordot_errors(ctx):
    a = xp.ones((2, 3), device=ctx)
    with pytest.raises(ValueError, match="outside"):
        xp.tensordot(a, a, axes=3)
    with pytest.raises(ValueError, match="differ"):
        xp.tensordot(a, a, axes=([1], [1, 0]))
    with pytest.raises(ValueError, match="size 3.*size 2"):
        xp.tensordot(a, a, axes=([1], [0]))
    with pytest.raises(ValueError, match="out of range"):
        xp.tensordot(a, a, axes=([2], [0]))
    with pytest.raises(TypeError, match="pair of sequences"):
        xp.tensordot(a, a, axes="x")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8],
                         ids=lambda d: d.__name__)
@pytest.mark.parametrize("case", [((2, 1, 5), (3, 5), -1), ((4, 3), (4, 3), 0), ((7,), (7,), -1),
                                  ((2, 0), (2, 0), -1), ((3, 1025), (1025,), -1)], ids=str)
def test_vecdot_matches_numpy(ctx, rng, case, dtype):
    s1, s2, axis = case
    a, b = data(rng, s1, dtype), data(rng, s2, dtype)
    got = xp.vecdot(xp.asarray(a, device=ctx), xp.asarray(b, device=ctx), axis=axis)
    with np.errstate(over="ignore"):
        ref = np.sum(a * b, axis=axis, dtype=np.result_type(a, b))
    check(got, ref, dtype)


def test_vecdot_errors(ctx):
    with pytest.raises(ValueError, match="differ in size"):
        xp.vecdot(xp.ones((2, 3), device=ctx), xp.ones((1, 3), device=ctx), axis=0)
    with pytest.raises(ValueError, match="out of range"):
        xp.vecdot(xp.ones((3,), device=ctx), xp.ones((3,), device=ctx), axis=1)
    with pytest.raises(TypeError, match="axis must be an int"):
        xp.vecdot(xp.ones((3,), device=ctx), xp.ones((3,), device=ctx), axis=0.5)


@pytest.mark.parametrize("to", [np.float32, np.int16, np.bool_, np.uint8, np.float64])
def test_astype_function(ctx, rng, to):
    a = (rng.standard_normal((3, 5)) * 50).astype(np.float32)
    to = np.dtype(to)
    if to.kind == "u":
        a = np.abs(a)  # float -> unsigned out of range is undefined (C, the standard)
    x = xp.asarray(a, device=ctx)  # the standard's dtype objects (dlarray.float32 is numpy's dtype)
    got = xp.astype(x, to)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(got.asnumpy(), a.astype(to))
    assert got.ctx == ctx
    assert xp.astype(x, xp.float32, copy=False) is x
    copied = xp.astype(x, xp.float32)
    copied[0, 0] = 7.0  # a copy: x keeps its value
    assert x[0, 0].item() == a[0, 0]
    moved = xp.astype(x, to, device=xp.cpu())
    assert moved.ctx == xp.cpu()
    with pytest.raises(TypeError, match="x must be an NDArray"):
        xp.astype(a, to)
    with pytest.raises(TypeError, match="dtype"):
        xp.astype(x, "not a dtype")


def test_index_of_0d_integer_arrays(ctx):
    for dtype in (np.int8, np.int32, np.int64, np.uint16, np.uint64):
        assert operator.index(xp.asarray(np.array(5, dtype), device=ctx)) == 5
    assert [10, 11, 12][xp.asarray(np.int64(2), device=ctx)] == 12
    for bad in (np.float32(1), np.array([1, 2]), np.bool_(True), np.zeros((1, 1), np.int32)):
        with pytest.raises(TypeError, match="index"):
            operator.index(xp.asarray(bad, device=ctx))
