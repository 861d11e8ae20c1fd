"""x[mask] = scalar on every device against NumPy: through the backend's masked_fill (cuda) or
where() with a filled array (the others), so both give NumPy's elements for every dtype, values
converted as NumPy converts them (a float into an integer array truncates, bool into float,
-0.0, inf, NaN), integers beyond 2**53 (which the op's float64 attribute cannot carry: the
composite takes them), sizes around the vector and block widths, empty and 1-element arrays,
and the errors of basic assignment (out-of-range integers, NaN into an integer array)."""
import ml_dtypes
import numpy as np
import pytest

import dlarray as xp
from dlarray import _kernels

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, ml_dtypes.bfloat16, np.float32, np.float64]
SIZES = [0, 1, 3, 4, 17, 1000, 4099, 130003]


def _values(dtype):
    kind = np.dtype(dtype).kind
    if kind == "b":
        return [True, False, 1, 0]
    if kind in "iu":
        return [0, 1, 5, 100, 2.7, True] + ([-3] if kind == "i" else [])
    return [0.0, -0.0, 1.5, -2, np.inf, -np.inf, np.nan, True, 3]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_mask_set_scalar_as_numpy(ctx, rng, dtype):
    for n in SIZES:
        base = (rng.standard_normal(n) * 50).astype(dtype)
        mask = rng.random(n) < 0.4
        for value in _values(dtype):
            want = base.copy()
            want[mask] = value
            x = xp.asarray(base, device=ctx)
            x[xp.asarray(mask, device=ctx)] = value
            got = x.asnumpy()
            assert got.dtype == want.dtype
            _same(got, want, "%s n=%d value=%r" % (ctx, n, value))


def _same(got, want, msg):
    """Equal elements, NaN where NumPy has NaN (a GPU's NaN of a 16-bit float has other bits
    than NumPy's), and the sign of every zero."""
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=msg)
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_array_equal(g, w, err_msg=msg)  # NaN equals NaN here
    np.testing.assert_array_equal(np.signbit(g[~np.isnan(w)]), np.signbit(w[~np.isnan(w)]),
                                  err_msg=msg)


def test_mask_set_2d_and_large_integers(ctx, rng):
    base = rng.integers(-1000, 1000, (37, 129)).astype(np.int64)
    mask = rng.random(base.shape) < 0.5
    for value in (2 ** 53, 2 ** 53 + 1, -(2 ** 62) - 7, 2 ** 63 - 1):
        want = base.copy()
        want[mask] = value
        x = xp.asarray(base, device=ctx)
        x[xp.asarray(mask, device=ctx)] = value
        np.testing.assert_array_equal(x.asnumpy(), want)


def test_mask_set_errors(ctx):
    x = xp.asarray(np.zeros(8, np.int8), device=ctx)
    m = xp.asarray(np.arange(8) % 2 == 0, device=ctx)
    with pytest.raises(OverflowError):
        x[m] = 1000
    with pytest.raises((ValueError, TypeError)):
        x[m] = float("nan")
    np.testing.assert_array_equal(x.asnumpy(), np.zeros(8, np.int8))  # nothing written


def test_masked_fill_op_checks_its_operands(ctx):
    if not _kernels.has_kernel("masked_fill", ctx):
        pytest.skip("%s's plugin has no masked_fill kernel (x[mask] = scalar uses where)" % ctx)
    out = xp.asarray(np.zeros(6, np.float32), device=ctx)
    with pytest.raises(TypeError, match="condition .* must be bool"):
        xp.ops.masked_fill(xp.asarray(np.ones(6, np.int32), device=ctx), 1.0, out)
    with pytest.raises(ValueError):
        xp.ops.masked_fill(xp.asarray(np.ones(5, np.bool_), device=ctx), 1.0, out)
    with pytest.raises(ValueError, match="range"):
        xp.ops.masked_fill(xp.asarray(np.ones(6, np.bool_), device=ctx), 1e300, out)
