"""The devices' fill (plugin ABI 3.0's DLArrayDeviceApi.fill, a repeated byte pattern): integer
and bool assignment of a number, and the zeros of an op over empty inputs, on every device and
dtype, at byte offsets, across the CPU's thread and CUDA's block boundaries, on strided and empty
targets, and on devices without a fill of their own (a C plugin's and a 2.1 plugin's: the core
copies the pattern over from the host), checked against NumPy."""
import numpy as np
import pytest

import dlarray
from dlarray import ops

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")
BF16 = np.dtype(ml_dtypes.bfloat16)

FLOATS = [np.dtype(np.float32), np.dtype(np.float16), BF16, np.dtype(np.float64)]
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                               np.uint32, np.uint64)]
SIZES = [1, 7, 1029, 70001]  # one element, odd, past a CUDA block, past the CPU's serial limit


def _values(dtype):
    """Numbers whose stored bytes differ from each other (so a fill of one repeated byte is wrong),
    the dtype's bounds, and for the 64-bit integers values a double cannot hold."""
    if dtype == np.bool_:
        return [True, False, 2]
    info = np.iinfo(dtype)
    out = [info.max, info.min, 1, 0x0102030405060708 & int(info.max)]
    if dtype.kind == "i":
        out.append(-2)
    if dtype.itemsize == 8:
        out.append(info.max - 2)  # 2**63 - 3 or 2**64 - 3: beyond a double's 53 bits
    return out


@pytest.mark.parametrize("dtype", INTS + [np.dtype(np.bool_)], ids=str)
def test_number_fills_integer_arrays_at_offsets(ctx, dtype):
    for n in SIZES:
        for v in _values(dtype):
            ref = np.arange(n + 5).astype(dtype)
            x = dlarray.array(ref, ctx, dtype=dtype)
            x[5:] = v  # a compact view 5 elements into the buffer
            ref[5:] = v
            got = x.asnumpy()
            assert got.dtype == dtype
            np.testing.assert_array_equal(got, ref, err_msg="%s n=%d v=%r" % (dtype, n, v))


def test_number_fills_strided_and_empty_targets(ctx):
    ref = np.arange(21, dtype=np.int64).reshape(3, 7)
    x = dlarray.array(ref, ctx, dtype=np.int64)
    x[:, ::2] = 2 ** 62 + 1  # strided: filled compact, then copied in
    ref[:, ::2] = 2 ** 62 + 1
    np.testing.assert_array_equal(x.asnumpy(), ref)
    x[1:1] = 5  # zero elements: nothing to write
    np.testing.assert_array_equal(x.asnumpy(), ref)
    e = dlarray.array(np.zeros((0, 3), np.int32), ctx, dtype=np.int32)
    e[...] = 7
    assert e.asnumpy().shape == (0, 3)


def test_number_out_of_range_is_refused_before_any_fill(ctx):
    x = dlarray.array(np.zeros(4, np.uint8), ctx, dtype=np.uint8)
    with pytest.raises(OverflowError):
        x[...] = 256
    np.testing.assert_array_equal(x.asnumpy(), np.zeros(4, np.uint8))


@pytest.mark.parametrize("dtype", FLOATS + INTS[:5], ids=str)
def test_sum_over_nothing_is_zero_filled(ctx, dtype):
    for n in SIZES:
        out = dlarray.array(np.full(n, 3, dtype), ctx, dtype=dtype)
        ops.reduce_sum_axis_zero(dlarray.empty((0, n), ctx, dtype=dtype), out)
        got = out.asnumpy()
        np.testing.assert_array_equal(got, np.zeros(n, dtype), err_msg=str(dtype))
        assert not np.signbit(got.astype(np.float64)).any()  # +0, all bytes zero


def test_product_over_an_empty_dimension_is_zero_filled(ctx):
    a = dlarray.empty((5, 0), ctx)
    b = dlarray.empty((0, 3), ctx)
    out = dlarray.array(np.full((5, 3), 9, np.float32), ctx)
    ops.matrix_multiply(a, False, b, False, out)
    np.testing.assert_array_equal(out.asnumpy(), np.zeros((5, 3), np.float32))


@pytest.mark.parametrize("plugin,device_type", [("c99_plugin.so", 25), ("abi21_plugin.so", 28)])
def test_devices_without_a_fill_get_the_pattern_copied(test_plugin_dir, plugin, device_type):
    info = dlarray.load_plugin(test_plugin_dir / plugin)
    assert info["status"] == "loaded", info["reason"]
    dev = dlarray.DLContext(1, device_type)
    n = 300001  # 1.2 MB of int32: more than one chunk of the core's host buffer
    ref = np.arange(n, dtype=np.int32)
    x = dlarray.array(ref, dev, dtype=np.int32)
    x[3:] = -123456789
    ref[3:] = -123456789
    np.testing.assert_array_equal(x.asnumpy(), ref)
    y = dlarray.array(np.zeros(9, np.int64), dev, dtype=np.int64)
    y[1:] = 2 ** 60 + 3
    np.testing.assert_array_equal(y.asnumpy(), [0] + [2 ** 60 + 3] * 8)
