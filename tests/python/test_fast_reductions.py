"""sum/prod/min/max/mean over axes through the C++ fast path (python/src/fast_path.cc, RunReduce)
against the general Python path it stands in for (dlarray/_statistics_api.py, _reduction.reduce):
the same dtype, shape and bits, or the same error, for every dtype, axis form and keepdims, on
every device; and against NumPy."""
import numpy as np
import pytest

import dlarray
from dlarray import _statistics_api as st
from ufunc_util import BF16, REAL, data, skip_unsupported

DTYPES = REAL + [np.dtype(np.complex64), np.dtype(np.complex128)]
NAMES = ("sum", "prod", "min", "max", "mean", "all", "any", "argmax", "argmin")
# Runs of adjacent axes, several runs, negative and unordered axes, and what the general path must
# take or refuse: axis=(), out of range, repeated, bool, float, NumPy integers, a list.
AXES = [None, 0, -1, 1, (0,), (0, 2), (2, 0), (1, 2), (0, 1, 2), (0, 3), (), 4, -5, (0, 0),
        (1, -3), True, 1.0, np.int64(1), [0]]
SHAPES = [(7, 13, 3), (3, 1, 5), (2, 3, 4, 5), (1, 1, 1), (4, 0, 3), (65536 + 3, 2, 1)]


def _outcome(fn):
    try:
        with np.errstate(all="ignore"):
            result = fn()
    except Exception as err:  # noqa: BLE001  (the errors are compared)
        return type(err), str(err)
    return result.dtype, result.shape, result.asnumpy().tobytes()


def _array(ctx, rng, shape, dtype):
    a = data(rng, shape, dtype)
    if dtype.kind == "f" or dtype == BF16:  # products stay finite
        a = np.clip(a, -1.01, 1.01)
    if dtype.kind == "c":
        a = a + 1j * np.clip(data(rng, shape, np.float64), -1, 1).astype(dtype)
    return dlarray.array(a, ctx, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_axes_match_the_general_path(ctx, rng, dtype):
    skip_unsupported(ctx, dtype)
    for shape in SHAPES:
        if len(shape) < 3 or (shape[0] > 1000 and dtype.itemsize > 4):
            continue
        x = _array(ctx, rng, shape, dtype)
        for name in NAMES:
            fast, general = getattr(dlarray, name), st._GENERAL[name]
            for axis in AXES:
                for keepdims in (False, True, 1):
                    got = _outcome(lambda: fast(x, axis=axis, keepdims=keepdims))
                    want = _outcome(lambda: general(x, axis=axis, keepdims=keepdims))
                    assert got == want, (name, dtype, shape, axis, keepdims)


def test_the_fast_path_is_taken(monkeypatch):
    """Calls of the fast path's kind never reach the general path; dtype=, views, casts do."""
    x = dlarray.array(np.ones((4, 5, 6), np.float32))
    calls = []
    monkeypatch.setattr(st, "reduce", lambda *a, **k: calls.append(a) or pytest.fail("general"))
    assert dlarray.sum(x, axis=(0, 2)).shape == (5,)
    assert dlarray.mean(x, axis=1, keepdims=True).shape == (4, 1, 6)
    assert dlarray.max(x).shape == ()
    with pytest.raises(pytest.fail.Exception):
        dlarray.sum(x, axis=0, dtype=np.float64)
    with pytest.raises(pytest.fail.Exception):
        dlarray.sum(x[:, ::2], axis=0)
    with pytest.raises(pytest.fail.Exception):
        dlarray.mean(dlarray.array(np.ones((3, 2)), dtype=np.int32), axis=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.int64],
                         ids=str)
def test_against_numpy(rng, dtype):
    a = data(rng, (33, 65, 129), np.dtype(dtype), special=False)
    x = dlarray.array(a, dtype=dtype)
    for axis in (None, 0, 1, 2, (0, 2), (0, 1), (1, 2), (2, 0, 1)):
        for keepdims in (False, True):
            for name in ("sum", "max", "min", "mean"):
                got = getattr(dlarray, name)(x, axis=axis, keepdims=keepdims)
                want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
                assert got.shape == want.shape and got.dtype == want.dtype, (name, axis)
                if name in ("max", "min") or a.dtype.kind in "iu" and name == "sum":
                    assert (got.asnumpy() == want).all(), (name, axis)
                    continue
                # Against float64 sums, within the dtype's rounding of the sum of magnitudes.
                exact = getattr(np, name)(a.astype(np.float64), axis=axis, keepdims=keepdims)
                scale = getattr(np, name)(np.abs(a.astype(np.float64)), axis=axis,
                                          keepdims=keepdims)
                eps = np.finfo(want.dtype).eps if want.dtype.kind == "f" else 1e-15
                assert (np.abs(got.asnumpy() - exact) <= 8 * eps * scale).all(), (name, axis)


def test_signature_and_errors():
    import inspect
    assert str(inspect.signature(dlarray.mean)) == "(x, /, *, axis=None, keepdims=False)"
    x = dlarray.array(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="keepdims"):
        dlarray.mean(x, axis=0, keepdims="yes")
    with pytest.raises(TypeError):
        dlarray.sum(x, axes=0)
    with pytest.raises(TypeError, match="mean: x must be"):
        dlarray.mean([1.0])


# reduce_mean (mean's one pass, where the device has it): the bits of reduce kind 0 followed by
# matrix_elementwise_divide_by_const, over rows (a warp or a block per row, one row cut into
# pieces) and columns (several pieces, more than 16), every float dtype.
MEAN_SHAPES = [(1, 1), (1, 7), (1, 100003), (3, 257), (1, 3000, 5), (2, 70001, 3), (4, 5, 1)]


@pytest.mark.parametrize("dtype", [d for d in REAL if d.kind == "f" or d == BF16], ids=str)
def test_reduce_mean_matches_its_two_ops(ctx, rng, dtype):
    skip_unsupported(ctx, dtype)
    from dlarray import _kernels, ops
    if not _kernels.has_kernel("reduce_mean", ctx):
        pytest.skip("the %r plugin has no reduce_mean (mean runs as its two ops there)" % ctx)
    for shape in MEAN_SHAPES:
        x = _array(ctx, rng, shape, dtype)
        out_shape = (shape[0],) + shape[2:]
        for count in (float(shape[1]), 3.0, 1.0, 1e6 + 1.0):
            if dtype.itemsize == 2 and count > 60000:
                continue  # the divide's scalar would overflow float16
            got = dlarray.empty(out_shape, ctx, dtype=dtype)
            ops.reduce_mean(x, count, got)
            want = dlarray.empty(out_shape, ctx, dtype=dtype)
            ops.reduce(x, 0, want)
            ops.matrix_elementwise_divide_by_const(want, count, want)
            assert got.asnumpy().tobytes() == want.asnumpy().tobytes(), (shape, count)
        exact = x.asnumpy().astype(np.float64).sum(axis=1) / shape[1]
        got = dlarray.empty(out_shape, ctx, dtype=dtype)
        ops.reduce_mean(x, float(shape[1]), got)
        scale = np.abs(x.asnumpy().astype(np.float64)).sum(axis=1) / shape[1]
        eps = 2.0 ** -7 if dtype == BF16 else float(np.finfo(dtype).eps)
        g = got.asnumpy().astype(np.float64)
        nan = np.isnan(exact)  # the data holds NaN (a row with one is NaN)
        assert (np.isnan(g) == nan).all(), shape
        assert (np.abs(g - exact)[~nan] <= 2 * eps * scale[~nan]).all(), shape


def test_reduce_mean_errors(ctx):
    from dlarray import _kernels, ops
    if not _kernels.has_kernel("reduce_mean", ctx):
        pytest.skip("the %r plugin has no reduce_mean" % ctx)
    x = dlarray.array(np.ones((2, 3), np.float32), ctx)
    out = dlarray.empty((2,), ctx, dtype=np.float32)
    for bad in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="reduce_mean: count must be positive and finite"):
            ops.reduce_mean(x, bad, out)
    with pytest.raises(ValueError, match="output must be"):
        ops.reduce_mean(x, 3.0, dlarray.empty((3,), ctx, dtype=np.float32))
    with pytest.raises(TypeError):
        ops.reduce_mean(dlarray.array(np.ones((2, 3), np.int32), ctx), 3.0,
                        dlarray.empty((2,), ctx, dtype=np.int32))
