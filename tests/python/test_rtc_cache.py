"""dlarray.rtc's caches, without a GPU: one compile per key and process, the on-disk entries
(keys, atomic writes, checksums, corrupt or truncated files rebuilt), DLARRAY_RTC_CACHE=0, an
unusable cache folder, and processes compiling the same kernel at once."""
import hashlib
import os
import subprocess
import sys

import pytest

import dlarray
import dlarray._rtc_build as build
import dlarray.rtc as rtc
from rtc_util import ADD, needs_nvrtc, rtc_cache  # noqa: F401

pytestmark = needs_nvrtc


@pytest.fixture
def counted(monkeypatch):
    """Counts the NVRTC compilations (calls into the plugin's compile)."""
    calls = []
    real = dlarray._core._rtc_compile

    def compile_(*args):
        calls.append(args[1])
        return real(*args)
    monkeypatch.setattr(dlarray._core, "_rtc_compile", compile_)
    return calls


def unique_add(tag):
    """ADD with a comment that makes a new cache key."""
    return ADD + "// %s\n" % tag


def entry_of(source, name="add", arch=90, options=()):
    key = build.program_key(source, name, options, (), arch)
    return build._cache.cache_dir() / "rtc" / key


def test_one_compile_per_key_in_a_process(counted):
    source = unique_add("memory")
    first = rtc.RawKernel(source, "add").compile(arch=90)
    again = rtc.RawKernel(source, "add").compile(arch=90)
    assert again == first and len(counted) == 1
    rtc.RawKernel(source, "add").compile(arch=80)
    assert len(counted) == 2  # another architecture, another program


def test_the_disk_cache_serves_a_new_process(counted, rtc_cache):
    source = unique_add("disk")
    code = rtc.RawKernel(source, "add").compile(arch=90)
    entry = entry_of(source)
    assert entry.parent.parent == rtc_cache
    assert sorted(p.name for p in entry.iterdir()) == [".lock", "program.bin",
                                                       "program.bin.sha256"]
    rtc.clear_memory_cache()  # as a new process would start
    assert rtc.RawKernel(source, "add").compile(arch=90) == code
    assert len(counted) == 1


def test_keys_cover_source_options_architecture_names_and_nvrtc(monkeypatch):
    base = build.program_key(ADD, "add", (), (), 90)
    assert base == build.program_key(ADD, "add", (), (), 90)
    others = {build.program_key(ADD + " ", "add", (), (), 90),
              build.program_key(ADD, "add", ("-use_fast_math",), (), 90),
              build.program_key(ADD, "add", (), (), 80),
              build.program_key(ADD, "add", (), ("add",), 90),
              build.program_key(ADD, "other", (), (), 90)}
    assert base not in others and len(others) == 5
    newer = dict(build.status(), nvrtc_version=(99, 9))
    monkeypatch.setattr(build, "_status", [newer])
    assert build.program_key(ADD, "add", (), (), 90) != base


def test_the_key_is_known_before_compiling_not_taken_from_the_ptx(counted):
    # NVRTC 12+ may salt PTX with random names: a key from the output would never hit again.
    newest = build.status()["archs"][-1]
    source = unique_add("ptx")
    key = build.program_key(source, "add", (), (), newest + 100)
    ptx = rtc.RawKernel(source, "add").compile(arch=newest + 100)
    assert ptx.startswith(b"//") and entry_of(source, arch=newest + 100).name == key
    rtc.clear_memory_cache()
    assert rtc.RawKernel(source, "add").compile(arch=newest + 100) == ptx
    assert len(counted) == 1


def damage_truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])


def damage_flip(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def damage_format(path):
    # A valid checksum over a file of another layout (an older dlarray, say).
    path.write_bytes(b'{"format": 0}\nnot code')
    path.with_name(path.name + ".sha256").write_text(hashlib.sha256(path.read_bytes()).hexdigest())


def damage_manifest(path):
    path.with_name(path.name + ".sha256").unlink()


@pytest.mark.parametrize("damage", [damage_truncate, damage_flip, damage_format, damage_manifest])
def test_a_damaged_entry_is_ignored_and_rebuilt(counted, damage):
    source = unique_add(damage.__name__)
    code = rtc.RawKernel(source, "add").compile(arch=90)
    path = entry_of(source) / "program.bin"
    damage(path)
    rtc.clear_memory_cache()
    assert rtc.RawKernel(source, "add").compile(arch=90) == code
    assert len(counted) == 2  # compiled again...
    rtc.clear_memory_cache()
    assert rtc.RawKernel(source, "add").compile(arch=90) == code
    assert len(counted) == 2  # ...and stored again, intact
    assert not [p for p in path.parent.iterdir() if ".tmp" in p.name]


def test_rtc_cache_0_turns_the_disk_cache_off(counted, monkeypatch):
    monkeypatch.setenv("DLARRAY_RTC_CACHE", "0")
    source = unique_add("off")
    code = rtc.RawKernel(source, "add").compile(arch=90)
    assert not entry_of(source).exists()
    assert rtc.RawKernel(source, "add").compile(arch=90) == code and len(counted) == 1
    rtc.clear_memory_cache()
    rtc.RawKernel(source, "add").compile(arch=90)
    assert len(counted) == 2


def test_an_unusable_cache_folder_does_not_stop_compiling(monkeypatch, tmp_path):
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    monkeypatch.setenv("DLARRAY_CACHE_DIR", str(not_a_folder))
    code = rtc.RawKernel(unique_add("unusable"), "add").compile(arch=90)
    assert code[:4] == b"\x7fELF"


CONCURRENT = r"""
import hashlib, sys
import dlarray.rtc as rtc
source = sys.argv[1]
code = rtc.RawKernel(source, "add").compile(arch=90)
print(hashlib.sha256(code).hexdigest())
"""


def test_processes_compiling_the_same_kernel_share_one_entry(tmp_path):
    source = unique_add("concurrent %s" % os.getpid())
    env = dict(os.environ, DLARRAY_CACHE_DIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", CONCURRENT, source], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    results = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in results]
    assert len({out.strip() for out, _ in results}) == 1
    entries = list((tmp_path / "rtc").iterdir())
    assert len(entries) == 1
    files = sorted(p.name for p in entries[0].iterdir())
    assert files == [".lock", "program.bin", "program.bin.sha256"], files
    data = (entries[0] / "program.bin").read_bytes()
    assert hashlib.sha256(data).hexdigest() == (entries[0] / "program.bin.sha256").read_text()
