"""x[mask] on every device against NumPy: through the backend's compress (cuda: one compaction
of x's elements) or nonzero + gather (the others), for every dtype, mask densities from none to
all (the picked prefix copied out, or the whole output kept), sizes around the vector, block and
tile widths, empty and 1-element arrays, strided x and masks; and the compress op's own contract
(the count, bad operands raising)."""
import ml_dtypes
import numpy as np
import pytest

import dlarray as xp
from dlarray import _core, _kernels, ops

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128]
SIZES = [0, 1, 3, 17, 1000, 4099, 130003]


def _data(rng, shape, dtype):
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return (rng.standard_normal(shape) * 50).astype(dtype)


def _ok(ctx, dtype):
    """Skips a dtype the device does not hold (complex on opencl:0, say)."""
    try:
        xp.asarray(np.zeros(1, dtype), device=ctx)
    except (TypeError, ValueError) as err:
        pytest.skip("%s holds no %s: %s" % (ctx, np.dtype(dtype).name, err))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_mask_get_as_numpy(ctx, rng, dtype):
    _ok(ctx, dtype)
    for n in SIZES:
        base = _data(rng, n, dtype)
        for density in (0.0, 0.01, 0.5, 1.0):
            mask = rng.random(n) < density
            got = xp.asarray(base, device=ctx)[xp.asarray(mask, device=ctx)]
            assert got.shape == (int(mask.sum()),), (n, density)
            assert got.dtype == np.dtype(dtype)
            np.testing.assert_array_equal(got.asnumpy().view(np.uint8),
                                          base[mask].view(np.uint8),
                                          err_msg="%s n=%d density=%g" % (ctx, n, density))


def test_mask_get_nd_and_strided(ctx, rng):
    base = rng.standard_normal((37, 129, 5)).astype(np.float32)
    mask = rng.random(base.shape) < 0.3
    x, m = xp.asarray(base, device=ctx), xp.asarray(mask, device=ctx)
    np.testing.assert_array_equal(x[m].asnumpy(), base[mask])
    # strided operands: a transposed x, a mask sliced out of a larger one
    big = rng.random((37, 258, 5)) < 0.6
    xt = xp.asarray(base.transpose(2, 0, 1).copy(), device=ctx).mT.mT  # a view, same values
    mb = xp.asarray(big, device=ctx)[:, ::2]
    np.testing.assert_array_equal(xt[xp.asarray(mask.transpose(2, 0, 1), device=ctx)].asnumpy(),
                                  base.transpose(2, 0, 1)[mask.transpose(2, 0, 1)])
    np.testing.assert_array_equal(x[mb].asnumpy(), base[big[:, ::2]])
    # the result is an array of its own: writing it leaves x alone
    picked = x[m]
    if picked.size:
        picked[...] = 0
    np.testing.assert_array_equal(x.asnumpy(), base)


def test_mask_get_errors(ctx):
    x = xp.asarray(np.arange(6.0).reshape(2, 3), device=ctx)
    with pytest.raises(IndexError):
        x[xp.asarray(np.ones((3, 2), bool), device=ctx)]
    if ctx != xp.cpu():
        with pytest.raises(ValueError, match="index"):
            x[xp.asarray(np.ones((2, 3), bool))]


def _compress_or_skip(ctx):
    if not _kernels.has_kernel("compress", ctx):
        pytest.skip("the %r plugin has no compress (x[mask] runs as nonzero + gather there)"
                    % ctx)


@pytest.mark.parametrize("n", [1, 255, 256, 4097, 1 << 20])
def test_compress_writes_the_count_and_the_prefix(ctx, rng, n):
    _compress_or_skip(ctx)
    base = rng.integers(-1000, 1000, n).astype(np.int32)
    mask = rng.random(n) < 0.37
    out = xp.asarray(np.full(n, 7, np.int32), device=ctx)
    count = xp.asarray(np.full(1, -1, np.int64), device=ctx)
    ops.compress(xp.asarray(base, device=ctx), xp.asarray(mask, device=ctx), out, count)
    k = int(mask.sum())
    assert count.asnumpy()[0] == k
    np.testing.assert_array_equal(out.asnumpy()[:k], base[mask])


def test_compress_bad_operands(ctx):
    _compress_or_skip(ctx)
    x = xp.asarray(np.arange(8, dtype=np.float32), device=ctx)
    mask = xp.asarray(np.ones(8, bool), device=ctx)

    def call(x_, mask_, out_, count_):
        ops.compress(x_, mask_, out_, count_)

    count = _core.empty((1,), ctx, np.int64)
    with pytest.raises(TypeError, match="mask"):
        call(x, x, _core.empty((8,), ctx, np.float32), count)
    with pytest.raises(TypeError, match="out"):
        call(x, mask, _core.empty((8,), ctx, np.float64), count)
    with pytest.raises(TypeError, match="count"):
        call(x, mask, _core.empty((8,), ctx, np.float32), _core.empty((1,), ctx, np.int32))
    with pytest.raises(ValueError, match="one shape"):
        call(x, mask, _core.empty((4,), ctx, np.float32), count)
    with pytest.raises(ValueError, match="one shape"):
        call(x, xp.asarray(np.ones(4, bool), device=ctx), _core.empty((8,), ctx, np.float32),
             count)
    with pytest.raises(ValueError, match="1-D"):
        call(x.reshape(2, 4), mask.reshape(2, 4), _core.empty((2, 4), ctx, np.float32), count)
