"""The C API through ctypes (the seed's way), shared by the C API tests."""
import ctypes
import pathlib

import numpy as np

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
CPU = DLContext(1, 0)
FLOAT32 = DLArrayDType(2, 32, 1)

for _name in ("DLArrayAlloc", "DLArrayAllocEx", "DLArrayFree", "DLArrayCopyFromTo", "DLArrayInvoke",
              "DLArraySet", "DLArrayRelu", "DLArrayLoadPlugin", "DLArraySynchronize",
              "DLArrayDeviceCount", "DLGetLastErrorKind"):
    getattr(LIB, _name).restype = ctypes.c_int
LIB.DLArraySet.argtypes = [ctypes.c_void_p, ctypes.c_float]


def last_error():
    return LIB.DLGetLastError().decode()


def check_call(ret):
    if ret != 0:
        raise RuntimeError(last_error())


def alloc(shape, ctx=CPU):
    h = Handle()
    check_call(LIB.DLArrayAlloc((ctypes.c_int64 * len(shape))(*shape), len(shape), ctx,
                                ctypes.byref(h)))
    return h


def address(h):
    return ctypes.cast(h, ctypes.c_void_p).value


class HostArray:
    """A caller-made DLArray over a NumPy buffer, with every field settable (kept alive here)."""

    def __init__(self, x, shape=None, dtype=FLOAT32, ctx=CPU, ndim=None, byte_offset=0,
                 strides=None, data=True):
        self.x = x
        shape = x.shape if shape is None else shape
        self.shape = (ctypes.c_int64 * max(1, len(shape)))(*shape)
        self.strides = None if strides is None else (ctypes.c_int64 * len(strides))(*strides)
        self.arr = DLArray(x.ctypes.data_as(ctypes.c_void_p) if data else None, ctx,
                           len(shape) if ndim is None else ndim, dtype,
                           ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64)),
                           self.strides and ctypes.cast(self.strides,
                                                        ctypes.POINTER(ctypes.c_int64)),
                           byte_offset)

    @property
    def ref(self):
        return ctypes.byref(self.arr)

    @property
    def ptr(self):
        return ctypes.cast(ctypes.pointer(self.arr), Handle)


def from_numpy(h, x):
    check_call(LIB.DLArrayCopyFromTo(HostArray(np.ascontiguousarray(x, np.float32)).ref, h, None))


def to_numpy(h, shape):
    out = np.empty(shape, np.float32)
    check_call(LIB.DLArrayCopyFromTo(h, HostArray(out).ref, None))
    return out


def handles(*hs):
    return (Handle * max(1, len(hs)))(*hs)


def invoke(op, inputs, outputs, attrs=(), num_inputs=None, num_outputs=None, num_attrs=None):
    """DLArrayInvoke; the counts default to the list lengths."""
    a = (ctypes.c_double * max(1, len(attrs)))(*attrs)
    return LIB.DLArrayInvoke(op.encode() if isinstance(op, str) else op, handles(*inputs),
                             len(inputs) if num_inputs is None else num_inputs, handles(*outputs),
                             len(outputs) if num_outputs is None else num_outputs, a,
                             len(attrs) if num_attrs is None else num_attrs)
