"""Compiles AOT custom op sources (``.cu`` with nvcc, ``.cc``/``.cpp``/``.cxx`` with g++, ``.c``
with cc) into shared libraries, cached on disk with ``dlarray._cache`` (see dlarray.custom).

An entry is keyed by the source's path and bytes, the compiler and its version and the flags (for
CUDA, the GPU architectures it is built for are among them); the headers the source includes (from the compiler's dependency list, system
headers aside) are checked by content on every look-up, so editing one rebuilds.
"""

import json
import os
import pathlib
import shlex
import shutil
import subprocess
import tempfile
import time

from . import _cache, _log
from .cpp_extension import _cuda_archs, _nvcc, _version

__all__ = ["CompileError", "SOURCE_DEVICES", "compile_source", "compiler_for", "default_flags",
           "include_dir"]

#: Source suffixes compiled at run time, and the device their code runs on.
SOURCE_DEVICES = {".cu": "gpu", ".cc": "cpu", ".cpp": "cpu", ".cxx": "cpu", ".c": "cpu"}

_NAMESPACE = "aot"
# Included first into every C++ and CUDA source: catches C++ exceptions in the library's own C++
# runtime (dlarray/aot_guard.h says why). Its name is part of the cache key: a new version rebuilds.
_GUARD = "dlarray/aot_guard.h"
_GUARD_VERSION = 1
_SYSTEM_PREFIXES = ("/usr/", "/opt/", "/lib/", "/lib64/")


class CompileError(RuntimeError):
    """A source that does not compile, or a compiler that cannot run.

    Parameters
    ----------
    message : str
        The source, the command line and the compiler's output.
    """


def compiler_for(suffix):
    """The compiler for a source suffix: for ``.cu`` nvcc (``$DLARRAY_NVCC``, ``$CUDA_HOME/bin``,
    PATH, /usr/local/cuda/bin, as dlarray.cpp_extension looks), for ``.c`` ``$CC`` or cc, else
    ``$CXX`` or g++.

    Parameters
    ----------
    suffix : str
        ``".cu"``, ``".cc"``, ``".cpp"``, ``".cxx"`` or ``".c"``.

    Returns
    -------
    str
        The compiler's path or command.

    Raises
    ------
    RuntimeError
        When the compiler is not installed (the message says which variable names another).
    """
    if suffix == ".cu":
        env, default = "DLARRAY_NVCC", "nvcc"
        found = _nvcc()
        if not found and os.path.exists("/usr/local/cuda/bin/nvcc"):
            found = "/usr/local/cuda/bin/nvcc"
    else:
        env, default = ("CC", "cc") if suffix == ".c" else ("CXX", "g++")
        found = os.environ.get(env) or shutil.which(default)
    if not found:
        raise RuntimeError("dlarray.custom: compiling %s sources needs %s, which is not installed "
                           "(or set %s to the compiler)" % (suffix, default, env))
    return found


def default_flags(suffix):
    """The flags a source of this suffix is compiled with unless ``compile_flags`` replaces them.

    ``.cu``: ``--shared -Xcompiler -fPIC -O3 -std=c++17 --expt-relaxed-constexpr``, then
    ``-gencode`` for the compute capability of each usable GPU (else 8.0 and 9.0) and PTX of the
    newest, like dlarray.cpp_extension.
    ``.cc``/``.cpp``/``.cxx``: ``-shared -fPIC -O3 -std=c++17``. ``.c``: ``-shared -fPIC -O3``.
    Whatever the flags, ``-I`` the source's folder and dlarray's include folder (for
    ``dlarray/aot.h``) are added, and C++ and CUDA sources get ``-include dlarray/aot_guard.h``
    (C++ exceptions escaping the library's functions keep their message).

    Parameters
    ----------
    suffix : str
        The source's suffix (``".cu"``, ``".cc"``, ...).

    Returns
    -------
    list of str
        The flags.
    """
    if suffix == ".cu":
        flags = ["--shared", "-Xcompiler", "-fPIC", "-O3", "-std=c++17",
                 "--expt-relaxed-constexpr"]
        archs = _cuda_archs()
        for arch in archs:
            flags += ["-gencode", "arch=compute_%s,code=sm_%s" % (arch, arch)]
        return flags + ["-gencode", "arch=compute_%s,code=compute_%s" % (archs[-1], archs[-1])]
    if suffix == ".c":
        return ["-shared", "-fPIC", "-O3"]
    return ["-shared", "-fPIC", "-O3", "-std=c++17"]


def include_dir():
    """The folder holding ``dlarray/aot.h`` (also ``python -m dlarray --include-dir``)."""
    return pathlib.Path(__file__).resolve().parent / "include"


def _digest(path):
    import hashlib
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def _dependencies(depfile, source):
    """The non-system files a Makefile dependency list names, other than the source."""
    text = pathlib.Path(depfile).read_text().replace("\\\n", " ")
    deps = []
    for line in text.splitlines():
        if ":" not in line:
            continue
        for word in shlex.split(line.split(":", 1)[1]):
            path = os.path.realpath(word)
            if path != source and not path.startswith(_SYSTEM_PREFIXES) and path not in deps:
                deps.append(path)
    return deps


def _deps_current(manifest):
    try:
        recorded = json.loads(manifest)
        return all(os.path.isfile(p) and _digest(p) == d for p, d in recorded.items())
    except (OSError, ValueError, AttributeError):
        return False


def compile_source(source, flags=None):
    """A shared library built from ``source`` (a path), from the cache when it is current.

    Parameters
    ----------
    source : str or os.PathLike
        A ``.cu``, ``.cc``, ``.cpp``, ``.cxx`` or ``.c`` file.
    flags : list of str, optional
        Replaces ``default_flags(suffix)``.

    Returns
    -------
    pathlib.Path
        The library, in ``dlarray._cache.cache_dir() / "aot"``.

    Raises
    ------
    CompileError
        When the compiler fails (its command line and output in the message).
    FileNotFoundError
        When ``source`` does not exist.
    """
    source = os.path.realpath(source)
    suffix = pathlib.Path(source).suffix
    if suffix not in SOURCE_DEVICES:
        raise ValueError("dlarray.custom: cannot compile %s (sources: %s)"
                         % (source, ", ".join(SOURCE_DEVICES)))
    code = pathlib.Path(source).read_bytes()
    compiler = compiler_for(suffix)
    flags = list(default_flags(suffix) if flags is None else flags)
    try:
        version = _version(compiler)
    except OSError as e:
        raise CompileError("dlarray.custom: cannot run the compiler %s: %s"
                           % (compiler, e)) from None
    # The path is part of the key: its folder is on the include path. (GPU architectures are in
    # the flags.)
    guard = [] if suffix == ".c" else ["-include", str(include_dir() / _GUARD)]
    key = _cache.make_key(_NAMESPACE, source, code, compiler, version, flags, guard,
                          _GUARD_VERSION)
    entry = _cache.entry_dir(_NAMESPACE, key)
    library = entry / (pathlib.Path(source).stem + ".so")
    deps_file = entry / "deps.json"
    with _cache.locked(entry):
        deps = _cache.load_bytes(deps_file)
        if deps is not None and _cache.verified_file(library) and _deps_current(deps):
            _log.logger.debug("cache hit: custom AOT %s from %s", source, library)
            return library
        start = time.perf_counter()
        with tempfile.TemporaryDirectory(dir=entry, prefix=".build") as tmp:
            out, depfile = pathlib.Path(tmp) / library.name, pathlib.Path(tmp) / "deps.d"
            command = [compiler, *flags, "-I", str(pathlib.Path(source).parent),
                       "-I", str(include_dir()), *guard, "-MD", "-MF", str(depfile),
                       "-o", str(out), source]
            try:
                proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
            except (OSError, subprocess.TimeoutExpired) as e:
                raise CompileError("dlarray.custom: cannot run %s: %s" % (compiler, e)) from None
            if proc.returncode != 0 or not out.is_file():
                raise CompileError("dlarray.custom: %s does not compile (exit code %d):\n$ %s\n%s"
                                   % (source, proc.returncode, shlex.join(command),
                                      (proc.stdout + proc.stderr).strip()))
            manifest = {p: _digest(p) for p in _dependencies(depfile, source)}
            _cache.store_file(out, library)
            _cache.store_bytes(deps_file, json.dumps(manifest, sort_keys=True).encode())
    _log.logger.info("cache miss: custom AOT %s built with %s in %.2f s into %s", source,
                     compiler, time.perf_counter() - start, library)
    return library
