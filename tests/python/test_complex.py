"""complex64 and complex128 storage on every device, against NumPy: making arrays, reading them
back, strided copies, broadcasts, conversions to and from every dtype, assignment, DLPack, repr;
and the clear TypeError of every op that has no complex kernel."""
import numpy as np
import pytest

import dlarray
from dlarray import ops

COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]
REAL = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                              np.uint16, np.uint32, np.uint64, np.float16, np.float32, np.float64)]
# Empty, one element, odd shapes, and sizes past the kernels' thread, block and chunk sizes.
SHAPES = [(), (0,), (1,), (3, 5), (7, 0, 2), (257, 33), (40961,)]


def _data(rng, shape, dtype):
    v = rng.standard_normal(shape) * 3 + 1j * rng.standard_normal(shape) * 3
    flat = v.reshape(-1)
    if flat.size >= 4:  # non-finite parts move and convert like any other
        flat[:4] = [complex(np.inf, 1), complex(2, np.nan), complex(-0.0, -np.inf), 0j]
    return v.astype(dtype)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_round_trip(ctx, rng, shape, dtype):
    a = _data(rng, shape, dtype)
    for x in (dlarray.array(a, ctx, dtype=dtype), dlarray.asarray(a, ctx)):
        assert x.dtype == dtype and x.shape == a.shape and x.ctx == ctx
        np.testing.assert_array_equal(x.asnumpy(), a)
        np.testing.assert_array_equal(x.copy().asnumpy(), a)
        np.testing.assert_array_equal(x.copyto(dlarray.cpu()).asnumpy(), a)
    assert dlarray.empty(shape, ctx, dtype).dtype == dtype


def test_python_scalars_and_lists(ctx):
    x = dlarray.asarray(complex(), ctx)  # what the array API suite imports with
    assert x.dtype == np.complex128 and x.shape == () and x.asnumpy() == 0
    y = dlarray.asarray([1 + 2j, 3], ctx)
    assert y.dtype == np.complex128
    np.testing.assert_array_equal(y.asnumpy(), [1 + 2j, 3])
    z = dlarray.array([1, 2.5], ctx, dtype="complex64")
    np.testing.assert_array_equal(z.asnumpy(), np.array([1, 2.5], np.complex64))


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_strided_copy_and_broadcast(ctx, rng, dtype):
    a = _data(rng, (37, 40), dtype)
    x = dlarray.array(a, ctx, dtype=dtype)
    for key in [(slice(None, None, 2), slice(1, None, 3)), (slice(None, None, -1),),
                (slice(None), 5), (slice(3, 4),)]:
        np.testing.assert_array_equal(x[key].asnumpy(), a[key])
        np.testing.assert_array_equal(x[key].copy().asnumpy(), a[key])
    row = dlarray.array(a[:1], ctx, dtype=dtype)
    out = dlarray.empty((29, 40), ctx, dtype)
    ops.broadcast_to(row, out)
    np.testing.assert_array_equal(out.asnumpy(), np.broadcast_to(a[:1], (29, 40)))
    col = dlarray.array(a[:, :1], ctx, dtype=dtype)
    out = dlarray.empty((37, 300), ctx, dtype)
    ops.broadcast_to(col, out)
    np.testing.assert_array_equal(out.asnumpy(), np.broadcast_to(a[:, :1], (37, 300)))


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("source", REAL + COMPLEX, ids=str)
def test_astype_to_complex(ctx, rng, source, dtype):
    if source == np.bool_:
        a = rng.random((7, 300)) > 0.5
    elif source.kind in "iu":
        info = np.iinfo(source)
        a = rng.integers(max(info.min, -1000), min(info.max, 1000), (7, 300)).astype(source)
        a.reshape(-1)[:2] = [info.min, info.max]  # extremes: int64's round in the float part
    elif source.kind == "f":
        a = (rng.standard_normal((7, 300)) * 100).astype(source)
        a.reshape(-1)[:3] = [np.inf, -np.inf, np.nan]
    else:
        a = _data(rng, (7, 300), source)
    x = dlarray.array(a, ctx, dtype=source)
    np.testing.assert_array_equal(x.astype(dtype).asnumpy(), a.astype(dtype))
    np.testing.assert_array_equal(x[:, ::3].astype(dtype).asnumpy(), a[:, ::3].astype(dtype))


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("target", REAL, ids=str)
def test_astype_complex_to_real_refused(ctx, dtype, target):
    # The standard: complex to real "should not be permitted"; NumPy warns and drops the
    # imaginary part. dlarray raises, naming both dtypes.
    x = dlarray.array([1 + 2j], ctx, dtype=dtype)
    with pytest.raises(TypeError, match=r"%s to %s would drop the imaginary part"
                       % (dtype, target)):
        x.astype(target)
    with pytest.raises(TypeError, match="imaginary part"):
        dlarray.array(np.array([1 + 2j]), ctx, dtype=target)
    with pytest.raises(TypeError, match="imaginary part"):
        dlarray.asarray(x, ctx, dtype=target)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_setitem(ctx, rng, dtype):
    a = _data(rng, (33, 65), dtype)
    x = dlarray.array(a, ctx, dtype=dtype)
    for key, value in [((slice(None), slice(None)), 1.5), ((0,), 2 - 3j), ((slice(1, 9), 4), 7),
                       ((slice(None, None, 2), slice(1, None, 5)), complex(np.nan, 1)),
                       ((slice(3, 5),), np.complex64(1j)), ((-1, -1), True),
                       ((slice(10, 12),), a[20:22] * 2), ((slice(None), 0), [1j] * 33)]:
        a[key] = value
        x[key] = value
        np.testing.assert_array_equal(x.asnumpy(), a)
    x[:] = dlarray.array(a[::-1], ctx, dtype=dtype)
    np.testing.assert_array_equal(x.asnumpy(), a[::-1])
    ops.array_set(x, -2.25)  # the op itself: a real value, imaginary part 0
    np.testing.assert_array_equal(x.asnumpy(), np.full(a.shape, -2.25, dtype))
    real = dlarray.empty((3,), ctx, np.float32)
    with pytest.raises(TypeError, match="complex"):
        real[0] = 1j
    with pytest.raises(TypeError, match="complex"):
        real[:] = np.array([1j, 2, 3])


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_dlpack_and_buffer(rng, dtype):
    a = _data(rng, (5, 6), dtype)
    x = dlarray.from_dlpack(a)  # NumPy exports complex as DLPack's kDLComplex
    assert x.dtype == dtype
    np.testing.assert_array_equal(x.asnumpy(), a)
    np.testing.assert_array_equal(np.from_dlpack(x), a)
    np.testing.assert_array_equal(np.asarray(memoryview(x)), a)  # the buffer protocol
    np.testing.assert_array_equal(np.asarray(x), a)


def test_repr(ctx):
    x = dlarray.array([1 + 2j, -0.5j], ctx, dtype=np.complex64)
    assert repr(x) == "NDArray([ 1.+2.j , -0.-0.5j], dtype=complex64, ctx=%r)" % ctx


def test_ops_without_complex_kernels_raise_type_error(ctx):
    # The elementwise table has complex rows where the standard has complex functions
    # (test_api_complex.py); the other ops refuse complex operands clearly.
    x = dlarray.array([1 + 2j, 3], ctx, dtype=np.complex64)
    out = dlarray.empty((2,), ctx, np.complex64)
    for call, op in [(lambda: ops.relu(x, out), "relu"),
                     (lambda: ops.floor(x, out), "floor"),
                     (lambda: ops.maximum(x, x, out), "maximum"),
                     (lambda: ops.matrix_elementwise_add_by_const(x, 1.0, out),
                      "matrix_elementwise_add_by_const")]:
        with pytest.raises(TypeError, match=r"%s.*complex64" % op):
            call()
    mask = dlarray.empty((2,), ctx, bool)
    with pytest.raises(TypeError, match=r"less.*complex64"):
        ops.less(x, x, mask)
    with pytest.raises(TypeError, match="compare_by_const on .*: no kernel for complex64"):
        ops.compare_by_const(x, 1, mask, 0)
    with pytest.raises(TypeError, match="no order"):
        x < x


@pytest.mark.parametrize("dtype", COMPLEX + [np.dtype(np.float32), np.dtype(np.int64)], ids=str)
def test_python_scalar_conversions(ctx, dtype):
    value = (1.5 - 2j) if dtype.kind == "c" else 3
    x = dlarray.array([value], ctx, dtype=dtype)
    assert complex(x) == complex(np.array([value], dtype)[0])
    assert complex(x[0]) == complex(value) and x.item() == value
    if dtype.kind == "c":
        with pytest.raises(TypeError):
            float(x)
        with pytest.raises(TypeError):
            int(x)
