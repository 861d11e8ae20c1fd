"""The CPU's float32 vector forms of floor, ceil, trunc, round and sqrt (table_math.h) and of the
comparison predicates (a lane mask stored as bools), and the byte loop of predicates on bool
inputs: bit-exact against NumPy over a dense sweep of float32 values (every 997th bit pattern,
both signs, subnormals, the 2**23 boundary where every float is an integer), the special values
and sizes that leave a scalar tail on every vector width.
"""
import numpy as np
import pytest

import dlarray as xp

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5,
                    0.49999997, -0.49999997, 1.0, -1.0, 2.0**23, -2.0**23, 2.0**23 - 0.5,
                    -(2.0**23 - 0.5), 2.0**23 + 1, 2.0**24 + 2, 2.0**31, -2.0**31, 2.0**31 + 256,
                    3.0e38, -3.0e38, 1e-45, -1e-45, 1.17549435e-38, 1e-38, -1e-38,
                    np.finfo(np.float32).max, -np.finfo(np.float32).max], np.float32)
ROUNDING = {"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": np.rint,
            "sqrt": np.sqrt}
COMPARE = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less,
           "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal}


def sweep():
    """Every 997th float32 bit pattern (both signs, NaNs included), then the special values."""
    bits = np.arange(0, 2**32, 997, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([bits.view(np.float32), SPECIAL])


def same_bits(got, want):
    # NaN payloads aside (NumPy keeps the input's), equal values with equal signs.
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


@pytest.mark.parametrize("name", sorted(ROUNDING))
def test_rounding_and_sqrt_bit_exact(name):
    x = sweep()
    with np.errstate(invalid="ignore"):
        want = ROUNDING[name](x)
    same_bits(getattr(xp, name)(xp.asarray(x)).asnumpy(), want)


@pytest.mark.parametrize("name", sorted(ROUNDING))
@pytest.mark.parametrize("n", [0, 1, 3, 15, 16, 17, 33, 100003])
def test_rounding_tails(rng, name, n):
    x = (rng.standard_normal(n) * 10).astype(np.float32)
    x[::7] = np.round(x[::7]) + 0.5  # halves: round's ties
    x = np.abs(x) if name == "sqrt" else x
    same_bits(getattr(xp, name)(xp.asarray(x)).asnumpy(), ROUNDING[name](x))


def test_rounding_keeps_float64_and_halves(rng):
    # The other dtypes keep the C library's loop: checked alongside.
    for dtype in (np.float64, np.float16):
        x = (rng.standard_normal(1001) * 100).astype(dtype)
        for name, fn in ROUNDING.items():
            x_ = np.abs(x) if name == "sqrt" else x
            got = getattr(xp, name)(xp.asarray(x_)).asnumpy()
            assert got.dtype == dtype
            np.testing.assert_array_equal(got, fn(x_))


@pytest.mark.parametrize("name", sorted(COMPARE))
def test_compare_float32(rng, name):
    a = sweep()
    b = np.roll(a, 1)
    b[::3] = a[::3]  # equal pairs, NaN against NaN, 0.0 against -0.0 below
    b[:2], a[:2] = [-0.0, 0.0], [0.0, -0.0]
    got = getattr(xp, name)(xp.asarray(a), xp.asarray(b)).asnumpy()
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, COMPARE[name](a, b))
    assert set(np.unique(got.view(np.uint8))) <= {0, 1}  # bools hold 0 or 1


@pytest.mark.parametrize("n", [0, 1, 5, 16, 17, 40001])
def test_logical_not(rng, n):
    b = rng.integers(0, 2, n).astype(np.bool_)
    got = xp.logical_not(xp.asarray(b)).asnumpy()
    np.testing.assert_array_equal(got, np.logical_not(b))
    for dtype in (np.float32, np.int32, np.float64):
        x = rng.integers(-1, 2, n).astype(dtype)
        if dtype == np.float32 and n > 3:
            x[:4] = [np.nan, -0.0, np.inf, 0.0]
        got = xp.logical_not(xp.asarray(x)).asnumpy()
        np.testing.assert_array_equal(got, np.logical_not(x))
        assert set(np.unique(got.view(np.uint8))) <= {0, 1}


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor", "equal", "less"])
def test_bool_inputs(rng, name):
    a, b = (rng.integers(0, 2, 40001).astype(np.bool_) for _ in range(2))
    got = getattr(xp, name)(xp.asarray(a), xp.asarray(b)).asnumpy()
    np.testing.assert_array_equal(got, getattr(np, name)(a, b))


def test_pow_float32_within_one_ulp():
    """float32 pow through PowPositive (2^(y log2 x) in double lanes): a dense sweep of x (every
    331st positive float, subnormals included) against exponents that take the results from
    underflow (subnormal results) to overflow, within 1 ulp of a long double reference; the
    lanes it does not serve (x <= 0, NaN, infinities) exactly as NumPy's."""
    bits = np.arange(1, 0x7F800000, 331, dtype=np.uint32)
    x = bits.view(np.float32)
    rng = np.random.default_rng(5)
    log2x = np.log2(x.astype(np.float64))
    # Exponents for results spread over 2^-155 .. 2^130, and small integers and halves.
    target = rng.uniform(-155, 130, x.size)
    y = np.where(np.abs(log2x) > 1e-3, target / np.where(log2x == 0, 1, log2x), target)
    y = y.astype(np.float32)
    y[::5] = rng.integers(-4, 5, y[::5].size) / 2
    got = xp.pow(xp.asarray(x), xp.asarray(y)).asnumpy()
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.longdouble), y.astype(np.longdouble))
        want = ref.astype(np.float32)
    finite = np.isfinite(want) & (np.abs(want) < np.finfo(np.float32).max / 2)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    # Ulp of the float32 result, subnormals' spacing included.
    err = np.abs(got[finite].astype(np.longdouble) - ref[finite]) / np.spacing(want[finite])
    assert err.max() <= 1.0, err.max()


def test_pow_float32_special_lanes():
    s = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, np.inf, -np.inf, np.nan, 1e-45, 3e38],
                 np.float32)
    x, y = (a.ravel() for a in np.meshgrid(s, s))
    x = np.concatenate([x, np.full(37, 3.0, np.float32)])  # special lanes amid plain vectors
    y = np.concatenate([y, np.linspace(-2, 2, 37).astype(np.float32)])
    with np.errstate(all="ignore"):
        want = np.power(x, y)
    got = xp.pow(xp.asarray(x), xp.asarray(y)).asnumpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=1.2e-7, atol=0)
    np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]))
    # In place (x **= y: the output is x): the special lanes read x after the vector's store.
    for target in ("x", "y"):
        xs, ys = xp.asarray(x.copy()), xp.asarray(y.copy())  # asarray may share the memory
        dlarray_out = xs if target == "x" else ys
        xp.ops.pow(xs, ys, dlarray_out)
        got = dlarray_out.asnumpy()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=target)
        np.testing.assert_allclose(got[ok], want[ok], rtol=1.2e-7, atol=0, err_msg=target)


@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("shape,axis", [((4097,), None), ((3, 4096), 0), ((4096, 3), 1),
                                        ((1025, 33), 0), ((33, 1025), 1), ((17, 5, 19), (0, 2)),
                                        ((1,), None), ((70001,), None), ((2, 40000), 0)],
                         ids=str)
def test_any_all_float32(rng, name, shape, axis):
    """any / all of float32 (lane masks of "not zero"): NaN counts as true, -0.0 as false, on the
    row path (whole vectors, then the tail) and the column path."""
    fn = getattr(np, name)
    x = rng.standard_normal(shape).astype(np.float32)
    cases = [x, np.zeros(shape, np.float32), -np.zeros(shape, np.float32)]
    for place in (0, -1, x.size // 2):
        for value in (0.0, -0.0, np.nan):  # one odd element in an all-true or all-false array
            for base in (x, np.zeros(shape, np.float32)):
                y = base.copy().reshape(-1)
                y[place] = value if base is x else (np.nan if value != value else 1.0)
                cases.append(y.reshape(shape))
    for case in cases:
        got = getattr(xp, name)(xp.asarray(case), axis=axis).asnumpy()
        np.testing.assert_array_equal(got, fn(case, axis=axis))
