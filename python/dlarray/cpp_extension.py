"""Build a plugin from C, C++ and CUDA sources at run time, like ``torch.utils.cpp_extension.load``.

The sources are an ordinary dlarray op plugin (see ``examples/custom_op`` and the plugin docs):
they include ``dlarray/plugin.h``, declare ops (with their gradients) and register kernels, and end
with ``DLARRAY_DEFINE_PLUGIN(...)``. ``load`` compiles them against the installed SDK, caches the
library, loads it and returns an object whose attributes are the plugin's ops::

    ext = dlarray.cpp_extension.load("my_ops", ["my_ops.cc", "my_ops_cuda.cu"])
    y = ext.my_op(x, alpha=0.5)          # also dlarray.ops.my_op, and autodiff.ops.my_op

The library is cached in ``$DLARRAY_CACHE_DIR`` (default ``~/.cache/dlarray``), keyed by the
sources, the flags, the compiler and nvcc versions, the SDK version and the GPU architectures, and
written atomically, so parallel processes never see a half-written library and a second call with
the same inputs loads without compiling. ``.cu`` sources are compiled with nvcc when it is found
(``$DLARRAY_NVCC``, ``$CUDA_HOME/bin/nvcc`` or ``nvcc`` on PATH) and skipped with a warning
otherwise; the macro ``DLARRAY_EXTENSION_WITH_CUDA`` is defined when they were compiled, so the
registration code can register CUDA kernels only then. The C++ compiler is ``$CXX`` or ``c++``;
``.c`` sources (a plugin written in C against ``dlarray/plugin_api.h``, e.g.
``examples/custom_op_c/axpby.c``) are compiled with ``$CC`` or ``cc``.
"""

from __future__ import annotations

import collections.abc
import functools
import hashlib
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Any, Iterable, Optional, Sequence, Union

from . import _cache, _core, _log

__all__ = ["BuildError", "Extension", "load", "load_inline"]

_DEFAULT_CFLAGS = ["-O3", "-std=c++17", "-fPIC", "-fvisibility=hidden"]
# C sources (a plugin written against the plain-C plugin_api.h): C99 or later, the same visibility.
_DEFAULT_C_CFLAGS = ["-O3", "-std=c11", "-fPIC", "-fvisibility=hidden"]
_CXX_SUFFIXES = (".cc", ".cpp", ".cxx")
_DEFAULT_CUDA_CFLAGS = ["-O3", "-std=c++17", "-Xcompiler", "-fPIC,-fvisibility=hidden"]
_DEFAULT_CUDA_ARCHS = ["80", "90"]


# Extension names become file names in the cache and the plugin's name in C: ASCII identifiers
# only, so that no name can climb out of the cache folder or need quoting for a shell or a linker.
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _check_name(name, caller):
    if not isinstance(name, str):
        raise TypeError("dlarray.cpp_extension.%s: name must be a str, got %s"
                        % (caller, type(name).__name__))
    if not _NAME.match(name):
        raise ValueError("dlarray.cpp_extension.%s: name must be a C identifier (ASCII letters, "
                         "digits and _, not starting with a digit), got %r" % (caller, name))


class BuildError(RuntimeError):
    """A compiler failed (or is missing); the message holds the command and its output."""


class Extension:
    """A loaded extension: its ops as attributes (``ext.my_op(...)``), with ``help()``.

    Attributes
    ----------
    name : str
        The extension's name.
    path : pathlib.Path
        The plugin library in the cache.
    ops : list of str
        Ops the plugin declared or registered kernels for.
    built : bool
        Whether this call compiled (False: loaded from the cache or already loaded).
    build_seconds : float
        Time spent compiling (0 when loaded from the cache).
    """

    def __init__(self, name: str, path: Union[str, os.PathLike[str]], record: dict[str, Any],
                 built: bool, build_seconds: float) -> None:
        self.name = name
        self.path = pathlib.Path(path)
        self.ops = sorted(set(record["declared_ops"]) | set(record["ops"]))
        self.built = built
        self.build_seconds = build_seconds
        self.__doc__ = "dlarray extension %r (%s)\n\nOps:\n%s" % (
            name, self.path, "\n".join("  " + o for o in self.ops))

    # An op of the extension, as dlarray.ops has it (its signature comes from its declaration).
    def __getattr__(self, op: str) -> Any:
        if op.startswith("_") or op not in self.__dict__.get("ops", ()):
            raise AttributeError("extension %r has no op %r (its ops: %s)"
                                 % (self.__dict__.get("name"), op,
                                    ", ".join(self.__dict__.get("ops", ()))))
        from . import ops
        return getattr(ops, op)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.ops))

    def __repr__(self):
        return "<dlarray extension %r: %s>" % (self.name, ", ".join(self.ops))


def _which(var, fallback, what, how):
    exe = os.environ.get(var) or shutil.which(fallback)
    if not exe:
        raise BuildError("%s not found: %s" % (what, how))
    exe_path = shutil.which(exe)
    if exe_path is None:
        raise BuildError("%s not found: %s=%r is not an executable (%s)" % (what, var, exe, how))
    return exe_path


def _cxx():
    return _which("CXX", "c++", "no C++ compiler",
                  "install one (Debian: apt-get install g++) or set CXX")


def _cc():
    return _which("CC", "cc", "no C compiler",
                  "install one (Debian: apt-get install gcc) or set CC")


def _nvcc():
    """nvcc's path, or None when there is none."""
    for candidate in (os.environ.get("DLARRAY_NVCC"),
                      os.path.join(os.environ["CUDA_HOME"], "bin", "nvcc")
                      if os.environ.get("CUDA_HOME") else None,
                      shutil.which("nvcc")):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


@functools.lru_cache(maxsize=None)
def _version(exe):
    """``exe --version``, remembered on disk per (path, size, mtime): a warm load runs nothing."""
    st = os.stat(exe)
    memo = _cache.entry_dir("tools", _cache.make_key(exe, st.st_size, st.st_mtime_ns)) / "version"
    text = _cache.load_bytes(memo)
    if text is not None:
        return text.decode()
    out = subprocess.run([exe, "--version"], capture_output=True, text=True)
    version = (out.stdout or out.stderr).strip()
    _cache.store_bytes(memo, version.encode())
    return version


def _cuda_archs():
    """Compute capabilities to build for: this machine's GPUs, else sm_80 and sm_90."""
    archs = set()
    for ctx in _core.devices():
        if ctx.device_type == 2:
            try:
                cc = _core.get_option(ctx, "compute_capability:%d" % ctx.device_id)
                archs.add(cc.replace(".", ""))
            except (ValueError, RuntimeError):
                pass
    return sorted(archs) or list(_DEFAULT_CUDA_ARCHS)


def _sdk_version():
    import dlarray
    return dlarray.__version__


def _sdk_dirs():
    package = pathlib.Path(__file__).resolve().parent
    include = package / "include"
    if not (include / "dlarray" / "plugin.h").is_file():
        raise BuildError("the dlarray SDK headers are missing (%s): this installation has no SDK"
                         % include)
    return include


def _run(cmd, cwd, verbose):
    if verbose:
        print(" ".join(shlex.quote(c) for c in cmd), file=sys.stderr)
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if verbose and (out.stdout or out.stderr):
        print(out.stdout + out.stderr, file=sys.stderr)
    if out.returncode != 0:
        raise BuildError("building failed (exit code %d):\n$ %s\n%s"
                         % (out.returncode, " ".join(shlex.quote(c) for c in cmd),
                            (out.stdout + out.stderr).strip()))
    return out.stdout + out.stderr


def _build(name, sources, out_path, workdir, cflags, cuda_cflags, ldflags, includes, nvcc,
           archs, verbose):
    include = _sdk_dirs()
    cxx = _cxx()
    objects, log, with_cuda = [], [], False
    inc = ["-I" + str(include)] + ["-I" + str(p) for p in includes]
    cu = [s for s in sources if s.suffix == ".cu"]
    if cu and nvcc:
        with_cuda = True
        gencode = []
        for a in archs:
            gencode += ["-gencode", "arch=compute_%s,code=sm_%s" % (a, a)]
        gencode += ["-gencode", "arch=compute_%s,code=compute_%s" % (archs[-1], archs[-1])]
        for i, src in enumerate(cu):
            obj = workdir / ("cuda%d.o" % i)
            log.append(_run([nvcc, "-c", str(src), "-o", str(obj), *_DEFAULT_CUDA_CFLAGS, *gencode,
                             "-DDLARRAY_EXTENSION_WITH_CUDA", *inc, *cuda_cflags], workdir,
                            verbose))
            objects.append(obj)
    defines = ["-DDLARRAY_EXTENSION_WITH_CUDA"] if with_cuda else []
    for i, src in enumerate(s for s in sources if s.suffix != ".cu"):
        obj = workdir / ("host%d.o" % i)
        compiler, base = (_cc(), _DEFAULT_C_CFLAGS) if src.suffix == ".c" else (cxx, _DEFAULT_CFLAGS)
        log.append(_run([compiler, "-c", str(src), "-o", str(obj), *base, *defines, *inc,
                         *cflags], workdir, verbose))
        objects.append(obj)
    exports = workdir / "exports.map"
    exports.write_text("{ global: dlarray_plugin_entry; local: *; };\n")
    link = [cxx, "-shared", "-o", str(out_path), *map(str, objects),
            "-Wl,--version-script=" + str(exports), "-Wl,--no-undefined"]
    if with_cuda:
        cuda_lib = pathlib.Path(nvcc).resolve().parent.parent / "lib64"
        link += ["-L" + str(cuda_lib), "-lcudart_static", "-ldl", "-lrt", "-lpthread"]
    log.append(_run(link + list(ldflags), workdir, verbose))
    nm = shutil.which("nm")
    entry = subprocess.run([nm, "-D", "--defined-only", str(out_path)], capture_output=True,
                           text=True) if nm else None
    if entry is not None and entry.returncode == 0 and "dlarray_plugin_entry" not in entry.stdout:
        raise BuildError("%s builds, but defines no plugin entry: end one source with "
                         "DLARRAY_DEFINE_PLUGIN(\"%s\", 0, nullptr, &RegisterKernels) (C++), or "
                         "define DLARRAY_PLUGIN_ENTRY { return &descriptor; } (C, plugin_api.h)"
                         % (name, name))
    return "\n".join(x for x in log if x)


def load(name: str, sources: Union[str, os.PathLike[str], Iterable[Union[str, os.PathLike[str]]]],
         extra_cflags: Optional[Sequence[str]] = None,
         extra_cuda_cflags: Optional[Sequence[str]] = None,
         extra_ldflags: Optional[Sequence[str]] = None,
         extra_include_paths: Optional[Sequence[Union[str, os.PathLike[str]]]] = None,
         verbose: bool = False) -> Extension:
    """Compile (or take from the cache) and load a plugin from source files.

    Parameters
    ----------
    name : str
        The extension's name (letters, digits, ``_``); names the library ``<name>.so``.
    sources : list of str or path
        C (``.c``, built with ``$CC`` or ``cc`` against the plain-C ``dlarray/plugin_api.h``),
        C++ (``.cc``, ``.cpp``, ``.cxx``) and CUDA (``.cu``) sources.
    extra_cflags, extra_cuda_cflags, extra_ldflags : list of str, optional
        Flags for the C++ compiler, for nvcc, and for the link.
    extra_include_paths : list of str, optional
        More ``-I`` folders (the SDK's is always there).
    verbose : bool
        Print every command and the compiler output.

    Returns
    -------
    Extension
        The loaded extension; its ops are attributes.

    Raises
    ------
    BuildError
        A compiler failed (its message included) or is missing (which one, and how to get it).
    TypeError
        A name that is not a str.
    ValueError
        A name that is not a C identifier, no sources, or a source of an unknown kind.
    FileNotFoundError
        A source file does not exist.
    RuntimeError
        The built library does not load as a plugin (its status and reason).
    """
    _check_name(name, "load")
    paths = [pathlib.Path(s).resolve() for s in ([sources] if isinstance(sources, (str, os.PathLike))
                                                 else sources)]
    if not paths:
        raise ValueError("load(%r): no sources" % name)
    for p in paths:
        if not p.is_file():
            raise FileNotFoundError("load(%r): no source file %s" % (name, p))
        if p.suffix not in _CXX_SUFFIXES + (".c", ".cu"):
            raise ValueError("load(%r): %s is neither C (.c), C++ (.cc, .cpp, .cxx) nor CUDA "
                             "(.cu)" % (name, p))
    cflags, cuda_cflags = list(extra_cflags or []), list(extra_cuda_cflags or [])
    ldflags, includes = list(extra_ldflags or []), [str(p) for p in extra_include_paths or []]
    nvcc = _nvcc() if any(p.suffix == ".cu" for p in paths) else None
    if any(p.suffix == ".cu" for p in paths) and nvcc is None:
        warnings.warn("dlarray.cpp_extension.load(%r): no nvcc found (looked at $DLARRAY_NVCC, "
                      "$CUDA_HOME/bin/nvcc and PATH): the .cu sources are skipped and only the "
                      "CPU kernels are built; install the CUDA toolkit to build them" % name,
                      RuntimeWarning, stacklevel=2)
        _log.log_fallback("cpp_extension %r: no nvcc, the .cu sources are skipped" % name)
    archs = _cuda_archs() if nvcc else []
    cxx = _cxx()
    key = _cache.make_key(
        name, [(p.name, hashlib.sha256(p.read_bytes()).hexdigest()) for p in paths], cflags,
        cuda_cflags, ldflags, includes, _version(cxx), _version(nvcc) if nvcc else None,
        _version(_cc()) if any(p.suffix == ".c" for p in paths) else None, archs,
        _sdk_version(), list(_core.PLUGIN_ABI_VERSION), sys.platform)
    entry = _cache.entry_dir("cpp_extension", key)
    library = entry / (name + ".so")
    built, seconds = False, 0.0
    with _cache.locked(entry):
        if _cache.verified_file(library) is None:
            start = time.perf_counter()
            with tempfile.TemporaryDirectory(dir=entry) as tmp:
                tmp = pathlib.Path(tmp)
                out = tmp / (name + ".so")
                log = _build(name, paths, out, tmp, cflags, cuda_cflags, ldflags, includes, nvcc,
                             archs, verbose)
                _cache.store_file(out, library)
                (entry / "build.log").write_text(log)
            built, seconds = True, time.perf_counter() - start
    if built:
        _log.logger.info("cache miss: cpp_extension %r built in %.2f s into %s", name, seconds,
                         library)
    else:
        _log.logger.debug("cache hit: cpp_extension %r from %s", name, library)
    for rec in _core.plugins():
        if rec["name"] == name and rec["status"] == "loaded" and rec["path"] != str(library):
            raise RuntimeError(
                "extension %r is already loaded in this process from another build (%s); a "
                "running process cannot replace ops: start a new process, or give the changed "
                "extension another name" % (name, rec["path"]))
    record = _core.load_plugin(str(library))
    return Extension(name, library, record, built, seconds)


def load_inline(name: str, cpp_sources: Union[str, Sequence[str]],
                cuda_sources: Optional[Union[str, Sequence[str]]] = None,
                **kwargs: Any) -> Extension:
    """Like ``load``, from source text: ``cpp_sources`` and ``cuda_sources`` are strings or lists
    of strings (each becomes one file). Takes the same keyword arguments as ``load``.

    Raises
    ------
    BuildError, TypeError, ValueError, RuntimeError
        As ``load``; the name is checked before anything is written.
    """
    _check_name(name, "load_inline")  # before the name becomes part of any path

    def as_list(x, arg):
        """A source text or a list of them as a list; anything else a TypeError naming arg
        (bytes would be a list of ints, and a number no list at all)."""
        if x is None or isinstance(x, str):
            return [] if x is None else [x]
        if isinstance(x, (bytes, bytearray)) or not isinstance(x, collections.abc.Iterable):
            raise TypeError("load_inline(%r): %s must be a str or a list of str, got %s"
                            % (name, arg, type(x).__name__))
        texts = list(x)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError("load_inline(%r): %s[%d] must be a str (source text), got %s"
                                % (name, arg, i, type(text).__name__))
        return texts
    cpp, cuda = as_list(cpp_sources, "cpp_sources"), as_list(cuda_sources, "cuda_sources")
    if not cpp and not cuda:
        raise ValueError("load_inline(%r): no sources" % name)
    key = _cache.make_key("inline", name, cpp, cuda)
    folder = _cache.entry_dir("cpp_extension_src", key)
    paths = []
    with _cache.locked(folder):
        for i, text in enumerate(cpp):
            paths.append(folder / ("%s_%d.cc" % (name, i)))
        for i, text in enumerate(cuda):
            paths.append(folder / ("%s_cuda_%d.cu" % (name, i)))
        for path, text in zip(paths, cpp + cuda):
            if _cache.load_bytes(path) != text.encode():
                _cache.store_bytes(path, text.encode())
    return load(name, paths, **kwargs)
