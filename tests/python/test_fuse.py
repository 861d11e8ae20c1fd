"""dlarray.fuse: fused results equal the unfused function's on every device (cpu and opencl:0
here; cuda where a GPU is), for every row of the elementwise table the generator writes, every
dtype, broadcasting, 0-d, empty and sizes across thread and chunk boundaries; trace-time errors;
the fallbacks (a compile failure warns once and runs unfused; no compiler runs the interpreter)."""
import warnings

import numpy as np
import pytest

import dlarray
from dlarray import _elementwise_api as ew
from dlarray import _fuse, _fuse_backends, _fuse_cuda, _fuse_interp

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float32, np.float64]
SIZES = [(), (0,), (1,), (1023,), (1025,), (65537,), (3, 5, 7), (2, 0, 3)]


def _values(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -100), min(info.max, 100)
        v = rng.integers(lo, hi + 1, shape, dtype=np.int64)
        extremes = np.array([info.min, info.max, 0, 1], dtype=dtype)
        out = v.astype(dtype)
        if out.size >= 8:
            out.reshape(-1)[:4] = extremes
        return out
    v = rng.standard_normal(shape) * 3
    if v.size >= 8:
        v.reshape(-1)[:5] = [0.0, -0.0, np.inf, -np.inf, np.nan]
    return v.astype(dtype)


def _same(got, want, maxulp=0):
    """Exactly equal (NaN where NaN), or within maxulp units in the last place for floats."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    if got.dtype.name == "bfloat16":  # NumPy finds NaN == NaN only for its own types
        got, want = got.astype(np.float32), want.astype(np.float32)
    if got.dtype.kind not in "fc" or maxulp == 0:
        np.testing.assert_array_equal(got, want)
        return
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    finite = np.isfinite(want) & np.isfinite(got)
    np.testing.assert_array_equal(got[~finite & ~nan], want[~finite & ~nan])
    if finite.any():
        np.testing.assert_array_max_ulp(got[finite], want[finite], maxulp=maxulp)


def _axpy(a, b, c, d, e):
    return a * b + c * d - e


@pytest.mark.parametrize("shape", SIZES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_expression_equals_unfused(ctx, rng, shape, dtype):
    xs = [dlarray.asarray(_values(rng, dtype, shape), device=ctx) for _ in range(5)]
    fused = dlarray.fuse(_axpy)
    got = fused(*xs)
    assert got.ctx == ctx
    _same(got.asnumpy(), _axpy(*xs).asnumpy())
    if ctx.device_type in (1, 4):  # a generated kernel here (cuda: the lead's GPU run)
        assert fused.explain(*xs)["backend"] in ("cpp", "opencl")


def _row_names(dtype):
    """(unary, binary) array API functions the unfused path takes for dtype."""
    probe = dlarray.asarray(np.ones(1, dtype))
    unary, binary = [], []
    for name in sorted(ew._UNARY) + sorted(ew._UNARY_PREDICATES):
        try:
            getattr(dlarray, name)(probe)
        except TypeError:
            continue
        unary.append(name)
    for name in sorted(ew._BINARY):
        try:
            getattr(dlarray, name)(probe, probe)
        except TypeError:
            continue
        binary.append(name)
    return unary, binary


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_row_equals_unfused(ctx, rng, dtype):
    """Each function the unfused path takes for dtype, fused: one kernel per result dtype selects
    per element which function's result it keeps, so each is compared on its own elements."""
    unary, binary = _row_names(dtype)
    m = 67
    functions = [(n, 1) for n in unary] + [(n, 2) for n in binary]
    x = _values(rng, dtype, (len(functions) * m,))
    y = _values(rng, dtype, (len(functions) * m,))
    special = _values(rng, dtype, (8,))[:5]  # 0, -0, inf, -inf, NaN or min, max, 0, 1
    for k in range(len(functions)):  # in every function's part, against varied partners
        x[k * m:k * m + 5] = special
        y[k * m + 3:k * m + 8] = special
    if np.dtype(dtype).kind in "iu":  # shift counts and exponents in a useful range too
        y[::3] = (np.abs(y[::3].astype(np.int64)) % 9).astype(dtype)
    dx, dy = dlarray.asarray(x, device=ctx), dlarray.asarray(y, device=ctx)
    results = {}
    for k, (name, arity) in enumerate(functions):
        f = getattr(dlarray, name)
        r = (f(dx) if arity == 1 else f(dx, dy)).asnumpy()
        results.setdefault(r.dtype, []).append((k, name, arity, r))
    selector = dlarray.asarray(np.repeat(np.arange(len(functions), dtype=np.int32), m),
                               device=ctx)
    for out_dtype, rows in results.items():
        def select(x, y, sel, rows=rows):
            out = None
            for k, name, arity, _ in rows:
                f = getattr(dlarray, name)
                value = f(x) if arity == 1 else f(x, y)
                out = value if out is None else dlarray.where(sel == k, value, out)
            return out
        fused = dlarray.fuse(select)
        got = fused(dx, dy, selector).asnumpy()
        want = np.empty_like(rows[0][3])
        for k, name, _, r in rows:
            want[k * m:(k + 1) * m] = r[k * m:(k + 1) * m]
        for k, name, _, r in rows:
            part = slice(k * m, (k + 1) * m)
            try:
                _same(got[part], want[part], maxulp=0 if out_dtype.kind != "f" else 4)
            except AssertionError as e:
                raise AssertionError("%s(%s) on %r: %s" % (name, np.dtype(dtype), ctx, e))
        if ctx.device_type in (1, 4):
            assert fused.explain(dx, dy, selector)["backend"] != "interpreter", (out_dtype,
                                                                                 rows)


@pytest.mark.parametrize("shapes", [((3, 1, 5), (4, 5), ()), ((1,), (7, 1), (1, 6)),
                                    ((2, 3, 4), (1, 3, 1), (4,)), ((5, 1), (5, 1), (1, 1))],
                         ids=str)
def test_broadcasting(ctx, rng, shapes):
    arrays = [dlarray.asarray(rng.standard_normal(s).astype(np.float32), device=ctx)
              for s in shapes]

    def f(a, b, c):
        return dlarray.maximum(a, b) * c - b
    _same(dlarray.fuse(f)(*arrays).asnumpy(), f(*arrays).asnumpy())


def test_strided_and_offset_inputs(ctx, rng):
    base = dlarray.asarray(rng.standard_normal((6, 8)).astype(np.float32), device=ctx)
    t = dlarray.permute_dims(base, (1, 0))       # not contiguous
    part = dlarray.reshape(base, (48,))[5:29]    # an offset into the buffer
    part = dlarray.reshape(part, (3, 8))

    def f(a, b):
        return a * 2.0 + b
    _same(dlarray.fuse(f)(t, t).asnumpy(), f(t, t).asnumpy())
    _same(dlarray.fuse(f)(part, part[0:1]).asnumpy(), f(part, part[0:1]).asnumpy())


def test_scalars_and_casts(ctx, rng):
    xf = dlarray.asarray(rng.standard_normal(1000).astype(np.float32), device=ctx)
    xi = dlarray.asarray(rng.integers(-100, 100, 1000).astype(np.int8), device=ctx)
    cases = [
        (lambda a, b: a * 2.5 + 1 - b.astype(dlarray.float32), (xf, xi)),
        (lambda a, b: (b + 3) * 2 // 5, (xf, xi)),
        (lambda a, b: 1.5 / a - 2 ** b.astype(dlarray.float64), (xf, xi)),
        (lambda a, b: (a > 0.5) | (b == 1000), (xf, xi)),              # 1000: no int8 holds it
        (lambda a, b: dlarray.where(a > b, a, 0.0), (xf, xi)),
        (lambda a, b: (a * 50).astype(dlarray.int16) + b, (xf, xi)),
        (lambda a, b: (a > 0).astype(dlarray.float32) * a + (b != 0), (xf, xi)),
        (lambda a, b: -a + abs(b) + ~b, (xf, xi)),
        (lambda a, b: dlarray.sqrt(b) + dlarray.exp(a) - dlarray.tanh(a) * dlarray.log(a),
         (xf, xi)),
    ]
    for f, args in cases:
        want = f(*args).asnumpy()
        got = dlarray.fuse(f)(*args).asnumpy()
        if want.dtype.kind == "f":  # float32 functions within an ulp of the backend's own,
            assert got.dtype == want.dtype  # then widened: compare at float32's precision
            np.testing.assert_allclose(got, want, rtol=4e-7, atol=0)
        else:
            _same(got, want)


def test_scalar_arguments_are_constants_of_the_trace(ctx, rng):
    x = dlarray.asarray(rng.standard_normal(100).astype(np.float32), device=ctx)

    @dlarray.fuse
    def scale(v, s):
        return v * s
    for s in (2.0, 3, -0.5, True):
        _same(scale(x, s).asnumpy(), (x * s).asnumpy())


def test_comparisons_with_ints_out_of_the_dtype_range(ctx):
    # NumPy 2's rule, as the unfused path: int8 against 1000 is one answer for every element.
    a = np.array([-128, -1, 0, 5, 127], np.int8)
    x = dlarray.asarray(a, device=ctx)
    for op in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
        for value in (1000, -1000):
            f = lambda v, op=op, value=value: getattr(dlarray, op)(v * 1, value)  # noqa: E731
            got = dlarray.fuse(f)(x).asnumpy()
            np.testing.assert_array_equal(got, f(x).asnumpy())
            np.testing.assert_array_equal(got, getattr(np, op)(a.astype(np.int64), value))


def test_nested_fused_functions_inline(ctx, rng):
    x = dlarray.asarray(rng.standard_normal(100).astype(np.float64), device=ctx)
    inner = dlarray.fuse(lambda v: v * v)
    outer = dlarray.fuse(lambda v: inner(v) + 1.0)
    _same(outer(x).asnumpy(), (x * x + 1.0).asnumpy())
    assert "multiply" in outer.explain(x)["expression"]


def test_interpreter_equals_unfused(ctx, rng, monkeypatch):
    """The portable path: every dtype (float16, complex too), across chunk boundaries."""
    monkeypatch.setenv("DLARRAY_FUSE", "interpret")
    bfloat16 = getattr(dlarray, "bfloat16", None)  # with ml_dtypes
    for dtype in [np.float16, np.complex64, np.float32, np.int64] + [bfloat16] * bool(bfloat16):
        for shape in ((), (0,), (_fuse_interp.CHUNK + 3,), (3, 1, 4)):
            a = dlarray.asarray(_values(rng, dtype, shape), device=ctx)
            b = dlarray.asarray(_values(rng, dtype, (4,)), device=ctx) if len(shape) == 3 else a
            f = dlarray.fuse(_axpy)
            assert f.explain(a, b, a, b, 2)["backend"] == "interpreter"
            _same(f(a, b, a, b, 2).asnumpy(), _axpy(a, b, a, b, 2).asnumpy())


def test_half_and_complex_run_unfused_without_warning(ctx, rng):
    a = dlarray.asarray(rng.standard_normal(300).astype(np.float16), device=ctx)
    c = dlarray.asarray((rng.standard_normal(300) + 1j).astype(np.complex64), device=ctx)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(dlarray.fuse(_axpy)(a, a, a, a, a).asnumpy(), _axpy(a, a, a, a, a).asnumpy())
        _same(dlarray.fuse(_axpy)(c, c, c, c, 1j).asnumpy(), _axpy(c, c, c, c, 1j).asnumpy())


def test_trace_errors_name_the_operation(ctx):
    x = dlarray.asarray(np.ones((4, 4), np.float32), device=ctx)
    cases = [(lambda a: a[0] + 1, "indexing"), (lambda a: a @ a, "matmul"),
             (lambda a: a if a > 0 else -a, "bool()"), (lambda a: a.reshape((16,)), "reshape"),
             (lambda a: 3.0, "must return one array"), (lambda a: (a, a), "must return one"),
             (lambda a: a + [1, 2], "operand of type list")]
    for f, words in cases:
        with pytest.raises(TypeError, match=words.replace("(", r"\(").replace(")", r"\)")):
            dlarray.fuse(f)(x)
    for f in (lambda a: dlarray.sum(a) + 1, lambda a: dlarray.exp(dlarray.max(a)),
              lambda a: dlarray.sum(dlarray.sum(a, axis=0))):
        with pytest.raises(TypeError, match="last operation"):
            dlarray.fuse(f)(x)
    with pytest.raises(TypeError, match="x1 must have"):  # the unfused dtype rule's message
        dlarray.fuse(lambda a, b: a & b)(x, x)
    with pytest.raises(ValueError, match="do not broadcast"):
        dlarray.fuse(lambda a, b: a + b)(x, dlarray.asarray(np.ones(3, np.float32), device=ctx))
    with pytest.raises(TypeError, match="positional"):
        dlarray.fuse(lambda a: a)(a=x)
    with pytest.raises(TypeError, match="argument 1"):
        dlarray.fuse(lambda a, b: a + b)(x, [1.0])
    with pytest.raises(TypeError, match="at least one dlarray array"):
        dlarray.fuse(lambda a: a + 1)(2.0)
    with pytest.raises(TypeError, match="expected a function"):
        dlarray.fuse(3)


def test_arrays_on_two_devices_are_refused():
    devices = dlarray.devices()
    if len(devices) < 2:
        pytest.skip("one device")
    a = dlarray.asarray(np.ones(3, np.float32), device=devices[0])
    b = dlarray.asarray(np.ones(3, np.float32), device=devices[1])
    with pytest.raises(ValueError, match="to_device"):
        dlarray.fuse(lambda x, y: x + y)(a, b)


def test_compile_failure_warns_once_and_runs_unfused(ctx, rng, monkeypatch):
    if ctx.device_type not in (1, 4):
        pytest.skip("cpu and opencl build here")

    def broken(*args, **kwargs):
        raise _fuse_backends.BuildFailed("error: made up by the test")
    monkeypatch.setattr(_fuse_backends, "build_cpu", broken)
    monkeypatch.setattr(_fuse_backends, "build_opencl", broken)
    x = dlarray.asarray(rng.standard_normal(50).astype(np.float32), device=ctx)

    def f(a):
        return a * 1.25 - 0.125  # constants no other test uses: a kernel not yet cached
    with pytest.warns(RuntimeWarning, match=r"multiply.*does not compile on .*runs unfused"):
        got = dlarray.fuse(f)(x)
    _same(got.asnumpy(), f(x).asnumpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(dlarray.fuse(f)(x).asnumpy(), f(x).asnumpy())  # once


def test_no_compiler_runs_the_interpreter(rng, monkeypatch):
    monkeypatch.setenv("CXX", "/nonexistent/c++")
    x = dlarray.asarray(rng.standard_normal(50).astype(np.float32))

    def f(a):
        return a * 1.375 + 0.0625
    fused = dlarray.fuse(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fused.explain(x)["backend"] == "interpreter"
        _same(fused(x).asnumpy(), f(x).asnumpy())


def test_kernels_are_cached_by_pattern_not_shape(rng, tmp_path, monkeypatch):
    monkeypatch.setenv("DLARRAY_CACHE_DIR", str(tmp_path))

    def f(a, b):
        return a * 0.75 + b * 0.25
    fused = dlarray.fuse(f)
    x = dlarray.asarray(rng.standard_normal((10, 3)).astype(np.float32))
    fused(x, x)
    count = len(_fuse._kernels)
    y = dlarray.asarray(rng.standard_normal((7,)).astype(np.float32))
    _same(fused(y, y).asnumpy(), f(y, y).asnumpy())
    assert len(_fuse._kernels) == count          # same expression, dtypes and layout
    assert list(tmp_path.glob("fuse_cpu/*/fused.so"))
    _same(fused(x, x[0:1]).asnumpy(), f(x, x[0:1]).asnumpy())
    assert len(_fuse._kernels) == count + 1      # another layout: another kernel


def test_generated_cuda_compiles_with_nvrtc():
    """The CUDA generator's code compiles (for sm_90, no GPU needed) wherever NVRTC is."""
    from dlarray import _rtc_build
    from dlarray._rtc_raw import RawKernel
    if _rtc_build.status()["compile"]:
        pytest.skip(_rtc_build.status()["compile"])
    x = dlarray.asarray(np.ones((3, 4), np.float32))
    i = dlarray.asarray(np.ones((4,), np.int64))

    def f(a, b):
        return (dlarray.where(a > 0, dlarray.exp(a) * 2.5, (b // 3).astype(dlarray.float32))
                + dlarray.isnan(a) + (a * 9).astype(dlarray.uint8) + (b << 2)
                + dlarray.logaddexp(a, a) + dlarray.remainder(b, 7) + dlarray.pow(b, b))
    source = _fuse._codegen.generate(*_fuse_plan_parts(f, x, i), "cuda")
    RawKernel(source, "dl_fused", options=_fuse_cuda.cuda_options()).compile(arch=90)
    source = _fuse._codegen.generate(*_fuse_plan_parts(_axpy, x, x, x, x, x), "cuda")
    RawKernel(source, "dl_fused", options=_fuse_cuda.cuda_options()).compile(arch=90)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint32, np.int64, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_generated_cuda_of_every_row_compiles(rng, dtype):
    """Every function the generator writes for dtype, in CUDA, compiles with NVRTC (sm_90): one
    dtype of each kind and width class (the others differ in the type's name alone)."""
    from dlarray import _rtc_build
    from dlarray._rtc_raw import RawKernel
    if _rtc_build.status()["compile"]:
        pytest.skip(_rtc_build.status()["compile"])
    unary, binary = _row_names(dtype)
    x = dlarray.asarray(_values(rng, dtype, (9,)))
    groups = {}
    for name in unary + binary:
        f = getattr(dlarray, name)
        out = f(x) if name in unary else f(x, x)
        groups.setdefault(out.dtype, []).append(name)
    sel = dlarray.asarray(np.zeros(9, np.int32))
    for names in groups.values():
        def select(a, b, s, names=names):
            out = None
            for k, name in enumerate(names):
                f = getattr(dlarray, name)
                value = f(a) if name in unary else f(a, b)
                out = value if out is None else dlarray.where(s == k, value, out)
            return out
        source = _fuse._codegen.generate(*_fuse_plan_parts(select, x, x, sel), "cuda")
        RawKernel(source, "dl_fused", options=_fuse_cuda.cuda_options()).compile(arch=90)


def _fuse_plan_parts(f, *args):
    plan = dlarray.fuse(f)._plan(args, list(args), args[0].ctx)
    return plan.trace, plan.inputs, plan.layout, plan.ndim


@pytest.mark.parametrize("name", ["sum", "max", "min", "mean"])
def test_trailing_reduction_equals_unfused(ctx, rng, name):
    for dtype, shape, kwargs in ((np.float32, (70, 1030), {}),
                                 (np.float64, (3, 5, 7), {"axis": 1}),
                                 (np.float32, (3, 5, 7), {"axis": (0, 2), "keepdims": True}),
                                 (np.int32, (1000,), {"axis": -1}),
                                 (np.float32, (), {}),
                                 (np.float32, (0, 4), {"axis": 1})):
        a = dlarray.asarray(_values(rng, dtype, shape), device=ctx)
        b = dlarray.asarray(_values(rng, dtype, shape[-1:]), device=ctx)

        def f(x, y):  # dlarray.<name> looked up as it runs: the tracer's while tracing
            return getattr(dlarray, name)(x * y - x, **kwargs)
        fused = dlarray.fuse(f)
        got, want = fused(a, b), f(a, b)
        assert got.dtype == want.dtype and got.shape == want.shape
        if name in ("sum", "mean") and got.dtype.kind == "f":  # in one kernel: reassociated
            x = (a * b - a).asnumpy().astype(np.float64)
            bound = 2 * max(x.size, 1) * np.finfo(got.dtype).eps * np.abs(x[np.isfinite(x)]).sum()
            np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=0, atol=bound)
        else:
            _same(got.asnumpy(), want.asnumpy())
        assert fused.explain(a, b)["reduction"] == name
    empty = dlarray.asarray(np.ones((0,), np.float32), device=ctx)
    if name in ("max", "min"):  # the unfused rule: no maximum of nothing
        with pytest.raises(ValueError):
            dlarray.fuse(lambda x: getattr(dlarray, name)(x + 1))(empty)


def test_threads_share_a_fused_function(ctx, rng):
    """Calls from several threads at once (tracing, building and running) give their own
    results; other threads' plain dlarray calls are untouched while one traces."""
    import concurrent.futures
    fused = dlarray.fuse(lambda a, b: dlarray.maximum(a, b) * b - a * 0.375)
    inputs = [[dlarray.asarray(rng.standard_normal(n).astype(np.float32), device=ctx)
               for _ in range(2)] for n in (10, 70000, 333, 70000)]

    def work(k):
        a, b = inputs[k]
        plain = dlarray.maximum(a, b)  # while other threads may be tracing
        return fused(a, b).asnumpy(), (plain * b - a * 0.375).asnumpy()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for got, want in pool.map(work, range(4)):
            _same(got, want)


@pytest.mark.parametrize("target", [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64,
                                    np.bool_, np.float32])
def test_float_casts_saturate_as_unfused(ctx, target):
    """astype of out-of-range floats, infinities and NaN: the unfused conversion's result."""
    values = np.array([np.nan, np.inf, -np.inf, 1e10, -1e10, 1e30, -0.5, 2.7, 300.0, -129.0,
                       2.0**63, -2.0**63, 2.0**64, 4294967295.0, -0.0], np.float64)
    for source in (np.float32, np.float64):
        x = dlarray.asarray(values.astype(source), device=ctx)
        f = lambda a: (a * 1.0).astype(target)  # noqa: E731  (times 1: a node before the cast)
        _same(dlarray.fuse(f)(x).asnumpy(), f(x).asnumpy())


def test_long_chains_and_shared_values(ctx, monkeypatch):
    """1200 ops in a chain (deeper than Python's recursion limit), a value used many times; in
    the interpreter too, whose temporaries and constants are reused rather than one per node."""
    x = dlarray.asarray(np.linspace(-1, 1, 1000), device=ctx)

    def chain(a):
        for _ in range(600):
            a = a * 0.5 + 0.25
        return a

    def shared(a):
        b = a * a
        for _ in range(30):
            b = b * b + b  # b used twice per step: the expression's text stays linear
        return b
    for mode in ("", "interpret"):
        monkeypatch.setenv("DLARRAY_FUSE", mode)
        for f in (chain, shared):
            fused = dlarray.fuse(f)
            _same(fused(x).asnumpy(), f(x).asnumpy())
            assert len(fused.explain(x)["expression"]) < 100000
