"""A DLPack producer made with ctypes, whose capsule fields (shape, strides, byte_offset, dtype,
device, version, flags) are whatever a test sets, over the memory of a NumPy array: NumPy and
dlarray only export well-formed tensors with byte_offset 0, so consumers of hostile or unusual
ones need this one."""
import ctypes

import numpy as np


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", DELETER)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", DELETER), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
# Module constants: a capsule keeps a pointer to its name.
_VERSIONED_NAME = b"dltensor_versioned"
_LEGACY_NAME = b"dltensor"

FLOAT32 = (2, 32, 1)
CPU = (1, 0)


class Producer:
    """__dlpack__ returns a fresh capsule over `buf` with the given fields each time (versioned
    when the consumer asks for >= (1, 0) and `versioned`). `deleted` counts deleter calls; the
    producer keeps every structure alive, so a consumer that reads after deleting reads memory
    that is still there (the count is what tells)."""

    def __init__(self, buf, shape, strides=None, byte_offset=0, dtype=FLOAT32, device=CPU,
                 versioned=True, version=(1, 1), flags=0, data=None, dlpack_device=None,
                 ndim=None):
        self.buf = buf
        self.shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self.strides = None if strides is None else (ctypes.c_int64 * max(len(strides), 1))(
            *strides)
        self.fields = dict(byte_offset=byte_offset, dtype=dtype, device=device,
                           ndim=len(shape) if ndim is None else ndim,
                           data=buf.ctypes.data if data is None else data)
        self.versioned, self.version, self.flags = versioned, version, flags
        self.dlpack_device = device if dlpack_device is None else dlpack_device
        self.deleted = 0
        self.deleter = DELETER(self._delete)
        self.tensors = []
        self.requests = []

    def _delete(self, _):
        self.deleted += 1

    def _tensor(self):
        f = self.fields
        return DLTensor(f["data"], DLDevice(*f["device"]), f["ndim"], DLDataType(*f["dtype"]),
                        self.shape, self.strides, f["byte_offset"])

    def __dlpack_device__(self):
        return self.dlpack_device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        self.requests.append(max_version)
        versioned = self.versioned and max_version is not None and max_version[0] >= 1
        if versioned:
            mt = DLManagedTensorVersioned(DLPackVersion(*self.version), None, self.deleter,
                                          self.flags, self._tensor())
        else:
            mt = DLManagedTensor(self._tensor(), None, self.deleter)
        self.tensors.append(mt)
        name = _VERSIONED_NAME if versioned else _LEGACY_NAME
        return _capsule_new(ctypes.addressof(mt), name, None)


def arange_producer(n=8, **fields):
    """A producer over np.arange(n, dtype=float32) (the buffer stays alive with it)."""
    return Producer(np.arange(n, dtype=np.float32), **fields)
