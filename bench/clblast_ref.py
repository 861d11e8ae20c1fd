"""CLBlast's SGEMM through its C API (ctypes), on its own OpenCL context of the same device, for
bench/opencl.py's matrix_multiply comparison. CLBlast is used as Debian ships it (libclblast-dev):
untuned for PoCL, so it runs its default kernel parameters.
"""
import ctypes
import ctypes.util
import time

import numpy as np

_CL_DEVICE_TYPE_ALL = 0xFFFFFFFF
_CL_DEVICE_NAME = 0x102B
_CL_MEM_READ_WRITE = 1
_CL_MEM_COPY_HOST_PTR = 32
_ROW_MAJOR, _NO, _YES = 101, 111, 112


def available():
    """Why CLBlast cannot be used here, or None."""
    for lib in ("OpenCL", "clblast"):
        if ctypes.util.find_library(lib) is None:
            return "lib%s.so not found (Debian: libclblast-dev)" % lib
    return None


class ClBlast:
    """An OpenCL context and queue on the device named `device_name` (else the first one)."""

    def __init__(self, device_name=None):
        cl = self.cl = ctypes.CDLL(ctypes.util.find_library("OpenCL"))
        self.blast = ctypes.CDLL(ctypes.util.find_library("clblast"))
        for f in ("clCreateContext", "clCreateCommandQueue", "clCreateBuffer"):
            getattr(cl, f).restype = ctypes.c_void_p
        n = ctypes.c_uint()
        cl.clGetPlatformIDs(0, None, ctypes.byref(n))
        plats = (ctypes.c_void_p * n.value)()
        cl.clGetPlatformIDs(n.value, plats, None)
        chosen = None
        for p in plats:
            m = ctypes.c_uint()
            if cl.clGetDeviceIDs(ctypes.c_void_p(p), ctypes.c_uint64(_CL_DEVICE_TYPE_ALL), 0, None,
                                 ctypes.byref(m)) != 0:
                continue
            devs = (ctypes.c_void_p * m.value)()
            cl.clGetDeviceIDs(ctypes.c_void_p(p), ctypes.c_uint64(_CL_DEVICE_TYPE_ALL), m.value,
                              devs, None)
            for d in devs:
                name = ctypes.create_string_buffer(512)
                cl.clGetDeviceInfo(ctypes.c_void_p(d), _CL_DEVICE_NAME, 512, name, None)
                if chosen is None or (device_name and name.value.decode() == device_name):
                    chosen = d
        err = ctypes.c_int()
        self.dev = ctypes.c_void_p(chosen)
        self.ctx = ctypes.c_void_p(cl.clCreateContext(None, 1, ctypes.byref(self.dev), None, None,
                                                      ctypes.byref(err)))
        self.queue = ctypes.c_void_p(cl.clCreateCommandQueue(self.ctx, self.dev,
                                                             ctypes.c_uint64(0),
                                                             ctypes.byref(err)))
        if err.value:
            raise RuntimeError("clCreateCommandQueue failed: %d" % err.value)

    def override(self, kernel, params):
        """CLBlast's parameters for `kernel` (e.g. "Xgemm") on this device, e.g. from its tuner."""
        names = (ctypes.c_char_p * len(params))(*[k.encode() for k in params])
        values = (ctypes.c_size_t * len(params))(*params.values())
        st = self.blast.CLBlastOverrideParameters(self.dev, kernel.encode(), 32, len(params), names,
                                                  values)
        if st != 0:
            raise RuntimeError("CLBlastOverrideParameters(%s) failed with status %d" % (kernel, st))

    def buffer(self, array):
        err = ctypes.c_int()
        host = np.ascontiguousarray(array, np.float32)
        mem = self.cl.clCreateBuffer(self.ctx, ctypes.c_uint64(_CL_MEM_READ_WRITE |
                                                               _CL_MEM_COPY_HOST_PTR),
                                     ctypes.c_size_t(host.nbytes),
                                     host.ctypes.data_as(ctypes.c_void_p), ctypes.byref(err))
        if err.value:
            raise RuntimeError("clCreateBuffer failed: %d" % err.value)
        return ctypes.c_void_p(mem)

    def sgemm(self, a, b, c, m, n, k, ta=False, tb=False):
        """c = op(a) @ op(b) on the queue, then waits."""
        st = self.blast.CLBlastSgemm(
            _ROW_MAJOR, _YES if ta else _NO, _YES if tb else _NO, ctypes.c_size_t(m),
            ctypes.c_size_t(n), ctypes.c_size_t(k), ctypes.c_float(1.0), a, ctypes.c_size_t(0),
            ctypes.c_size_t(m if ta else k), b, ctypes.c_size_t(0), ctypes.c_size_t(k if tb else n),
            ctypes.c_float(0.0), c, ctypes.c_size_t(0), ctypes.c_size_t(n),
            ctypes.byref(self.queue), None)
        if st != 0:
            raise RuntimeError("CLBlastSgemm failed with status %d" % st)
        self.cl.clFinish(self.queue)

    def read(self, mem, shape):
        out = np.empty(shape, np.float32)
        self.cl.clEnqueueReadBuffer(self.queue, mem, 1, ctypes.c_size_t(0),
                                    ctypes.c_size_t(out.nbytes),
                                    out.ctypes.data_as(ctypes.c_void_p), 0, None, None)
        return out


def parse_tuning(text):
    """Xgemm parameters from `clblast_tuner_xgemm`'s output: the fastest configuration listed
    ("GEMMK MWG NWG KWG MDIMC NDIMC MDIMA NDIMB KWI VWM VWN STRM STRN SA SB KREG" columns), or
    from "NAME=VALUE ..." text."""
    if "=" in text and "|" not in text:
        return {k: int(v) for k, v in (w.split("=") for w in text.split())}
    names = "GEMMK MWG NWG KWG MDIMC NDIMC MDIMA NDIMB KWI VWM VWN STRM STRN SA SB KREG".split()
    best, params = None, None
    for line in text.splitlines():
        cols = [c.strip() for c in line.split("|")]
        if len(cols) < 9 or "results match" not in line:
            continue
        try:
            gflops = float(cols[8])
            values = [int(v) for v in cols[3].split()]
        except ValueError:
            continue
        if len(values) == len(names) and (best is None or gflops > best):
            best, params = gflops, dict(zip(names, values))
    return params


def time_sgemm(x, y, repeat=5, device_name=None, params=None):
    """(first call seconds, median seconds, result) of CLBlast's x @ y (with Xgemm `params`)."""
    blast = ClBlast(device_name)
    if params:
        blast.override("Xgemm", params)
    m, k = x.shape
    n = y.shape[1]
    a, b = blast.buffer(x), blast.buffer(y)
    c = blast.buffer(np.zeros((m, n), np.float32))
    t0 = time.perf_counter()
    blast.sgemm(a, b, c, m, n, k)
    first = time.perf_counter() - t0
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        blast.sgemm(a, b, c, m, n, k)
        times.append(time.perf_counter() - t0)
    return first, float(np.median(times)), blast.read(c, (m, n))
