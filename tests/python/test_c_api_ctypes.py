"""The C API driven through ctypes, the way the seed's _base.py / ndarray.py do it."""
import ctypes
import pathlib

import numpy as np
import pytest

import dlarray

LIB = ctypes.CDLL(dlarray._core.core_library_path(),
                  ctypes.RTLD_GLOBAL)
LIB.DLGetLastError.restype = ctypes.c_char_p


class DLContext(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLArrayDType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLArray(ctypes.Structure):
    """DLPack's DLTensor layout."""
    _fields_ = [("data", ctypes.c_void_p), ("ctx", DLContext), ("ndim", ctypes.c_int32),
                ("dtype", DLArrayDType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


Handle = ctypes.POINTER(DLArray)


def check_call(ret):
    if ret != 0:
        raise RuntimeError(LIB.DLGetLastError().decode())


def alloc(shape, ctx=DLContext(1, 0)):
    h = Handle()
    check_call(LIB.DLArrayAlloc((ctypes.c_int64 * len(shape))(*shape), len(shape), ctx,
                                ctypes.byref(h)))
    return h


def numpy_view(x):
    """A caller-made DLArray over a NumPy buffer (kept alive by the returned tuple)."""
    shape = (ctypes.c_int64 * x.ndim)(*x.shape)
    arr = DLArray(x.ctypes.data_as(ctypes.c_void_p), DLContext(1, 0), x.ndim,
                  DLArrayDType(2, 32, 1), shape, None, 0)
    return arr, shape


def from_numpy(h, x):
    arr, _shape = numpy_view(x)
    check_call(LIB.DLArrayCopyFromTo(ctypes.byref(arr), h, None))


def to_numpy(h):
    shape = tuple(h.contents.shape[i] for i in range(h.contents.ndim))
    out = np.empty(shape, np.float32)
    arr, _shape = numpy_view(out)
    check_call(LIB.DLArrayCopyFromTo(h, ctypes.byref(arr), None))
    return out


def test_layout_is_dlpack():
    assert ctypes.sizeof(DLArray) == 48
    assert DLArray.shape.offset == 24 and DLArray.byte_offset.offset == 40


def test_ops_through_ctypes():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((33, 17)).astype(np.float32)
    y = rng.standard_normal((17, 9)).astype(np.float32)
    a, b, c = alloc((33, 17)), alloc((17, 9)), alloc((33, 9))
    from_numpy(a, x)
    from_numpy(b, y)
    check_call(LIB.DLGpuMatrixMultiply(a, 0, b, 0, c))  # the seed's symbol name
    np.testing.assert_allclose(to_numpy(c), x @ y, rtol=1e-5, atol=1e-5)
    check_call(LIB.DLArrayRelu(a, a))
    np.testing.assert_array_equal(to_numpy(a), np.maximum(x, 0))
    check_call(LIB.DLArraySet(c, ctypes.c_float(2.0)))
    np.testing.assert_array_equal(to_numpy(c), np.full((33, 9), 2.0, np.float32))
    for h in (a, b, c):
        check_call(LIB.DLArrayFree(h))


def test_errors_through_ctypes():
    a, b = alloc((4,)), alloc((5,))
    assert LIB.DLArrayRelu(a, b) == -1
    assert b"(4,)" in LIB.DLGetLastError() and b"(5,)" in LIB.DLGetLastError()
    assert LIB.DLArrayRelu(None, b) == -1
    assert b"null" in LIB.DLGetLastError()
    assert LIB.DLArrayFree(None) == -1
    check_call(LIB.DLArrayFree(b))
    assert LIB.DLArrayFree(b) == -1
    assert b"already freed" in LIB.DLGetLastError()
    assert LIB.DLArrayRelu(a, b) == -1
    assert b"freed handle" in LIB.DLGetLastError()
    h = Handle()
    assert LIB.DLArrayAlloc((ctypes.c_int64 * 1)(-1), 1, DLContext(1, 0), ctypes.byref(h)) == -1
    assert b"(-1,)" in LIB.DLGetLastError()
    assert LIB.DLArrayAlloc((ctypes.c_int64 * 1)(4), 1, DLContext(1, 9), ctypes.byref(h)) == -1
    assert b"cpu(9) does not exist" in LIB.DLGetLastError()
    check_call(LIB.DLArrayFree(a))


def test_gpu_through_ctypes_without_gpu_is_an_error_code():
    if any(c.device_type == 2 for c in dlarray.devices()):
        pytest.skip("a GPU is usable here")
    h = Handle()
    assert LIB.DLArrayAlloc((ctypes.c_int64 * 1)(4), 1, DLContext(2, 0), ctypes.byref(h)) == -1
    assert b"cuda(0)" in LIB.DLGetLastError()
