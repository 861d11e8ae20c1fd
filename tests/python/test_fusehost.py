"""Issue 23's host side of fusion: ``dlarray.sgd_update`` (the SGD update of every parameter as
one generated kernel) equals the per-tensor ops bit for bit on every dtype they take and every
device (cpu and opencl:0 here; cuda where a GPU is), with its errors; and dlarray.fuse's C++
cache hit (``_core._FuseLauncher``) gives the Python path's results and hands every other call
back to it."""
import numpy as np
import pytest

import dlarray
from dlarray import _core, _fuse_cuda, _fuse_multi

FLOATS = [np.float32, np.float64]
OTHER = [np.float16, np.int32, np.int64, np.uint8]  # the per-tensor ops' other dtypes
SHAPES = [(1,), (7,), (255,), (257,), (3, 5, 7), (300, 301), (0,), ()]


def _values(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return rng.integers(0, 100, shape).astype(dtype)
    v = rng.standard_normal(shape) * 3
    if v.size >= 6:
        v.reshape(-1)[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40]
    return v.astype(dtype)


def _per_tensor(ctx, params, grads, lr):
    """The update as two ops per parameter, as examples/mnist.py ran it."""
    out = []
    for p, g in zip(params, grads):
        w, t = dlarray.asarray(p.copy(), device=ctx), dlarray.asarray(g.copy(), device=ctx)
        dlarray.ops.matrix_elementwise_multiply_by_const(t, -lr, t)
        dlarray.ops.matrix_elementwise_add(w, t, w)
        out.append(w.asnumpy())
    return out


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).tobytes()


@pytest.mark.parametrize("dtype", FLOATS + OTHER, ids=lambda d: np.dtype(d).name)
def test_sgd_update_equals_per_tensor_ops_bit_for_bit(ctx, dtype):
    rng = np.random.default_rng(0)
    params = [_values(rng, dtype, s) for s in SHAPES]
    grads = [_values(rng, dtype, s) for s in SHAPES]
    lr = 0.0137 if np.dtype(dtype).kind == "f" else 3
    want = _per_tensor(ctx, params, grads, lr)
    ws = [dlarray.asarray(p.copy(), device=ctx) for p in params]
    gs = [dlarray.asarray(g.copy(), device=ctx) for g in grads]
    dlarray.sgd_update(ws, gs, lr)
    for w, g, expected, g_host in zip(ws, gs, want, grads):
        assert _bits(w.asnumpy()) == _bits(expected)
        assert _bits(g.asnumpy()) == _bits(g_host)  # the gradients are only read
    if np.dtype(dtype) in _fuse_multi._CTYPES:  # generated code ran, not the per-tensor ops
        language = _fuse_multi._LANGUAGES[ctx.device_type]
        assert any(v is not None for k, v in _fuse_multi._kernels.items()
                   if k[0] == language and k[1] == _fuse_multi._CTYPES[np.dtype(dtype)]
                   and k[3:] == (ctx.device_type, ctx.device_id))


def test_sgd_update_many_pairs_and_large_arrays(ctx):
    # more pairs than one launch takes, and arrays the CPU splits over its threads
    rng = np.random.default_rng(1)
    shapes = [(k % 5 + 1, 3) for k in range(_fuse_multi._PAIRS + 3)] + [
        (_fuse_multi._PARALLEL_UPDATE_MIN - 70000 + 3,), (70001,)]
    params = [_values(rng, np.float32, s) for s in shapes]
    grads = [_values(rng, np.float32, s) for s in shapes]
    want = _per_tensor(ctx, params, grads, 0.5)
    ws = [dlarray.asarray(p.copy(), device=ctx) for p in params]
    dlarray.sgd_update(ws, [dlarray.asarray(g, device=ctx) for g in grads], 0.5)
    for w, expected in zip(ws, want):
        assert _bits(w.asnumpy()) == _bits(expected)


def test_sgd_update_runs_generated_code_on_cpu():
    # float32 and float64 on the CPU build a kernel (a compiler is present in the tests' image)
    w = dlarray.asarray(np.ones(4, np.float32))
    dlarray.sgd_update([w], [dlarray.asarray(np.ones(4, np.float32))], 0.25)
    key = ("cpp", "float", 0, 1, 0)
    assert _fuse_multi._kernels.get(key) is not None
    np.testing.assert_array_equal(w.asnumpy(), np.full(4, 0.75, np.float32))


def test_sgd_update_strided_gradient():
    g_host = np.arange(12, dtype=np.float32).reshape(3, 4)
    g = dlarray.asarray(g_host).T  # a view: read compacted
    w = dlarray.asarray(np.zeros((4, 3), np.float32))
    dlarray.sgd_update([w], [g], 1.0)
    np.testing.assert_array_equal(w.asnumpy(), -g_host.T)


def test_sgd_update_errors():
    f32 = dlarray.asarray(np.ones(3, np.float32))
    f64 = dlarray.asarray(np.ones(3, np.float64))
    other = dlarray.asarray(np.ones(4, np.float32))
    with pytest.raises(ValueError, match="2 parameters and 1 gradients"):
        dlarray.sgd_update([f32, other], [f32], 0.1)
    with pytest.raises(ValueError, match="its gradient is float32 \\(4,\\)"):
        dlarray.sgd_update([f32], [other], 0.1)
    with pytest.raises(ValueError, match="share one dtype"):
        dlarray.sgd_update([f32, f64], [dlarray.asarray(np.ones(3, np.float32)),
                                        dlarray.asarray(np.ones(3, np.float64))], 0.1)
    with pytest.raises(TypeError, match="parameter 0 must be a dlarray array, got ndarray"):
        dlarray.sgd_update([np.ones(3)], [f32], 0.1)
    with pytest.raises(TypeError, match="lr must be a real number, got str"):
        dlarray.sgd_update([f32], [other], "0.1")
    with pytest.raises(ValueError, match="its own gradient"):
        dlarray.sgd_update([f32], [f32], 0.1)
    g = dlarray.asarray(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="given twice"):
        dlarray.sgd_update([f32, f32], [g, g], 0.1)
    view = dlarray.asarray(np.ones((3, 3), np.float32)).T
    with pytest.raises(ValueError, match="not contiguous"):
        dlarray.sgd_update([view], [dlarray.asarray(np.ones((3, 3), np.float32))], 0.1)
    with pytest.raises(ValueError, match="overflows float32"):
        dlarray.sgd_update([f32], [g], 1e300)
    dlarray.sgd_update([], [], 0.1)  # nothing to do


def test_sgd_update_generated_sources_match_pairs():
    for language in ("cuda", "opencl"):
        for ctype in ("float", "double"):
            src = _fuse_multi.device_source(language, ctype, 3)
            assert src.count("case ") == 3 and "dl_fused" in src
    src = _fuse_multi.device_source("cuda", "float", 2)
    from dlarray import _rtc_source  # the launcher checks arguments against these types
    params = src[src.index("dl_fused(") + 9:src.index(") {")].split(", ")
    assert [_rtc_source.parse_param(p)[:3] for p in params] == (
        [(1, 2, 32)] * 4 + [(2, 0, 64)] * 2 + [(2, 2, 32)] * 2)
    rtc = pytest.importorskip("dlarray.rtc")
    try:
        rtc.RawKernel(src, "dl_fused", options=_fuse_cuda.cuda_options()).compile(arch=90)
    except RuntimeError as e:  # no NVRTC here
        pytest.skip("NVRTC is not available: %s" % e)


# --- the C++ cache hit of dlarray.fuse ---------------------------------------------------------

def _axpy(a, b, c, d, e):
    return a * b + c * d - e


def test_fuse_fast_path_equals_python_path():
    rng = np.random.default_rng(2)
    fused = dlarray.fuse(_axpy)
    for shape in [(1,), (5, 7), (3, 1, 4), (1000,)]:
        host = [rng.standard_normal(shape).astype(np.float32) for _ in range(5)]
        xs = [dlarray.asarray(h) for h in host]
        first = fused(*xs).asnumpy()  # the Python path, which makes the launcher
        assert fused._fast is not None
        second = fused(*xs).asnumpy()  # the launcher
        want = host[0] * host[1] + host[2] * host[3] - host[4]
        np.testing.assert_array_equal(first, want)
        np.testing.assert_array_equal(second, want)


def test_fuse_fast_path_hands_other_calls_back():
    fused = dlarray.fuse(lambda a, s, b: a * s + b)
    a = dlarray.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = dlarray.asarray(np.ones(3, np.float32))
    np.testing.assert_array_equal(fused(a, 2.0, b).asnumpy(), a.asnumpy() * 2 + 1)
    launcher = fused._fast
    assert launcher is not None
    assert launcher(a, 3.0, b) is None  # another scalar value
    assert launcher(a, 2, b) is None  # another scalar type
    assert launcher(a.T, 2.0, b) is None  # a view
    assert launcher(a, 2.0) is None  # another number of arguments
    assert launcher(a.astype(np.float64), 2.0, b) is None
    # (what the Python path then does with them test_fuse.py checks: no new kernels built here)
    with pytest.raises(ValueError, match="broadcast"):
        fused(a, 2.0, dlarray.asarray(np.ones(4, np.float32)))
    with pytest.raises(TypeError, match="keyword|positional"):
        fused(a, 2.0, b=b)


def test_fuse_fast_path_not_made_for_large_calls_or_reductions_that_need_more():
    big = [dlarray.asarray(np.full(1 << 16, 2, np.float32))] * 5
    fused = dlarray.fuse(_axpy)  # the kernel of test_fuse_fast_path_equals_python_path
    np.testing.assert_array_equal(fused(*big).asnumpy(), np.full(1 << 16, 6, np.float32))
    assert fused._fast is None  # the thread pool splits it: the Python path runs it
    summed = dlarray.fuse(lambda a: dlarray.sum(a + 1))
    assert float(summed(big[0]).asnumpy()) == 3 << 16
    assert summed._fast is None  # 64Ki elements read: threads split the range
    small = dlarray.asarray(np.ones(5, np.float32))
    assert float(summed(small).asnumpy()) == 10.0
    assert summed._fast is not None  # one thread: the launcher takes the next calls
    for after_the_kernel in (lambda a: dlarray.mean(a + 1),  # a division
                             lambda a: dlarray.sum(a + 1, dtype=np.float16)):  # two kernels
        other = dlarray.fuse(after_the_kernel)
        other(small)
        assert other._fast is None


def test_fuse_launcher_takes_a_second_array_for_gpu_kernels_only():
    """A second array (a reduction's partial totals) belongs to a GPU kernel's launch, and a C++
    kernel takes its range as 2 values (elementwise) or 4 (a reduction): with a C++ kernel's
    address the launcher refuses anything else."""
    x = dlarray.asarray(np.ones(5, np.float32))
    fused = dlarray.fuse(_axpy)
    fused(x, x, x, x, x)
    address = fused._plans[next(iter(fused._plans))].run.address
    signature = [(np.dtype(np.float32), (5,), True)] * 5
    for extra in ({"part": 0, "scalars": [0, 5]}, {"scalars": [5]}, {}):
        with pytest.raises(ValueError, match="no second array, and 2 or 4 range values"):
            _core._FuseLauncher(address, signature, [5], np.float32, [], x.ctx, 5, **extra)


def test_reduction_launch_config_gives_one_launchs_parameters(monkeypatch):
    """_fuse_reduce.launch_config (no GPU needed): the grid, the scalars (M, the segment length,
    fold, then the sizes) and the second array (the output, or scratch of segments x M partial
    totals) of run's launch; None where one launch does not give the result (mean, a second
    reduction, another language)."""
    from dlarray import _fuse_reduce, _fuse_reduce_gpu
    monkeypatch.setattr(_fuse_reduce, "OPENCL_CPUS", True)  # planned for OpenCL on the CPU
    x = dlarray.asarray(np.ones((64, 8192), np.float32))

    class Loaded:
        def _load(self, device_id):
            return ("function", device_id)

    def planned(name, axis, language="cuda", shape=(64, 8192)):
        y = dlarray.asarray(np.ones(shape, np.float32))
        fused = dlarray.fuse(lambda a: getattr(dlarray, name)(a * 2, axis=axis))
        trace, reduction = fused._trace((y,), [y])
        red = _fuse_reduce.plan(trace, reduction, [y], [0], y.ctx, language)
        red.launch = Loaded()
        return red
    red = planned("sum", None)
    blocks, segments, length, fold = _fuse_reduce_gpu.segments(red)
    assert fold and segments > 1
    assert _fuse_reduce.launch_config(red, x.ctx) == (
        ("function", 0), [blocks, segments, 1], [_fuse_reduce_gpu.THREADS, 1, 1],
        [1, length, 1] + list(red.dims), segments)
    red = planned("max", 1, shape=(64, 4096))  # a block per row, 16 elements a thread: whole
    assert _fuse_reduce_gpu.segments(red)[1] == 1  # rows, the output again
    assert _fuse_reduce.launch_config(red, x.ctx)[3:] == ([64, 4096, 0] + list(red.dims), 0)
    assert _fuse_reduce.launch_config(planned("mean", None), x.ctx) is None
    assert _fuse_reduce.launch_config(planned("sum", None, "opencl"), x.ctx) is None
    long_columns = planned("sum", 0, shape=(1 << 16, 3))  # 1 thread a column, many segments
    assert not _fuse_reduce_gpu.segments(long_columns)[3]
    assert _fuse_reduce.launch_config(long_columns, x.ctx) is None


def test_reduction_plan_hands_launch_config_to_the_launcher(monkeypatch):
    """_fuse_reduce.launcher of a CUDA reduction (no GPU needed): the launcher gets the
    reduction's result shape, accumulator dtype, output count and launch_config's values."""
    from dlarray import _fuse_reduce
    made = []
    monkeypatch.setattr(_fuse_reduce, "launch_config",
                        lambda red, ctx: ("function", [3, 2, 1], [256, 1, 1], [5, 6], 7))
    monkeypatch.setattr(_core, "_FuseLauncher", lambda *args: made.append(args) or "made")
    x = dlarray.asarray(np.ones((4, 5), np.int8))
    fused = dlarray.fuse(lambda a: dlarray.sum(a * 3, axis=0, keepdims=True))
    trace, reduction = fused._trace((x,), [x])
    red = _fuse_reduce.plan(trace, reduction, [x], [0], x.ctx, "cuda")
    signature = [(np.dtype(np.int8), (4, 5), True)]
    assert _fuse_reduce.launcher(red, signature, x.ctx) == "made"
    assert made == [(0, signature, [1, 5], np.dtype(np.int64), [], x.ctx, 5, "function",
                     [3, 2, 1], [256, 1, 1], [5, 6], 7)]

@pytest.mark.parametrize("shape,axis,keepdims", [
    ((1,), None, False), ((7, 3), 0, False), ((7, 3), 1, True), ((5, 1, 9), (0, 2), False),
    ((255,), None, True), ((3, 257), -1, False), ((64, 1023), None, False)],
    ids=["one", "axis0", "axis1-keepdims", "3d-two-axes", "odd-keepdims", "rows", "most"])
@pytest.mark.parametrize("name,dtype", [("sum", np.float32), ("sum", np.float64),
                                        ("sum", np.int32), ("sum", np.uint8), ("max", np.float32),
                                        ("min", np.int64)],
                         ids=["sum-f32", "sum-f64", "sum-i32", "sum-u8", "max-f32", "min-i64"])
def test_cpu_cached_reduction_runs_in_cpp_and_equals_the_python_path(shape, axis, keepdims,
                                                                      name, dtype):
    """A trailing sum, max or min of fewer than 64Ki elements on the CPU: the launcher calls the
    same kernel over the same range as the Python path (one thread), so the bits are its bits,
    on every call; the values are NumPy's (a float sum within rounding: another order)."""
    from dlarray import _fuse_reduce
    rng = np.random.default_rng(11)
    host = [_values(rng, dtype, shape) for _ in range(3)]
    xs = [dlarray.asarray(h) for h in host]

    def f(a, b, c):
        return getattr(dlarray, name)(a * b + c, axis=axis, keepdims=keepdims)
    fused = dlarray.fuse(f)
    first = fused(*xs).asnumpy()
    assert isinstance(fused._fast, _core._FuseLauncher)
    (plan,) = fused._plans.values()
    python = _fuse_reduce.run(plan.reducer, xs, xs[0].ctx).asnumpy()
    assert _bits(first) == _bits(python) and first.shape == python.shape
    for _ in range(3):
        again = fused(*xs).asnumpy()
        assert again.dtype == first.dtype and _bits(again) == _bits(first)
    with np.errstate(invalid="ignore", over="ignore"):
        want = getattr(np, name)(host[0] * host[1] + host[2], axis=axis, keepdims=keepdims)
    assert first.dtype == want.dtype and first.shape == np.shape(want)
    if name == "sum" and np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(first, want, rtol=1e-5, atol=1e-4)
    else:
        np.testing.assert_array_equal(first, want)


def test_cpu_reductions_the_launcher_leaves_to_python():
    """Nothing to reduce, an empty array (the two-kernel path) and 64Ki elements read (threads
    split them) make no launcher; their values are NumPy's."""
    empty = dlarray.fuse(lambda a: dlarray.sum(a * 2, axis=0))
    np.testing.assert_array_equal(empty(dlarray.asarray(np.ones((0, 3), np.float32))).asnumpy(),
                                  np.zeros(3, np.float32))
    assert empty._fast is None
    big = np.arange(1 << 16, dtype=np.int64).reshape(256, 256)
    summed = dlarray.fuse(lambda a: dlarray.sum(a * 2, axis=1))
    np.testing.assert_array_equal(summed(dlarray.asarray(big)).asnumpy(), (big * 2).sum(axis=1))
    assert summed._fast is None
