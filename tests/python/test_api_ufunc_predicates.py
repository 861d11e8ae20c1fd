"""The array API's elementwise predicates (bool results; the predicate rows of the elementwise
table): isnan, isinf, isfinite, signbit, logical_not, the comparisons and logical_and/or/xor,
against NumPy on every real dtype and device: odd shapes, 0-d, empty, one element, sizes crossing
1024 and 65536, the IEEE special values, broadcasting, Python scalars on either side."""
import numpy as np
import pytest

import dlarray
from ufunc_util import (BOOL, F32, FLOATS, INTS, REAL, SHAPES, SPECIAL, data, dev, dtype_id,
                        skip_unsupported)

UNARY = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
         "logical_not": np.logical_not}
BINARY = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less,
          "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal,
          "logical_and": np.logical_and, "logical_or": np.logical_or,
          "logical_xor": np.logical_xor}


def _ref_input(a):
    return a.astype(np.float64) if a.dtype.kind not in "biuf" else a


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", REAL, ids=dtype_id)
def test_unary_predicates_match_numpy(ctx, rng, name, dtype):
    skip_unsupported(ctx, dtype)
    fn, ref = getattr(dlarray, name), UNARY[name]
    for shape in SHAPES:
        a = data(rng, shape, dtype)
        x = dev(a, ctx)
        got = fn(x)
        assert got.dtype == BOOL and got.shape == a.shape and got.device == x.device
        np.testing.assert_array_equal(got.asnumpy(), ref(_ref_input(a)), err_msg=str(shape))


@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
def test_signbit_matches_numpy(ctx, rng, dtype):
    skip_unsupported(ctx, dtype)
    for shape in SHAPES:
        a = data(rng, shape, dtype)
        np.testing.assert_array_equal(dlarray.signbit(dev(a, ctx)).asnumpy(),
                                      np.signbit(_ref_input(a)))
    assert dlarray.signbit(dev(np.array([-0.0, 0.0], dtype), ctx)).asnumpy().tolist() == [True,
                                                                                        False]


@pytest.mark.parametrize("name", sorted(UNARY) + ["signbit"])
def test_unary_predicates_on_special_values_and_views(ctx, name):
    a = np.array(SPECIAL, dtype=np.float32)
    fn = getattr(dlarray, name)
    ref = UNARY.get(name, np.signbit)
    np.testing.assert_array_equal(fn(dev(a, ctx)).asnumpy(), ref(a))
    m = np.arange(24, dtype=np.float32).reshape(4, 6)
    m[1, 2] = np.nan
    m[2, 3] = -np.inf
    view = dev(m, ctx).T[1:, ::2]  # a strided view is compacted first
    np.testing.assert_array_equal(fn(view).asnumpy(), ref(m.T[1:, ::2]))


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", REAL, ids=dtype_id)
def test_binary_predicates_match_numpy(ctx, rng, name, dtype):
    skip_unsupported(ctx, dtype)
    fn, ref = getattr(dlarray, name), BINARY[name]
    for shape in SHAPES:
        a, b = data(rng, shape, dtype), data(rng, shape, dtype)
        if a.size:
            b.reshape(-1)[::3] = a.reshape(-1)[::3]  # some equal pairs
        got = fn(dev(a, ctx), dev(b, ctx))
        assert got.dtype == BOOL and got.shape == a.shape
        np.testing.assert_array_equal(got.asnumpy(), ref(_ref_input(a), _ref_input(b)),
                                      err_msg=str(shape))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_predicates_broadcast_promote_and_take_scalars(ctx, rng, name):
    fn, ref = getattr(dlarray, name), BINARY[name]
    a = rng.integers(-3, 4, (5, 1)).astype(np.int16)
    b = rng.integers(-3, 4, (1, 7)).astype(np.float32)
    np.testing.assert_array_equal(fn(dev(a, ctx), dev(b, ctx)).asnumpy(), ref(a, b))
    for scalar in (2, -1.5, True):
        np.testing.assert_array_equal(fn(dev(a, ctx), scalar).asnumpy(), ref(a, scalar))
        np.testing.assert_array_equal(fn(scalar, dev(a, ctx)).asnumpy(), ref(scalar, a))
    assert fn(dev(np.array(1.0, np.float32), ctx), 1.0).shape == ()


def test_comparisons_with_python_ints_beyond_the_dtype_are_exact(ctx):
    a = dev(np.array([-128, 0, 127], np.int8), ctx)
    assert dlarray.less(a, 1000).asnumpy().tolist() == [True] * 3
    assert dlarray.equal(a, -1000).asnumpy().tolist() == [False] * 3
    assert dlarray.greater(1000, a).asnumpy().tolist() == [True] * 3
    big = np.array([2**62 + 1, -(2**62)], np.int64)  # not exact in a double
    np.testing.assert_array_equal(dlarray.equal(dev(big, ctx), 2**62 + 1).asnumpy(), [True, False])


@pytest.mark.parametrize("dtype", INTS + [F32], ids=dtype_id)
def test_float32_with_a_python_float_compares_in_float32(ctx, dtype):
    """NEP 50: the Python float takes the array's dtype (float32 == 0.1 is True, as NumPy 2);
    an integer array meeting a float compares in float64."""
    a = np.array([0, 1, 2], dtype=dtype) if dtype != F32 else np.array([0.1, 0.2], dtype)
    np.testing.assert_array_equal(dlarray.equal(dev(a, ctx), 0.1).asnumpy(), a == 0.1)
    np.testing.assert_array_equal(dlarray.less(dev(a, ctx), 1.5).asnumpy(), a < 1.5)


@pytest.mark.parametrize("name", sorted(UNARY) + ["signbit"])
def test_unary_predicates_reject_bad_input(ctx, name):
    fn = getattr(dlarray, name)
    with pytest.raises(TypeError, match=name + ": x must be a dlarray array, got list"):
        fn([1.0, 2.0])
    with pytest.raises(TypeError, match=name + ": x must be a dlarray array, got float"):
        fn(1.0)
    if name in ("isnan", "isinf", "isfinite"):  # complex too (test_api_complex.py)
        return
    with pytest.raises(TypeError, match="complex"):
        fn(dev(np.array([1j], np.complex64), ctx))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_predicates_reject_bad_input(ctx, name):
    fn = getattr(dlarray, name)
    x = dev(np.zeros(3, np.float32), ctx)
    with pytest.raises(TypeError, match=name + ": x1 must be a dlarray array"):
        fn(1, 2)
    with pytest.raises(TypeError, match=name + ": x2 must be a dlarray array or a Python scalar"):
        fn(x, "a")
    with pytest.raises(ValueError, match="broadcast|shape"):
        fn(x, dev(np.zeros(4, np.float32), ctx))
    if name in ("equal", "not_equal"):  # complex too (test_api_complex.py)
        return
    with pytest.raises(TypeError, match="complex"):
        fn(x, dev(np.array([1j], np.complex64), ctx))


def test_operands_on_two_devices_are_named(ctx):
    others = [c for c in dlarray.devices() if c != ctx]
    if not others:
        pytest.skip("one device only")
    a = dev(np.zeros(3, np.float32), ctx)
    b = dev(np.zeros(3, np.float32), others[0])
    with pytest.raises(ValueError, match="less: x1 is on .* and x2 on "):
        dlarray.less(a, b)
