"""Integer arrays meet numbers they cannot hold (issue 26, defect 6): every operator, in-place
form, comparison and assignment does what NumPy 2 does with the same operands. Where NumPy
raises, dlarray raises the same exception type; where NumPy gives a value, dlarray gives the same
value. Before, ``int8 + 1000`` wrapped to -23, ``int64 + 2**70`` gave INT64_MIN, ``uint8 + 300``
added 44, ``int32[:] = nan`` stored 0 and ``int8[:] = 1000`` stored 127."""
import math
import operator
import warnings

import numpy as np
import pytest

import dlarray

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
IDS = [np.dtype(t).name for t in INT_DTYPES]

# Python numbers around every integer dtype's limits, past int64 / uint64, floats that truncate,
# NaN and the infinities, and bool (a weak integer too).
PY_SCALARS = [0, 1, -1, 5, 127, 128, -128, -129, 255, 256, 300, -300, 1000, -1000, 32767, 32768,
              65535, 65536, 2**31 - 1, 2**31, 2**32, -2**31 - 1, 2**53 + 1, -(2**53 + 1),
              2**62 + 3, 2**63 - 1, 2**63, -2**63, -2**63 - 1, 2**64 - 1, 2**64, 2**70, -2**70,
              10**400, 3.5, -3.7, 0.5, 1e30, math.nan, math.inf, -math.inf, True, False]
# NumPy scalars are strong (they keep their own dtype), so they promote instead of overflowing.
NP_SCALARS = [np.int64(1000), np.int8(-5), np.uint64(2**64 - 1), np.float32(2.5),
              np.float64(np.nan), np.uint8(200)]


def _base(dtype):
    """Values that reach both ends of the dtype (results wrap as in NumPy)."""
    info = np.iinfo(dtype)
    vals = [info.min, 0, 1, 7, 100, info.max]
    if info.min < 0:
        vals.insert(1, -1)
    return np.array(vals, dtype=dtype)


def _numpy(fn, *args):
    """fn(*args) in NumPy: (result, None) or (None, the exception)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # divide by zero, invalid casts
        try:
            return fn(*args), None
        except Exception as e:  # noqa: BLE001 - any exception NumPy raises is the reference
            return None, e


def _expected_type(error):
    for t in (OverflowError, ValueError, IndexError, TypeError):
        if isinstance(error, t):
            return t
    raise AssertionError("NumPy raised %r, which no rule here covers" % (error,))


def _unsupported_dtype(error):
    """Arithmetic on uint16..uint64 is not implemented by the ops (TypeError naming the dtype)."""
    return (isinstance(error, TypeError) and "the op supports" in str(error)
            and any("dtype %s;" % name in str(error) for name in ("uint16", "uint32", "uint64")))


def _check(label, np_fn, dl_fn, host, ctx):
    want, np_error = _numpy(np_fn, host.copy())
    x = dlarray.array(host, ctx, host.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            got = dl_fn(x)
        except Exception as e:  # noqa: BLE001 - compared with NumPy's below
            if np_error is None and _unsupported_dtype(e):
                return
            assert np_error is not None, "%s: NumPy gives %r, dlarray raised %r" % (
                label, want, e)
            assert isinstance(e, _expected_type(np_error)), (
                "%s: NumPy raised %r, dlarray %r" % (label, np_error, e))
            return
    assert np_error is None, "%s: NumPy raised %r, dlarray gave %r" % (
        label, np_error, got.asnumpy() if isinstance(got, dlarray.NDArray) else got)
    got = got.asnumpy() if isinstance(got, dlarray.NDArray) else np.asarray(got)
    assert got.dtype == want.dtype, "%s: dtype %s, NumPy %s" % (label, got.dtype, want.dtype)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=0, equal_nan=True, err_msg=label)
    else:
        np.testing.assert_array_equal(got, want, err_msg=label)


BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "radd": lambda a, v: v + a, "rsub": lambda a, v: v - a, "rmul": lambda a, v: v * a,
    "rtruediv": lambda a, v: v / a,
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
    "gt": operator.gt, "ge": operator.ge,
    "req": lambda a, v: v == a, "rlt": lambda a, v: v < a,
}


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=IDS)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_scalar_operators_match_numpy(ctx, dtype, op):
    fn = BINARY[op]
    host = _base(dtype)
    for v in PY_SCALARS + NP_SCALARS:
        _check("%s %s %r" % (np.dtype(dtype).name, op, v), lambda a, v=v: fn(a, v),
               lambda x, v=v: fn(x, v), host, ctx)


INPLACE = {"iadd": operator.iadd, "isub": operator.isub, "imul": operator.imul,
           "itruediv": operator.itruediv}


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=IDS)
@pytest.mark.parametrize("op", sorted(INPLACE))
def test_inplace_operators_match_numpy(ctx, dtype, op):
    fn = INPLACE[op]
    host = _base(dtype)
    for v in PY_SCALARS + NP_SCALARS:
        label = "%s %s %r" % (np.dtype(dtype).name, op, v)
        _check(label, lambda a, v=v: fn(a, v), lambda x, v=v: fn(x, v), host, ctx)
        # a strided target takes the other in-place path (compute, then assign)
        _check(label + " (strided)", lambda a, v=v: fn(a[::2], v),
               lambda x, v=v: fn(x[::2], v), host, ctx)


def _setitem(key, value):
    def assign(a):
        a[key] = value
        return a
    return assign


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=IDS)
def test_setitem_scalars_match_numpy(ctx, dtype):
    host = _base(dtype)
    for v in PY_SCALARS + NP_SCALARS:
        for key in (slice(None), slice(None, None, 2), 0, Ellipsis):
            label = "%s[%r] = %r" % (np.dtype(dtype).name, key, v)
            _check(label, _setitem(key, v), _setitem(key, v), host, ctx)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=IDS)
def test_setitem_and_array_from_python_lists_match_numpy(ctx, dtype):
    host = _base(dtype)
    for v in PY_SCALARS:
        label = "%s[:] = [%r, ...]" % (np.dtype(dtype).name, v)
        data = [v] * host.size
        _check(label, _setitem(slice(None), data), _setitem(slice(None), data), host, ctx)
        want, np_error = _numpy(lambda: np.array([v, 1], dtype=dtype))
        if np_error is not None:
            with pytest.raises(_expected_type(np_error)):
                dlarray.array([v, 1], ctx, dtype)
        else:
            np.testing.assert_array_equal(dlarray.array([v, 1], ctx, dtype).asnumpy(), want)


def test_examples_from_the_issue(ctx):
    with pytest.raises(ValueError, match="NaN"):
        dlarray.array([1, 2], ctx, np.int32)[:] = math.nan
    with pytest.raises(OverflowError, match="1000 out of bounds for int8"):
        dlarray.array([1, 2], ctx, np.int8)[:] = 1000
    with pytest.raises(OverflowError, match="1000 out of bounds for int8"):
        dlarray.array([1, 2], ctx, np.int8) + 1000
    with pytest.raises(OverflowError, match="out of bounds for int64"):
        dlarray.array([1, 2], ctx, np.int64) + 2**70
    with pytest.raises(OverflowError, match="300 out of bounds for uint8"):
        dlarray.array([1, 2], ctx, np.uint8) + 300
    with pytest.raises(OverflowError, match="-1 out of bounds for uint8"):
        dlarray.array([1, 2], ctx, np.uint8)[:] = -1
    # comparisons are exact, as in NumPy 2
    assert not (dlarray.array([1, 2], ctx, np.int8) == 1000).asnumpy().any()
    assert (dlarray.array([1, 2], ctx, np.int8) < 2**70).asnumpy().all()


def test_int64_beyond_double_precision_is_exact(ctx):
    host = np.array([2**62, -2**62, 0, 2**53], dtype=np.int64)
    x = dlarray.array(host, ctx, np.int64)
    for v in (2**53 + 1, 2**62 + 3, 2**63 - 1, -2**63):
        np.testing.assert_array_equal((x + v).asnumpy(), host + v)
        np.testing.assert_array_equal((v - x).asnumpy(), v - host)
        np.testing.assert_array_equal((x == v).asnumpy(), host == v)
        y = x.copy()
        y[1:3] = v
        expect = host.copy()
        expect[1:3] = v
        np.testing.assert_array_equal(y.asnumpy(), expect)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=IDS)
def test_core_array_set_refuses_what_the_dtype_cannot_hold(ctx, dtype):
    """The op itself (C API callers, dlarray.ops) refuses NaN, infinities and values outside
    the dtype, instead of storing 0 or a saturated value."""
    x = dlarray.empty((3,), ctx, dtype)
    info = np.iinfo(dtype)
    for bad in (math.nan, math.inf, -math.inf, info.max * 2.0 + 2, info.min * 2.0 - 2 or -1.0):
        with pytest.raises(ValueError, match="array_set: value"):
            dlarray.ops.array_set(x, bad)
    dlarray.ops.array_set(x, float(info.min))
    assert (x.asnumpy() == info.min).all()
    if np.dtype(dtype).itemsize == 1 or np.dtype(dtype).kind == "i":  # the ops' integer dtypes
        for bad in (math.nan, math.inf):
            with pytest.raises(ValueError, match="no integer value"):
                dlarray.ops.matrix_elementwise_add_by_const(x, bad, x)
