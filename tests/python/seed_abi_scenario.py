"""One process holding both C ABIs, run by test_seed_abi_isolation.py in a fresh interpreter.

    python seed_abi_scenario.py seed-first|core-first CLIENT_DIR [CONSUMER_DIR]

libc_runtime_api.so (the seed's layouts, loaded RTLD_GLOBAL by the seed's own _base.py from
CLIENT_DIR) and libdlarray_runtime.so (DLPack layouts, loaded RTLD_GLOBAL through ctypes, then
``import dlarray``) export functions of the same names. In the order given, this loads both and
checks that every user reaches its own library: the seed's client, our C API through ctypes, the
dlarray package, and (from CONSUMER_DIR, see tests/seed_api) two C libraries linked against one
library each, loaded after both. Prints one line per check; exits 1 at the first failure.
"""
import ctypes
import importlib
import importlib.util
import pathlib
import sys

import numpy as np

PKG_DIR = pathlib.Path(importlib.util.find_spec("dlarray").origin).parent
RNG = np.random.default_rng(0)


def check(cond, what):
    if not cond:
        print(f"FAILED: {what}")
        sys.exit(1)
    print(f"ok: {what}")


def load_seed_client(client_dir):
    sys.path.insert(0, str(client_dir))
    mods = [importlib.import_module(m) for m in ("_base", "ndarray", "gpu_op")]
    mods[0]._LIB.DLGetLastError.restype = ctypes.c_char_p
    return mods


def seed_client_ops(seed):
    _base, nd, gpu_op = seed
    x = RNG.standard_normal((33, 17)).astype(np.float32)
    w = RNG.standard_normal((9, 17)).astype(np.float32)
    ax, aw, ay = nd.array(x), nd.array(w), nd.empty((33, 9))
    gpu_op.matrix_multiply(ax, False, aw, True, ay)
    check(np.allclose(ay.asnumpy(), x @ w.T, rtol=1e-5, atol=1e-5), "seed client: matmul")
    gpu_op.relu(ax, ax)
    check(np.array_equal(ax.asnumpy(), np.maximum(x, 0)), "seed client: relu")
    check(_base._LIB.DLGpuRelu(ax.handle, ay.handle) == -1 and
          b"(33, 17)" in _base._LIB.DLGetLastError(), "seed client: error message")


class DLContext(ctypes.Structure):  # DLPack's DLDevice
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLArrayDType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLArray(ctypes.Structure):  # DLPack's DLTensor
    _fields_ = [("data", ctypes.c_void_p), ("ctx", DLContext), ("ndim", ctypes.c_int32),
                ("dtype", DLArrayDType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def load_core():
    lib = ctypes.CDLL(str(next(PKG_DIR.glob("libdlarray_runtime.so*"))), ctypes.RTLD_GLOBAL)
    lib.DLGetLastError.restype = ctypes.c_char_p
    return lib


def core_c_api_ops(core):
    def view(x):
        shape = (ctypes.c_int64 * x.ndim)(*x.shape)
        return DLArray(x.ctypes.data_as(ctypes.c_void_p), DLContext(1, 0), x.ndim,
                       DLArrayDType(2, 32, 1), shape, None, 0), shape

    def alloc(shape):
        h = ctypes.POINTER(DLArray)()
        rc = core.DLArrayAlloc((ctypes.c_int64 * len(shape))(*shape), len(shape), DLContext(1, 0),
                               ctypes.byref(h))
        check(rc == 0, f"our C API: DLArrayAlloc{shape} ({core.DLGetLastError()})")
        return h

    x = RNG.standard_normal((20, 7)).astype(np.float32)
    y = RNG.standard_normal((7, 5)).astype(np.float32)
    a, b, c = alloc(x.shape), alloc(y.shape), alloc((20, 5))
    for h, arr in ((a, x), (b, y)):
        v, _shape = view(arr)
        check(core.DLArrayCopyFromTo(ctypes.byref(v), h, None) == 0, "our C API: copy in")
    check(core.DLGpuMatrixMultiply(a, 0, b, 0, c) == 0, "our C API: DLGpuMatrixMultiply")
    out = np.empty((20, 5), np.float32)
    v, _shape = view(out)
    check(core.DLArrayCopyFromTo(c, ctypes.byref(v), None) == 0, "our C API: copy out")
    check(np.allclose(out, x @ y, rtol=1e-5, atol=1e-5), "our C API: matmul result")
    check(core.DLGpuRelu(a, c) == -1 and b"(20, 7)" in core.DLGetLastError(),
          "our C API: error message")
    for h in (a, b, c):
        check(core.DLArrayFree(h) == 0, "our C API: DLArrayFree")


def dlarray_ops():
    import dlarray
    x = RNG.standard_normal((40, 13)).astype(np.float32)
    a = dlarray.array(x, dlarray.cpu())
    out = dlarray.empty((40, 13), dlarray.cpu())
    dlarray.ops.relu(a, out)
    check(np.array_equal(out.asnumpy(), np.maximum(x, 0)), "dlarray package: relu")


def consumer(consumer_dir, name, entry):
    if consumer_dir is None:
        print(f"skipped: {name} (not built)")
        return
    lib = ctypes.CDLL(str(pathlib.Path(consumer_dir) / name))
    report = ctypes.create_string_buffer(1024)
    failures = getattr(lib, entry)(report, len(report))
    first = report.value.decode(errors="replace")
    check(failures == 0, f"{name}, linked against one library only: {first}")


def main(order, client_dir, consumer_dir=None):
    if order == "seed-first":
        seed = load_seed_client(client_dir)  # the shim, RTLD_GLOBAL, before anything of ours
        seed_client_ops(seed)
        core = load_core()
        core_c_api_ops(core)
        dlarray_ops()
        consumer(consumer_dir, "libc_api_selftest.so", "c_api_selftest")
        consumer(consumer_dir, "libseed_api_selftest.so", "seed_api_selftest")
        seed_client_ops(seed)
    elif order == "core-first":
        dlarray_ops()
        core = load_core()
        core_c_api_ops(core)
        seed = load_seed_client(client_dir)
        seed_client_ops(seed)
        consumer(consumer_dir, "libseed_api_selftest.so", "seed_api_selftest")
        consumer(consumer_dir, "libc_api_selftest.so", "c_api_selftest")
        core_c_api_ops(core)
        dlarray_ops()
    else:
        sys.exit(f"unknown order {order!r}")
    print("all checks passed")


if __name__ == "__main__":
    main(*sys.argv[1:])
