"""The faster indexing paths of issue 21 against NumPy on every device: the CPU gather's prefetch
(take past a thread's chunk, bad indices anywhere), take_along_axis of one row (a take) and of
many (a small broadcast offset), and x[mask] = scalar with a mask of x's shape (one in-place
where); every dtype, odd, empty and 1-element shapes, negative and out-of-bounds indices."""
import numpy as np
import pytest

import dlarray
from ufunc_util import REAL, data, skip_unsupported

def _equal(got, want, msg=""):
    """Equal values, NaN equal to NaN (NumPy's testing sees bfloat16 NaNs as unequal)."""
    if want.dtype.kind == "V" or want.dtype.name == "bfloat16":
        got, want = got.astype(np.float32), want.astype(np.float32)
    np.testing.assert_array_equal(got, want, err_msg=msg)


# One element, odd, and past the gather's parallel threshold (32768) and prefetch distance.
SIZES = [1, 7, 33, 65536 + 5]


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_take_large_and_odd(ctx, rng, dtype):
    skip_unsupported(ctx, dtype)
    for n in SIZES:
        x = data(rng, (n,), dtype)
        idx = rng.integers(-n, n, 2 * n + 3)
        got = dlarray.take(dlarray.asarray(x, device=ctx), dlarray.asarray(idx, device=ctx))
        assert got.dtype == x.dtype
        _equal(got.asnumpy(), np.take(x, idx))


@pytest.mark.parametrize("where", [0, 1, 40000, -1])
def test_take_out_of_bounds_anywhere(ctx, rng, where):
    """A bad index before, at and after the prefetch reaches it: IndexError naming it."""
    n = 65536 + 5
    x = dlarray.asarray(np.arange(n, dtype=np.float32), device=ctx)
    idx = rng.integers(0, n, 50000)
    idx[where] = n + 12
    with pytest.raises(IndexError, match="take: index %d is out of bounds for axis 0 with size %d"
                       % (n + 12, n)):
        dlarray.take(x, dlarray.asarray(idx, device=ctx))
    idx[where] = -n - 1
    with pytest.raises(IndexError, match="index %d is out of bounds" % (-n - 1)):
        dlarray.take(x, dlarray.asarray(idx, device=ctx))


CASES = [((1,), 0), ((7,), 0), ((5, 3), 0), ((5, 3), 1), ((2, 3, 4), 1), ((2, 3, 4), -1),
         ((2, 3, 4), 0), ((1, 9), 1), ((9, 1), 0), ((3, 40000), 1)]


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_take_along_axis_against_numpy(ctx, rng, dtype):
    skip_unsupported(ctx, dtype)
    for shape, axis in CASES:
        x = data(rng, shape, dtype)
        for m in (0, 1, 4):
            ishape = list(shape)
            ishape[axis] = m
            idx = rng.integers(-shape[axis], shape[axis], ishape)
            got = dlarray.take_along_axis(dlarray.asarray(x, device=ctx),
                                          dlarray.asarray(idx, device=ctx), axis=axis)
            want = np.take_along_axis(x, idx, axis=axis)
            assert got.shape == want.shape and got.dtype == want.dtype, (shape, axis, m)
            _equal(got.asnumpy(), want, str((shape, axis, m)))


def test_take_along_axis_broadcasts_and_int32(ctx, rng):
    x = rng.standard_normal((3, 1, 5)).astype(np.float32)
    idx = rng.integers(-5, 5, (1, 4, 2)).astype(np.int32)
    got = dlarray.take_along_axis(dlarray.asarray(x, device=ctx),
                                  dlarray.asarray(idx, device=ctx), axis=2)
    want = np.take_along_axis(np.broadcast_to(x, (3, 4, 5)), np.broadcast_to(idx, (3, 4, 2)),
                              axis=2)
    np.testing.assert_array_equal(got.asnumpy(), want)


@pytest.mark.parametrize("shape,axis", [((7,), 0), ((2, 7), 1), ((7, 2), 0)])
def test_take_along_axis_out_of_bounds(ctx, shape, axis):
    x = dlarray.asarray(np.ones(shape, np.float32), device=ctx)
    for bad in (7, -8):
        ishape = list(shape)
        ishape[axis] = 2
        idx = np.zeros(ishape, np.int64)
        idx.reshape(-1)[-1] = bad
        with pytest.raises(IndexError, match="take_along_axis: index %d is out of bounds for "
                           "axis %d with size 7" % (bad, axis)):
            dlarray.take_along_axis(x, dlarray.asarray(idx, device=ctx), axis=axis)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float64], ids=str)
def test_take_along_axis_long_rows(ctx, rng, dtype):
    """Rows of 4096 indices and more along the last axis: one gather per row."""
    skip_unsupported(ctx, dtype)
    x = data(rng, (3, 2, 5000), dtype)
    for m in (4096, 6001):
        idx = rng.integers(-5000, 5000, (3, 2, m))
        got = dlarray.take_along_axis(dlarray.asarray(x, device=ctx),
                                      dlarray.asarray(idx, device=ctx), axis=-1)
        _equal(got.asnumpy(), np.take_along_axis(x, idx, axis=-1), str(m))
    bcast = rng.integers(0, 5000, (1, 2, 4096))  # broadcast over the first dimension
    got = dlarray.take_along_axis(dlarray.asarray(x, device=ctx),
                                  dlarray.asarray(bcast, device=ctx), axis=2)
    _equal(got.asnumpy(), np.take_along_axis(x, np.broadcast_to(bcast, (3, 2, 4096)), axis=2))
    idx = rng.integers(0, 5000, (3, 2, 4096))
    idx[2, 1, 4000] = -5001
    with pytest.raises(IndexError, match="take_along_axis: index -5001 is out of bounds for axis "
                       "2 with size 5000"):
        dlarray.take_along_axis(dlarray.asarray(x, device=ctx), dlarray.asarray(idx, device=ctx),
                                axis=2)


def _values(dtype):
    if dtype.kind == "b":
        return [True, False]
    if dtype.kind == "u":
        return [3, True]
    if dtype.kind == "i":
        return [3, -1, True]
    return [2.5, -1, float("nan"), True]


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_mask_set_scalar_against_numpy(ctx, rng, dtype):
    skip_unsupported(ctx, dtype)
    dtype = np.dtype(dtype)
    for shape in [(), (0,), (1,), (7,), (3, 5), (2, 3, 4), (65536 + 5,)]:
        x = np.asarray(data(rng, shape, dtype))
        mask = np.asarray(rng.random(shape) < 0.5)
        for value in _values(dtype):
            want = x.copy()
            want[mask] = value
            got = dlarray.asarray(x.copy(), device=ctx)
            got[dlarray.asarray(mask, device=ctx)] = value
            assert got.dtype == want.dtype
            _equal(got.asnumpy(), want, str((shape, value)))


def test_mask_set_scalar_views_and_errors(ctx):
    base = dlarray.asarray(np.zeros((4, 4), np.float32), device=ctx)
    view = base[::2]  # strided: where, then assigned back
    view[dlarray.asarray(np.eye(2, 4, dtype=bool), device=ctx)] = 3
    want = np.zeros((4, 4), np.float32)
    want[::2][np.eye(2, 4, dtype=bool)] = 3
    np.testing.assert_array_equal(base.asnumpy(), want)
    partial = dlarray.asarray(np.zeros((2, 3), np.float32), device=ctx)
    partial[dlarray.asarray(np.array([True, False]), device=ctx)] = 5  # leading dims only
    np.testing.assert_array_equal(partial.asnumpy(), [[5, 5, 5], [0, 0, 0]])
    small = dlarray.asarray(np.zeros(4, np.int8), device=ctx)
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        small[dlarray.asarray(np.ones(4, bool), device=ctx)] = 1000
    np.testing.assert_array_equal(small.asnumpy(), 0)
    with pytest.raises(IndexError, match="boolean index of shape"):
        small[dlarray.asarray(np.ones(5, bool), device=ctx)] = 1
    frozen = dlarray.asarray(np.zeros(3, np.float32), device=ctx)
    if len(dlarray.devices()) > 1:
        other = [d for d in dlarray.devices() if d != frozen.ctx][0]
        with pytest.raises(ValueError, match="index assignment"):
            frozen[dlarray.asarray(np.ones(3, bool), device=other)] = 1.0
