"""NDArray's operators beyond + - * / @: ** // % & | ^ << >> ~ abs(), with Python scalars on
either side (NEP 50), reflected and in-place forms, against NumPy on every device."""
import operator

import numpy as np
import pytest

import dlarray
from ufunc_util import F32, INTS, data, dev, dtype_id

ARITH = {"**": operator.pow, "//": operator.floordiv, "%": operator.mod}
BITWISE = {"&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
           ">>": operator.rshift}
INPLACE = {"**": operator.ipow, "//": operator.ifloordiv, "%": operator.imod,
           "&": operator.iand, "|": operator.ior, "^": operator.ixor, "<<": operator.ilshift,
           ">>": operator.irshift}


def _operands(rng, dtype, op):
    a = data(rng, (5, 7), dtype, 1, 6, special=False)
    b = data(rng, (7,), dtype, 1, 4, special=False)
    if dtype.kind in "iu":
        a = (np.abs(a.astype(np.int64)) % 50).astype(dtype)
        b = (np.abs(b.astype(np.int64)) % 5 + 1).astype(dtype)  # small exponents and shifts
    return a, b


@pytest.mark.parametrize("op", sorted(ARITH))
@pytest.mark.parametrize("dtype", [F32, np.dtype(np.int32), np.dtype(np.uint8)], ids=dtype_id)
def test_arithmetic_operators(ctx, rng, op, dtype):
    fn = ARITH[op]
    a, b = _operands(rng, dtype, op)
    x, y = dev(a, ctx), dev(b, ctx)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(fn(x, y).asnumpy(), fn(a, b), rtol=1e-6)
        np.testing.assert_allclose(fn(x, 3).asnumpy(), fn(a, dtype.type(3)), rtol=1e-6)
        np.testing.assert_allclose(fn(2, y).asnumpy(), fn(dtype.type(2), b), rtol=1e-6)
    assert fn(x, 3).dtype == dtype and fn(2, y).dtype == dtype


@pytest.mark.parametrize("op", sorted(BITWISE))
@pytest.mark.parametrize("dtype", INTS, ids=dtype_id)
def test_bitwise_operators(ctx, rng, op, dtype):
    fn = BITWISE[op]
    a, b = _operands(rng, dtype, op)
    x, y = dev(a, ctx), dev(b, ctx)
    np.testing.assert_array_equal(fn(x, y).asnumpy(), fn(a, b))
    np.testing.assert_array_equal(fn(x, 3).asnumpy(), fn(a, dtype.type(3)))
    np.testing.assert_array_equal(fn(3, y).asnumpy(), fn(dtype.type(3), b))


def test_bool_bitwise_operators_and_invert(ctx):
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    x, y = dev(a, ctx), dev(b, ctx)
    for fn in (operator.and_, operator.or_, operator.xor):
        got = fn(x, y)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got.asnumpy(), fn(a, b))
    np.testing.assert_array_equal((~x).asnumpy(), ~a)
    i = np.array([0, -1, 5], np.int16)
    np.testing.assert_array_equal((~dev(i, ctx)).asnumpy(), ~i)


def test_abs_operator(ctx):
    a = np.array([-3.5, -0.0, 2.0, np.nan], np.float32)
    got = abs(dev(a, ctx)).asnumpy()
    np.testing.assert_array_equal(got, np.abs(a))
    assert not np.signbit(got[1])
    i = np.array([-128, -1, 5], np.int8)
    np.testing.assert_array_equal(abs(dev(i, ctx)).asnumpy(), np.abs(i))


@pytest.mark.parametrize("op", sorted(INPLACE))
def test_inplace_operators_write_into_the_array(ctx, rng, op):
    dtype = np.dtype(np.int32)
    a, b = _operands(rng, dtype, op)
    x = dev(a, ctx)
    ptr = x.data_ptr
    x = INPLACE[op](x, dev(b, ctx))
    assert x.data_ptr == ptr
    np.testing.assert_array_equal(x.asnumpy(), INPLACE[op](a.copy(), b))
    x = INPLACE[op](x, 2)
    np.testing.assert_array_equal(x.asnumpy(), INPLACE[op](INPLACE[op](a.copy(), b), 2))


def test_inplace_refuses_an_unsafe_cast(ctx):
    x = dev(np.arange(3, dtype=np.int32), ctx)
    with pytest.raises(TypeError, match="cannot be cast"):
        x **= 0.5
    f = dev(np.arange(3, dtype=np.float32), ctx)
    with pytest.raises(TypeError, match="integer"):
        f <<= 1


def test_python_ints_out_of_range_raise_overflow(ctx):
    x = dev(np.array([1, 2], np.uint8), ctx)
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        x % 300
    with pytest.raises(OverflowError):
        -1 & x


def test_numpy_operands_and_unknown_types(ctx):
    x = dev(np.arange(1, 5, dtype=np.int32), ctx)
    np.testing.assert_array_equal((x ** np.full(4, 2, np.int32)).asnumpy(), np.arange(1, 5) ** 2)
    with pytest.raises(TypeError):
        x ** "a"
