"""compare_by_const, a row kind of the elementwise table (DLARRAY_COMPARE_BY_CONST_OPS): every
real dtype against a constant compared exactly (not rounded to the array's dtype first), on odd
shapes, 0-d, empty and sizes crossing 1024 and 65536, against NumPy's comparison of the array
with the same Python float."""
import numpy as np
import pytest

import dlarray
from dlarray import ops
from ufunc_util import BOOL, FLOATS, INTS, SHAPES, data, dev, skip_unsupported

NUMPY = [np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal]
# Constants between two float32 values, beyond every integer range, exactly 2^53, fractions of
# integers, +-0, infinities and NaN.
CONSTANTS = [0.0, -0.0, 1.0, 2.5, -2.5, 0.1, 1e-40, 3.4028235677973366e+38, 2.0 ** 53,
             2.0 ** 63, -2.0 ** 63, 2.0 ** 64, 255.5, -129.0, 65535.0, np.inf, -np.inf, np.nan]


def numpy_reference(fn, a, value):
    # NumPy 2 compares a Python float with an integer or float32 array exactly, as the op must;
    # in float64 that is exact for every dtype but (u)int64 past 2^53, which the data avoids.
    return fn(a.astype(np.float64), value)


@pytest.mark.parametrize("dtype", FLOATS + INTS + [BOOL], ids=str)
def test_matches_numpy(ctx, rng, dtype):
    skip_unsupported(ctx, dtype)
    for shape in SHAPES:
        a = data(rng, shape, dtype)
        if np.dtype(dtype).kind in "iu" and np.dtype(dtype).itemsize == 8:
            a = (a >> 12).astype(dtype)  # within 2^53: float64 holds them exactly
        x = dev(a, ctx)
        for value in CONSTANTS + [float(a.reshape(-1)[0])] if a.size else CONSTANTS:
            for cmp, fn in enumerate(NUMPY):
                got = ops.compare_by_const(x, value, cmp=cmp)
                assert got.dtype == np.bool_ and got.shape == a.shape
                np.testing.assert_array_equal(got.asnumpy(), numpy_reference(fn, a, value),
                                              err_msg="%s %r cmp=%d" % (shape, value, cmp))


def test_operators_use_it(ctx):
    a = np.array([-3, 0, 2, 127], np.int8)
    x = dev(a, ctx)
    for got, ref in ((x < 2.5, a < 2.5), (x >= -2.5, a >= -2.5), (x == 2.0, a == 2.0),
                     (x != 0.5, a != 0.5), (x > 1e10, a > 1e10), (x <= -1e10, a <= -1e10)):
        np.testing.assert_array_equal(got.asnumpy(), ref)
    f = dev(np.array([0.1, np.nan, -np.inf], np.float32), ctx)
    np.testing.assert_array_equal((f == 0.1).asnumpy(), [False, False, False])  # not float32(0.1)
    np.testing.assert_array_equal((f < 0.1).asnumpy(), np.float32([0.1, np.nan, -np.inf]) < 0.1)


def test_kernels_and_errors(ctx):
    assert set(ops.op_info("compare_by_const")["devices"]) >= {"cpu", "opencl"}
    x = dev(np.ones(3, np.float32), ctx)
    with pytest.raises(ValueError, match="cmp must be 0"):
        ops.compare_by_const(x, 1.0, cmp=6)
    with pytest.raises(TypeError, match="no kernel for complex64"):
        ops.compare_by_const(dlarray.array(np.ones(2, np.complex64), ctx, dtype=np.complex64), 1.0)
    with pytest.raises(TypeError, match="must be bool"):
        ops.compare_by_const(x, 1.0, dev(np.ones(3, np.float32), ctx))
