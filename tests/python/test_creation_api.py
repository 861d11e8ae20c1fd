"""The array API's creation functions (zeros, ones, full, arange, *_like) on every device and in
every dtype, against NumPy: default dtypes, empty and one-element shapes, sizes past the kernels'
block and chunk sizes, and the errors."""
import numpy as np
import pytest

import dlarray as xp

DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                np.uint16, np.uint32, np.uint64, np.float16, np.float32,
                                np.float64, np.complex64, np.complex128)]
SHAPES = [(), (0,), (1,), (3, 0, 2), (7, 13), (100003,)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_zeros_ones_full(ctx, shape, dtype):
    for made, want in [(xp.zeros(shape, dtype=dtype, device=ctx), np.zeros(shape, dtype)),
                       (xp.ones(shape, dtype=dtype, device=ctx), np.ones(shape, dtype)),
                       (xp.full(shape, 3, dtype=dtype, device=ctx), np.full(shape, 3, dtype))]:
        assert made.ctx == ctx and made.dtype == dtype and made.shape == want.shape
        np.testing.assert_array_equal(made.asnumpy(), want)


@pytest.mark.parametrize("value, dtype", [(True, np.bool_), (-5, np.int64), (2.5, np.float64),
                                          (1 - 2j, np.complex128), (float("nan"), np.float64),
                                          (complex(float("inf"), -1), np.complex128)])
def test_full_default_dtypes(ctx, value, dtype):
    x = xp.full((4, 3), value, device=ctx)
    assert x.dtype == dtype
    np.testing.assert_array_equal(x.asnumpy(), np.full((4, 3), value, dtype))
    assert xp.zeros(2).dtype == np.float64 and xp.ones(2).dtype == np.float64


def test_full_casts_as_numpy(ctx):
    np.testing.assert_array_equal(xp.full((3,), 2.7, dtype=xp.int32, device=ctx).asnumpy(),
                                  np.full((3,), 2.7).astype(np.int32))
    np.testing.assert_array_equal(xp.full((3,), 2, dtype=xp.bool, device=ctx).asnumpy(), True)
    np.testing.assert_array_equal(xp.full((2,), 2 ** 62, dtype=xp.int64, device=ctx).asnumpy(),
                                  np.full((2,), 2 ** 62, np.int64))  # past a double's 53 bits
    np.testing.assert_array_equal(xp.full((2,), 0.5j, dtype=xp.complex64, device=ctx).asnumpy(),
                                  np.full((2,), 0.5j, np.complex64))
    with pytest.raises(OverflowError):
        xp.full((2,), 300, dtype=xp.int8, device=ctx)
    with pytest.raises(TypeError, match="imaginary part"):
        xp.full((2,), 1j, dtype=xp.float32, device=ctx)
    with pytest.raises(TypeError, match="fill_value must be"):
        xp.full((2,), "1", device=ctx)
    with pytest.raises(ValueError):
        xp.zeros((-1,), device=ctx)


@pytest.mark.parametrize("dtype", [None] + DTYPES, ids=str)
def test_like(ctx, rng, dtype):
    x = xp.asarray(rng.standard_normal((5, 7)).astype(np.float32), ctx)
    want_dtype = np.float32 if dtype is None else dtype
    for made, fill in [(xp.zeros_like(x, dtype=dtype), 0), (xp.ones_like(x, dtype=dtype), 1),
                       (xp.full_like(x, 4, dtype=dtype), 4)]:
        assert made.ctx == ctx and made.dtype == want_dtype and made.shape == (5, 7)
        np.testing.assert_array_equal(made.asnumpy(), np.full((5, 7), fill, want_dtype))
    e = xp.empty_like(x, dtype=dtype)
    assert e.shape == (5, 7) and e.dtype == want_dtype and e.ctx == ctx
    moved = xp.zeros_like(x, device=xp.cpu())
    assert moved.ctx == xp.cpu() and moved.dtype == np.float32
    with pytest.raises(TypeError, match="x must be an NDArray"):
        xp.zeros_like(np.zeros(3))


@pytest.mark.parametrize("args", [(5,), (0,), (-3,), (2, 11), (10, 0, -3), (0.5,), (1, 2, 0.25),
                                  (-1.5, 2.2, 0.7), (3, 3), (0, 100003)], ids=str)
def test_arange(ctx, args):
    x = xp.arange(*args, device=ctx)
    want = np.arange(*args)
    assert x.ctx == ctx and x.dtype == want.dtype and x.shape == want.shape
    np.testing.assert_allclose(x.asnumpy(), want, rtol=0, atol=1e-12)
    y = xp.arange(*args, dtype=xp.float32, device=ctx)
    np.testing.assert_allclose(y.asnumpy(), want.astype(np.float32), rtol=1e-6)


def test_arange_errors():
    with pytest.raises(ValueError, match="step must not be 0"):
        xp.arange(0, 5, 0)
    with pytest.raises(TypeError, match="stop must be an int or a float"):
        xp.arange(0, "5")
    with pytest.raises(TypeError, match="start must be"):
        xp.arange(1j, 5)


def test_empty_and_asarray_take_device(ctx):
    # The standard's keyword next to the seed's ctx (one of them).
    assert xp.empty((2, 3), device=ctx).ctx == ctx
    assert xp.empty((2,), dtype=xp.int8, device=ctx).dtype == np.int8
    x = xp.asarray([1.0, 2.0], device=ctx)
    assert x.ctx == ctx
    np.testing.assert_array_equal(x.asnumpy(), [1.0, 2.0])
    assert xp.asarray(x, device=xp.cpu()).ctx == xp.cpu()
    with pytest.raises(TypeError, match="pass the device once"):
        xp.empty((2,), ctx, device=ctx)
    with pytest.raises(TypeError, match="pass the device once"):
        xp.asarray([1.0], ctx, device=ctx)
