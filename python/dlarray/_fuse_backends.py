"""dlarray.fuse's kernel builders, one per device type: each takes the generated source
(``_fuse_codegen``) and gives ``run(arrays, out, n, dims)``.

- CPU: the C++ is built by the system compiler (``$CXX`` or ``c++``, as ``cpp_extension``) into a
  shared library kept in the disk cache (``$DLARRAY_CACHE_DIR/fuse_cpu/<key>``, the cache
  ``cpp_extension`` uses: atomic writes, a SHA-256 manifest), loaded by ``_core`` (dlopen), its
  kernel called through a ctypes prototype on ``get_num_threads()`` ranges (ctypes releases the
  GIL) for arrays of 64Ki elements and more (smaller ones by ``_core._FuseLauncher``).
  The plan memo (``_fuse_memo``) records which library a plan's code became, so that a later
  process loads it without asking the compiler or the manifest (``toolchain_hint``,
  ``compiler_matches``, ``_memo_library``).
- OpenCL: the OpenCL C is built by the device's own OpenCL compiler in its context (the
  "dlarray.opencl.v2" extension gives the context, queue and buffers) and queued on the
  device's in-order queue, through the OpenCL library with ctypes.
- CUDA: ``_fuse_cuda``.

A builder raises ``BuildFailed`` (the compiler's message) or ``NoCompiler`` (nothing to build
with here); the caller then runs the expression unfused.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import pathlib
import re
import threading
from typing import Optional

from . import _cache, _core

# (shutil, subprocess, tempfile and ctypes.util are imported where a compiler or OpenCL is first
# looked for: a warm first call needs none of them, and they were half of dlarray.fuse(...)'s
# imports)

FORMAT = 1  # bumped when the generated code's calling convention changes
# -fno-trapping-math changes no value (rounding stays IEEE, no contraction): it lets the
# compiler turn a row's ?: over floats (relu_gradient's "x > 0 ? grad : 0 * grad") into a select,
# so such loops vectorize (25,600 float32 relu_gradient: 29 us scalar).
_CPU_FLAGS = ["-O3", "-std=c++17", "-fPIC", "-shared", "-ffp-contract=off", "-fno-math-errno",
              "-fno-trapping-math", "-march=native", "-w"]
_PARALLEL_MIN = 1 << 16  # elements below which one thread runs the kernel
_lock = threading.Lock()


class BuildFailed(RuntimeError):
    """The generated code did not compile (the compiler's message)."""


class NoCompiler(RuntimeError):
    """No compiler for this device type here (the reason)."""


# --- CPU -------------------------------------------------------------------------------------

_pool: list = []


def _threads() -> int:
    from ._config import get_num_threads
    return max(1, int(get_num_threads()))


def _executor(workers: int):
    import concurrent.futures
    with _lock:
        if not _pool or _pool[0][0] != workers:
            _pool[:] = [(workers, concurrent.futures.ThreadPoolExecutor(
                max_workers=workers, thread_name_prefix="dlarray-fuse"))]
        return _pool[0][1]


def _compiler() -> tuple:
    """(the compiler's command, its executable's path)."""
    import shutil
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    exe = shutil.which(cxx.split()[0]) if cxx else None
    if exe is None:
        raise NoCompiler("no C++ compiler ($CXX, c++ or g++ on PATH)")
    return cxx, exe


_cpu_id: list = []


def _first_cpu() -> str:
    """/proc/cpuinfo's first processor (to its blank line): the kernel writes the file as it is
    read, asking each processor its clock, so the rest is not read (90 us of 2 processors here,
    more on a large machine)."""
    with open("/proc/cpuinfo", "rb") as f:
        data = b""
        while b"\n\n" not in data:
            more = f.read(4096)
            if not more:
                break
            data += more
    return data.split(b"\n\n", 1)[0].decode(errors="replace")


def _cpu_identity() -> str:
    """This CPU's model and instruction set extensions: the code is built for them
    (-march=native), so a disk cache shared between machines keeps one build per kind."""
    if not _cpu_id:
        import platform
        text = platform.machine()
        try:
            lines = _first_cpu().splitlines()
            text += "".join(x for x in lines if x.startswith(("model name", "flags", "Features",
                                                              "CPU implementer", "CPU part")))
        except OSError:
            # platform.processor() runs `uname -p` on Linux (a process: most of a warm first
            # call), so only where /proc/cpuinfo is not there to say more
            text += platform.processor()
        _cpu_id.append(text)
    return _cpu_id[0]


_toolchains: dict = {}  # ($CXX, $PATH) -> toolchain()


def toolchain() -> Optional[tuple]:
    """What a C++ library depends on besides its source, without running anything: the compiler's
    command, its executable's path, size and time (a changed compiler is another file), the
    flags, FORMAT and the CPU; None without a compiler (the build then says why). Found once per
    ($CXX, $PATH) in a process, as cpp_extension's compiler version is."""
    setting = (os.environ.get("CXX"), os.environ.get("PATH"))
    if setting not in _toolchains:
        try:
            cxx, exe = _compiler()
            st = os.stat(exe)
        except (NoCompiler, OSError):
            return None
        _toolchains[setting] = (cxx, exe, st.st_size, st.st_mtime_ns, tuple(_CPU_FLAGS), FORMAT,
                                _cpu_identity())
    return _toolchains[setting]


_boot: list = []


def toolchain_hint() -> tuple:
    """What a plan key (_fuse_memo) holds for the toolchain. toolchain() costs a search of PATH
    and a read of /proc/cpuinfo (0.2 ms, a fifth of a warm first call), so where the kernel
    gives a boot id the key holds what chooses the compiler ($CXX, $PATH), the boot (the CPU
    cannot change within one), the flags and FORMAT instead, and the plan's record keeps the
    compiler's executable, checked by compiler_matches. Elsewhere: toolchain() itself."""
    if not _boot:
        try:
            with open("/proc/sys/kernel/random/boot_id", "rb") as f:
                _boot.append(f.read().strip().decode(errors="replace"))
        except OSError:
            _boot.append("")
    if not _boot[0]:
        return ("toolchain", toolchain())
    return (os.environ.get("CXX"), os.environ.get("PATH"), _boot[0], tuple(_CPU_FLAGS), FORMAT)


def compiler_stat() -> Optional[list]:
    """[path, size, mtime] of the compiler's executable (toolchain()'s), or None."""
    found = toolchain()
    return None if found is None else list(found[1:4])


def compiler_matches(recorded) -> bool:
    """Whether ``recorded`` (a compiler_stat()) still describes its file: a replaced or updated
    compiler has another size or time."""
    try:
        path, size, mtime = recorded
        st = os.stat(path)
    except (OSError, TypeError, ValueError):
        return False
    return st.st_size == size and st.st_mtime_ns == mtime


_LIBRARY_KEY = re.compile(r"[0-9a-f]{32}")


def _memo_library(memo) -> Optional[str]:
    """The library ``memo`` (a _fuse_memo.Entry) records, when its bytes still have the recorded
    digest: one read and one checksum, no manifest, no lock (a library is only ever replaced
    whole, by a rename)."""
    if memo.library is None or not _LIBRARY_KEY.fullmatch(memo.library[0]):
        return None
    path = _cache.path_for_reading("fuse_cpu", memo.library[0], "fused.so")
    data = _cache.read_whole(path)
    if data is None or hashlib.sha256(data).hexdigest() != memo.library[1]:
        return None
    return path


def _build_library(source: str) -> tuple:
    """(the library of C++ ``source``, built or from the disk cache, its cache key)."""
    import subprocess
    import tempfile

    from .cpp_extension import _version
    cxx = _compiler()[0]
    key = _cache.make_key("fuse_cpu", FORMAT, source, _CPU_FLAGS, _version(cxx.split()[0]),
                          _cpu_identity())
    entry = _cache.entry_dir("fuse_cpu", key)
    library = entry / "fused.so"
    with _cache.locked(entry):
        if _cache.verified_file(library) is None:
            with tempfile.TemporaryDirectory(dir=entry) as tmp:
                src = pathlib.Path(tmp) / "fused.cc"
                src.write_text(source)
                out = pathlib.Path(tmp) / "fused.so"
                done = subprocess.run(cxx.split() + _CPU_FLAGS + [str(src), "-o", str(out)],
                                      capture_output=True, text=True)
                if done.returncode != 0:
                    raise BuildFailed((done.stdout + done.stderr).strip()[-2000:])
                _cache.store_file(out, library)
                (entry / "fused.cc").write_text(source)
    return library, key


# The generated kernels' C prototypes (ctypes makes a class for each prototype, once: here, not
# in a first call): dl_fused(pointers, sizes, begin, end) of an elementwise kernel, and
# (pointers, sizes, output begin, end, reduced begin, end) of a trailing reduction's.
ELEMENTWISE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong,
                               ctypes.c_longlong)
REDUCTION = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, *[ctypes.c_longlong] * 4)


def cpu_function(source: str, prototype, memo=None):
    """The ``dl_fused`` function of C++ ``source`` (built, or from the disk cache), as
    ``prototype`` (a ctypes.CFUNCTYPE) of its address (``.address``). With ``memo`` (the
    _fuse_memo.Entry of ``source``) the library it records is loaded when intact, and the one
    found or built otherwise is recorded in it. The library is loaded by _core (no ctypes.CDLL,
    which makes a class per library) and stays loaded."""
    library = _memo_library(memo) if memo is not None else None
    if library is None:
        path, key = _build_library(source)
        library = str(path)
        if memo is not None:
            memo.library = (key, hashlib.sha256(path.read_bytes()).hexdigest())
            memo.save()
    address = _core._fuse_load_symbol(library, "dl_fused")
    function = prototype(address)
    function.address = address
    return function


def pointers(arrays) -> ctypes.Array:
    """The arrays' first elements as a ``void*`` array (the generated C++ takes them so)."""
    return (ctypes.c_void_p * len(arrays))(*[_core._rtc_span(a)[0] for a in arrays])


def run_parallel(function, calls: list) -> None:
    """``function(*args)`` for each of ``calls`` on the pool (the first on this thread; ctypes
    releases the GIL)."""
    if len(calls) == 1:
        function(*calls[0])
        return
    pool = _executor(_threads())
    futures = [pool.submit(function, *args) for args in calls[1:]]
    function(*calls[0])
    for f in futures:
        f.result()


def build_cpu(source: str, memo=None):
    """The run function of C++ ``source`` (from the disk cache when there; ``memo``: as
    cpu_function's)."""
    function = cpu_function(source, ELEMENTWISE, memo)

    sizes_of: dict = {}  # dims -> their ctypes array (a plan's dims are the same each call)

    def run(arrays, out, n, dims):
        p = pointers(list(arrays) + [out])
        key = tuple(dims)
        sizes = sizes_of.get(key)
        if sizes is None:
            if len(sizes_of) > 256:  # many shapes: start again
                sizes_of.clear()
            sizes = sizes_of[key] = (ctypes.c_longlong * max(1, len(dims)))(*dims)
        if n < _PARALLEL_MIN:  # one thread: the call alone (a few microseconds saved)
            function(p, sizes, 0, n)
            return
        workers = _threads()
        step = (-(-n // workers) + 63) // 64 * 64  # 64-element (cache line) boundaries
        run_parallel(function, [(p, sizes, b, min(n, b + step)) for b in range(0, n, step)])
    run.address = function.address  # for _core._FuseLauncher
    return run


# --- OpenCL ----------------------------------------------------------------------------------

_CL_DEVICE_SINGLE_FP_CONFIG = 0x101B
_CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT = 1 << 7
_CL_PROGRAM_BUILD_LOG = 0x1183
_cl: list = []
_programs: dict = {}  # (cl_context, source) -> (cl_kernel, lock)


def _opencl():
    if not _cl:
        import ctypes.util
        name = ctypes.util.find_library("OpenCL") or "libOpenCL.so.1"
        try:
            lib = ctypes.CDLL(name)
        except OSError as e:
            raise NoCompiler("the OpenCL library cannot be loaded (%s)" % e) from None
        vp, u32, i32 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int32
        lib.clCreateProgramWithSource.restype = vp
        lib.clCreateProgramWithSource.argtypes = [vp, u32, ctypes.POINTER(ctypes.c_char_p),
                                                  vp, ctypes.POINTER(i32)]
        lib.clBuildProgram.restype = i32
        lib.clBuildProgram.argtypes = [vp, u32, ctypes.POINTER(vp), ctypes.c_char_p, vp, vp]
        lib.clGetProgramBuildInfo.restype = i32
        lib.clGetProgramBuildInfo.argtypes = [vp, vp, u32, ctypes.c_size_t, vp,
                                              ctypes.POINTER(ctypes.c_size_t)]
        lib.clGetDeviceInfo.restype = i32
        lib.clGetDeviceInfo.argtypes = [vp, u32, ctypes.c_size_t, vp,
                                        ctypes.POINTER(ctypes.c_size_t)]
        lib.clCreateKernel.restype = vp
        lib.clCreateKernel.argtypes = [vp, ctypes.c_char_p, ctypes.POINTER(i32)]
        lib.clSetKernelArg.restype = i32
        lib.clSetKernelArg.argtypes = [vp, u32, ctypes.c_size_t, vp]
        lib.clEnqueueNDRangeKernel.restype = i32
        lib.clEnqueueNDRangeKernel.argtypes = [vp, vp, u32, vp, ctypes.POINTER(ctypes.c_size_t),
                                               ctypes.POINTER(ctypes.c_size_t), u32, vp, vp]
        _cl.append(lib)
    return _cl[0]


def _check(err, what):
    if err != 0:
        raise RuntimeError("dlarray.fuse (OpenCL): %s failed with error %d" % (what, err))


def _build_opencl_kernel(lib, context: int, device: int, source: str):
    err = ctypes.c_int32(0)
    text = ctypes.c_char_p(source.encode())
    program = lib.clCreateProgramWithSource(context, 1, ctypes.byref(text), None,
                                            ctypes.byref(err))
    _check(err.value, "clCreateProgramWithSource")
    dev = ctypes.c_void_p(device)
    # Correctly rounded float division and sqrt where the device offers them, as the backend's
    # own kernels are built (OpenCL otherwise allows 2.5 and 3 ulp).
    config = ctypes.c_uint64(0)
    lib.clGetDeviceInfo(device, _CL_DEVICE_SINGLE_FP_CONFIG, ctypes.sizeof(config),
                        ctypes.byref(config), None)
    options = (b"-cl-fp32-correctly-rounded-divide-sqrt"
               if config.value & _CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT else b"")
    if lib.clBuildProgram(program, 1, ctypes.byref(dev), options, None, None) != 0:
        size = ctypes.c_size_t(0)
        lib.clGetProgramBuildInfo(program, device, _CL_PROGRAM_BUILD_LOG, 0, None,
                                  ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value + 1)
        lib.clGetProgramBuildInfo(program, device, _CL_PROGRAM_BUILD_LOG, size.value, log, None)
        raise BuildFailed(log.value.decode(errors="replace").strip()[-2000:])
    kernel = lib.clCreateKernel(program, b"dl_fused", ctypes.byref(err))
    _check(err.value, "clCreateKernel")
    return kernel


_CL_DEVICE_TYPE = 0x1000
_CL_DEVICE_TYPE_CPU = 1 << 1


def opencl_is_cpu(ctx) -> bool:
    """Whether OpenCL device ``ctx`` is a CPU (PoCL's pthread device, Intel's CPU runtime)."""
    lib = _opencl()
    _, _, device = _core._opencl_objects(ctx)
    kind = ctypes.c_uint64(0)
    _check(lib.clGetDeviceInfo(device, _CL_DEVICE_TYPE, ctypes.sizeof(kind), ctypes.byref(kind),
                               None), "clGetDeviceInfo")
    return bool(kind.value & _CL_DEVICE_TYPE_CPU)


def opencl_launcher(source: str, ctx):
    """``launch(arrays, scalars, global_size, local_size)`` of kernel ``dl_fused`` of OpenCL C
    ``source`` on OpenCL device ``ctx``: each array is passed as its buffer and its offset in
    elements, then the scalars as ``long``; the sizes are tuples (one per dimension)."""
    lib = _opencl()
    context, queue, device = _core._opencl_objects(ctx)
    with _lock:
        entry = _programs.get((context, source))
        if entry is None:
            entry = _programs[(context, source)] = (
                _build_opencl_kernel(lib, context, device, source), threading.Lock())
    kernel, kernel_lock = entry
    long_size = ctypes.sizeof(ctypes.c_long)

    def launch(arrays, scalars, global_size, local_size):
        args = []
        for a in arrays:
            mem, offset = _core._opencl_buffer(a)
            args += [("mem", mem), ("long", offset // a.dtype.itemsize)]
        args += [("long", v) for v in scalars]
        dims = len(global_size)
        sizes = (ctypes.c_size_t * dims)(*global_size)
        local = (ctypes.c_size_t * dims)(*local_size)
        with kernel_lock:  # clSetKernelArg on one cl_kernel: one caller at a time
            for index, (kind, value) in enumerate(args):
                if kind == "mem":
                    v = ctypes.c_void_p(value)
                    _check(lib.clSetKernelArg(kernel, index, ctypes.sizeof(v), ctypes.byref(v)),
                           "clSetKernelArg")
                else:
                    v = ctypes.c_long(value)
                    _check(lib.clSetKernelArg(kernel, index, long_size, ctypes.byref(v)),
                           "clSetKernelArg")
            _check(lib.clEnqueueNDRangeKernel(queue, kernel, dims, None, sizes, local, 0, None,
                                              None), "clEnqueueNDRangeKernel")
    return launch


def build_opencl(source: str, ctx):
    """The run function of OpenCL C ``source`` on OpenCL device ``ctx``."""
    launch = opencl_launcher(source, ctx)

    def run(arrays, out, n, dims):
        local = 256
        launch(list(arrays) + [out], [n] + list(dims), (-(-n // local) * local,), (local,))
    return run
