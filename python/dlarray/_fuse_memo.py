"""dlarray.fuse's plan memo: the code generated for a plan key, and on the CPU the library built
from it, found by a later process without generating, hashing or compiling the code again.

A plan key is everything the generated code depends on: the traced expression with the dtype
of each of its values, how each input is read (the broadcast pattern, the reduction's layout),
the language, the generator (``GENERATOR`` and the size and time of each file that writes the
code: the generator's modules and the definition table) and, for C++, the toolchain
(``_fuse_backends.toolchain_hint``: $CXX, $PATH, the machine's boot, the flags); all but the
plan's own parts are hashed into a prefix once per process (``prepare``, at dlarray.fuse(...)).
Its record, ``$DLARRAY_CACHE_DIR/fuse_plan/<key>``, is one file with its checksum inside: the
source, for C++ the compiler's executable (path, size, time) and, once a library is built, that
library's cache key and SHA-256, as NUL-separated fields (no JSON to parse: neither a path nor
generated code holds a NUL). A warm first call reads the record, checks the compiler's file,
reads the library once, checks its digest and loads it: no code generation, no compiler
version, no manifest (3.5 ms of such a call were 1.3-1.7 ms of generation and 2 ms of cache
lookups).
"""
from __future__ import annotations

import os
import threading
from typing import Any, Callable, Optional

from . import _cache

# Bumped when the generated code or this module's record changes in a way the generator's files
# do not show (the same files installed with another meaning); a changed file changes the key by
# itself.
GENERATOR = 2
_NAMESPACE = "fuse_plan"
# (not _fuse_backends: its FORMAT and flags are in the toolchain hint, and the other languages'
# options in their compilers' keys)
_FILES = ("_fuse_codegen.py", "_fuse_reduce.py", "_fuse_reduce_gpu.py", "_fuse_trace.py",
          "include/dlarray/elementwise_table.h")

_lock = threading.Lock()
_entries: dict = {}  # (language, parts, toolchain hint) -> Entry: this process's
# [the generator's identity, {(language, toolchain hint): the key's first part}], once per
# process (the prefixes go with the identity they hold)
_generator: list = []
_MAGIC = b"dlarray.fuse plan"  # a record's first field


class Entry:
    """One plan key's record: ``source``; for C++ ``compiler`` (the executable's
    _fuse_backends.compiler_stat when the code was generated) and ``library`` = (its library
    cache key, SHA-256) once a library was built from it."""

    __slots__ = ("key", "source", "compiler", "library")

    def __init__(self, key: str, source: str, compiler: Optional[list] = None,
                 library: Optional[tuple] = None):
        self.key, self.source, self.compiler, self.library = key, source, compiler, library

    def save(self) -> None:
        """Writes the record (an unwritable cache only costs the next process the generation):
        _MAGIC, the library's key and digest, the compiler's path, size and time (empty fields
        for none), then the source."""
        library = self.library or ("", "")
        compiler = [str(v) for v in self.compiler] if self.compiler else ["", "", ""]
        fields = [_MAGIC] + [str(v).encode() for v in list(library) + compiler]
        try:
            _cache.store_record(_NAMESPACE, self.key,
                                b"\0".join(fields + [self.source.encode()]))
        except (OSError, ValueError):  # (ValueError: a cache path resolving outside the root)
            pass


def generator_identity() -> list:
    """GENERATOR and the (name, size, mtime) of each file that writes the code."""
    if not _generator:
        package = os.path.dirname(__file__)
        stats = []
        for name in _FILES:
            try:
                st = os.stat(os.path.join(package, name))
                stats.append([name, st.st_size, st.st_mtime_ns])
            except OSError:  # (no SDK headers: the generator then refuses; nothing is kept)
                stats.append([name, None, None])
        _generator[:] = [[GENERATOR] + stats, {}]
    return _generator[0]


def _load(key: str, language: str) -> Optional[Entry]:
    """The record of ``key`` where it holds (for C++: its compiler is unchanged), else None."""
    try:
        data = _cache.load_record(_NAMESPACE, key)
    except (OSError, ValueError):  # an unusable cache folder: generated, not recorded
        return None
    found = parse(key, data) if data is not None else None
    if found is None:
        return None  # none, or a record of another shape: generated again and rewritten
    if language == "cpp":
        from . import _fuse_backends
        if not _fuse_backends.compiler_matches(found.compiler):
            return None
    return found


def parse(key: str, data: bytes) -> Optional[Entry]:
    """The Entry of a record's data (Entry.save's fields), or None where it has another
    shape."""
    fields = data.split(b"\0", 6)
    if len(fields) != 7 or fields[0] != _MAGIC:
        return None
    try:
        text = [f.decode() for f in fields[1:]]
        compiler = [text[2], int(text[3]), int(text[4])] if text[2] else None
    except ValueError:
        return None
    return Entry(key, text[5], compiler, (text[0], text[1]) if text[0] else None)


def prepare() -> None:
    """What every plan key of this process holds, found now (at dlarray.fuse(...)) rather than in
    a first call: the generator's identity and, for C++, the toolchain hint's boot id."""
    from . import _fuse_backends
    for language in ("cpp", "cuda", "opencl"):
        _prefix(language, _fuse_backends.toolchain_hint() if language == "cpp" else None)


def _prefix(language: str, hint):
    """The hash state of the key's first part, what all plans of ``language`` share here (made
    once: the repr of $PATH and of the generator's files, and a process's first SHA-256, were
    most of a key's cost)."""
    identity = generator_identity()
    prefix = _generator[1].get((language, hint))
    if prefix is None:
        prefix = _generator[1][(language, hint)] = _cache.key_prefix(
            repr((_NAMESPACE, identity, language, hint)).encode())
    return prefix


def entry(language: str, parts: tuple, generate: Callable[[], str]) -> Entry:
    """The Entry of the code ``generate()`` gives for ``parts`` (hashable: what the code depends
    on besides the language, the generator and the toolchain), from this process's memo, else
    the disk's record, else generated now and recorded. Raises what ``generate`` raises."""
    hint: Any = None
    if language == "cpp":
        from . import _fuse_backends
        hint = _fuse_backends.toolchain_hint()
    found = _entries.get((language, parts, hint))
    if found is not None:
        return found
    # bytes parts: the repr of tuples of strings and numbers is as exact as JSON and cheaper
    key = _cache.key_with(_prefix(language, hint), repr(parts).encode())
    found = _load(key, language)
    if found is None:
        compiler = None
        if language == "cpp":
            compiler = _fuse_backends.compiler_stat()
        found = Entry(key, generate(), compiler)
        found.save()
    with _lock:
        return _entries.setdefault((language, parts, hint), found)


def forget() -> None:
    """Clears this process's memo and identities (the tests' fresh process)."""
    with _lock:
        _entries.clear()
        _generator.clear()
