"""Zero-copy exchange with NumPy: DLPack both ways (versioned and legacy capsules, read-only flag,
capsule lifetime), __array__ with NumPy 2's copy contract, the buffer protocol, asarray sharing
memory, and array() with read-only and non-contiguous sources."""
import gc
import sys

import numpy as np
import pytest

import dlarray

CPU = dlarray.cpu(0)


def test_numpy_from_dlpack_shares_memory():
    x = dlarray.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    y = np.from_dlpack(x)
    assert y.shape == (3, 4) and y.dtype == np.float32
    y[1, 2] = -5.0  # written through NumPy, seen by dlarray
    assert x.asnumpy()[1, 2] == -5.0
    x[0, 0] = 42.0  # and the other way
    assert y[0, 0] == 42.0
    assert y.ctypes.data == x.data_ptr


def test_dlarray_from_dlpack_shares_memory_and_keeps_producer_alive():
    a = np.arange(10, dtype=np.float64)
    x = dlarray.from_dlpack(a)
    assert x.dtype == np.float64 and x.data_ptr == a.ctypes.data
    a[3] = 100.0
    assert x.asnumpy()[3] == 100.0
    ref = sys.getrefcount(a)
    del a
    gc.collect()
    np.testing.assert_array_equal(x.asnumpy()[:3], [0.0, 1.0, 2.0])
    assert ref >= 3  # x's capsule owner held a reference


def test_producer_released_when_array_goes():
    a = np.arange(10, dtype=np.float32)
    before = sys.getrefcount(a)
    x = dlarray.from_dlpack(a)
    assert sys.getrefcount(a) > before
    del x
    gc.collect()
    assert sys.getrefcount(a) == before


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int8, np.int16,
                                   np.int32, np.int64, np.uint8, np.bool_])
def test_round_trip_every_dtype(dtype, rng):
    a = (rng.standard_normal((7, 5)) * 10).astype(dtype)
    x = dlarray.from_dlpack(a)
    assert x.dtype == a.dtype
    back = np.from_dlpack(x)
    np.testing.assert_array_equal(back, a)
    assert back.ctypes.data == a.ctypes.data


def test_bfloat16_round_trip():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = np.array([1.5, -2.25, 3.0], dtype=ml_dtypes.bfloat16)
    x = dlarray.asarray(a)
    assert x.dtype == ml_dtypes.bfloat16 and x.data_ptr == a.ctypes.data
    np.testing.assert_array_equal(np.asarray(x), a)


def test_strided_views_exchange_strides():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    view = a[::2, 1::2]
    x = dlarray.from_dlpack(view)
    assert not x.is_contiguous and x.strides == view.strides
    np.testing.assert_array_equal(x.asnumpy(), view)
    back = np.from_dlpack(x)
    assert back.strides == view.strides
    neg = a[::-1]
    y = dlarray.from_dlpack(neg)
    np.testing.assert_array_equal(y.asnumpy(), neg)
    np.testing.assert_array_equal(np.from_dlpack(y[1:3, ::-2]), neg[1:3, ::-2])


def test_versioned_and_legacy_capsules():
    x = dlarray.array([1.0, 2.0])
    assert "dltensor_versioned" in repr(x.__dlpack__(max_version=(1, 0)))
    assert '"dltensor"' in repr(x.__dlpack__())
    assert x.__dlpack_device__() == (1, 0)


def test_capsule_consumed_once_and_unused_capsule_freed():
    x = dlarray.array([1.0, 2.0, 3.0])
    capsule = x.__dlpack__(max_version=(1, 0))
    y = dlarray.from_dlpack(capsule)
    np.testing.assert_array_equal(y.asnumpy(), [1, 2, 3])
    with pytest.raises(BufferError, match="consumed only once"):
        dlarray.from_dlpack(capsule)
    for _ in range(1000):  # unused capsules release their export (no leak, no crash)
        x.__dlpack__()
        x.__dlpack__(max_version=(1, 0))


def test_read_only_flag_both_ways():
    a = np.arange(6, dtype=np.float32)
    a.flags.writeable = False
    x = dlarray.from_dlpack(a)
    assert x.readonly
    with pytest.raises(ValueError, match="read-only"):
        x[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        dlarray.ops.relu(x, x)
    back = np.from_dlpack(x)  # NumPy asks for a versioned capsule: the flag travels
    assert not back.flags.writeable
    with pytest.raises(BufferError, match="read-only"):
        x.__dlpack__()  # a legacy capsule cannot say read-only
    copied = np.from_dlpack(x, copy=True)
    assert copied.flags.writeable
    assert np.asarray(x).flags.writeable is False
    writable = x.copy()
    writable[0] = 9.0
    assert a[0] == 0.0


def test_dlpack_copy_and_device_arguments():
    x = dlarray.array([1.0, 2.0])
    c = np.from_dlpack(x, copy=True)
    c[0] = 7.0
    assert x.asnumpy()[0] == 1.0
    y = dlarray.from_dlpack(np.arange(3.0), copy=True)
    assert y.asnumpy().tolist() == [0.0, 1.0, 2.0]
    z = dlarray.from_dlpack(np.arange(3.0), device="cpu", copy=False)
    assert z.ctx == CPU
    with pytest.raises(ValueError, match="stream must be None"):
        x.__dlpack__(stream=5)


def test_from_dlpack_errors():
    with pytest.raises(TypeError, match="__dlpack__"):
        dlarray.from_dlpack([1, 2, 3])


def test_zero_size_exchange():
    x = dlarray.empty((0, 3))
    y = np.from_dlpack(x)
    assert y.shape == (0, 3)
    z = dlarray.from_dlpack(np.zeros((2, 0), np.float32))
    assert z.shape == (2, 0) and z.size == 0
    assert np.asarray(z).shape == (2, 0)


def test_array_protocol_copy_contract():
    x = dlarray.array(np.arange(4, dtype=np.float32))
    shared = np.asarray(x)
    shared[1] = 50.0
    assert x.asnumpy()[1] == 50.0
    shared2 = np.asarray(x, copy=False)
    assert shared2.ctypes.data == x.data_ptr
    copied = np.array(x, copy=True)
    copied[0] = -1.0
    assert x.asnumpy()[0] == 0.0
    as64 = np.asarray(x, dtype=np.float64)
    assert as64.dtype == np.float64 and as64[1] == 50.0
    with pytest.raises(ValueError, match="copy=False"):
        x.__array__(dtype=np.float64, copy=False)
    strided = x[::2]
    np.testing.assert_array_equal(np.asarray(strided), [0.0, 2.0])


def test_buffer_protocol():
    x = dlarray.array(np.arange(6, dtype=np.int16).reshape(2, 3), dtype=np.int16)
    m = memoryview(x)
    assert m.format == "h" and m.shape == (2, 3) and not m.readonly
    assert m.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert bytes(x[1]) == np.arange(3, 6, dtype=np.int16).tobytes()


def test_asarray_shares_when_possible(rng):
    a = rng.standard_normal((5, 4)).astype(np.float32)
    x = dlarray.asarray(a)
    assert x.data_ptr == a.ctypes.data
    assert dlarray.asarray(x) is x
    y = dlarray.asarray(a, dtype=np.float64)
    assert y.dtype == np.float64 and y.data_ptr != a.ctypes.data
    np.testing.assert_allclose(y.asnumpy(), a)
    with pytest.raises(ValueError, match="copy=False"):
        dlarray.asarray(a, dtype=np.float64, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        dlarray.asarray([1.0, 2.0], copy=False)
    c = dlarray.asarray(a, copy=True)
    assert c.data_ptr != a.ctypes.data
    np.testing.assert_array_equal(c.asnumpy(), a)
    swapped = a.astype(">f4")
    s = dlarray.asarray(swapped)
    np.testing.assert_array_equal(s.asnumpy(), a)
    assert dlarray.asarray([1, 2]).dtype == np.asarray([1, 2]).dtype


def test_array_takes_read_only_and_non_contiguous_sources(tmp_path):
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    a.flags.writeable = False
    x = dlarray.array(a)
    assert not x.readonly
    x[0, 0] = 99.0
    assert a[0, 0] == 0.0
    np.testing.assert_array_equal(dlarray.array(a[:, ::2]).asnumpy(), a[:, ::2])
    buf = np.frombuffer(b"\x00\x00\x80?\x00\x00\x00@", dtype=np.float32)
    np.testing.assert_array_equal(dlarray.array(buf).asnumpy(), [1.0, 2.0])
    path = tmp_path / "a.npy"
    np.save(path, np.arange(6, dtype=np.float64))
    mm = np.load(path, mmap_mode="r")
    np.testing.assert_array_equal(dlarray.array(mm, dtype=np.float64).asnumpy(), mm)
    shared = dlarray.asarray(mm)
    assert shared.readonly and shared.data_ptr == mm.ctypes.data


def test_bool_stays_bool():
    x = dlarray.array([True, False, True], dtype=bool)
    assert x.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(x), [True, False, True])


def test_numpy_operands_defer_to_ndarray():
    x = dlarray.array([1.0, 2.0])
    r = np.array([10.0, 20.0], dtype=np.float32) + x
    assert isinstance(r, dlarray.NDArray)
    np.testing.assert_array_equal(r.asnumpy(), [11.0, 22.0])


def test_torch_cpu_round_trip_when_installed():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install torch)")
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    x = dlarray.from_dlpack(t)
    t[0, 0] = 5.0
    assert x.asnumpy()[0, 0] == 5.0
    back = torch.from_dlpack(x)
    back[1, 1] = -3.0
    assert t[1, 1].item() == -3.0


def test_jax_cpu_import_when_installed():
    jnp = pytest.importorskip("jax.numpy", reason="JAX is not installed (pip install jax)")
    j = jnp.arange(6, dtype=jnp.float32)
    x = dlarray.from_dlpack(j)
    np.testing.assert_array_equal(x.asnumpy(), np.arange(6, dtype=np.float32))
    y = dlarray.array(j)  # a copy, never a write to the read-only source
    y[0] = 3.0
    assert float(j[0]) == 0.0


def test_producer_without_max_version_gets_a_legacy_request():
    class OldProducer:  # a producer of the DLPack 0.x era: no max_version keyword
        def __init__(self, arr):
            self.arr, self.calls = arr, []

        def __dlpack_device__(self):
            return self.arr.__dlpack_device__()

        def __dlpack__(self, stream=None):
            self.calls.append(stream)
            return self.arr.__dlpack__()

    src = np.arange(4, dtype=np.int32)
    p = OldProducer(src)
    x = dlarray.from_dlpack(p)
    assert p.calls == [None] and x.data_ptr == src.ctypes.data
    np.testing.assert_array_equal(x.asnumpy(), src)


def test_dlpack_with_numpy_keeps_views_alive():
    x = dlarray.array(np.arange(10, dtype=np.float32))
    view = np.from_dlpack(x[2:8:2])
    del x
    import gc
    gc.collect()
    np.testing.assert_array_equal(view, [2.0, 4.0, 6.0])


@pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "legacy"])
def test_from_dlpack_reads_the_producers_byte_offset(versioned):
    # NumPy and dlarray export byte_offset 0, so an importer ignoring it passed every other test
    # (issue 26's mutation check): a producer that starts 12 bytes in must give [3, 4, 5, 6].
    from dlpack_util import arange_producer

    p = arange_producer(8, shape=[4], byte_offset=12, versioned=versioned)
    x = dlarray.from_dlpack(p)
    np.testing.assert_array_equal(x.asnumpy(), [3.0, 4.0, 5.0, 6.0])
    assert x.data_ptr == p.buf.ctypes.data + 12
    y = dlarray.from_dlpack(arange_producer(8, shape=[2, 2], strides=[-2, 1], byte_offset=16,
                                            versioned=versioned))
    np.testing.assert_array_equal(y.asnumpy(), [[4.0, 5.0], [2.0, 3.0]])
    del x
    assert p.deleted == 1


def test_asarray_copies_misaligned_and_byte_swapped_data():
    # asarray's fallback re-read a misaligned array with np.asarray, which returned it unchanged
    # and unshareable: AttributeError 'NoneType' object has no attribute 'ctx'.
    raw = bytearray(b"\0") + np.arange(1, 6, dtype=np.float32).tobytes()
    misaligned = np.frombuffer(raw, dtype=np.float32, offset=1, count=5)
    assert not misaligned.flags.aligned
    x = dlarray.asarray(misaligned)
    np.testing.assert_array_equal(x.asnumpy(), [1, 2, 3, 4, 5])
    swapped = np.arange(4, dtype=">f4")
    np.testing.assert_array_equal(dlarray.asarray(swapped).asnumpy(), [0, 1, 2, 3])
    with pytest.raises(ValueError, match="copy=False"):
        dlarray.asarray(misaligned, copy=False)
    with pytest.raises(ValueError, match="aligned"):
        dlarray.from_dlpack(misaligned)  # DLPack hands the layout over as it is: refused
