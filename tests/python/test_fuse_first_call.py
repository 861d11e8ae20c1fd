"""Issue 23's host costs of dlarray.fuse on a GPU: the cached call checked and launched in C++
(``_core._FuseLauncher`` over the rtc extension: CUDA here; skipped without a GPU), and the
first call with a warm disk cache, which reads its program without loading NVRTC (a process that
compiled once records NVRTC's version and library for the next ones) and whose CPU key needs no
``uname`` process."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dlarray
from dlarray import _core, _fuse, _fuse_backends, _fuse_cuda, _rtc_build

GPUS = [c for c in dlarray.devices() if c.device_type == 2]
needs_gpu = pytest.mark.skipif(not GPUS, reason="needs a CUDA GPU")
needs_nvrtc = pytest.mark.skipif(bool(_rtc_build.status()["compile"]),
                                 reason="needs NVRTC (dlarray.rtc compile)")


def _axpy(a, b, c, d, e):
    return a * b + c * d - e


def _python_path(fn, xs, monkeypatch):
    """fn's first call without a launcher: traced, compiled and launched by Python (a first
    call otherwise launches through the launcher it makes, as the next calls do)."""
    fused = dlarray.fuse(fn)
    with monkeypatch.context() as m:
        m.setattr(_fuse, "_fast_for", lambda *args: None)
        out = fused(*xs).asnumpy()
    assert fused._fast is None
    return out


def _inputs(ctx, shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    host = [(rng.standard_normal(shape) * 3).astype(dtype) for _ in range(5)]
    return host, [dlarray.asarray(h, device=ctx) for h in host]


@needs_gpu
@pytest.mark.parametrize("shape", [(1,), (7, 3), (257, 1023), (1 << 17,)],
                         ids=["one", "odd", "blocks", "past64Ki"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32],
                         ids=lambda d: np.dtype(d).name)
def test_cuda_cached_call_runs_in_cpp_and_equals_the_python_path(shape, dtype, monkeypatch):
    ctx = GPUS[0]
    host, xs = _inputs(ctx, shape, dtype)
    first = _python_path(_axpy, xs, monkeypatch)
    fused = dlarray.fuse(_axpy)
    np.testing.assert_array_equal(fused(*xs).asnumpy(), first)  # launched by the launcher
    assert isinstance(fused._fast, _core._FuseLauncher)  # the next call's C++ launcher
    assert fused._fast(*xs) is not None  # it takes the call
    second = fused(*xs)
    assert second.ctx == ctx and second.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(second.asnumpy(), first)
    np.testing.assert_array_equal(first, _axpy(*host))


@needs_gpu
@pytest.mark.parametrize("shape,axis,keepdims", [((1,), None, False), ((7, 3), 0, False),
                                                 ((257, 1023), None, True), ((257, 1023), 0, False),
                                                 ((257, 1023), 1, False), ((3, 1 << 19), 1, True)],
                         ids=["one", "odd", "all-keepdims", "axis0", "axis1", "long-rows"])
@pytest.mark.parametrize("name,dtype", [("sum", np.float32), ("max", np.int64),
                                        ("sum", np.int32)], ids=["sum-f32", "max-i64", "sum-i32"])
def test_cuda_cached_reduction_runs_in_cpp_and_equals_the_python_path(shape, axis, keepdims,
                                                                       name, dtype, monkeypatch):
    """A trailing sum or max folded in one launch: the launcher takes the next calls (scratch of
    the partial totals where the range is split), bit for bit the Python path's result."""
    ctx = GPUS[0]
    host, xs = _inputs(ctx, shape, dtype)

    def f(a, b, c, d, e):
        return getattr(dlarray, name)(_axpy(a, b, c, d, e), axis=axis, keepdims=keepdims)
    first = _python_path(f, xs, monkeypatch)
    fused = dlarray.fuse(f)
    for _ in range(3):  # the counters of the last block's fold are reset each launch
        got = fused(*xs)  # the first through the launcher too
        assert isinstance(fused._fast, _core._FuseLauncher)
        assert got.dtype == first.dtype and got.shape == first.shape
        np.testing.assert_array_equal(got.asnumpy(), first)
    wide = _axpy(*[h.astype(np.float64) if dtype == np.float32 else h for h in host])
    want = getattr(np, name)(wide, axis=axis, keepdims=keepdims)
    if dtype == np.float32:  # within the error bound of summation over n terms
        n = wide.size // want.size
        bound = 2 * n * np.finfo(np.float32).eps * np.abs(wide).sum(axis=axis, keepdims=keepdims)
        assert np.all(np.abs(first - want) <= bound + 1e-30)
    else:
        np.testing.assert_array_equal(first, want.astype(first.dtype))


@needs_gpu
def test_cuda_reductions_left_to_python_make_no_launcher():
    """mean divides after the kernel: the Python path runs it."""
    ctx = GPUS[0]
    _, xs = _inputs(ctx, (33, 65))
    mean = dlarray.fuse(lambda a, b, c, d, e: dlarray.mean(_axpy(a, b, c, d, e), axis=0))
    mean(*xs)
    assert mean._fast is None


@needs_gpu
def test_cuda_cached_call_hands_other_calls_back():
    ctx = GPUS[0]
    host, xs = _inputs(ctx, (33, 65))
    fused = dlarray.fuse(_axpy)
    fused(*xs)
    launcher = fused._fast
    other_host, other = _inputs(ctx, (65, 33), seed=1)
    assert launcher(*other) is None  # another shape
    np.testing.assert_array_equal(fused(*other).asnumpy(), _axpy(*other_host))
    wide = dlarray.asarray(np.ones((33, 130), np.float32), device=ctx)
    view = wide[:, ::2]
    assert launcher(view, *xs[1:]) is None  # a view
    assert launcher(*xs[:4]) is None  # another count
    cpu = [dlarray.asarray(h) for h in host]
    assert launcher(*cpu) is None  # another device
    np.testing.assert_array_equal(fused(*cpu).asnumpy(), _axpy(*host))


@needs_gpu
def test_cuda_cached_call_is_recorded_in_a_cuda_graph():
    from dlarray import autodiff as ad
    ctx = GPUS[0]
    host, xs = _inputs(ctx, (129, 257))
    fused = dlarray.fuse(_axpy)
    out = dlarray.empty((129, 257), ctx)
    fused(*xs)  # traced, compiled, loaded; the launcher is made

    def step():
        dlarray.ops.copy(fused(*xs), out)  # the launcher's result, copied where the graph writes
    step()
    graph = ad.record_cuda_graph(step, ctx)
    out[:] = np.zeros((129, 257), np.float32)
    graph.launch()
    np.testing.assert_array_equal(out.asnumpy(), _axpy(*host))


_WARM = textwrap.dedent("""
    import json, sys, numpy as np
    from dlarray import _fuse_codegen, _fuse_cuda, _rtc_build
    import dlarray
    fn = dlarray.fuse(lambda a, b, c, d, e: a * b + c * d - e)
    xs = [dlarray.asarray(np.ones((4, 4), np.float32)) for _ in range(5)]
    plan = fn._plan(tuple(xs), xs, xs[0].ctx)
    source = _fuse_codegen.generate(plan.trace, plan.inputs, plan.layout, plan.ndim, "cuda")
    program = _rtc_build.compile_program(source, "dl_fused", _fuse_cuda.cuda_options(),
                                         arch=90)
    maps = open("/proc/self/maps").read()
    print(json.dumps({"nvrtc_loaded": "libnvrtc" in maps, "key": program.key,
                      "options": list(_fuse_cuda.cuda_options())}))
""")


def _warm_run(cache, **env):
    done = subprocess.run([sys.executable, "-c", _WARM], capture_output=True, text=True,
                          env=dict(os.environ, DLARRAY_CACHE_DIR=str(cache),
                                   DLARRAY_FUSE="interpret", **env))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def _nvrtc_memos(cache):
    return sorted((cache / "tools").glob("nvrtc-*"))


def _memo_record(path):
    """The JSON of an NVRTC memo record (_cache.store_record: its checksum, then the data)."""
    return json.loads(path.read_bytes().split(b"\n", 1)[1])


@needs_nvrtc
@pytest.mark.skipif(not pathlib.Path("/proc/self/maps").exists(), reason="needs /proc")
def test_a_warm_first_call_reads_its_program_without_loading_nvrtc(tmp_path):
    cold = _warm_run(tmp_path)
    assert cold["nvrtc_loaded"]  # it compiled
    warm = _warm_run(tmp_path)
    assert not warm["nvrtc_loaded"], "the program came from the disk cache: NVRTC not needed"
    assert warm["key"] == cold["key"] and warm["options"] == cold["options"]
    # The memo holds what NVRTC itself says (status()): it only saves the load.
    version = _rtc_build.status()["nvrtc_version"]
    memo = [_memo_record(p) for p in _nvrtc_memos(tmp_path)]
    assert len(memo) == 1 and tuple(memo[0]["version"]) == tuple(version)
    assert memo[0]["library"] == _rtc_build.status()["nvrtc_library"]


@needs_nvrtc
def test_the_nvrtc_memo_is_not_trusted_when_its_library_changed(tmp_path, monkeypatch):
    from dlarray import _cache
    _warm_run(tmp_path)
    (path,) = _nvrtc_memos(tmp_path)
    memo = _memo_record(path)
    memo["stat"][0] += 1  # as if the library file had been replaced
    memo["version"] = [1, 0]  # what a stale memo would claim
    monkeypatch.setenv("DLARRAY_CACHE_DIR", str(tmp_path))
    _cache.store_record("tools", path.name, json.dumps(memo).encode())  # valid, but stale
    again = _warm_run(tmp_path)
    assert again["nvrtc_loaded"]  # NVRTC itself was asked
    assert _memo_record(path)["version"] == list(_rtc_build.status()["nvrtc_version"])
    # another DLARRAY_NVRTC (what chooses the library) is another memo
    other = _warm_run(tmp_path, DLARRAY_NVRTC=_rtc_build.status()["nvrtc_library"])
    assert other["nvrtc_loaded"] and other["key"] == again["key"]
    assert len(_nvrtc_memos(tmp_path)) == 2


def test_cpu_identity_runs_no_process(monkeypatch):
    """platform.processor() runs `uname -p`: with /proc/cpuinfo it is not asked."""
    if not pathlib.Path("/proc/cpuinfo").exists():
        pytest.skip("needs /proc/cpuinfo")
    import platform

    def no_process():
        raise AssertionError("platform.processor() was called")
    monkeypatch.setattr(platform, "processor", no_process)
    monkeypatch.setattr(_fuse_backends, "_cpu_id", [])
    identity = _fuse_backends._cpu_identity()
    assert platform.machine() in identity and "flags" in identity


def test_the_tracer_shortcuts_agree_with_the_unfused_rules():
    """A dtype with itself promotes to itself, and shapes that are equal or scalars broadcast to
    themselves, without asking NumPy: as _operators._promote and np.broadcast_shapes say."""
    from dlarray import _fuse_trace, _operators
    dtypes = [np.dtype(d) for d in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                    np.uint32, np.int64, np.uint64, np.float16, np.float32,
                                    np.float64, np.complex64, np.complex128)]
    try:
        import ml_dtypes
        dtypes.append(np.dtype(ml_dtypes.bfloat16))
    except ImportError:
        pass
    for a in dtypes:
        for b in dtypes:
            assert _fuse_trace._promote(a, b) == _operators._promote(a, b), (a, b)
    for shapes in [((3, 4), (3, 4)), ((3, 4), ()), ((), ()), ((), (5,), ()), ((0, 2), (0, 2)),
                   ((3, 1), (1, 4)), ((2, 3), (3,)), ((1,), ())]:
        assert _fuse_trace._shape("f", *shapes) == np.broadcast_shapes(*shapes), shapes
    with pytest.raises(ValueError, match="do not broadcast"):
        _fuse_trace._shape("f", (3, 4), (4, 3))
