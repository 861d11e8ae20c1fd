"""Every op in every dtype it supports, on every device, against NumPy (ml_dtypes for bfloat16),
at sizes that cross thread and block boundaries, odd shapes and one element; astype between
every pair of dtypes; and the dtype errors."""
import numpy as np
import pytest

import dlarray
from dlarray import ops

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")
BF16 = np.dtype(ml_dtypes.bfloat16)

FLOATS = [np.dtype(np.float32), np.dtype(np.float16), BF16, np.dtype(np.float64)]
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8)]
ALL = FLOATS + INTS + [np.dtype(np.bool_)]
SHAPES = [(1,), (7, 13), (257, 33), (3, 1029)]


def _data(rng, shape, dtype):
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -100), min(info.max, 100)
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)
    return (rng.standard_normal(shape) * 3).astype(dtype)


def _dev(a, ctx):
    return dlarray.array(a, ctx, dtype=a.dtype)


def _tol(dtype):
    return {np.dtype(np.float16): 2e-3, BF16: 2e-2, np.dtype(np.float32): 1e-6,
            np.dtype(np.float64): 1e-12}.get(dtype, 0)


def _check(got, want, dtype):
    assert got.dtype == want.dtype
    if dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=_tol(dtype), atol=_tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_elementwise_arithmetic(ctx, rng, dtype, shape):
    a, b = _data(rng, shape, dtype), _data(rng, shape, dtype)
    x, y, out = _dev(a, ctx), _dev(b, ctx), dlarray.empty(shape, ctx, dtype)
    ops.matrix_elementwise_add(x, y, out)
    _check(out.asnumpy(), (a + b).astype(dtype), dtype)
    ops.matrix_elementwise_multiply(x, y, out)
    _check(out.asnumpy(), (a * b).astype(dtype), dtype)
    ops.matrix_elementwise_add_by_const(x, 3, out)
    _check(out.asnumpy(), (a + dtype.type(3)).astype(dtype), dtype)
    ops.matrix_elementwise_multiply_by_const(x, -2, out)
    wide = a.astype(np.int64) if dtype.kind in "iu" else a
    _check(out.asnumpy(), (wide * -2).astype(dtype), dtype)
    ops.array_set(out, 5)
    _check(out.asnumpy(), np.full(shape, 5, dtype), dtype)
    ops.copy(x, out)
    np.testing.assert_array_equal(out.asnumpy(), a)


def test_integer_wraparound_like_numpy(ctx):
    a = np.array([250, 3, 128], np.uint8)
    x, out = _dev(a, ctx), dlarray.empty((3,), ctx, np.uint8)
    ops.matrix_elementwise_add(x, x, out)
    np.testing.assert_array_equal(out.asnumpy(), a + a)
    ops.matrix_elementwise_add_by_const(x, -5, out)  # x - 5, wrapping
    np.testing.assert_array_equal(out.asnumpy(), (a.astype(np.int64) - 5).astype(np.uint8))
    b = np.array([2 ** 31 - 1, -2 ** 31], np.int32)
    y, o32 = _dev(b, ctx), dlarray.empty((2,), ctx, np.int32)
    ops.matrix_elementwise_multiply_by_const(y, 3, o32)
    np.testing.assert_array_equal(o32.asnumpy(), (b.astype(np.int64) * 3).astype(np.int32))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_float_ops(ctx, rng, dtype, shape):
    a, b = _data(rng, shape, dtype), _data(rng, shape, dtype)
    b = np.where(np.abs(b.astype(np.float32)) < 0.1, dtype.type(1), b).astype(dtype)
    x, y, out = _dev(a, ctx), _dev(b, ctx), dlarray.empty(shape, ctx, dtype)
    ops.relu(x, out)
    _check(out.asnumpy(), np.maximum(a, dtype.type(0)), dtype)
    ops.relu_gradient(x, y, out)
    _check(out.asnumpy(), (b * (a > 0)).astype(dtype), dtype)
    ops.matrix_elementwise_divide(x, y, out)
    _check(out.asnumpy(), (a / b).astype(dtype), dtype)
    ops.matrix_elementwise_divide_by_const(x, 3.0, out)
    _check(out.asnumpy(), (a / dtype.type(3)).astype(dtype), dtype)
    ops.softmax(x, out)
    w = a.astype(np.float64)
    e = np.exp(w - w.max(axis=-1, keepdims=True))
    _check(out.asnumpy(), (e / e.sum(axis=-1, keepdims=True)).astype(dtype), dtype)
    labels = np.zeros(shape, dtype)
    labels[..., 0] = 1
    loss = dlarray.empty((1,), ctx, dtype)
    ops.softmax_cross_entropy(x, _dev(labels, ctx), loss)
    want = -(labels.astype(np.float64) * np.log(e / e.sum(axis=-1, keepdims=True))).sum(-1)
    np.testing.assert_allclose(loss.asnumpy().astype(np.float64), [want.mean()],
                               rtol=max(_tol(dtype), 1e-6) * 4)


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (300, 70), (2049, 3)], ids=str)
def test_reduce_and_broadcast(ctx, rng, dtype, shape):
    a = _data(rng, shape, dtype)
    x, out = _dev(a, ctx), dlarray.empty(shape[1:], ctx, dtype)
    ops.reduce_sum_axis_zero(x, out)
    want = a.sum(axis=0, dtype=np.float64 if dtype.kind == "f" or dtype == BF16 else a.dtype)
    tol = _tol(dtype) * np.sqrt(shape[0]) * 4
    if dtype.kind in "iu":
        np.testing.assert_array_equal(out.asnumpy(), want)
    else:
        np.testing.assert_allclose(out.asnumpy().astype(np.float64), want, rtol=tol, atol=tol)
    row = _data(rng, shape[1:], dtype)
    b = dlarray.empty(shape, ctx, dtype)
    ops.broadcast_to(_dev(row, ctx), b)
    np.testing.assert_array_equal(b.asnumpy(), np.broadcast_to(row, shape))


def test_bool_broadcast_and_set(ctx):
    row = np.array([True, False, True])
    out = dlarray.empty((4, 3), ctx, bool)
    ops.broadcast_to(_dev(row, ctx), out)
    np.testing.assert_array_equal(out.asnumpy(), np.broadcast_to(row, (4, 3)))
    ops.array_set(out, 0)
    assert not out.asnumpy().any()


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("mnk", [(1, 1, 1), (17, 33, 9), (128, 64, 96), (65, 130, 257)], ids=str)
@pytest.mark.parametrize("trans", [(False, False), (True, False), (False, True)], ids=str)
def test_matrix_multiply(ctx, rng, dtype, mnk, trans):
    m, n, k = mnk
    ta, tb = trans
    a = _data(rng, (k, m) if ta else (m, k), dtype)
    b = _data(rng, (n, k) if tb else (k, n), dtype)
    out = dlarray.empty((m, n), ctx, dtype)
    ops.matrix_multiply(_dev(a, ctx), ta, _dev(b, ctx), tb, out)
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    want = (fa.T if ta else fa) @ (fb.T if tb else fb)
    tol = {np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-10}.get(dtype, _tol(dtype) * 4)
    np.testing.assert_allclose(out.asnumpy().astype(np.float64), want, rtol=tol,
                               atol=tol * np.sqrt(k) * 4)


@pytest.mark.parametrize("src", ALL, ids=str)
def test_astype_every_pair(ctx, rng, src):
    a = _data(rng, (129, 3), src)
    x = _dev(a, ctx)
    for dst in ALL:
        if src.kind == "f" or src == BF16:
            if dst.kind == "u":  # negative floats to unsigned are undefined in NumPy
                a = np.abs(a)
                x = _dev(a, ctx)
        got = x.astype(dst)
        assert got.dtype == dst
        want = a.astype(dst)
        if dst.kind == "f" or dst == BF16:
            np.testing.assert_array_equal(got.asnumpy().astype(np.float64),
                                          want.astype(np.float64))
        else:
            np.testing.assert_array_equal(got.asnumpy(), want)


def test_astype_rounds_to_nearest_even(ctx):
    # Ties and subnormals of float16, exactly as NumPy rounds them.
    vals = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 2 ** -25, 3 * 2 ** -26, 65520.0, 65519.0,
                     -2 ** -24, 1e-8, np.inf, -np.inf], np.float64)
    x = _dev(vals, ctx)
    with np.errstate(over="ignore"):  # 65520 rounds to inf, on purpose
        want = vals.astype(np.float16)
    np.testing.assert_array_equal(x.astype(np.float16).asnumpy(), want)
    np.testing.assert_array_equal(_dev(vals.astype(np.float32), ctx).astype(BF16).asnumpy(),
                                  vals.astype(np.float32).astype(BF16))
    nan = _dev(np.array([np.nan], np.float32), ctx)
    assert np.isnan(nan.astype(np.float16).asnumpy()[0])
    assert np.isnan(nan.astype(BF16).asnumpy().astype(np.float32)[0])


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_compare(ctx, rng, dtype):
    a, b = _data(rng, (70, 9), dtype), _data(rng, (70, 9), dtype)
    b[::3] = a[::3]
    x, y = _dev(a, ctx), _dev(b, ctx)
    out = dlarray.empty(a.shape, ctx, bool)
    for cmp, fn in enumerate([np.equal, np.not_equal, np.less, np.less_equal, np.greater,
                              np.greater_equal]):
        ops.compare(x, y, out, cmp)
        np.testing.assert_array_equal(out.asnumpy(), fn(a, b))
        ops.compare_by_const(x, 1, out, cmp)
        np.testing.assert_array_equal(out.asnumpy(), fn(a.astype(np.float64), 1.0))


def test_dtype_errors(ctx):
    i = dlarray.empty((3,), ctx, np.int32)
    f = dlarray.empty((3,), ctx)
    with pytest.raises(TypeError, match="int32"):
        ops.relu(i, i)
    with pytest.raises(TypeError, match="operand 0 has float32"):
        ops.matrix_elementwise_add(f, i, f)
    with pytest.raises(TypeError, match="must be bool"):
        ops.compare(f, f, f, 0)
    with pytest.raises(TypeError, match="bool"):
        b = dlarray.empty((3,), ctx, bool)
        ops.matrix_elementwise_add(b, b, b)
    with pytest.raises(TypeError, match="unsupported dtype"):
        dlarray.empty((2,), ctx, np.complex64)
