"""dlarray.fuse's trailing reduction in the generated kernel (sum, max, min, mean): the unfused
function's dtype and shape on every device, its values exactly for integers, bools, max and min,
and within the error bound of summation (n * eps * sum |x|, both sides obey it) for float sums and
means; every axis pattern (all, leading, trailing, middle, non-adjacent, negative, keepdims),
broadcast, one-element and strided inputs, sizes across the CPU's block and thread boundaries and
the GPU's group sizes, and the cases left to the two-kernel path."""
import numpy as np
import pytest

import dlarray
from dlarray import _fuse
from test_fuse import _values

from dlarray import _fuse_reduce, _fuse_reduce_gpu


@pytest.fixture(autouse=True)
def opencl_cpus_fuse(monkeypatch):
    """PoCL (a CPU) keeps the two-kernel path by default: here it runs the OpenCL kernel."""
    monkeypatch.setattr(_fuse_reduce, "OPENCL_CPUS", True)

NAMES = ["sum", "max", "min", "mean"]
DTYPES = [np.bool_, np.int8, np.uint64, np.float32, np.float64]  # widening, signed, unsigned


def _check(got, want, elements, axis, n):
    """got equals want (NumPy arrays): exactly, or for floats within the summation bound over n
    terms of ``elements`` (the unfused elementwise result) reduced over ``axis``."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    size = np.abs(elements.astype(np.float64)).sum(axis=axis, keepdims=True)
    bound = 2 * max(n, 1) * np.finfo(got.dtype).eps * np.broadcast_to(
        size.reshape(size.shape if want.ndim == size.ndim else want.shape), want.shape)
    assert np.all(np.abs(got[finite].astype(np.float64) - want[finite]) <= bound[finite]
                  + np.finfo(got.dtype).tiny)


def _run(ctx, name, dtype, f, arrays, kwargs, expect_fused=True):
    """Checks fused ``name(f(*arrays), **kwargs)`` against the unfused call."""
    def g(*a):
        return getattr(dlarray, name)(f(*a), **kwargs)
    fused = dlarray.fuse(g)
    args = [dlarray.asarray(a, device=ctx) if isinstance(a, np.ndarray) else a for a in arrays]
    got, want = fused(*args), g(*args)
    info = fused.explain(*args)
    if expect_fused and ctx.device_type in (1, 4):
        assert info["reduction_fused"], (name, dtype, kwargs)
    elements = f(*args).asnumpy()
    axis = kwargs.get("axis")
    n = elements.size if axis is None else int(np.prod(
        [elements.shape[a] for a in (axis if isinstance(axis, tuple) else (axis,))]))
    _check(got.asnumpy(), want.asnumpy(), elements, axis, n)
    return info


# Every dtype with sum and max, min and mean on two (the code differs by the type's name alone):
# each case compiles a kernel, and the test suite's time is short.
CASES = [(d, n) for d in DTYPES for n in ("sum", "max")] + [
    (d, n) for d in (np.int8, np.float32) for n in ("min", "mean")]


@pytest.mark.parametrize("dtype,name", CASES, ids=lambda v: getattr(np.dtype(v), "name", v)
                         if not isinstance(v, str) else v)
def test_every_dtype_equals_unfused(ctx, rng, dtype, name):
    """One kernel per dtype and reduction (an elementwise result of its dtype), over the shapes
    its pattern serves: 1 element, odd sizes, thread and block boundaries."""
    if name in ("sum", "mean") and dtype == np.bool_:
        f = lambda a, b: a & b  # noqa: E731  (sum of truth values: int64)
    elif dtype == np.bool_:
        f = lambda a, b: a ^ b  # noqa: E731
    else:
        f = lambda a, b: dlarray.maximum(a, b) - b  # noqa: E731
    for shape in ((1, 1), (3, 1), (1, 2049), (5, 2047), (70, 1031), (3, 70001), (2, 3000)):
        a, b = _values(rng, dtype, shape), _values(rng, dtype, shape[-1:])
        _run(ctx, name, dtype, f, [a, b], {"axis": -1})


AXES = [None, 0, 1, -1, (0, 2), (0, 1), (1, 2), (-3, -2, -1)]


@pytest.mark.parametrize("axis", AXES, ids=str)
def test_every_axis_pattern(ctx, rng, axis):
    """Kept and reduced axes anywhere, with an input of the result's shape, a broadcast one and a
    0-d one (strided reads of both axis groups), with and without keepdims."""
    shape = (7, 33, 65)
    a = _values(rng, np.float32, shape)
    b = _values(rng, np.float32, (33, 1))
    c = _values(rng, np.float32, ())
    for keepdims in (False, True):
        kwargs = {"axis": axis, "keepdims": keepdims}
        _run(ctx, "sum", np.float32, lambda x, y, z: x * y + z, [a, b, c], kwargs)
    if axis in (1, (0, 2)):
        i = _values(rng, np.int16, shape)
        for name in ("sum", "max"):
            _run(ctx, name, np.int16, lambda x, y: x - y, [i, i[:1]], {"axis": axis})


def test_strided_inputs_and_scalars(ctx, rng):
    a = dlarray.asarray(_values(rng, np.float64, (40, 50)), device=ctx)
    for args in ((a[::2, 1:], 2.5), (a.T[3:, :20], -1.0)):
        fused = dlarray.fuse(lambda x, s: dlarray.mean(dlarray.exp(x / 8) * s, axis=0))
        got, want = fused(*args).asnumpy(), fused.fn(*args).asnumpy()
        np.testing.assert_allclose(got, want, rtol=1e-13)


def test_dtype_rules(ctx, rng):
    """sum's dtype= (computing in it), integer sums in int64 / uint64, mean of integers in
    float64, sums of float16 results in float32 then cast, as unfused."""
    i8 = _values(rng, np.int8, (9, 300))
    u8 = _values(rng, np.uint8, (9, 300))
    f32 = _values(rng, np.float32, (9, 300))
    cases = [("sum", lambda x: x * x, [i8], {"axis": 1}),
             ("sum", lambda x: x + x, [u8], {}),
             ("sum", lambda x: x * 3, [i8], {"dtype": dlarray.int8, "axis": 0}),
             ("sum", lambda x: x / 3, [f32], {"dtype": dlarray.float64, "axis": 1}),
             ("sum", lambda x: x / 3, [f32], {"dtype": dlarray.float16}),
             ("mean", lambda x: x - 1, [i8], {"axis": 1}),
             ("mean", lambda x: x > 0, [f32], {"axis": 0}),
             ("max", lambda x: x > 0, [f32], {"axis": 0}),
             ("min", lambda x: dlarray.isnan(x), [f32], {})]
    for name, f, arrays, kwargs in cases:
        _run(ctx, name, None, f, arrays, kwargs)


def test_nan_propagates_through_max_and_min(ctx):
    a = np.arange(5000, dtype=np.float32).reshape(2, 2500)
    a[0, 1777] = np.nan
    x = dlarray.asarray(a, device=ctx)
    for name in ("max", "min"):
        fused = dlarray.fuse(lambda v: getattr(dlarray, name)(v * 2, axis=1))
        got = fused(x).asnumpy()
        assert np.isnan(got[0]) and got[1] == (9998 if name == "max" else 5000)


def test_float_sums_stay_accurate_over_many_elements(ctx):
    """The CPU's blocks of 8 accumulators and the GPU's groups: float32 0.1 summed 3 million
    times is within 1e-5 of the exact value (one accumulator drifts by percent)."""
    x = dlarray.asarray(np.full(3 << 20, 0.1, np.float32), device=ctx)
    got = float(dlarray.fuse(lambda v: dlarray.sum(v * 1))(x).asnumpy())
    exact = float(np.float32(0.1)) * (3 << 20)
    assert abs(got - exact) <= 1e-5 * exact


def test_threads_over_outputs_and_over_the_reduced_range(ctx, rng):
    """Few outputs (the reduced range split, partial rows folded), many outputs (split), and an
    odd thread count."""
    saved = dlarray.get_num_threads()
    try:
        for threads in (3, 2):
            dlarray.set_num_threads(threads)
            for shape, axis in (((2, 100003), 1), ((100003, 2), 1), ((5, 40001), 0)):
                a = _values(rng, np.int64, shape)
                _run(ctx, "sum", np.int64, lambda x: x * 3, [a], {"axis": axis})
                _run(ctx, "max", np.int64, lambda x: x * 3, [a], {"axis": axis})
    finally:
        dlarray.set_num_threads(saved)


def test_column_blocks_and_their_cascade(ctx, rng):
    """The last axis kept (the CPU folds blocks of 1024 outputs row by row, a GPU thread per
    output): more outputs than a block, more rows than a block of the cascade."""
    saved = dlarray.get_num_threads()
    try:
        dlarray.set_num_threads(1)
        for shape in ((3, 2100), (5000, 7)):
            a = _values(rng, np.float32, shape)
            b = _values(rng, np.float32, shape[-1:])
            _run(ctx, "sum", np.float32, lambda x, y: x * y, [a, b], {"axis": 0})
            i = _values(rng, np.int64, shape)
            _run(ctx, "max", np.int64, lambda x: x * 3, [i], {"axis": 0})
    finally:
        dlarray.set_num_threads(saved)


def test_cases_left_to_the_two_kernel_path(ctx, rng):
    """Nothing to reduce, nothing to write, axis=(), complex and 16-bit results: the unfused
    reduction after the elementwise kernel, with its results and errors."""
    empty = dlarray.asarray(np.ones((0, 4), np.float32), device=ctx)
    one = dlarray.asarray(np.ones((3, 4), np.float32), device=ctx)
    assert not _run(ctx, "sum", None, lambda x: x + 1, [empty], {"axis": 0},
                    expect_fused=False)["reduction_fused"]
    _run(ctx, "mean", None, lambda x: x + 1, [empty], {"axis": 1}, expect_fused=False)
    _run(ctx, "sum", None, lambda x: x + 1, [one], {"axis": ()}, expect_fused=False)
    with pytest.raises(ValueError, match="zero-size"):
        dlarray.fuse(lambda x: dlarray.max(x + 1, axis=0))(empty)
    with pytest.raises(ValueError, match="out of bounds"):
        dlarray.fuse(lambda x: dlarray.sum(x + 1, axis=2))(one)
    with pytest.raises(TypeError, match="keepdims"):
        dlarray.fuse(lambda x: dlarray.sum(x + 1, keepdims=1))(one)
    half = dlarray.asarray(np.ones((3, 4), np.float16), device=ctx)
    assert not _run(ctx, "sum", None, lambda x: x * 2, [half], {},
                    expect_fused=False)["reduction_fused"]


def test_kernels_are_cached_by_pattern(ctx, rng):
    fused = dlarray.fuse(lambda x, y: dlarray.sum(x * y, axis=1))
    fused(*[dlarray.asarray(_values(rng, np.float32, s), device=ctx) for s in ((5, 100), (100,))])
    count = len(_fuse._kernels)
    fused(*[dlarray.asarray(_values(rng, np.float32, s), device=ctx) for s in ((9, 300), (300,))])
    assert len(_fuse._kernels) == count


def test_generated_cuda_compiles_with_nvrtc(rng):
    """The CUDA reduction kernel (each group size; bool and integer inputs, a broadcast input,
    every reduction) compiles with NVRTC for sm_90, no GPU needed."""
    from dlarray import _fuse_reduce, _rtc_build
    from dlarray._rtc_raw import RawKernel
    if _rtc_build.status()["compile"]:
        pytest.skip(_rtc_build.status()["compile"])
    for r, name, kwargs in ((5, "sum", {"axis": 1}), (100, "max", {}), (5000, "min", {"axis": 0}),
                            (5000, "mean", {"axis": (0, 1)})):
        x = dlarray.asarray(_values(rng, np.float32, (3, r)))
        i = dlarray.asarray(_values(rng, np.int16, (1, r)))
        flag = dlarray.asarray(_values(rng, np.bool_, (3, r)))

        def f(a, b, c):  # min: of truth values (a bool accumulator)
            value = (c & (b > 0)) if name == "min" else dlarray.where(c, a * b, -a)
            return getattr(dlarray, name)(value, **kwargs)
        trace, reduction = dlarray.fuse(f)._trace((x, i, flag), [x, i, flag])
        inputs = sorted({node.arg for node in trace.nodes if node.kind == "input"})
        red = _fuse_reduce.plan(trace, reduction, [x, i, flag], inputs, x.ctx, "cuda")
        RawKernel(red.source, "dl_fused", options=("--fmad=false",)).compile(arch=90)


def test_gpu_grid_covers_the_range_and_folds_in_one_launch_where_it_can():
    """_fuse_reduce_gpu.segments: the segments cover the reduced range exactly once; CUDA folds
    them in the kernel only where a counter per column exists and a thread of the last block
    folds few of them; OpenCL never does (the second reduction folds); the issue's sums run as
    one launch."""
    red = _fuse_reduce.Reducer()
    for language in ("cuda", "opencl"):
        for m, r, columns in ((1, 8192 * 8192, False), (8192, 8192, False), (8192, 8192, True),
                              (1, 1, False), (3, 100, False), (37, 5000, True),
                              (1, 4097, False), (100003, 2, False), (2, 100003, True)):
            red.m, red.r, red.columns, red.language = m, r, columns, language
            g = _fuse_reduce_gpu.group_size(red)
            blocks, segments, length, fold = _fuse_reduce_gpu.segments(red)
            assert blocks * (_fuse_reduce_gpu.THREADS // g) >= m
            assert segments * length >= r and (segments - 1) * length < r
            assert segments <= 65535
            if fold:
                assert language == "cuda" and blocks <= _fuse_reduce_gpu._DONE
                assert -(-segments // g) <= _fuse_reduce_gpu._FOLD_PER_THREAD
            if language == "cuda" and (m, r) == (1, 8192 * 8192):
                assert fold and segments > 1  # sum(a*b + c*d - e): one launch, every SM busy
            if language == "cuda" and (m, r, columns) == (8192, 8192, True):
                assert fold  # axis=0 of 8192 x 8192 too


@pytest.mark.parametrize("few", [False, True], ids=["default", "many-segments"])
def test_sums_across_segments_against_float64(ctx, rng, monkeypatch, few):
    """Float32 sums and int64 max/min at sizes on either side of the GPU's segment, lane and
    group boundaries (and, with 1 element a thread, hundreds of segments that the last block
    folds), against NumPy in float64; a repeated call gives the same bits (the fold's order is
    fixed and its counters are reset)."""
    if few:
        monkeypatch.setattr(_fuse_reduce_gpu, "_MIN_PER_THREAD", 1)
    for shape, axis in (((1,), None), ((4095,), None), ((4097,), None), ((3 * 4096 + 1,), None),
                        (((1 << 20) + 3,), None), ((7, 9973), 1), ((640, 300), 0),
                        ((5000, 37), 0), ((3, 5, 4099), (0, 2))):
        x = rng.standard_normal(shape).astype(np.float32)
        y = rng.standard_normal(shape).astype(np.float32)
        fused = dlarray.fuse(lambda a, b: dlarray.sum(a * b - a, axis=axis))
        args = [dlarray.asarray(v, device=ctx) for v in (x, y)]
        got = fused(*args).asnumpy()
        exact = (x.astype(np.float64) * y - x).sum(axis=axis)
        n = x.size // max(1, np.asarray(exact).size)
        bound = 2 * n * np.finfo(np.float32).eps * np.abs(x * y - x).astype(np.float64).sum(
            axis=axis) + 1e-30
        assert np.all(np.abs(got - exact) <= bound), (shape, axis)
        assert np.array_equal(fused(*args).asnumpy(), got), (shape, axis)
        i = rng.integers(-1 << 40, 1 << 40, shape)
        for name in ("max", "min"):
            f = dlarray.fuse(lambda a, name=name: getattr(dlarray, name)(a - 1, axis=axis))
            np.testing.assert_array_equal(
                f(dlarray.asarray(i, device=ctx)).asnumpy(),
                getattr(np, name)(i - 1, axis=axis))
