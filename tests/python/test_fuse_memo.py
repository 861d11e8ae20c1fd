"""Issue 23's warm first call: dlarray.fuse's plan memo (``_fuse_memo``) gives a later process the
generated code and the CPU library of a plan key without generating, hashing or compiling again,
and never a wrong one: each dtype, broadcast pattern, expression and reduction has its own record,
and a corrupt record or library, a changed compiler or a changed generator is a miss that
generates (and where needed compiles) again. "A later process" is this one with its memory of
plans and kernels forgotten, and twice a real child process."""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dlarray
from dlarray import _fuse, _fuse_backends, _fuse_codegen, _fuse_memo, _fuse_reduce

pytestmark = pytest.mark.skipif(_fuse_backends.toolchain() is None,
                                reason="needs a C++ compiler")
GPUS = [c for c in dlarray.devices() if c.device_type == 2]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty DLARRAY_CACHE_DIR and a process memory without plans or kernels."""
    root = tmp_path / "cache"
    monkeypatch.setenv("DLARRAY_CACHE_DIR", str(root))
    forget(monkeypatch)
    return root


def forget(monkeypatch):
    """What a new process would not know: kernels built, plan entries, generator identity."""
    monkeypatch.setattr(_fuse, "_kernels", {})
    monkeypatch.setattr(_fuse_memo, "_entries", {})
    monkeypatch.setattr(_fuse_memo, "_generator", [])


class Counter:
    """Counts the calls of a module function (the code generators, the library build)."""

    def __init__(self, monkeypatch, module, name):
        self.calls, real = 0, getattr(module, name)

        def counted(*args, **kwargs):
            self.calls += 1
            return real(*args, **kwargs)
        monkeypatch.setattr(module, name, counted)


def generators(monkeypatch):
    return (Counter(monkeypatch, _fuse_codegen, "generate"),
            Counter(monkeypatch, _fuse_reduce, "_source"))


def records(root):
    return sorted((root / "fuse_plan").glob("[0-9a-f]*"))


def _values(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return rng.integers(0, 50, shape).astype(dtype)
    return (rng.standard_normal(shape) * 3).astype(dtype)


# (name, function, NumPy's, shapes of the arguments)
CASES = [
    ("axpy", lambda a, b, c: a * b + c, lambda a, b, c: a * b + c, [(7, 3)] * 3),
    ("axpy-row", lambda a, b, c: a * b + c, lambda a, b, c: a * b + c, [(7, 3), (3,), (7, 3)]),
    ("axpy-column", lambda a, b, c: a * b + c, lambda a, b, c: a * b + c,
     [(7, 3), (7, 1), (1,)]),
    ("axmy", lambda a, b, c: a * b - c, lambda a, b, c: a * b - c, [(7, 3)] * 3),
    ("one", lambda a, b, c: a * b + c, lambda a, b, c: a * b + c, [(1,)] * 3),
    ("empty", lambda a, b, c: a * b + c, lambda a, b, c: a * b + c, [(0, 3)] * 3),
    ("odd-3d", lambda a, b, c: a - b * c, lambda a, b, c: a - b * c, [(5, 1, 9), (4, 1), (9,)]),
    ("max", lambda a, b, c: dlarray.maximum(a, b) + c, lambda a, b, c: np.maximum(a, b) + c,
     [(33,)] * 3),
]
REDUCTIONS = [  # NumPy's sums of small integers are in int64 and uint64, as dlarray's
    ("sum-all", lambda a, b, c: dlarray.sum(a * b + c), lambda a, b, c: (a * b + c).sum(),
     [(7, 3)] * 3),
    ("sum-0", lambda a, b, c: dlarray.sum(a * b + c, axis=0),
     lambda a, b, c: (a * b + c).sum(axis=0), [(7, 3)] * 3),
    ("sum-1-keep", lambda a, b, c: dlarray.sum(a * b + c, axis=1, keepdims=True),
     lambda a, b, c: (a * b + c).sum(axis=1, keepdims=True), [(7, 3)] * 3),
    ("sum-row", lambda a, b, c: dlarray.sum(a * b + c, axis=1),
     lambda a, b, c: (a * b + c).sum(axis=1), [(7, 3), (3,), (1,)]),
    ("max-0", lambda a, b, c: dlarray.max(a * b + c, axis=0),
     lambda a, b, c: (a * b + c).max(axis=0), [(5, 3, 2)] * 3),
    ("min-one", lambda a, b, c: dlarray.min(a * b + c), lambda a, b, c: (a * b + c).min(),
     [(1,)] * 3),
]
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8]


def _run_all(rng_seed=0):
    """Every case on every dtype, each a new fused function, checked against NumPy."""
    rng = np.random.default_rng(rng_seed)
    for dtype in DTYPES:
        for name, fn, reference, shapes in CASES + REDUCTIONS:
            host = [_values(rng, dtype, s) for s in shapes]
            got = dlarray.fuse(fn)(*[dlarray.asarray(h) for h in host]).asnumpy()
            want = np.asarray(reference(*host))
            if np.dtype(dtype).kind == "f" and name.startswith("sum"):  # another order
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=name)
            else:
                np.testing.assert_array_equal(got, want, err_msg=name)
            assert got.dtype == want.dtype and got.shape == want.shape, (name, dtype)


def test_a_later_process_generates_nothing_and_gets_the_same_results(cache, monkeypatch):
    _run_all()
    count = len(records(cache))
    kinds = len(DTYPES) * (len(CASES) + len(REDUCTIONS))
    # one record a plan key: empty arrays reach no kernel, "one" and "axpy" differ in nothing
    assert kinds - 2 * len(DTYPES) <= count <= kinds
    forget(monkeypatch)
    elementwise, reductions = generators(monkeypatch)
    built = Counter(monkeypatch, _fuse_backends, "_build_library")
    _run_all(rng_seed=1)  # other values, the same plan keys
    assert (elementwise.calls, reductions.calls, built.calls) == (0, 0, 0)
    assert len(records(cache)) == count


def test_each_dtype_pattern_and_expression_has_its_own_kernel(cache, monkeypatch):
    """Records made by other plans are never taken for this one: an expression, a dtype, a
    broadcast pattern or a reduction axis that differs gets generated code of its own."""
    rng = np.random.default_rng(2)
    sources = {}
    for dtype in (np.float32, np.int32):
        for name, fn, _, shapes in CASES[:4] + REDUCTIONS[:3]:
            xs = [dlarray.asarray(_values(rng, dtype, s)) for s in shapes]
            source = dlarray.fuse(fn).explain(*xs)["source"]
            assert source not in sources.values(), (name, dtype)
            sources[(name, np.dtype(dtype).name)] = source
    forget(monkeypatch)
    for (name, dtype), source in sources.items():
        fn, shapes = {c[0]: (c[1], c[3]) for c in CASES + REDUCTIONS}[name]
        xs = [dlarray.asarray(_values(rng, dtype, s)) for s in shapes]
        assert dlarray.fuse(fn).explain(*xs)["source"] == source, (name, dtype)


def _library(root):
    (record,) = records(root)
    entry = _fuse_memo.parse(record.name, record.read_bytes().split(b"\n", 1)[1])
    return root / "fuse_cpu" / entry.library[0] / "fused.so"


def _axpy_once(seed=3):
    rng = np.random.default_rng(seed)
    host = [_values(rng, np.float32, (9, 4)) for _ in range(3)]
    got = dlarray.fuse(lambda a, b, c: a * b + c)(*[dlarray.asarray(h) for h in host])
    np.testing.assert_array_equal(got.asnumpy(), host[0] * host[1] + host[2])


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty"])
def test_a_corrupt_record_is_generated_again(cache, monkeypatch, damage):
    _axpy_once()
    (record,) = records(cache)
    data = bytearray(record.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 1
    record.write_bytes(bytes(data[:len(data) // 2] if damage == "truncate" else
                             b"" if damage == "empty" else data))
    forget(monkeypatch)
    elementwise, _ = generators(monkeypatch)
    _axpy_once(seed=4)
    assert elementwise.calls == 1
    (again,) = records(cache)  # rewritten whole
    assert _fuse_memo._load(again.name, "cpp") is not None


def test_a_new_generator_generates_again(cache, monkeypatch):
    _axpy_once()
    (old,) = records(cache)
    forget(monkeypatch)
    monkeypatch.setattr(_fuse_memo, "GENERATOR", _fuse_memo.GENERATOR + 1)
    elementwise, _ = generators(monkeypatch)
    _axpy_once(seed=6)
    assert elementwise.calls == 1
    assert len(records(cache)) == 2 and old in records(cache)


def test_a_changed_generator_file_changes_the_key(tmp_path, monkeypatch):
    """The files that write the code are part of the key: an edit without GENERATOR bumped."""
    package = pathlib.Path(_fuse_memo.__file__).parent
    for name in _fuse_memo._FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(package / name, tmp_path / name)
    monkeypatch.setattr(_fuse_memo, "__file__", str(tmp_path / "_fuse_memo.py"))
    monkeypatch.setattr(_fuse_memo, "_generator", [])
    first = _fuse_memo.generator_identity()
    assert first[0] == _fuse_memo.GENERATOR and len(first) == 1 + len(_fuse_memo._FILES)
    with open(tmp_path / "_fuse_codegen.py", "a") as f:
        f.write("# edited\n")
    monkeypatch.setattr(_fuse_memo, "_generator", [])
    assert _fuse_memo.generator_identity() != first


def _compiler(path: pathlib.Path, real: str, version: str) -> str:
    """A C++ compiler at ``path``: ``real``, saying ``version`` to --version."""
    path.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo '%s'; exit 0; fi\n"
                    "exec %s \"$@\"\n" % (version, real))
    path.chmod(0o755)
    return str(path)


def test_a_changed_compiler_builds_again(cache, tmp_path, monkeypatch):
    """The same $CXX path with another executable behind it (an update): the record's compiler
    no longer matches, so the code goes to the full path, whose library key has the new
    compiler's version: built again, never the old library."""
    from dlarray import cpp_extension
    real = _fuse_backends._compiler()[0]
    cxx = tmp_path / "bin" / "cxx"
    cxx.parent.mkdir()
    monkeypatch.setenv("CXX", _compiler(cxx, real, "fake compiler 1"))
    _axpy_once()
    old = _library(cache)
    forget(monkeypatch)
    _compiler(cxx, real, "fake compiler 2, a longer version line")
    os.utime(cxx, ns=(1, 1))  # another size and time
    # what a process started now would not remember either
    monkeypatch.setattr(_fuse_backends, "_toolchains", {})
    cpp_extension._version.cache_clear()
    built = Counter(monkeypatch, _fuse_backends, "_build_library")
    _axpy_once(seed=7)
    assert built.calls == 1
    new = _library(cache)
    assert new != old and new.exists() and old.exists()


_CHILD = textwrap.dedent("""
    import json, sys, numpy as np
    import dlarray
    from dlarray import _fuse_backends, _fuse_codegen, _fuse_reduce, _rtc_build
    calls = {"generated": 0, "built": 0, "compiled": 0}  # compiled: rtc asked for a program

    def counting(module, name, what):
        real = getattr(module, name)

        def counted(*args, **kwargs):
            calls[what] += 1
            return real(*args, **kwargs)
        setattr(module, name, counted)
    counting(_fuse_codegen, "generate", "generated")
    counting(_fuse_reduce, "_source", "generated")
    counting(_fuse_backends, "_build_library", "built")
    counting(_rtc_build, "compile_program", "compiled")  # (CUDA: NVRTC or rtc's disk cache)
    rng = np.random.default_rng(int(sys.argv[1]))
    host = [rng.standard_normal((33, 5)).astype(np.float32) for _ in range(3)]
    xs = [dlarray.asarray(h, device=dlarray.device(sys.argv[2])) for h in host]
    value = dlarray.fuse(lambda a, b, c: a * b - c)(*xs).asnumpy()
    total = dlarray.fuse(lambda a, b, c: dlarray.sum(a * b - c, axis=0))(*xs).asnumpy()
    np.testing.assert_array_equal(value, host[0] * host[1] - host[2])
    np.testing.assert_allclose(total, (host[0] * host[1] - host[2]).sum(axis=0), rtol=1e-5,
                               atol=1e-5)
    calls["version_asked"] = "dlarray.cpp_extension" in sys.modules
    calls["compiled"] = calls["compiled"] > 0
    print(json.dumps(calls))
""")


def _child(cache, seed, device="cpu"):
    done = subprocess.run([sys.executable, "-c", _CHILD, str(seed), device], capture_output=True,
                          text=True, env=dict(os.environ, DLARRAY_CACHE_DIR=str(cache)))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_a_new_process_with_a_warm_cache_generates_and_asks_nothing(cache):
    """In a child process: the second one with the same cache neither generates code nor asks
    the compiler its version (cpp_extension, which does, is not even imported)."""
    assert _child(cache, 0) == {"generated": 2, "built": 2, "compiled": False,
                                "version_asked": True}
    assert _child(cache, 1) == {"generated": 0, "built": 0, "compiled": False,
                                "version_asked": False}


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_a_corrupt_library_is_never_loaded(cache, damage):
    """A library damaged after its record was written (in place, as a disk would): the next
    process finds its digest changed, takes the full path, where the library cache's manifest
    finds it corrupt too, and rebuilds it; its results are right (the child checks them)."""
    _child(cache, 0)
    libraries = sorted(cache.glob("fuse_cpu/*/fused.so"))
    assert len(libraries) == 2
    for library in libraries:
        data = library.read_bytes()
        if damage == "flip":
            data = data[:200] + bytes([data[200] ^ 0xFF]) + data[201:]
        library.write_bytes(data if damage == "flip" else data[:len(data) // 3])
    assert _child(cache, 1) == {"generated": 0, "built": 2, "compiled": False,
                                "version_asked": True}
    assert _child(cache, 2) == {"generated": 0, "built": 0, "compiled": False,
                                "version_asked": False}


@pytest.mark.skipif(not GPUS, reason="needs a CUDA GPU")
def test_a_new_process_on_cuda_loads_the_recorded_code(cache):
    """On CUDA the memo gives the source and the code compiled from it: the second child
    neither generates nor compiles (not even a lookup in rtc's program cache) and gets NumPy's
    values (the child checks them)."""
    device = "cuda:%d" % GPUS[0].device_id
    first = _child(cache, 0, device)
    assert (first["generated"], first["compiled"]) == (2, True)
    assert len(list((cache / "fuse_cuda").iterdir())) == 2
    assert _child(cache, 1, device) == {"generated": 0, "built": 0, "compiled": False,
                                        "version_asked": False}


def _damage_cuda_records(cache, damage):
    for record in sorted((cache / "fuse_cuda").iterdir()):
        data = record.read_bytes()
        if damage == "flip":  # a byte of the code: the record's checksum no longer holds
            data = data[:-40] + bytes([data[-40] ^ 0xFF]) + data[-39:]
        elif damage == "truncate":
            data = data[:len(data) // 2]
        else:  # a record of another NVRTC, with a checksum that holds
            digest, body = data.split(b"\n", 1)
            head, code = body.split(b"\n", 1)
            meta = json.loads(head)
            meta["nvrtc"] = [[1, 0], "libnvrtc.so.1"]
            body = json.dumps(meta).encode() + b"\n" + code
            import hashlib
            data = hashlib.sha256(body).hexdigest().encode() + b"\n" + body
        record.write_bytes(data)


@pytest.mark.skipif(not GPUS, reason="needs a CUDA GPU")
@pytest.mark.parametrize("damage", ["flip", "truncate", "other-nvrtc"])
def test_a_damaged_or_foreign_cuda_record_is_compiled_again(cache, damage):
    """A CUDA record that fails its checksum or names another NVRTC is not loaded: the next
    process compiles (rtc's program cache), gets the right values and rewrites the record, so
    the one after loads it again."""
    device = "cuda:%d" % GPUS[0].device_id
    _child(cache, 0, device)
    _damage_cuda_records(cache, damage)
    assert _child(cache, 1, device) == {"generated": 0, "built": 0, "compiled": True,
                                        "version_asked": False}
    assert _child(cache, 2, device)["compiled"] is False


@pytest.mark.parametrize("library,compiler", [(None, None), (("ab" * 16, "cd" * 32), None),
                                              (("ab" * 16, "cd" * 32), ["/usr/bin/c++", 5, 7])])
def test_a_record_reads_back_as_written(cache, library, compiler):
    """Entry.save's NUL-separated fields read back by parse; a record of another shape (the
    JSON of GENERATOR 1, a missing field) is a miss, not an error."""
    entry = _fuse_memo.Entry("k" * 32, "void f() {}\n// x = \"y\"\n", compiler, library)
    entry.save()
    data = (cache / "fuse_plan" / entry.key).read_bytes().split(b"\n", 1)[1]
    again = _fuse_memo.parse(entry.key, data)
    assert (again.source, again.compiler, again.library) == (entry.source, compiler, library)
    assert _fuse_memo.parse(entry.key, json.dumps({"source": "x"}).encode()) is None
    assert _fuse_memo.parse(entry.key, data.rsplit(b"\0", 2)[0]) is None
    if compiler is not None:  # a size that is not a number
        assert _fuse_memo.parse(entry.key, data.replace(b"\x005\x00", b"\x00five\x00")) is None


def test_a_key_prefix_gives_make_key():
    from dlarray import _cache
    prefix = _cache.key_prefix(b"first", "second")
    assert _cache.key_with(prefix, b"third") == _cache.make_key(b"first", "second", b"third")
    assert _cache.key_with(prefix, b"other") == _cache.make_key(b"first", "second", b"other")
    assert _cache.key_with(prefix) == _cache.make_key(b"first", "second")  # left as it was


def test_the_library_is_loaded_without_ctypes_cdll(cache, monkeypatch):
    """The generated library is loaded by _core (ctypes.CDLL made a class per library); its
    kernel is still a ctypes function for the thread pool's ranges, with its address."""
    import ctypes

    def no_cdll(*args, **kwargs):
        raise AssertionError("ctypes.CDLL was called")
    monkeypatch.setattr(ctypes, "CDLL", no_cdll)
    _axpy_once()
    forget(monkeypatch)
    _axpy_once(seed=8)  # the record's library
    rng = np.random.default_rng(9)
    host = [_values(rng, np.float32, (300, 400)) for _ in range(3)]  # past 64Ki: the pool
    got = dlarray.fuse(lambda a, b, c: a * b + c)(*[dlarray.asarray(h) for h in host])
    np.testing.assert_array_equal(got.asnumpy(), host[0] * host[1] + host[2])


def test_loading_a_symbol_that_is_not_there_raises_oserror(cache):
    from dlarray import _core
    with pytest.raises(OSError, match="no-such.so"):
        _core._fuse_load_symbol(str(cache / "no-such.so"), "dl_fused")
    _axpy_once()
    library = _library(cache)
    with pytest.raises(OSError, match="not_a_kernel"):
        _core._fuse_load_symbol(str(library), "not_a_kernel")
    assert _core._fuse_load_symbol(str(library), "dl_fused") != 0
