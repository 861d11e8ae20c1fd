"""The array API's binary elementwise functions, where and clip (rows of the elementwise table)
against NumPy on every dtype they take and every device: odd shapes, 0-d, empty, one element,
sizes crossing 1024 and 65536, the IEEE special values, integer division by zero (0, as NumPy),
broadcasting, NEP 50 promotion and Python scalars on either side."""
import numpy as np
import pytest

import dlarray
from ufunc_util import (BOOL, F16, F32, F64, FLOATS, INTS, SHAPES, SIGNED, assert_matches, data,
                        dev, dtype_id, skip_unsupported)

# name: (NumPy's function, exact on floats)
NUMERIC = {
    "add": (np.add, True),
    "subtract": (np.subtract, True),
    "multiply": (np.multiply, True),
    "pow": (np.power, False),
    "floor_divide": (np.floor_divide, True),
    "remainder": (np.remainder, True),
    "maximum": (np.maximum, False),  # False: either zero for (-0.0, 0.0), as the standard allows
    "minimum": (np.minimum, False),
}
FLOAT = {
    "divide": (np.divide, True),
    "atan2": (np.arctan2, False),
    "hypot": (np.hypot, False),
    "copysign": (np.copysign, True),
    "nextafter": (np.nextafter, True),
    "logaddexp": (np.logaddexp, False),
}
INTEGRAL = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
            "bitwise_xor": np.bitwise_xor}
SHIFTS = {"bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift}


def _pair(rng, shape, dtype, name):
    a, b = data(rng, shape, dtype, -50, 50), data(rng, shape, dtype, -50, 50)
    if dtype.kind in "iu" and name == "pow":
        a = (a % 7).astype(dtype)
        b = (b % 9).astype(dtype)  # NumPy refuses negative integer exponents
    if dtype.kind in "iu" and b.size:
        b.reshape(-1)[::7] = 0  # x // 0 and x % 0 are 0
    return a, b


def _expected(fn, a, b, dtype):
    with np.errstate(all="ignore"):
        if dtype.kind in "iu" or dtype == BOOL:
            return fn(a, b)
        return fn(a.astype(np.float64), b.astype(np.float64))


@pytest.mark.parametrize("name", sorted(NUMERIC))
@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=dtype_id)
def test_numeric_functions_match_numpy(ctx, rng, name, dtype):
    skip_unsupported(ctx, dtype)
    ref, exact = NUMERIC[name]
    fn = getattr(dlarray, name)
    for shape in SHAPES:
        a, b = _pair(rng, shape, dtype, name)
        got = fn(dev(a, ctx), dev(b, ctx))
        assert got.dtype == dtype and got.shape == a.shape
        expected = _expected(ref, a, b, dtype)
        if dtype.kind in "iu" and name in ("floor_divide", "remainder"):
            expected = np.where(b == 0, 0, expected).astype(dtype)  # NumPy's (with a warning)
        if dtype in (F16, F32) or dtype.name == "bfloat16":
            exact = exact and name not in ("floor_divide", "remainder")  # f64 reference
        assert_matches(got, expected, dtype, exact, "%s %s" % (name, shape))


@pytest.mark.parametrize("name", sorted(FLOAT))
@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
def test_float_functions_match_numpy(ctx, rng, name, dtype):
    skip_unsupported(ctx, dtype)
    if name == "nextafter" and dtype.itemsize == 2:
        pytest.skip("nextafter takes float32 and float64")
    ref, exact = FLOAT[name]
    fn = getattr(dlarray, name)
    for shape in SHAPES:
        a, b = _pair(rng, shape, dtype, name)
        got = fn(dev(a, ctx), dev(b, ctx))
        assert got.dtype == dtype
        if name == "nextafter":
            expected = np.nextafter(a, b)
        else:
            expected = _expected(ref, a, b, dtype)
            exact = exact and dtype == F64 or name == "copysign"
        assert_matches(got, expected, dtype, exact, "%s %s" % (name, shape))


@pytest.mark.parametrize("name", sorted(INTEGRAL))
@pytest.mark.parametrize("dtype", INTS + [BOOL], ids=dtype_id)
def test_bitwise_functions_match_numpy(ctx, rng, name, dtype):
    for shape in SHAPES:
        a, b = data(rng, shape, dtype), data(rng, shape, dtype)
        got = getattr(dlarray, name)(dev(a, ctx), dev(b, ctx))
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.asnumpy(), INTEGRAL[name](a, b))


@pytest.mark.parametrize("name", sorted(SHIFTS))
@pytest.mark.parametrize("dtype", INTS, ids=dtype_id)
def test_shifts_match_numpy(ctx, rng, name, dtype):
    bits = dtype.itemsize * 8
    for shape in SHAPES:
        a = data(rng, shape, dtype)
        b = rng.integers(0, bits + 3, shape).astype(dtype)  # past the width too
        got = getattr(dlarray, name)(dev(a, ctx), dev(b, ctx))
        expected = SHIFTS[name](a, b)
        zero_fill = name == "bitwise_left_shift" or dtype.kind == "u"
        past_value = np.zeros_like(a) if zero_fill else -(a < 0).astype(dtype)
        expected = np.where(b >= bits, past_value, expected).astype(dtype)
        np.testing.assert_array_equal(got.asnumpy(), expected)


@pytest.mark.parametrize("dtype", SIGNED, ids=dtype_id)
def test_integer_division_edges(ctx, dtype):
    info = np.iinfo(dtype)
    a = np.array([info.min, info.min, 7, -7, 7, -7, 0, 5], dtype)
    b = np.array([-1, 1, 2, 2, -2, -2, 0, 0], dtype)
    x, y = dev(a, ctx), dev(b, ctx)
    with np.errstate(all="ignore"):
        fd, rem = np.floor_divide(a, b), np.remainder(a, b)
    np.testing.assert_array_equal(dlarray.floor_divide(x, y).asnumpy(), fd)
    np.testing.assert_array_equal(dlarray.remainder(x, y).asnumpy(), rem)


def test_float_division_special_values(ctx):
    s = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5]
    a = np.repeat(np.array(s, np.float32), len(s))
    b = np.tile(np.array(s, np.float32), len(s))
    for name, ref in (("floor_divide", np.floor_divide), ("remainder", np.remainder),
                      ("divide", np.divide), ("maximum", np.maximum), ("minimum", np.minimum),
                      ("pow", np.power), ("atan2", np.arctan2), ("hypot", np.hypot),
                      ("copysign", np.copysign), ("logaddexp", np.logaddexp)):
        with np.errstate(all="ignore"):
            expected = ref(a, b)
        got = getattr(dlarray, name)(dev(a, ctx), dev(b, ctx))
        # maximum(-0.0, 0.0) may be either zero (the standard leaves it unspecified)
        inexact = ("pow", "atan2", "logaddexp", "hypot", "maximum", "minimum")
        assert_matches(got, expected, F32, name not in inexact, name)


def test_true_division_of_integers_gives_float64(ctx):
    skip_unsupported(ctx, F64)
    got = dlarray.divide(dev(np.array([1, 2, 3], np.int32), ctx), 2)
    assert got.dtype == F64
    np.testing.assert_array_equal(got.asnumpy(), [0.5, 1.0, 1.5])


@pytest.mark.parametrize("name", sorted(NUMERIC) + sorted(FLOAT))
def test_broadcasting_promotion_and_scalars(ctx, rng, name):
    fn, ref = getattr(dlarray, name), {**NUMERIC, **FLOAT}[name][0]
    a = rng.uniform(1, 4, (5, 1)).astype(np.float32)
    b = rng.integers(1, 4, (1, 7)).astype(np.int8)
    with np.errstate(all="ignore"):
        got = fn(dev(a, ctx), dev(b, ctx))
        assert got.dtype == F32 and got.shape == (5, 7)
        assert_matches(got, ref(a.astype(np.float64), b.astype(np.float64)), F32)
        for scalar in (2, 1.5):
            assert_matches(fn(dev(a, ctx), scalar), ref(a.astype(np.float64), scalar), F32)
            assert_matches(fn(scalar, dev(a, ctx)), ref(scalar, a.astype(np.float64)), F32)
    assert fn(dev(np.array(2.0, np.float32), ctx), 3.0).shape == ()


def test_python_ints_out_of_range_raise(ctx):
    x = dev(np.array([1, 2], np.int8), ctx)
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        dlarray.add(x, 300)
    with pytest.raises(OverflowError):
        dlarray.maximum(1000, x)


@pytest.mark.parametrize("dtype", FLOATS + INTS + [BOOL], ids=dtype_id)
def test_where_matches_numpy(ctx, rng, dtype):
    skip_unsupported(ctx, dtype)
    for shape in SHAPES:
        c = rng.random(shape) < 0.5
        a, b = data(rng, shape, dtype), data(rng, shape, dtype)
        got = dlarray.where(dev(c, ctx), dev(a, ctx), dev(b, ctx))
        assert got.dtype == dtype
        assert_matches(got, np.where(c, a, b), dtype, exact=True)


def test_where_broadcasts_promotes_and_moves_complex(ctx):
    c = np.array([[True], [False]])
    a = np.arange(3, dtype=np.int16)
    got = dlarray.where(dev(c, ctx), dev(a, ctx), 2.5)
    np.testing.assert_array_equal(got.asnumpy(), np.where(c, a, 2.5))
    assert got.dtype == np.float64
    z = np.array([1 + 2j, 3 - 4j], np.complex64)
    np.testing.assert_array_equal(
        dlarray.where(dev(np.array([True, False]), ctx), dev(z, ctx), dev(z[::-1].copy(), ctx))
        .asnumpy(), [1 + 2j, 1 + 2j])


@pytest.mark.parametrize("dtype", [F32, np.dtype(np.int16), np.dtype(np.uint8)], ids=dtype_id)
def test_clip_matches_numpy(ctx, rng, dtype):
    for shape in SHAPES:
        a = data(rng, shape, dtype, -10, 10)
        lo = data(rng, shape, dtype, -10, 0, special=False)
        got = dlarray.clip(dev(a, ctx), dev(lo, ctx), 5)
        assert got.dtype == dtype and got.shape == a.shape
        np.testing.assert_array_equal(got.asnumpy(), np.clip(a, lo, 5).astype(dtype))
    x = dev(np.array([np.nan, -3, 3], np.float32), ctx)
    np.testing.assert_array_equal(dlarray.clip(x, -1.0).asnumpy(), [np.nan, -1, 3])
    np.testing.assert_array_equal(dlarray.clip(x, max=1.0).asnumpy(), [np.nan, -3, 1])
    np.testing.assert_array_equal(dlarray.clip(x).asnumpy(), x.asnumpy())


def test_binary_functions_reject_bad_input(ctx):
    f = dev(np.zeros(3, np.float32), ctx)
    with pytest.raises(TypeError, match="bitwise_and: x1 must have an integer or bool dtype"):
        dlarray.bitwise_and(f, f)
    with pytest.raises(TypeError, match="bitwise_left_shift: x2 must have an integer dtype"):
        dlarray.bitwise_left_shift(dev(np.zeros(3, np.int8), ctx), dev(np.zeros(3, bool), ctx))
    with pytest.raises(TypeError, match="add: x2 must be a dlarray array or a Python scalar"):
        dlarray.add(f, [1, 2, 3])
    with pytest.raises(TypeError, match="maximum: x2 must have a real numeric"):
        dlarray.maximum(f, dev(np.zeros(3, np.complex64), ctx))
    with pytest.raises(TypeError, match="nextafter: .*float16"):
        dlarray.nextafter(dev(np.zeros(3, F16), ctx), dev(np.zeros(3, F16), ctx))
    with pytest.raises(TypeError, match="where: condition must be a dlarray array"):
        dlarray.where([True], f, f)
    with pytest.raises(ValueError, match="clip: shapes .* do not broadcast together"):
        dlarray.clip(f, None, dev(np.zeros((2, 4), np.float32), ctx))
    assert dlarray.clip(f, None, dev(np.zeros((2, 3), np.float32), ctx)).shape == (2, 3)
