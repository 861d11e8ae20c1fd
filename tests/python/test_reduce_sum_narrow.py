"""Sums over axis 0 of tall, narrow arrays: reduce_sum_axis_zero's narrow-output path (fewer than
64 columns, read as wide rows of a multiple of lcm(cols, vector width) floats, at least 128, split
into row blocks per thread, the leftover elements added one by one) and dlarray.sum(x, axis=0),
whose float32 sums over a leading axis run the same kernel, against NumPy in every dtype, with
1 to 4 threads and sizes around the thread split and the wide-row tail.
"""
import numpy as np
import pytest

import dlarray
from dlarray import ops

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")

COLS = [1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 32, 48, 63, 64, 65]
# rows x cols: below and above the 32768 elements that go parallel, wide-row counts below, at and
# just past the thread count, totals that leave a tail shorter than a wide row.
ROWS = [1, 2, 63, 129, 257, 4097, 16411, 40000]
DTYPES = [np.dtype(t) for t in (np.float16, np.float64, np.int8, np.int16, np.int32, np.int64,
                                 np.uint8, np.bool_)] + [np.dtype(ml_dtypes.bfloat16)]


@pytest.fixture(params=[1, 2, 3, 4], ids=lambda t: "threads%d" % t)
def threads(request):
    saved = dlarray.get_num_threads()
    dlarray.set_num_threads(request.param)
    yield request.param
    dlarray.set_num_threads(saved)


def _positive(rng, shape):
    return rng.uniform(0.5, 20.0, shape).astype(np.float32)


def _check_f32(got, x):
    # Float lanes add at most 16 values before the double accumulator takes them: with positive
    # data the relative error stays far below 1e-6.
    ref = x.astype(np.float64).sum(axis=0)
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=1e-6)


@pytest.mark.parametrize("cols", COLS)
@pytest.mark.parametrize("rows", ROWS)
def test_reduce_sum_axis_zero_narrow(rng, threads, rows, cols):
    ctx = dlarray.cpu(0)
    x = _positive(rng, (rows, cols))
    out = dlarray.empty((cols,), ctx)
    ops.reduce_sum_axis_zero(dlarray.array(x, ctx), out)
    _check_f32(out.asnumpy(), x)


@pytest.mark.parametrize("shape", [(40000, 3), (40000, 2, 3), (16411, 16), (100000, 2), (5, 3),
                                   (1, 2), (70001, 1, 7), (3000, 4096)], ids=str)
def test_sum_axis0_float32(rng, threads, shape):
    x = _positive(rng, shape)
    a = dlarray.asarray(x)
    _check_f32(dlarray.sum(a, axis=0).asnumpy(), x)
    np.testing.assert_allclose(dlarray.mean(a, axis=0).asnumpy().astype(np.float64),
                               x.astype(np.float64).mean(axis=0), rtol=1e-6)
    # Axis 0 of a 3-D array kept, and a sum over axes (0, 1) (one leading run): the same kernel.
    if len(shape) == 3:
        _check_f32(dlarray.sum(a, axis=(0, 1)).asnumpy(), x.reshape(-1, shape[2]))


def test_sum_axis0_float32_special_values():
    x = np.ones((50000, 3), np.float32)
    x[7, 0], x[40000, 1], x[123, 2], x[124, 2] = np.nan, np.inf, np.inf, -np.inf
    got = dlarray.sum(dlarray.asarray(x), axis=0).asnumpy()
    np.testing.assert_array_equal(got, np.array([np.nan, np.inf, np.nan], np.float32))
    z = -np.zeros((40000, 5), np.float32)
    got = dlarray.sum(dlarray.asarray(z), axis=0).asnumpy()
    np.testing.assert_array_equal(got, np.zeros(5, np.float32))  # -0.0 + -0.0 ... as NumPy: 0.0


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(40000, 3), (16411, 16), (257, 63), (1, 5), (100000, 2)],
                         ids=str)
def test_sum_axis0_every_dtype(rng, dtype, shape):
    if dtype.kind == "b":
        x = rng.integers(0, 2, shape).astype(dtype)
    elif dtype.kind in "iu":
        x = rng.integers(0, 100, shape).astype(dtype)
    else:
        # Quarters: every partial sum is exact in the float32 or float64 accumulator.
        x = (rng.integers(0, 9, shape) / 4).astype(dtype)
    got = dlarray.sum(dlarray.asarray(x), axis=0).asnumpy()
    want = np.sum(x, axis=0)
    assert got.dtype == want.dtype
    if dtype.kind in "biu" or dtype == np.float64:
        np.testing.assert_array_equal(got, want)
    else:
        # The 16-bit floats sum in float32 and round once at the end.
        with np.errstate(over="ignore"):  # float16 sums past 65504 are inf, as NumPy's
            exact = x.astype(np.float64).sum(axis=0).astype(dtype)
        np.testing.assert_array_equal(got.astype(np.float64), exact.astype(np.float64))
