"""The array API's reductions (all, any, sum, prod, min, max, mean, var, std, argmin, argmax,
count_nonzero) on every device and every real dtype, against NumPy: 0-d, empty and one-element
arrays, odd shapes, sizes past the kernels' lane, block and piece boundaries (1024, 65536),
axis tuples (adjacent or not), keepdims, dtype=, NaN, and the errors."""
import math

import ml_dtypes
import numpy as np
import pytest

import dlarray as xp

BF16 = np.dtype(ml_dtypes.bfloat16)
REAL = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                              np.uint16, np.uint32, np.uint64, np.float16, np.float32,
                              np.float64)] + [BF16]
FLOATS = [np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64)]
# (shape, axis) pairs: every path of the kernels (rows, columns, pieces) and of the Python side
# (merged adjacent axes, non-adjacent runs, axis=()).
CASES = [((), None), ((), ()), ((1,), 0), ((0,), None), ((7,), -1), ((1031,), 0),
         ((70001,), None), ((3, 0, 2), 2), ((4, 5, 6), (0, 2)), ((4, 5, 6), (1, 2)),
         ((4, 5, 6), ()), ((33, 1025), 0), ((33, 1025), 1), ((3, 4096), 0), ((4096, 3), 1),
         ((2, 70001), 1), ((70001, 2), 0), ((2, 3, 5, 7), (0, 3))]


def _data(rng, shape, dtype, kind):
    if dtype == np.bool_:
        return rng.random(shape) < (0.97 if kind == "all" else 0.03)
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -3
        a = rng.integers(low, 4, size=shape)
        if kind == "prod":  # mostly ones: products that stay readable (they wrap alike anyway)
            a = np.where(rng.random(shape) < 0.9, 1, a)
        return a.astype(dtype)
    if kind == "prod":
        return rng.uniform(0.99, 1.01, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _tolerance(dtype, n):
    if dtype == BF16:
        return 3e-2
    if dtype == np.float16:
        return 1e-2
    if dtype == np.float32:
        return 1e-5
    return 1e-12 if dtype == np.float64 else 0


def _expected(name, a, axis, keepdims):
    """NumPy's answer (floats in float64, then rounded as our result dtype)."""
    wide = a.astype(np.float64) if a.dtype.kind == "f" or a.dtype == BF16 else a
    return getattr(np, name)(wide, axis=axis, keepdims=keepdims)


def _check(got, want, dtype, n=1):
    assert got.shape == want.shape
    if got.dtype.kind == "f" or got.dtype == BF16:
        np.testing.assert_allclose(got.asnumpy().astype(np.float64), want,
                                   rtol=_tolerance(dtype, n), atol=_tolerance(dtype, n))
    else:
        np.testing.assert_array_equal(got.asnumpy(), want)


@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "any", "all"])
@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_reductions_match_numpy(ctx, rng, name, dtype):
    for shape, axis in CASES:
        a = _data(rng, shape, dtype, name)
        x = xp.asarray(a, device=ctx)
        count = math.prod(shape[i] for i in (range(len(shape)) if axis is None else
                                                np.atleast_1d(axis).astype(int) % max(len(shape), 1)))
        if name in ("min", "max") and count == 0 and a.size == 0 and axis is None:
            with pytest.raises(ValueError, match="zero-size"):
                getattr(xp, name)(x, axis=axis)
            continue
        if name in ("min", "max") and a.size == 0:
            continue  # covered in test_empty_rules
        for keepdims in (False, True):
            got = getattr(xp, name)(x, axis=axis, keepdims=keepdims)
            want = _expected(name, a, axis, keepdims)
            if name in ("sum", "prod"):
                assert got.dtype == np.sum(np.zeros(1, a.dtype if a.dtype != BF16 else
                                                    np.float16)).dtype or got.dtype == BF16
            elif name in ("any", "all"):
                assert got.dtype == np.bool_
            else:
                assert got.dtype == dtype
            assert got.ctx == ctx
            _check(got, want.astype(got.dtype) if got.dtype.kind != "f" else want, dtype)


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_argmin_argmax(ctx, rng, dtype):
    for shape, axis in [((), None), ((1,), 0), ((7,), None), ((1031,), 0), ((70001,), None),
                        ((33, 1025), 0), ((33, 1025), 1), ((4, 5, 6), -2), ((2, 70001), 1),
                        ((70001, 2), 0), ((4096, 3), 1), ((3, 4096), 0)]:
        a = _data(rng, shape, dtype, "sum")  # few distinct values: many ties (first one wins)
        x = xp.asarray(a, device=ctx)
        for name in ("argmin", "argmax"):
            for keepdims in (False, True):
                got = getattr(xp, name)(x, axis=axis, keepdims=keepdims)
                want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
                assert got.dtype == np.int64 and got.ctx == ctx
                np.testing.assert_array_equal(got.asnumpy(), want, err_msg="%s %s" % (name, shape))


# Row lengths around the CPU's arg blocks (4096 elements: the block's extreme first, then a search
# of the one block that holds the answer) and its 64-element search chunks.
ARG_LENGTHS = [31, 32, 33, 64, 65, 4095, 4096, 4097, 8191, 12289]


@pytest.mark.parametrize("dtype", [np.dtype(t) for t in (np.int8, np.uint8, np.int32, np.int64,
                                                         np.float16, np.float32, np.float64)]
                         + [BF16], ids=str)
def test_arg_blocks_ties_and_nan(ctx, dtype):
    """argmin / argmax of rows whose extreme sits at block and chunk edges, ties of the extreme
    in later blocks (the first wins), a later NaN after a larger number (the first NaN wins),
    -0.0 against 0.0 (equal: the first), and narrow columns (4096 x 3 over axis 0)."""
    big = 100 if dtype.kind in "iu" or dtype in (np.float16, BF16) else 1e6
    for n in ARG_LENGTHS:
        for spots in ([n - 1], [0, n - 1], [n // 2, n // 3], [min(4096, n - 1), n - 1],
                      [min(4095, n - 1), min(4096, n - 1)], [min(63, n - 1), min(64, n - 1)]):
            a = (np.arange(n) % 7).astype(dtype)
            a[spots] = big
            b = a.copy()
            b[spots] = 0 if dtype.kind == "u" else -big
            rows = np.stack([a, b])
            x = xp.asarray(rows, device=ctx)
            for name in ("argmax", "argmin"):
                want = getattr(np, name)(rows, axis=1)
                np.testing.assert_array_equal(getattr(xp, name)(x, axis=1).asnumpy(), want,
                                              err_msg="%s %d %s" % (name, n, spots))
                assert int(getattr(xp, name)(xp.asarray(a, device=ctx)).asnumpy()) == \
                    getattr(np, name)(a), (name, n, spots)
            if dtype.kind != "f" and dtype != BF16:
                continue
            c = a.copy()
            c[n - 1] = np.nan  # after the largest value: the NaN still wins
            if n > 2:
                c[n // 2] = np.nan
            z = np.zeros(n, dtype)
            z[::3] = -0.0
            for d in (c, z, np.full(n, -np.inf, dtype), np.full(n, np.inf, dtype)):
                for name in ("argmax", "argmin"):
                    got = int(getattr(xp, name)(xp.asarray(d, device=ctx)).asnumpy())
                    assert got == getattr(np, name)(d), (name, n, spots)
    cols = (np.random.default_rng(3).integers(0, 5, (4096, 3))).astype(dtype)
    cols[[7, 4000], 1] = 9
    if dtype.kind == "f" or dtype == BF16:
        cols[[100, 3000], 2] = np.nan
    for name in ("argmax", "argmin"):
        np.testing.assert_array_equal(getattr(xp, name)(xp.asarray(cols, device=ctx),
                                                        axis=0).asnumpy(),
                                      getattr(np, name)(cols, axis=0))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_nan(ctx, dtype):
    a = (np.arange(70001, dtype=np.float32) % 1000).astype(dtype).reshape(1, 70001)
    a[0, 3] = a[0, 40000] = np.nan
    a = np.concatenate([a, np.zeros((1, 70001), dtype)])  # a row without NaN
    x = xp.asarray(a, device=ctx)
    for name in ("min", "max"):
        got = getattr(xp, name)(x, axis=1).asnumpy()
        assert np.isnan(got[0]) and got[1] == 0
    for name in ("argmin", "argmax"):
        np.testing.assert_array_equal(getattr(xp, name)(x, axis=1).asnumpy(), [3, 0])
        assert int(getattr(xp, name)(x).asnumpy()) == 3
    assert bool(xp.all(xp.asarray(np.array([np.nan, 1], dtype), device=ctx)).asnumpy())
    assert np.isnan(xp.sum(x).asnumpy())


def test_extreme_values(ctx):
    # inf and -inf are ordinary values of min and max; int64 extremes stay exact.
    a = np.array([[np.inf, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf]])
    x = xp.asarray(a, device=ctx)
    np.testing.assert_array_equal(xp.max(x, axis=1).asnumpy(), [np.inf, -np.inf])
    np.testing.assert_array_equal(xp.argmin(x, axis=1).asnumpy(), [1, 0])
    b = np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min, 5], np.int64)
    y = xp.asarray(b, device=ctx)
    assert int(xp.max(y).asnumpy()) == b.max() and int(xp.min(y).asnumpy()) == b.min()
    assert int(xp.sum(y).asnumpy()) == int(b.sum())  # wraps as NumPy does


def test_empty_rules(ctx):
    e = xp.asarray(np.zeros((0, 3), np.float32), device=ctx)
    np.testing.assert_array_equal(xp.sum(e, axis=0).asnumpy(), np.zeros(3))
    np.testing.assert_array_equal(xp.prod(e, axis=0).asnumpy(), np.ones(3))
    np.testing.assert_array_equal(xp.all(e, axis=0).asnumpy(), [True] * 3)
    np.testing.assert_array_equal(xp.any(e, axis=0).asnumpy(), [False] * 3)
    assert xp.sum(e, axis=1).shape == (0,) and xp.max(e, axis=1).shape == (0,)
    assert np.isnan(xp.mean(e).asnumpy()) and np.isnan(xp.mean(e, axis=0).asnumpy()).all()
    for name in ("min", "max"):
        with pytest.raises(ValueError, match="zero-size"):
            getattr(xp, name)(e, axis=0)
    for name in ("argmin", "argmax"):
        with pytest.raises(ValueError, match="empty"):
            getattr(xp, name)(e)
        with pytest.raises(ValueError, match="empty"):
            getattr(xp, name)(e, axis=0)
    assert int(xp.count_nonzero(e).asnumpy()) == 0


def test_sum_dtypes(ctx):
    for src, want in [(np.bool_, np.int64), (np.int8, np.int64), (np.int32, np.int64),
                      (np.uint8, np.uint64), (np.uint32, np.uint64), (np.float16, np.float16),
                      (np.float32, np.float32)]:
        x = xp.asarray(np.full((300,), 100 if src != np.bool_ else 1, src), device=ctx)
        for fn in (xp.sum, xp.prod):
            assert fn(x).dtype == want, (fn, src)
        assert xp.cumulative_sum(x).dtype == want
    x = xp.asarray(np.full((300,), 100, np.int8), device=ctx)
    assert int(xp.sum(x).asnumpy()) == 30000  # not wrapped in int8
    got = xp.sum(x, dtype=xp.int8)
    assert got.dtype == np.int8 and int(got.asnumpy()) == np.sum(np.full(300, 100, np.int8),
                                                                  dtype=np.int8)
    got = xp.sum(x, dtype=xp.float32)
    assert got.dtype == np.float32 and float(got.asnumpy()) == 30000.0
    # float16 adds in float32: 4096 ones are 4096, not float16's 2048 plateau.
    h = xp.asarray(np.ones(4096, np.float16), device=ctx)
    assert float(xp.sum(h).asnumpy()) == 4096.0


@pytest.mark.parametrize("dtype", FLOATS + [np.dtype(np.int32), np.dtype(np.bool_)], ids=str)
def test_mean_var_std(ctx, rng, dtype):
    for shape, axis in [((), None), ((1,), None), ((7,), 0), ((33, 1025), 1), ((4, 5, 6), (0, 2)),
                        ((70001,), None)]:
        a = _data(rng, shape, dtype, "sum")
        x = xp.asarray(a, device=ctx)
        ref = a.astype(np.float64)
        result = dtype if dtype.kind == "f" or dtype == BF16 else np.dtype(np.float64)
        got = xp.mean(x, axis=axis)
        assert got.dtype == result
        _check(got, np.mean(ref, axis=axis), result)
        for correction in (0, 1):
            if math.prod(shape) <= correction:
                continue
            for name in ("var", "std"):
                got = getattr(xp, name)(x, axis=axis, correction=correction, keepdims=True)
                want = getattr(np, name)(ref, axis=axis, ddof=correction, keepdims=True)
                assert got.dtype == result
                tol = max(_tolerance(result, 1), 1e-6)
                np.testing.assert_allclose(got.asnumpy().astype(np.float64), want, rtol=tol,
                                           atol=tol)
    one = xp.asarray(np.ones(1, np.float64), device=ctx)
    assert np.isnan(xp.var(one, correction=1).asnumpy())  # 0 / 0


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_count_nonzero(ctx, rng, dtype):
    for shape, axis in [((), None), ((0,), None), ((1031,), 0), ((4, 5, 6), (0, 2)),
                        ((33, 1025), 1)]:
        a = _data(rng, shape, dtype, "sum")
        got = xp.count_nonzero(xp.asarray(a, device=ctx), axis=axis)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got.asnumpy(), np.count_nonzero(a, axis=axis))


def test_axis_errors(ctx):
    x = xp.asarray(np.zeros((2, 3), np.float32), device=ctx)
    for fn in (xp.sum, xp.prod, xp.min, xp.max, xp.mean, xp.var, xp.std, xp.all, xp.any,
               xp.count_nonzero, xp.argmin, xp.argmax):
        with pytest.raises(ValueError, match="axis 2"):
            fn(x, axis=2)
        with pytest.raises(IndexError, match="axis -3"):
            fn(x, axis=-3)
        with pytest.raises(TypeError, match="axis"):
            fn(x, axis=1.0)
        with pytest.raises(TypeError, match="NDArray"):
            fn(np.zeros(3))
    for fn in (xp.sum, xp.max, xp.all):
        with pytest.raises(ValueError, match="repeated"):
            fn(x, axis=(1, -1))
    with pytest.raises(TypeError, match="axis"):
        xp.argmax(x, axis=(0, 1))
    with pytest.raises(TypeError, match="complex"):
        xp.max(xp.asarray(np.zeros(3, np.complex64), device=ctx))
    with pytest.raises(TypeError, match="correction"):
        xp.var(x, correction="1")


def test_planned_reductions_still_check_their_arguments(ctx):
    # Plans are remembered per (shape, axis, keepdims); True == 1 and 1.0 == 1 as dict keys, so
    # the spellings the standard refuses must not find the plan of a valid call.
    x = xp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3), device=ctx)
    np.testing.assert_array_equal(xp.sum(x, axis=1, keepdims=True).asnumpy(), [[3], [12]])
    np.testing.assert_array_equal(xp.sum(x, axis=(0, 1)).asnumpy(), 15)
    for axis in (True, 1.0, np.float64(1)):
        with pytest.raises(TypeError, match="axis"):
            xp.sum(x, axis=axis, keepdims=True)
    with pytest.raises(TypeError, match="axis"):
        xp.sum(x, axis=(0, True))
    with pytest.raises(TypeError, match="keepdims"):
        xp.sum(x, axis=1, keepdims=1)
    # A plan is per shape: another shape with the same axis gets its own.
    y = xp.asarray(np.ones((3, 2), np.float32), device=ctx)
    np.testing.assert_array_equal(xp.sum(y, axis=1, keepdims=True).asnumpy(), [[2], [2], [2]])


@pytest.mark.parametrize("name", ["any", "all"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_any_all_of_complex(ctx, name, dtype):
    # True where either part is non-zero, as NumPy; -0.0 and 0j count as zero, NaN as non-zero.
    a = np.array([[0, 1j, 0], [-0.0, 0, 0], [2, 3 + 1j, np.nan], [0j, -0j, 1e-45j]], dtype)
    if dtype == np.complex128 and not _complex128_ok(ctx):
        pytest.skip("no complex128 on this device")
    x = xp.asarray(a, device=ctx)
    for axis in (None, 0, 1):
        got = getattr(xp, name)(x, axis=axis)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got.asnumpy(), getattr(np, name)(a, axis=axis))


def _complex128_ok(ctx):
    return "complex128" in xp.__array_namespace_info__().dtypes(device=ctx)


def test_strided_input(ctx, rng):
    # Views are reduced through a compact copy (slices, transposes).
    a = rng.standard_normal((6, 40, 9))
    for x, ref in [(xp.asarray(a, device=ctx)[::2, 3:], a[::2, 3:]),
                   (xp.asarray(a, device=ctx).transpose(2, 0, 1), a.transpose(2, 0, 1))]:
        np.testing.assert_allclose(xp.sum(x, axis=(0, 2)).asnumpy(), ref.sum(axis=(0, 2)))
        np.testing.assert_array_equal(xp.argmax(x, axis=1).asnumpy(), ref.argmax(axis=1))
        np.testing.assert_array_equal(x.max(1).asnumpy(), ref.max(1))  # the method form


def test_methods(ctx, rng):
    a = rng.standard_normal((5, 7)).astype(np.float32)
    x = xp.asarray(a, device=ctx)
    for name in ("sum", "prod", "min", "max", "mean", "var", "std", "all", "any"):
        np.testing.assert_allclose(getattr(x, name)(axis=1).asnumpy(),
                                   getattr(a, name)(axis=1), rtol=1e-5)
        np.testing.assert_allclose(getattr(x, name)(0, keepdims=True).asnumpy(),
                                   getattr(a, name)(0, keepdims=True), rtol=1e-5)
    np.testing.assert_array_equal(x.argmax(0).asnumpy(), a.argmax(0))
    np.testing.assert_array_equal(x.argmin().asnumpy(), a.argmin())
    assert x.sum(dtype=xp.float64).dtype == np.float64
    np.testing.assert_allclose(x.std(1, correction=1).asnumpy(), a.std(1, ddof=1), rtol=1e-5)


def test_the_primitives_check_their_operands(ctx):
    """dlarray.ops.reduce / scan directly: the kind, the shapes and the output dtype."""
    x = xp.asarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4), device=ctx)
    np.testing.assert_array_equal(xp.ops.reduce(x, 3).asnumpy(),  # the output inferred
                                  np.arange(24).reshape(2, 3, 4).max(1))
    assert xp.ops.reduce(x, 4).dtype == np.bool_ and xp.ops.reduce(x, 7).dtype == np.int64
    out = xp.empty((6,), ctx, np.float32)
    np.testing.assert_array_equal(xp.ops.reduce(x.reshape(6, 4), 0, out).asnumpy(),
                                  np.arange(24).reshape(6, 4).sum(1))
    with pytest.raises(ValueError, match="kind must be"):
        xp.ops.reduce(x, 8, xp.empty((2, 4), ctx, np.float32))
    with pytest.raises(TypeError, match="kind must be an integer"):
        xp.ops.reduce(x, 1.5, xp.empty((2, 4), ctx, np.float32))
    with pytest.raises(TypeError, match="output dtype must be bool"):
        xp.ops.reduce(x, 4, xp.empty((2, 4), ctx, np.float32))
    with pytest.raises(TypeError, match="output dtype must be int64"):
        xp.ops.reduce(x, 6, xp.empty((2, 4), ctx, np.float32))
    with pytest.raises(ValueError, match=r"\[outer, inner\]"):
        xp.ops.reduce(x, 0, xp.empty((2, 3), ctx, np.float32))
    with pytest.raises(ValueError, match="3-D .* or 2-D"):
        xp.ops.reduce(x.reshape(24), 0, xp.empty((1,), ctx, np.float32))
    got = xp.ops.scan(x, 0, True)
    assert got.shape == (2, 4, 4)
    np.testing.assert_array_equal(got.asnumpy()[:, 1:], np.cumsum(np.arange(24).reshape(2, 3, 4),
                                                                  axis=1))
    with pytest.raises(ValueError, match="kind must be"):
        xp.ops.scan(x, 2)
    with pytest.raises(TypeError, match="include_initial must be a bool"):
        xp.ops.scan(x, 0, 0.5)
