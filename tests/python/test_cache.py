"""dlarray._cache: keys, atomic stores, checksums that catch truncated or corrupt entries, and
processes sharing one entry."""
import multiprocessing
import os

import pytest

from dlarray import _cache


@pytest.fixture(autouse=True)
def cache_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("DLARRAY_CACHE_DIR", str(tmp_path / "cache"))


def test_cache_dir_follows_the_variable(tmp_path):
    assert _cache.cache_dir() == tmp_path / "cache" and (tmp_path / "cache").is_dir()


def test_unwritable_cache_dir_is_explained(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("DLARRAY_CACHE_DIR", str(blocker / "sub"))
    with pytest.raises(OSError, match="cannot create its cache folder .*DLARRAY_CACHE_DIR"):
        _cache.cache_dir()


def test_keys_depend_on_every_part():
    base = _cache.make_key("src", ["-O2"], {"arch": "sm_90"})
    assert base == _cache.make_key("src", ["-O2"], {"arch": "sm_90"})
    assert base != _cache.make_key("src ", ["-O2"], {"arch": "sm_90"})
    assert base != _cache.make_key("src", ["-O3"], {"arch": "sm_90"})
    assert base != _cache.make_key("src", ["-O2"], {"arch": "sm_80"})
    assert _cache.make_key("ab", "c") != _cache.make_key("a", "bc")  # parts are delimited


def test_store_and_verify(tmp_path):
    d = _cache.entry_dir("ns", "k1")
    dest = _cache.store_bytes(d / "blob.bin", b"hello" * 1000)
    assert _cache.load_bytes(dest) == b"hello" * 1000
    assert not [p for p in d.iterdir() if ".tmp" in p.name]  # no temporary left behind


@pytest.mark.parametrize("damage", ["truncate", "flip", "manifest", "no_manifest"])
def test_damaged_entries_are_dropped(damage):
    d = _cache.entry_dir("ns", "k2")
    dest = _cache.store_bytes(d / "lib.so", bytes(range(256)) * 64)
    manifest = dest.with_name(dest.name + ".sha256")
    if damage == "truncate":
        dest.write_bytes(dest.read_bytes()[:100])
    elif damage == "flip":
        data = bytearray(dest.read_bytes())
        data[77] ^= 1
        dest.write_bytes(bytes(data))
    elif damage == "manifest":
        manifest.write_text("0" * 64)
    else:
        manifest.unlink()
    assert _cache.verified_file(dest) is None
    assert not dest.exists() and not manifest.exists()


def _builder(args):
    root, n = args
    os.environ["DLARRAY_CACHE_DIR"] = root
    d = _cache.entry_dir("ns", "shared")
    with _cache.locked(d):
        target = d / "out.bin"
        if _cache.verified_file(target) is None:
            (d / "builds").open("a").write("x")
            _cache.store_bytes(target, b"result" * 10000)
    return _cache.load_bytes(d / "out.bin") == b"result" * 10000


def test_processes_share_an_entry_and_build_it_once(tmp_path):
    root = str(tmp_path / "cache")
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        assert all(pool.map(_builder, [(root, i) for i in range(8)]))
    assert (tmp_path / "cache" / "ns" / "shared" / "builds").read_text() == "x"


def test_read_whole_reads_every_byte_or_none(tmp_path):
    from dlarray import _cache
    for size in (0, 1, 4095, 4096, (1 << 20) + 3):
        data = bytes(range(256)) * (size // 256) + bytes(size % 256)
        path = tmp_path / ("f%d" % size)
        path.write_bytes(data)
        assert _cache.read_whole(str(path)) == data
    assert _cache.read_whole(str(tmp_path / "missing")) is None
    assert _cache.read_whole(str(tmp_path)) is None  # a folder
