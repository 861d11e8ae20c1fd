"""Compiling and loading for dlarray.rtc: NVRTC through the CUDA plugin's "dlarray.rtc.v1"
extension, a cache per process and one on disk (dlarray._cache), compile errors mapped back to
the lines the user wrote.

What is cached where:

- in memory, per process: each compiled program (by key) and each module loaded on a GPU (by key
  and device); ``clear_memory_cache()`` forgets them;
- on disk, in ``$DLARRAY_CACHE_DIR/rtc/<key>/program.bin`` (default ``~/.cache/dlarray``): the
  compiled code (a cubin, or PTX for a GPU newer than NVRTC) with NVRTC's log and lowered names,
  written under a temporary name then renamed, with a SHA-256 manifest, so a truncated or corrupt
  file is found, removed and rebuilt. ``DLARRAY_RTC_CACHE=0`` turns the disk cache off.

The key is a hash of the source, the program name, the options, the name expressions, the
architecture and NVRTC's version and library file, never of the PTX text (which NVRTC 12+ salts
with random names).

A program read from the disk cache needs no compiler, so a process that only reads programs
never loads NVRTC (a 100 MB library: its load was most of a warm first call): NVRTC's version
and library for the keys come from ``$DLARRAY_CACHE_DIR/tools``, where the first process that
loaded it wrote them, as long as that library file is unchanged (size and time) and the
variables that choose it (``DLARRAY_NVRTC``, ``CUDA_HOME``, ``CUDA_PATH``, ``LD_LIBRARY_PATH``)
and dlarray's build are the same; launching asks the plugin for the driver's state alone.
"""

import atexit
import json
import os
import threading
import time

from . import _cache, _core, _log

__all__ = ["CompileError", "Program", "status", "device_arch", "compile_program",
           "load_module", "load_function", "clear_memory_cache", "disk_cache_enabled"]

#: Bumped when the layout of program.bin changes.
FORMAT = 1

_lock = threading.Lock()
_programs = {}  # key -> Program
_modules = {}   # (key, device id) -> _core._RtcModule
_arch = {}      # device id -> compute capability (90)
_status = []    # [dict] once known
_launch = []    # [why rtc cannot launch, or ""] once known
_nvrtc = []     # [(version, library path)] once known
# What chooses the NVRTC library the CUDA plugin loads (backends/cuda ToolkitLibraryCandidates).
_NVRTC_VARIABLES = ("DLARRAY_NVRTC", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH")

atexit.register(_core._rtc_shutdown)


class CompileError(RuntimeError):
    """NVRTC could not compile a kernel.

    The message has NVRTC's log and, for each error, the line of the code the user wrote (the
    kernel body of :class:`dlarray.rtc.Rtc`, the operation of an ElementwiseKernel, the source
    of a RawKernel). dlarray.rtc raises it; the parameters are its attributes.

    Parameters
    ----------
    message : str
        The text shown.
    log : str
        NVRTC's log.
    source : str
        What was compiled (for an Rtc, the decorated body).
    locations : list of (str, str, str)
        For each line of the log that names a line: where it is in the user's code (e.g.
        "kernel body line 3"), NVRTC's message, and that line of code.
    """

    def __init__(self, message, log, source, locations):
        super().__init__(message)
        self.log, self.source, self.locations = log, source, locations


class Program:
    """Compiled code: ``code`` (bytes), ``kind`` (_core._RTC_CUBIN or _RTC_PTX), NVRTC's ``log``,
    ``lowered`` ({name expression: symbol}), ``key`` (its cache key) and ``arch``."""

    def __init__(self, key, arch, code, kind, log, lowered):
        self.key, self.arch, self.code, self.kind = key, arch, code, kind
        self.log, self.lowered = log, lowered

    def symbol(self, name):
        """The symbol of kernel ``name`` (its lowered name when it was a name expression)."""
        return self.lowered.get(name, name)


def status():
    """dlarray.rtc's state: ``{"compile": reason or "", "launch": reason or "", "nvrtc_version":
    (major, minor) or None, "nvrtc_library": path, "archs": [75, ...]}`` (read once)."""
    if not _status:
        try:
            s = dict(_core._rtc_status())
        except (RuntimeError, ValueError) as e:  # no CUDA plugin at all
            s = {"compile": str(e), "launch": str(e), "nvrtc_version": None,
                 "nvrtc_library": "", "archs": []}
        _status.append(s)
    return _status[0]


def _launch_reason():
    """Why rtc cannot launch ("" when it can), without loading NVRTC."""
    if _status:
        return _status[0]["launch"]
    if not _launch:
        try:
            reason = _core._rtc_launch_reason()
        except (RuntimeError, ValueError) as e:  # no CUDA plugin at all
            reason = str(e)
        _launch.append(reason)
    return _launch[0]


def _nvrtc_memo_name():
    """The name of the NVRTC memo's record (a record: one read, no manifest to check, nothing
    resolved; a warm first call of dlarray.fuse on CUDA reads it)."""
    st = os.stat(_core.__file__)
    return "nvrtc-" + _cache.make_key("nvrtc", FORMAT, _core.__file__, st.st_size,
                                      st.st_mtime_ns,
                                      [os.environ.get(v, "") for v in _NVRTC_VARIABLES])


def nvrtc():
    """``((major, minor), library path)`` of the NVRTC that compiles (``(None, "")`` without
    one): from :func:`status` once it is known, else from the memo of an earlier process when it
    still holds (see the module docstring), else from :func:`status` (which loads NVRTC), then
    remembered on disk for the next processes."""
    if not _status and not _nvrtc:
        try:
            memo = json.loads(_cache.load_record("tools", _nvrtc_memo_name()) or b"null")
            st = os.stat(memo["library"])
            if [st.st_size, st.st_mtime_ns] == memo["stat"]:
                _nvrtc.append((tuple(memo["version"]), memo["library"]))
        except (OSError, ValueError, KeyError, TypeError):
            pass
    if _nvrtc and not _status:
        return _nvrtc[0]
    s = status()
    found = (tuple(s["nvrtc_version"]) if s["nvrtc_version"] else None, s["nvrtc_library"] or "")
    if not s["compile"] and not _nvrtc:
        _nvrtc.append(found)
        try:
            st = os.stat(found[1])
            _cache.store_record("tools", _nvrtc_memo_name(), json.dumps(
                {"version": list(found[0]), "library": found[1],
                 "stat": [st.st_size, st.st_mtime_ns]}).encode())
        except (OSError, ValueError):  # an unwritable cache: the next process loads NVRTC again
            pass
    return found


def require(service):
    """Raises RuntimeError saying why ``service`` ("compile" or "launch") cannot work here."""
    if service == "launch":
        reason = _launch_reason()
    elif not _status and nvrtc()[0] is not None:
        return  # a usable NVRTC, as recorded: loaded when a program is compiled
    else:
        reason = status()[service]
    if reason:
        if reason.startswith("dlarray.rtc"):
            raise RuntimeError(reason)
        raise RuntimeError("dlarray.rtc cannot %s: %s" % (service, reason))


def device_arch(device_id):
    """The compute capability of ``gpu(device_id)`` as 10 * major + minor (90 for an H100)."""
    arch = _arch.get(device_id)
    if arch is None:
        require("launch")
        arch = _arch.setdefault(device_id, int(_core._rtc_device_arch(device_id)))
    return arch


def disk_cache_enabled():
    """Whether compiled programs are kept on disk (``DLARRAY_RTC_CACHE`` is not ``0``)."""
    return os.environ.get("DLARRAY_RTC_CACHE", "1").strip() != "0"


def clear_memory_cache():
    """Forgets this process's compiled programs and loaded modules (kernels keep theirs)."""
    with _lock:
        _programs.clear()
        _modules.clear()


def nvrtc_identity():
    """The NVRTC that compiles here as compiled code is keyed by it: ``[[major, minor] or None,
    its library's file name]`` (a program of another NVRTC is compiled again)."""
    version, library = nvrtc()
    return [list(version) if version else None, os.path.basename(library)]


def program_key(source, name, options, name_expressions, arch):
    """The cache key of a compilation (see the module docstring)."""
    return _cache.make_key("rtc", FORMAT, source, name, list(options), list(name_expressions),
                           int(arch), nvrtc_identity())


def compile_program(source, name, options=(), name_expressions=(), arch=0, what=None,
                    locate=None):
    """The Program of ``source`` for architecture ``arch`` (e.g. 90), from a cache when there.

    Parameters
    ----------
    source, name : str
        CUDA C++ source; the program's name (messages say ``name.cu(line)``).
    options, name_expressions : sequence of str
        NVRTC options; C++ names whose symbols are looked up after compiling.
    arch : int
        The compute capability to compile for.
    what : str, optional
        What the error message calls the code (e.g. "kernel 'softmax'").
    locate : callable, optional
        ``locate(line)`` -> ``(where, code line)`` for a line of ``source``, or None: maps
        NVRTC's line numbers to the user's code.

    Raises
    ------
    CompileError
        NVRTC reported errors.
    RuntimeError
        NVRTC is not available (the reason says why).
    """
    require("compile")
    options, name_expressions = tuple(options), tuple(name_expressions)
    key = program_key(source, name, options, name_expressions, arch)
    program = _programs.get(key)
    if program is not None:
        _log.logger.debug("cache hit (memory): rtc program %r for sm_%s, key %s", name, arch, key)
        return program

    def build():
        start = time.perf_counter()
        built = _compile(key, source, name, options, name_expressions, arch, what, locate)
        _log.logger.info("cache miss: rtc program %r compiled for sm_%s in %.2f s, key %s", name,
                         arch, time.perf_counter() - start, key)
        return built

    entry = None
    if disk_cache_enabled():
        try:
            entry = _cache.entry_dir("rtc", key)
        except OSError as e:
            entry = None  # an unwritable cache folder: compile without it
            _log.log_fallback("rtc: the disk cache is unusable (%s): programs are compiled "
                              "without it" % e, once_key="rtc-disk-cache")
    if entry is None:
        program = build()
    else:
        path = entry / "program.bin"
        with _cache.locked(entry):
            program = _read(path, key, arch)
            if program is None:
                program = build()
                _write(path, program)
            else:
                _log.logger.debug("cache hit (disk): rtc program %r for sm_%s from %s", name,
                                  arch, path)
    with _lock:
        return _programs.setdefault(key, program)


def _compile(key, source, name, options, name_expressions, arch, what, locate):
    compiled, code, kind, log, lowered = _core._rtc_compile(
        source, name + ".cu", list(options), list(name_expressions), int(arch))
    if not compiled:
        raise _compile_error(what or "program '%s'" % name, log, source, arch, locate)
    return Program(key, arch, code, kind, log, dict(zip(name_expressions, lowered)))


def _read(path, key, arch):
    """The Program stored at ``path``, or None (missing, corrupt or of another format)."""
    data = _cache.load_bytes(path)
    if data is None:
        return None
    try:
        head, code = data.split(b"\n", 1)
        meta = json.loads(head)
        if meta["format"] != FORMAT or meta["kind"] not in (_core._RTC_CUBIN, _core._RTC_PTX):
            raise ValueError("format")
        if not code:
            raise ValueError("no code")
        return Program(key, arch, code, meta["kind"], meta["log"], dict(meta["lowered"]))
    except (ValueError, KeyError, TypeError):
        try:
            os.unlink(path)  # its manifest goes at the next read (verified_file)
        except OSError:
            pass
        return None


def _write(path, program):
    head = json.dumps({"format": FORMAT, "kind": program.kind, "log": program.log,
                       "lowered": sorted(program.lowered.items())})
    try:
        _cache.store_bytes(path, head.encode() + b"\n" + program.code)
    except OSError as e:  # a full or read-only disk: the program still works, uncached
        _log.log_fallback("rtc: cannot store a program in the disk cache (%s): it stays in "
                          "memory only" % e)


def _compile_error(what, log, source, arch, locate):
    from ._rtc_source import log_locations  # (its regular expressions: only for errors)
    source_lines = source.splitlines()
    locations = []
    for line, message in log_locations(log):
        where = locate(line) if locate is not None else None
        if where is None:
            text = source_lines[line - 1] if 0 < line <= len(source_lines) else ""
            where = ("line %d" % line, text)
        locations.append((where[0], message, where[1]))
    errors = [loc for loc in locations if "error" in loc[1].split(":")[0]]
    version = status()["nvrtc_version"]
    head = "dlarray.rtc: %s does not compile (NVRTC %s, %s)" % (
        what, "%d.%d" % tuple(version) if version else "?",
        "sm_%d" % arch if arch else "architecture from the options")
    parts = [head + ":"]
    for where, message, text in errors or locations:
        parts.append("  %s: %s" % (where, message))
        if text.strip():
            parts.append("      " + text.strip())
    parts.append("NVRTC log:")
    parts.append(log.rstrip() or "(empty)")
    return CompileError("\n".join(parts), log, source, locations)


def load_module(program, device_id):
    """``program`` loaded on ``gpu(device_id)`` (one module per program and device).

    Raises
    ------
    RuntimeError
        The driver or the GPU is not available, or loading failed.
    """
    key = (program.key, device_id)
    module = _modules.get(key)
    if module is None:
        require("launch")
        module = _core._RtcModule(device_id, program.code, program.kind)
        with _lock:
            module = _modules.setdefault(key, module)
    return module


def load_function(program, device_id, symbol, what):
    """The kernel ``symbol`` of ``program`` loaded on ``gpu(device_id)``.

    Raises
    ------
    ValueError
        The program has no kernel of that name.
    RuntimeError
        The driver or the GPU is not available, or loading failed.
    """
    module = load_module(program, device_id)
    try:
        return module.get_function(symbol)
    except ValueError as e:
        raise ValueError("%s: %s" % (what, str(e).replace("dlarray.rtc: ", "", 1))) from None
