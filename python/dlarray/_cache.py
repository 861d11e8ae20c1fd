"""The on-disk cache shared by everything that builds code at run time (cpp_extension, custom's
auto-compiled AOT sources, rtc's NVRTC kernels).

Layout: ``cache_dir() / <namespace> / <key> / <files>``. A key is a hash of everything the result
depends on (sources, options, compiler and SDK versions, GPU architecture, ...), so a change of any
of them is a different entry and entries never need invalidating. Many processes may share the
cache: results are written under a temporary name and renamed into place (atomic on one
filesystem), a per-entry lock makes concurrent builders of the same entry build once, and every
stored file has a SHA-256 manifest, so a truncated or corrupt file is detected, dropped and rebuilt.

Every path this module writes, locks or removes must resolve (symlinks followed) inside the cache
root: a name taken from a caller (an extension's name, a source's file name) that climbs out with
``..``, an absolute path or a symlink is refused with ValueError before anything is touched.
"""

import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import os
import pathlib

__all__ = ["cache_dir", "make_key", "key_prefix", "key_with", "entry_dir", "locked", "store_file", "verified_file",
           "store_bytes", "load_bytes", "store_record", "load_record", "path_for_reading",
           "read_whole"]

_MANIFEST = ".sha256"


# (the variable, $HOME) -> _setting()'s [root, resolved root, root as text]
_roots: dict = {}


def _setting():
    """[root (a Path, None until cache_dir), resolved root or None, root as text] of the
    current setting, remembered per process: a warm first call of dlarray.fuse reads its
    records without making or resolving the root."""
    setting = (os.environ.get("DLARRAY_CACHE_DIR"), os.environ.get("HOME"))
    known = _roots.get(setting)
    if known is None:
        root = setting[0]
        # (os.path, not pathlib: a process's first pathlib call costs a warm first call of
        # dlarray.fuse 40 us)
        text = (os.path.expanduser(root) if root else
                os.path.join(os.path.expanduser("~"), ".cache", "dlarray"))
        known = _roots.setdefault(setting, [None, None, text])
    return known


def cache_dir():
    """The cache's root: ``$DLARRAY_CACHE_DIR``, else ``~/.cache/dlarray`` (created on demand).

    Raises
    ------
    OSError
        When the folder cannot be created (the message names it and the variable to set).
    """
    known = _setting()
    if known[0] is None:
        known[0] = pathlib.Path(known[2])
    path = known[0]
    if known[1] is None:  # made and resolved once per process (entry_dir makes what is missing)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OSError(e.errno, "dlarray cannot create its cache folder %s (%s); set "
                                   "DLARRAY_CACHE_DIR to a writable folder"
                          % (path, e.strerror)) from e
        known[1] = path.resolve()
    return path


def make_key(*parts):
    """A hex key for ``parts`` (strings, numbers, bytes, lists or dicts of them)."""
    return _hashed(hashlib.sha256(), parts).hexdigest()[:32]


def key_prefix(*parts):
    """The hash state of ``parts``: the first parts of keys made by ``key_with``."""
    return _hashed(hashlib.sha256(), parts)


def key_with(prefix, *parts):
    """``make_key(*first, *parts)`` where ``prefix`` is ``key_prefix(*first)`` (left as it is):
    keys that share their first parts hash them once."""
    return _hashed(prefix.copy(), parts).hexdigest()[:32]


def _hashed(h, parts):
    for part in parts:
        if isinstance(part, bytes):
            data = part
        else:
            data = json.dumps(part, sort_keys=True, default=str).encode()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h


def _inside(path, action="write"):
    """``path`` when it resolves inside the cache root; ValueError otherwise (nothing touched)."""
    path = pathlib.Path(path)
    cache_dir()
    root = _setting()[1]
    resolved = path.resolve()
    if resolved != root and root not in resolved.parents:
        raise ValueError("dlarray cache: refusing to %s %s: it resolves to %s, outside the cache "
                         "folder %s" % (action, path, resolved, root))
    return path


def entry_dir(namespace, key):
    """The folder of one entry (created)."""
    path = _inside(cache_dir() / namespace / key, "create")
    path.mkdir(parents=True, exist_ok=True)
    return _inside(path, "create")  # a symlink planted at the path counts as well


@contextlib.contextmanager
def locked(folder):
    """Holds an exclusive lock on ``folder`` (a file lock: processes and threads alike)."""
    lock_path = _inside(pathlib.Path(folder) / ".lock", "lock")
    with open(lock_path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _temporary(folder, name):
    """(fd, path) of a new temporary file in ``folder`` for ``name``, to be renamed into place
    (tempfile is imported here: a cache read needs none of it, and its imports, random, bz2,
    lzma ..., took milliseconds of dlarray.fuse(...))."""
    import tempfile
    return tempfile.mkstemp(dir=folder, prefix="." + name + ".tmp")


def _atomic_write_text(path, text):
    fd, tmp = _temporary(path.parent, path.name)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def store_file(src, dest):
    """Moves (or copies) the file ``src`` to ``dest`` atomically and records its checksum."""
    dest = _inside(dest)
    _inside(dest.with_name(dest.name + _MANIFEST))
    fd, tmp = _temporary(dest.parent, dest.name)
    os.close(fd)
    try:
        try:
            os.replace(src, tmp)
        except OSError as e:
            if e.errno != errno.EXDEV:
                raise
            import shutil
            shutil.copyfile(src, tmp)
        digest = _digest(tmp)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _atomic_write_text(dest.with_name(dest.name + _MANIFEST), digest)
    return dest


def verified_file(path):
    """``path`` when it exists and matches its recorded checksum; otherwise removes what is there
    (a truncated, corrupt or half-written entry) and returns None."""
    path = _inside(path, "read or remove")
    manifest = _inside(path.with_name(path.name + _MANIFEST), "read or remove")
    try:
        expected = manifest.read_text().strip()
        if path.is_file() and _digest(path) == expected:
            return path
    except OSError:
        pass
    if path.exists() or manifest.exists():  # not a plain miss: something was there
        logging.getLogger("dlarray").info(
            "cache: dropped the corrupt or half-written entry %s (it is rebuilt)", path)
    for p in (path, manifest):
        with contextlib.suppress(OSError):
            p.unlink()
    return None


def store_bytes(dest, data):
    """Writes ``data`` to ``dest`` atomically, with its checksum."""
    dest = _inside(dest)
    _inside(dest.with_name(dest.name + _MANIFEST))
    fd, tmp = _temporary(dest.parent, dest.name)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return store_file(tmp, dest)


def load_bytes(path):
    """The bytes of a verified cache file, or None (see ``verified_file``)."""
    p = verified_file(path)
    return p.read_bytes() if p is not None else None


def store_record(namespace, name, data):
    """Writes ``data`` atomically as the one file ``<namespace>/<name>``, its checksum on its
    first line: a small record read on a hot path (dlarray.fuse's plan memo) takes one read and
    no manifest."""
    folder = cache_dir() / namespace
    folder.mkdir(parents=True, exist_ok=True)  # (the root too, where it was removed)
    dest = _inside(folder / name)
    fd, tmp = _temporary(folder, name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(hashlib.sha256(data).hexdigest().encode() + b"\n" + data)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return dest


def path_for_reading(*parts):
    """``cache_dir() / parts`` as text, without making or resolving anything: for a read whose
    content is checked after (a record's checksum, a library's recorded digest)."""
    return os.path.join(_setting()[2], *parts)


def read_whole(path):
    """The bytes of the file at ``path``, or None where it cannot be read: one open and reads
    without a buffered file object (a warm first call of dlarray.fuse reads its records and its
    library so)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        # its size at once (a fixed large read allocates and frees that much each time: a
        # megabyte, 40 us), then what a short read left; a file growing meanwhile is read to
        # its size (a cache file is only ever replaced whole, by a rename)
        size = os.fstat(fd).st_size
        chunks, left = [], size
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def load_record(namespace, name):
    """The data of a record written by ``store_record``, or None: missing, or not matching its
    checksum (a truncated or corrupt record is removed). Reading makes and resolves nothing:
    the checksum judges what is read, and only a removal must stay inside the cache."""
    path = path_for_reading(namespace, name)
    data = read_whole(path)
    if data is None:
        return None
    digest, _, body = data.partition(b"\n")
    if hashlib.sha256(body).hexdigest().encode() == digest:
        return body
    path = _inside(path, "remove")
    logging.getLogger("dlarray").info("cache: dropped the corrupt record %s", path)
    with contextlib.suppress(OSError):
        path.unlink()
    return None
