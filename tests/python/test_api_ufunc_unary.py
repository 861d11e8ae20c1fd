"""The array API's unary elementwise functions (rows of the elementwise table) against NumPy on
every dtype they take and every device: odd shapes, 0-d, empty, one element, sizes crossing 1024
and 65536, the IEEE special values (NaN, +-inf, -0.0) inside the data."""
import numpy as np
import pytest

import dlarray
from ufunc_util import (BOOL, F32, F64, FLOATS, INTS, SHAPES, SIGNED, assert_matches, data, dev,
                        dtype_id, skip_unsupported)

# name: (NumPy's function, the domain drawn for floats, exact (no rounding error allowed))
FLOAT_FUNCTIONS = {
    "sqrt": (np.sqrt, (0, 100), False),
    "reciprocal": (np.reciprocal, (-5, 5), False),
    "exp": (np.exp, (-10, 10), False),
    "expm1": (np.expm1, (-10, 10), False),
    "log": (np.log, (0, 100), False),
    "log1p": (np.log1p, (-1, 100), False),
    "log2": (np.log2, (0, 100), False),
    "log10": (np.log10, (0, 100), False),
    "sin": (np.sin, (-6, 6), False),
    "cos": (np.cos, (-6, 6), False),
    "tan": (np.tan, (-1.5, 1.5), False),
    "asin": (np.arcsin, (-1, 1), False),
    "acos": (np.arccos, (-1, 1), False),
    "atan": (np.arctan, (-10, 10), False),
    "sinh": (np.sinh, (-8, 8), False),
    "cosh": (np.cosh, (-8, 8), False),
    "tanh": (np.tanh, (-5, 5), False),
    "asinh": (np.arcsinh, (-10, 10), False),
    "acosh": (np.arccosh, (1, 10), False),
    "atanh": (np.arctanh, (-1, 1), False),
}
# Exact on every numeric dtype (integers wrap as NumPy's do).
NUMERIC_FUNCTIONS = {
    "abs": np.abs,
    "negative": np.negative,
    "positive": np.positive,
    "sign": np.sign,
    "square": np.square,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "round": np.round,
}


@pytest.mark.parametrize("name", sorted(FLOAT_FUNCTIONS))
@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
def test_float_functions_match_numpy(ctx, rng, name, dtype):
    skip_unsupported(ctx, dtype)
    ref, (low, high), exact = FLOAT_FUNCTIONS[name]
    fn = getattr(dlarray, name)
    for shape in SHAPES:
        a = data(rng, shape, dtype, low, high)
        x = dev(a, ctx)
        got = fn(x)
        assert got.dtype == dtype and got.device == x.device
        with np.errstate(all="ignore"):
            expected = ref(a.astype(np.float64))
        assert_matches(got, expected, dtype, exact, "%s %s" % (name, shape))


@pytest.mark.parametrize("name", sorted(FLOAT_FUNCTIONS))
def test_float_functions_compute_integers_in_float64(ctx, name):
    skip_unsupported(ctx, F64)
    a = np.array([1, 0, 3], np.int32)
    got = getattr(dlarray, name)(dev(a, ctx))
    assert got.dtype == F64
    with np.errstate(all="ignore"):
        expected = FLOAT_FUNCTIONS[name][0](a.astype(np.float64))
    assert_matches(got, expected, F64)


@pytest.mark.parametrize("name", sorted(NUMERIC_FUNCTIONS))
@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=dtype_id)
def test_numeric_functions_match_numpy(ctx, rng, name, dtype):
    skip_unsupported(ctx, dtype)
    fn, ref = getattr(dlarray, name), NUMERIC_FUNCTIONS[name]
    for shape in SHAPES:
        a = data(rng, shape, dtype, -1e4, 1e4)
        if dtype in FLOATS and a.size:
            a.reshape(-1)[::5] = np.array([0.5, 1.5, 2.5, -0.5, -2.5], dtype)[
                np.arange(a.reshape(-1)[::5].size) % 5]  # ties of round: half to even
        got = fn(dev(a, ctx))
        assert got.dtype == dtype and got.shape == a.shape
        with np.errstate(all="ignore"):
            expected = ref(a.astype(np.float64)) if dtype in FLOATS else ref(a)
        if name == "sign" and dtype in FLOATS:
            expected = np.where(expected == 0, 0.0, expected)  # +0 for either zero
        assert_matches(got, expected, dtype, exact=True, what="%s %s" % (name, shape))


@pytest.mark.parametrize("dtype", INTS + [BOOL], ids=dtype_id)
def test_bitwise_invert_matches_numpy(ctx, rng, dtype):
    for shape in SHAPES:
        a = data(rng, shape, dtype)
        got = dlarray.bitwise_invert(dev(a, ctx))
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.asnumpy(), np.invert(a))


@pytest.mark.parametrize("dtype", SIGNED, ids=dtype_id)
def test_integer_edges_wrap_as_numpy(ctx, dtype):
    info = np.iinfo(dtype)
    a = np.array([info.min, info.min + 1, -1, 0, 1, info.max], dtype)
    for name in ("abs", "negative", "square", "sign"):
        np.testing.assert_array_equal(getattr(dlarray, name)(dev(a, ctx)).asnumpy(),
                                      NUMERIC_FUNCTIONS[name](a), err_msg=name)


@pytest.mark.parametrize("name", sorted(FLOAT_FUNCTIONS) + ["abs", "floor"])
def test_strided_views_are_computed(ctx, name):
    m = np.linspace(0.1, 0.9, 24, dtype=np.float32).reshape(4, 6)
    got = getattr(dlarray, name)(dev(m, ctx).T[::2, 1:])
    ref = FLOAT_FUNCTIONS.get(name, (NUMERIC_FUNCTIONS.get(name),))[0]
    assert_matches(got, ref(m.T[::2, 1:].astype(np.float64)), F32)


def test_unary_functions_reject_bad_input(ctx):
    x = dev(np.zeros(2, np.bool_), ctx)
    with pytest.raises(TypeError, match="sqrt: x must be a dlarray array, got list"):
        dlarray.sqrt([1.0])
    with pytest.raises(TypeError, match="abs: x must have a numeric .* dtype, got bool"):
        dlarray.abs(x)
    with pytest.raises(TypeError, match="bitwise_invert: x must have an integer or bool dtype, "
                                        "got float32"):
        dlarray.bitwise_invert(dev(np.zeros(2, np.float32), ctx))
    with pytest.raises(TypeError, match="floor: x must have a real numeric .* dtype, got complex64"):
        dlarray.floor(dev(np.zeros(2, np.complex64), ctx))
