"""Compiles AOT custom op sources (``.cu`` with nvcc, ``.cc``/``.cpp``/``.cxx`` with g++, ``.c``
with cc) into shared libraries, cached on disk with ``dlarray._cache`` (see dlarray.custom).

An entry is keyed by the source's path and bytes, the compiler and its version, the flags and, for CUDA, the
GPUs it is built for; the headers the source includes (from the compiler's dependency list, system
headers aside) are checked by content on every look-up, so editing one rebuilds.
"""

import json
import os
import pathlib
import shlex
import shutil
import subprocess
import tempfile

from . import _cache

__all__ = ["CompileError", "SOURCE_DEVICES", "compile_source", "compiler_for", "default_flags",
           "include_dir"]

#: Source suffixes compiled at run time, and the device their code runs on.
SOURCE_DEVICES = {".cu": "gpu", ".cc": "cpu", ".cpp": "cpu", ".cxx": "cpu", ".c": "cpu"}

_NAMESPACE = "aot"
_SYSTEM_PREFIXES = ("/usr/", "/opt/", "/lib/", "/lib64/")
_versions = {}


class CompileError(RuntimeError):
    """A source that does not compile: the message holds the command and the compiler's output."""


def compiler_for(suffix):
    """The compiler command for a source suffix: ``$DLARRAY_NVCC`` or nvcc for ``.cu``, ``$CC`` or
    cc for ``.c``, ``$CXX`` or g++ otherwise.

    Raises
    ------
    RuntimeError
        When the compiler is not installed (the message says which variable names another).
    """
    if suffix == ".cu":
        env, default = "DLARRAY_NVCC", "nvcc"
        found = os.environ.get(env) or shutil.which(default)
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

    ``.cu``: ``--shared -Xcompiler -fPIC -O3 -std=c++17 --expt-relaxed-constexpr``, plus
    ``-arch=native`` when a GPU is usable (else nvcc's default architectures).
    ``.cc``/``.cpp``/``.cxx``: ``-shared -fPIC -O3 -std=c++17``. ``.c``: ``-shared -fPIC -O3``.
    Whatever the flags, ``-I`` the source's folder and dlarray's include folder (for
    ``dlarray/aot.h``) are added.
    """
    if suffix == ".cu":
        flags = ["--shared", "-Xcompiler", "-fPIC", "-O3", "-std=c++17",
                 "--expt-relaxed-constexpr"]
        return flags + (["-arch=native"] if _gpu_names() else [])
    if suffix == ".c":
        return ["-shared", "-fPIC", "-O3"]
    return ["-shared", "-fPIC", "-O3", "-std=c++17"]


def _gpu_names():
    import dlarray
    return [dlarray._core.device_name(c) for c in dlarray.devices() if c.device_type == 2]


def _version(compiler):
    if compiler not in _versions:
        try:
            proc = subprocess.run([compiler, "--version"], capture_output=True, text=True,
                                  timeout=60)
            _versions[compiler] = proc.stdout + proc.stderr
        except (OSError, subprocess.TimeoutExpired) as e:
            raise CompileError("dlarray.custom: cannot run the compiler %s: %s"
                               % (compiler, e)) from None
    return _versions[compiler]


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
    arch = _gpu_names() if suffix == ".cu" else []
    # The path is part of the key: its folder is on the include path.
    key = _cache.make_key(_NAMESPACE, source, code, compiler, _version(compiler), flags, arch)
    entry = _cache.entry_dir(_NAMESPACE, key)
    library = entry / (pathlib.Path(source).stem + ".so")
    deps_file = entry / "deps.json"
    with _cache.locked(entry):
        deps = _cache.load_bytes(deps_file)
        if deps is not None and _cache.verified_file(library) and _deps_current(deps):
            return library
        with tempfile.TemporaryDirectory(dir=entry, prefix=".build") as tmp:
            out, depfile = pathlib.Path(tmp) / library.name, pathlib.Path(tmp) / "deps.d"
            command = [compiler, *flags, "-I", str(pathlib.Path(source).parent),
                       "-I", str(include_dir()), "-MD", "-MF", str(depfile),
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
    return library
