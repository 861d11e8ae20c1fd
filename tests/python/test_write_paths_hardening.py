"""Write paths that must refuse what they are given (issue 26): extension names that would put
files outside the cache and cache paths that resolve outside it (defect 3), read-only outputs of
AOT custom ops, cpp_extension ops, copies and rtc launches (defect 5), and Custom attributes that C
would read cut short or wrapped (defects 8 and 10). Each case checks that nothing was written:
no file outside the cache, the NumPy memory under a read-only array unchanged."""
import ctypes
import os
import shutil

import numpy as np
import pytest

import dlarray
import dlarray.rtc as rtc
from aot_util import GPUS, KERNELS, example, probe
from dlarray import _cache, cpp_extension
from dlarray.custom import Custom, compile_source, load_library

HAVE_CXX = shutil.which(os.environ.get("CXX", "c++")) is not None
needs_cxx = pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler on this machine")


@pytest.fixture(scope="module", autouse=True)
def shared_cache(aot_cache):
    """The session's cache for the AOT sources these tests compile (tests of the cache itself
    replace it with one of their own)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DLARRAY_CACHE_DIR", str(aot_cache))
        yield


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache in tmp_path, with 'victim' folders where '../victim' and '../../../victim' from
    the cache and from an entry (root/namespace/key) land, so that an escape leaves files."""
    root = tmp_path / "home" / "user" / "cache"
    (tmp_path / "home" / "user" / "victim").mkdir(parents=True)
    (tmp_path / "victim").mkdir()
    monkeypatch.setenv("DLARRAY_CACHE_DIR", str(root))
    return root


def files_outside(tmp_path, root):
    return sorted(str(p) for p in tmp_path.rglob("*")
                  if p.is_file() and root not in p.parents)


# -- defect 3: cpp_extension names and the cache writer -------------------------------------------

@pytest.mark.parametrize("name", ["../../../victim/owned", "../victim/owned", "a; touch x",
                                  "/tmp/owned", "a/b", "", "1st", "a-b", "caf\u00e9", "a\0b",
                                  "name.so"])
def test_load_inline_refuses_a_name_that_is_not_a_c_identifier(cache, tmp_path, name):
    with pytest.raises(ValueError, match="name must be a C identifier"):
        cpp_extension.load_inline(name, ["int x;"])
    assert files_outside(tmp_path, cache) == []
    assert not (cache / "cpp_extension_src").exists(), "a path was built from the bad name"


@pytest.mark.parametrize("name", [None, 3, b"abc", ["a"]])
def test_extension_names_must_be_strings(cache, name):
    with pytest.raises(TypeError, match="load_inline: name must be a str"):
        cpp_extension.load_inline(name, ["int x;"])
    with pytest.raises(TypeError, match="load: name must be a str"):
        cpp_extension.load(name, ["x.cc"])


def test_load_refuses_a_bad_name_before_reading_sources(cache, tmp_path):
    src = tmp_path / "ok.cc"
    src.write_text("int x;")
    with pytest.raises(ValueError, match="load: name must be a C identifier.*'../x'"):
        cpp_extension.load("../x", [str(src)])
    assert files_outside(tmp_path, cache) == [str(src)]


def test_the_cache_writer_refuses_paths_that_resolve_outside(cache, tmp_path):
    entry = _cache.entry_dir("ns", "key")
    escape = entry / ".." / ".." / ".." / "victim" / "owned.bin"
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.store_bytes(escape, b"data")
    src = entry / "built.so"
    src.write_bytes(b"library")
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.store_file(src, escape)
    assert src.read_bytes() == b"library", "the source was moved before the refusal"
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.entry_dir("..", "x")
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.entry_dir("ns", "/abs")
    with pytest.raises(ValueError, match="outside the cache folder"):
        with _cache.locked(tmp_path / "victim"):
            pass
    assert files_outside(tmp_path, cache) == []


def test_the_cache_follows_no_symlink_out(cache, tmp_path):
    entry = _cache.entry_dir("ns", "key")
    (entry / "link").symlink_to(tmp_path / "victim", target_is_directory=True)
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.store_bytes(entry / "link" / "owned.bin", b"data")
    (entry / "file_link").symlink_to(tmp_path / "victim" / "target")
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.store_bytes(entry / "file_link", b"data")
    (cache / "planted").symlink_to(tmp_path / "victim", target_is_directory=True)
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.entry_dir("planted", "key")
    assert files_outside(tmp_path, cache) == []


def test_verifying_a_path_outside_removes_nothing(cache, tmp_path):
    precious = tmp_path / "victim" / "precious.txt"
    precious.write_text("keep me")
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.verified_file(precious)  # it has no manifest: inside the cache it would go
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.load_bytes(_cache.cache_dir() / ".." / ".." / ".." / "victim" / "precious.txt")
    assert precious.read_text() == "keep me"


def test_the_cache_still_writes_inside(cache):
    entry = _cache.entry_dir("ns", "key")
    dest = _cache.store_bytes(entry / "sub.bin", b"abc")
    assert _cache.load_bytes(dest) == b"abc"
    with _cache.locked(entry):
        pass
