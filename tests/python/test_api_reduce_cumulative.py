"""The array API's cumulative_sum, cumulative_prod and diff on every device and every real dtype,
against NumPy: empty and one-element arrays, odd shapes, sizes past 1024 and 65536, every axis,
include_initial, dtype=, prepend/append, and the errors."""
import ml_dtypes
import numpy as np
import pytest

import dlarray as xp

BF16 = np.dtype(ml_dtypes.bfloat16)
REAL = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                              np.uint16, np.uint32, np.uint64, np.float16, np.float32,
                              np.float64)] + [BF16]
CASES = [((1,), None), ((0,), 0), ((7,), None), ((1031,), 0), ((70001,), -1), ((3, 0, 2), 1),
         ((4, 5, 6), 0), ((4, 5, 6), 2), ((33, 1025), 1), ((2, 70001), 1)]


def _data(rng, shape, dtype, prod):
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        a = rng.integers(0 if dtype.kind == "u" else -3, 4, size=shape)
        return (np.where(rng.random(shape) < 0.9, 1, a) if prod else a).astype(dtype)
    if prod:
        return rng.uniform(0.999, 1.001, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _reference(name, a, axis, include_initial):
    """NumPy's cumsum / cumprod (in float64 for floats), with the identity in front."""
    wide = a.astype(np.float64) if a.dtype.kind == "f" or a.dtype == BF16 else a
    ax = 0 if axis is None else axis
    r = getattr(np, "cumsum" if name == "cumulative_sum" else "cumprod")(wide, axis=ax)
    if include_initial:
        shape = list(a.shape)
        shape[ax] = 1
        first = np.full(shape, 0 if name == "cumulative_sum" else 1, r.dtype)
        r = np.concatenate([first, r], axis=ax)
    return r


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_cumulative_matches_numpy(ctx, rng, name, dtype):
    for shape, axis in CASES:
        a = _data(rng, shape, dtype, name == "cumulative_prod")
        x = xp.asarray(a, device=ctx)
        for include_initial in (False, True):
            got = getattr(xp, name)(x, axis=axis, include_initial=include_initial)
            want = _reference(name, a, axis, include_initial)
            assert got.shape == want.shape and got.ctx == ctx
            if dtype.kind in "biu":
                assert got.dtype == (np.uint64 if dtype.kind == "u" else np.int64)
                np.testing.assert_array_equal(got.asnumpy(), want)
            else:
                assert got.dtype == dtype
                tol = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-5}.get(dtype, 3e-2)
                # running sums near 0 lose relative precision: the absolute scale is sqrt(n)
                atol = tol * np.sqrt(max(a.shape[axis or 0] if a.ndim else 1, 1))
                np.testing.assert_allclose(got.asnumpy().astype(np.float64), want, rtol=tol,
                                           atol=atol)


def test_cumulative_dtype_and_errors(ctx):
    x = xp.asarray(np.full((5, 300), 100, np.int8), device=ctx)
    got = xp.cumulative_sum(x, axis=1, dtype=xp.int8)
    np.testing.assert_array_equal(got.asnumpy(), np.cumsum(np.full((5, 300), 100, np.int8),
                                                           axis=1, dtype=np.int8))
    assert xp.cumulative_sum(x, axis=1, dtype=xp.float64).dtype == np.float64
    with pytest.raises(ValueError, match="axis must be given"):
        xp.cumulative_sum(x)
    with pytest.raises(ValueError, match="0-d"):
        xp.cumulative_prod(xp.asarray(np.float32(1), device=ctx))
    with pytest.raises(ValueError, match="axis 2"):
        xp.cumulative_sum(x, axis=2)
    with pytest.raises(TypeError, match="axis"):
        xp.cumulative_sum(x, axis=(0, 1))
    with pytest.raises(TypeError, match="include_initial"):
        xp.cumulative_sum(x, axis=0, include_initial=1)
    with pytest.raises(TypeError, match="NDArray"):
        xp.cumulative_sum([1, 2, 3])


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_diff(ctx, rng, dtype):
    for shape, axis, n in [((1,), -1, 1), ((0,), 0, 1), ((7,), 0, 2), ((7,), 0, 0),
                           ((1031,), -1, 1), ((4, 5, 6), 1, 3), ((4, 5, 6), 0, 5),
                           ((33, 70), 0, 1), ((2, 70001), 1, 1)]:
        a = _data(rng, shape, dtype, False)
        got = xp.diff(xp.asarray(a, device=ctx), axis=axis, n=n)
        want = np.diff(a, axis=axis, n=n)
        assert got.shape == want.shape and got.dtype == want.dtype
        if dtype.kind == "f" or dtype == BF16:
            np.testing.assert_allclose(got.asnumpy().astype(np.float64),
                                       want.astype(np.float64), rtol=1e-2, atol=1e-2)
        else:
            np.testing.assert_array_equal(got.asnumpy(), want)


def test_diff_prepend_append(ctx):
    a = np.arange(12, dtype=np.int32).reshape(3, 4) ** 2
    x = xp.asarray(a, device=ctx)
    p = np.full((3, 2), 7, np.int64)
    got = xp.diff(x, axis=1, prepend=xp.asarray(p, device=ctx), append=5)
    np.testing.assert_array_equal(got.asnumpy(), np.diff(a, axis=1, prepend=p, append=5))
    assert got.dtype == np.int64  # int32 with int64 promotes
    got = xp.diff(x, axis=0, prepend=-1, n=2)
    np.testing.assert_array_equal(got.asnumpy(), np.diff(a, axis=0, prepend=-1, n=2))
    with pytest.raises(ValueError, match="prepend"):
        xp.diff(x, axis=1, prepend=xp.asarray(np.zeros((2, 2), np.int32), device=ctx))
    with pytest.raises(ValueError, match="non-negative"):
        xp.diff(x, n=-1)
    with pytest.raises(TypeError, match="n must"):
        xp.diff(x, n=1.5)
    with pytest.raises(ValueError, match="axis 2"):
        xp.diff(x, axis=2)
    with pytest.raises(ValueError, match="0-d"):
        xp.diff(xp.asarray(np.int32(3), device=ctx))
    with pytest.raises(TypeError, match="append"):
        xp.diff(x, append="a")
