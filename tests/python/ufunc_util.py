"""What the test_api_ufunc_* files share: the dtypes, shapes and data they draw, and the comparison
of a result with NumPy's."""
import numpy as np
import pytest

import dlarray

try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # the optional bfloat16 extra
    BF16 = None
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
FLOATS = [F32, F16, F64] + ([BF16] if BF16 is not None else [])
SIGNED = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)]
UNSIGNED = [np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)]
INTS = SIGNED + UNSIGNED
BOOL = np.dtype(np.bool_)
REAL = FLOATS + INTS + [BOOL]
# 0-d, empty, one element, odd 2-D, empty 3-D, past 1024 and past 65536 elements.
SHAPES = [(), (0,), (1,), (7, 13), (3, 0, 2), (1025,), (65536 + 3,)]
SPECIAL = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5]
# Relative error allowed per float dtype (16-bit types: computed in float32, rounded once;
# float32/64: the device's math library, a few ulp).
RTOL = {F16: 2.0 ** -9, F32: 2.0 ** -19, F64: 2.0 ** -46}
if BF16 is not None:
    RTOL[BF16] = 2.0 ** -6


def dtype_id(dtype):
    return str(dtype)


def dev(a, ctx):
    return dlarray.array(a, ctx, dtype=a.dtype)


def skip_unsupported(ctx, dtype):
    """Skips where the device has no kernels for dtype (float64 on an OpenCL device without
    cl_khr_fp64)."""
    if np.dtype(dtype) == F64 and repr(ctx).startswith("opencl"):
        if "float64" not in dlarray.__array_namespace_info__().dtypes(device=ctx):
            pytest.skip("no float64 on this device")


def data(rng, shape, dtype, low=-5.0, high=5.0, special=True):
    """Random values of dtype: uniform in [low, high] for floats, with the IEEE special values
    mixed in; the whole range for integers; 0/1 for bool."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    values = rng.uniform(low, high, shape)
    flat = values.reshape(-1)
    if special and flat.size:
        pick = rng.integers(0, len(SPECIAL), flat.size)
        mix = rng.random(flat.size) < 0.2
        flat[mix] = np.array(SPECIAL)[pick[mix]]
    with np.errstate(over="ignore"):
        return values.astype(dtype)


def assert_matches(got, ref, dtype, exact=False, what=""):
    """got (an NDArray) equals ref (NumPy, computed in float64 for floats) within the dtype's
    tolerance: NaN where ref is NaN, infinities and (for exact results) signed zeros alike."""
    out = got.asnumpy()
    assert out.shape == ref.shape, what
    dtype = np.dtype(dtype)
    if dtype.kind in "biu" or exact:
        with np.errstate(over="ignore", invalid="ignore"):
            r = ref.astype(dtype) if ref.dtype != dtype else ref
        if dtype.kind == "f" or dtype == BF16:  # (ml_dtypes' NaN is unequal to itself there)
            np.testing.assert_array_equal(out.astype(np.float64), r.astype(np.float64),
                                          err_msg=what)
        else:
            np.testing.assert_array_equal(out, r, err_msg=what)
        if dtype.kind == "f" or dtype == BF16:
            zero = r.astype(np.float64) == 0
            np.testing.assert_array_equal(np.signbit(out.astype(np.float64)[zero]),
                                          np.signbit(r.astype(np.float64)[zero]), err_msg=what)
        return
    o = out.astype(np.float64)
    r = ref.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(o), np.isnan(r), err_msg=what)
    # A result past the dtype's range is inf there.
    with np.errstate(over="ignore"):
        r_rounded = r.astype(dtype).astype(np.float64)
    inf = np.isinf(r_rounded)
    np.testing.assert_array_equal(o[inf], r_rounded[inf], err_msg=what)
    fin = ~(np.isnan(r) | inf)
    tol = RTOL[dtype]
    np.testing.assert_allclose(o[fin], r[fin], rtol=tol, atol=tol, err_msg=what)
