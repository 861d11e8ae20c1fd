"""Every op in every dtype it supports, on every device, against NumPy (ml_dtypes for bfloat16),
at sizes that cross thread and block boundaries, odd shapes and one element; astype between
every pair of dtypes; and the dtype errors."""
import numpy as np
import pytest

import dlarray
from dlarray import ops

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")
BF16 = np.dtype(ml_dtypes.bfloat16)

FLOATS = [np.dtype(np.float32), np.dtype(np.float16), BF16, np.dtype(np.float64)]
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8)]
ALL = FLOATS + INTS + [np.dtype(np.bool_)]
SHAPES = [(1,), (7, 13), (257, 33), (3, 1029)]


def _data(rng, shape, dtype):
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -100), min(info.max, 100)
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)
    return (rng.standard_normal(shape) * 3).astype(dtype)


def _dev(a, ctx):
    return dlarray.array(a, ctx, dtype=a.dtype)


# Unit roundoff of each float dtype (half the spacing of the numbers in [1, 2)): a correctly
# rounded result is within U * |exact| of the exact value, and the tolerances below are counts of
# such roundings, so that a kernel computing in a narrower type than it promises fails.
U = {np.dtype(np.float16): 2.0 ** -11, BF16: 2.0 ** -8, np.dtype(np.float32): 2.0 ** -24,
     np.dtype(np.float64): 2.0 ** -53}
# The spacing of the subnormals: where relative bounds stop holding.
SUBNORMAL = {np.dtype(np.float16): 2.0 ** -24, BF16: 2.0 ** -133, np.dtype(np.float32): 2.0 ** -149,
             np.dtype(np.float64): 5e-324}
# What the kernels compute and accumulate in: float32 for the half types and float32 itself
# (whose sums move float partial sums of at most 16 values into double: see
# reduce_sum_axis_zero.cc), double for float64.
ACC_U = {np.dtype(np.float16): 2.0 ** -24, BF16: 2.0 ** -24, np.dtype(np.float32): 2.0 ** -24,
         np.dtype(np.float64): 2.0 ** -53}


def _assert_rounded(got, exact, dtype, roundings=1.0, extra=0.0):
    """got (of dtype) is within `roundings` roundings to dtype of exact (float64), plus `extra`
    (an accumulation's error bound, scalar or per element). NaN matches only NaN."""
    assert got.dtype == dtype
    got64 = np.asarray(got).astype(np.float64)
    exact = np.broadcast_to(np.asarray(exact, np.float64), got64.shape)
    allowed = roundings * U[dtype] * np.abs(exact) + SUBNORMAL[dtype] + extra
    err = np.abs(got64 - exact)
    bad = ~(err <= allowed) & ~(np.isnan(got64) & np.isnan(exact))
    if bad.any():
        i = np.unravel_index(np.argmax(np.where(bad, err / allowed, 0)), got64.shape)
        raise AssertionError(f"{int(bad.sum())} of {bad.size} elements off: at {i} got "
                             f"{got64[i]!r}, exact {exact[i]!r}, allowed error "
                             f"{np.broadcast_to(allowed, got64.shape)[i]:.3g}")


def _check(got, exact, dtype, roundings=1.0):
    """Integers and bool exactly; floats within `roundings` of the float64 result."""
    if dtype.kind in "iub":
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, exact)
    else:
        _assert_rounded(got, exact, dtype, roundings)


def _wide(a):
    """The exact operand: float64 for floats (every dtype here converts to it exactly), the
    array itself for integers (NumPy then wraps as the kernels must)."""
    return a.astype(np.float64) if a.dtype.kind == "f" or a.dtype == BF16 else a


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_elementwise_arithmetic(ctx, rng, dtype, shape):
    # Sums and products are computed exactly in float64 and rounded once to the dtype: each op
    # must give that correctly rounded result (one rounding), not a result of a narrower type.
    a, b = _data(rng, shape, dtype), _data(rng, shape, dtype)
    x, y, out = _dev(a, ctx), _dev(b, ctx), dlarray.empty(shape, ctx, dtype)
    wa, wb = _wide(a), _wide(b)
    ops.matrix_elementwise_add(x, y, out)
    _check(out.asnumpy(), wa + wb, dtype)
    ops.matrix_elementwise_multiply(x, y, out)
    _check(out.asnumpy(), wa * wb, dtype)
    ops.matrix_elementwise_add_by_const(x, 3, out)
    _check(out.asnumpy(), wa + dtype.type(3), dtype)
    ops.matrix_elementwise_multiply_by_const(x, -2, out)
    wide = a.astype(np.int64) if dtype.kind in "iu" else wa
    _check(out.asnumpy(), (wide * -2).astype(dtype) if dtype.kind in "iu" else wide * -2, dtype)
    ops.array_set(out, 5)
    _check(out.asnumpy(), np.full(shape, 5, dtype), dtype)
    ops.copy(x, out)
    np.testing.assert_array_equal(out.asnumpy(), a)


def test_integer_wraparound_like_numpy(ctx):
    a = np.array([250, 3, 128], np.uint8)
    x, out = _dev(a, ctx), dlarray.empty((3,), ctx, np.uint8)
    ops.matrix_elementwise_add(x, x, out)
    np.testing.assert_array_equal(out.asnumpy(), a + a)
    ops.matrix_elementwise_add_by_const(x, -5, out)  # x - 5, wrapping
    np.testing.assert_array_equal(out.asnumpy(), (a.astype(np.int64) - 5).astype(np.uint8))
    b = np.array([2 ** 31 - 1, -2 ** 31], np.int32)
    y, o32 = _dev(b, ctx), dlarray.empty((2,), ctx, np.int32)
    ops.matrix_elementwise_multiply_by_const(y, 3, o32)
    np.testing.assert_array_equal(o32.asnumpy(), (b.astype(np.int64) * 3).astype(np.int32))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_float_ops(ctx, rng, dtype, shape):
    a, b = _data(rng, shape, dtype), _data(rng, shape, dtype)
    b = np.where(np.abs(b.astype(np.float32)) < 0.1, dtype.type(1), b).astype(dtype)
    x, y, out = _dev(a, ctx), _dev(b, ctx), dlarray.empty(shape, ctx, dtype)
    wa, wb = _wide(a), _wide(b)
    ops.relu(x, out)
    _check(out.asnumpy(), np.where(wa < 0, 0.0, wa), dtype, roundings=0)
    ops.relu_gradient(x, y, out)
    _check(out.asnumpy(), wb * (wa > 0), dtype, roundings=0)
    ops.matrix_elementwise_divide(x, y, out)
    _check(out.asnumpy(), wa / wb, dtype)
    ops.matrix_elementwise_divide_by_const(x, 3.0, out)
    _check(out.asnumpy(), wa / 3, dtype)
    labels = np.zeros(shape, dtype)
    labels[..., 0] = 1
    _check_softmax_and_loss(ctx, a, labels)


def _same_bits(got, want):
    """Equal values with equal signs (-0.0 is not +0.0 here), NaN where NaN."""
    g, w = np.asarray(got).astype(np.float64), np.asarray(want, np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    same = ((g == w) & (np.signbit(g) == np.signbit(w))) | both_nan
    bad = np.flatnonzero(~same)
    assert bad.size == 0, f"{bad.size} differ, first at {bad[0]}: got {g.flat[bad[0]]!r}, " \
                          f"want {w.flat[bad[0]]!r}"


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("n", [1, 7, 64, 1029, 40_001], ids=str)
def test_relu_at_zeros_of_either_sign(ctx, rng, dtype, n):
    # relu(x) is x unless x < 0, as numpy.maximum(x, 0): -0.0 stays -0.0 and NaN stays NaN. Its
    # gradient is grad * (x > 0): 0 at both zeros (signed like grad * 0.0). A third of the
    # elements are zeros, at random places (every SIMD lane, the scalar tail, both sides of the
    # parallel split), so that comparing with >= or <= instead of > or < shows.
    x = _data(rng, (n,), dtype)
    g = _data(rng, (n,), dtype)
    g[g == 0] = dtype.type(1)
    pick = rng.random(n)
    x[pick < 0.33] = dtype.type(0.0)
    x[pick < 0.16] = dtype.type(-0.0)
    x[(pick > 0.97)] = dtype.type(np.nan)
    x[-1] = dtype.type(-0.0)
    wx, wg = x.astype(np.float64), g.astype(np.float64)
    out = dlarray.empty((n,), ctx, dtype)
    ops.relu(_dev(x, ctx), out)
    _same_bits(out.asnumpy(), np.where(wx < 0, 0.0, wx))
    ops.relu_gradient(_dev(x, ctx), _dev(g, ctx), out)
    _same_bits(out.asnumpy(), wg * (wx > 0))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape", [(2, 2), (9, 7), (130, 33), (5, 1029)], ids=str)
def test_softmax_of_large_logits_anywhere(ctx, rng, dtype, shape):
    # Several logits near 1000 at random places of each row (never only at index 0), -1000 first
    # in every other row: exp of a logit minus anything but the row's maximum overflows, in
    # float and in double, so only kernels that shift by the maximum get these right.
    rows, cols = shape
    x = rng.uniform(-3, 3, shape)
    for r in range(rows):
        big = rng.choice(np.arange(1, cols), size=min(cols - 1, int(rng.integers(1, 5))),
                         replace=False)
        x[r, big] = 1000 + rng.uniform(-8, 8, len(big))
        if r % 2 and cols > 2:
            x[r, 0] = -1000
    labels = rng.random(shape)
    labels /= labels.sum(axis=1, keepdims=True)
    _check_softmax_and_loss(ctx, x.astype(dtype), labels.astype(dtype))


def _check_softmax_and_loss(ctx, a, labels):
    """softmax(a) and softmax_cross_entropy(a, labels) against float64. Both compute in ACC_U's
    type: d = x - max rounds there (|d| roundings in exp(d)), exp and the scaling add a few
    more, the row sum (cols - 1) at most, in any order; the softmax is then rounded once to the
    dtype, the loss too."""
    dtype = a.dtype
    cols = a.shape[-1]
    w = a.astype(np.float64).reshape(-1, cols)
    d = w - w.max(axis=1, keepdims=True)
    log_p = d - np.log(np.exp(d).sum(axis=1, keepdims=True))
    p = np.exp(log_p)
    out = dlarray.empty(a.shape, ctx, dtype)
    ops.softmax(_dev(a, ctx), out)
    _assert_rounded(out.asnumpy(), p.reshape(a.shape), dtype,
                    extra=((4 + cols + 2 * np.abs(d)) * ACC_U[dtype] * p).reshape(a.shape))
    loss = dlarray.empty((1,), ctx, dtype)
    ops.softmax_cross_entropy(_dev(a, ctx), _dev(labels, ctx), loss)
    y = labels.astype(np.float64).reshape(w.shape)
    want = -(y * log_p).sum(axis=1).mean()
    # Per row: the log of the sum (off by the sum's roundings) and the dot product with the
    # labels, each a few roundings of its magnitude, d by |d| roundings.
    row = (4 + cols + 4 * np.abs(log_p) + 2 * np.abs(d)) * np.abs(y)
    _assert_rounded(loss.asnumpy(), [want], dtype,
                    extra=ACC_U[dtype] * (row.sum(axis=1).mean() + 4 * abs(want)))


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (300, 70), (2049, 3)], ids=str)
def test_reduce_and_broadcast(ctx, rng, dtype, shape):
    a = _data(rng, shape, dtype)
    x, out = _dev(a, ctx), dlarray.empty(shape[1:], ctx, dtype)
    ops.reduce_sum_axis_zero(x, out)
    if dtype.kind in "iu":
        np.testing.assert_array_equal(out.asnumpy(), a.sum(axis=0, dtype=a.dtype))
    else:
        # Error of the accumulation (any order of additions: (terms - 1) roundings of the
        # accumulator type on the sum of magnitudes), then one rounding to the dtype.
        wa = a.astype(np.float64)
        terms = min(shape[0], 16) if dtype == np.float32 else shape[0]
        acc = (terms - 1) * ACC_U[dtype] * np.abs(wa).sum(axis=0)
        _assert_rounded(out.asnumpy(), wa.sum(axis=0), dtype, extra=acc * (1 + U[dtype]))
    row = _data(rng, shape[1:], dtype)
    b = dlarray.empty(shape, ctx, dtype)
    ops.broadcast_to(_dev(row, ctx), b)
    np.testing.assert_array_equal(b.asnumpy(), np.broadcast_to(row, shape))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape", [(4097,), (4097, 3), (1031, 130), (20, 70)], ids=str)
def test_reduce_sum_is_exact_where_the_accumulator_is(ctx, rng, dtype, shape):
    # Quarters up to 32 in magnitude are exact in every float dtype, and every partial sum of up
    # to 4097 of them (below 2**17, in quarters) is exact in float32: an accumulator of float32
    # or wider gives the exact sum, rounded once to the dtype. One of the half types (exact
    # integers only up to 2048 or 256) or a float32 running sum would not.
    q = rng.integers(-128, 129, size=shape) / 4
    if len(shape) > 1:
        q[:, 0] = 1.0  # float16 counts ones only up to 2048, bfloat16 up to 256
        q[:, -1] = np.abs(q[:, -1]) / 4  # one column whose sum keeps growing (below 2**15)
    a = q.astype(dtype)
    out = dlarray.empty(shape[1:] or (1,), ctx, dtype)
    ops.reduce_sum_axis_zero(_dev(a, ctx), out)
    want = q.sum(axis=0).reshape(out.shape).astype(dtype)
    np.testing.assert_array_equal(out.asnumpy().astype(np.float64), want.astype(np.float64))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("cols", [31, 1024, 2051, 8200, 16384, 17001], ids=str)
def test_softmax_and_loss_on_every_row_kernel(ctx, rng, dtype, cols):
    # The CUDA kernels are one per row length for every dtype: softmax takes a warp per row up to
    # 1024 columns, a block per row (256 or 1024 threads) up to 16384 and a streaming two-pass
    # block beyond; the loss a warp per row up to 2048 columns, then blocks of 256 or 1024.
    # float32 rows of a multiple of 4 columns move as float4 (1024, 8200, 16384).
    a = (rng.standard_normal((3, cols)) * 3).astype(dtype)
    labels = rng.random((3, cols))
    labels /= labels.sum(axis=1, keepdims=True)
    _check_softmax_and_loss(ctx, a, labels.astype(dtype))


@pytest.mark.parametrize("dtype", ALL, ids=str)
@pytest.mark.parametrize("shapes", [((1,), (7,)), ((1,), (1031,)), ((1,), (4, 1031)),
                                    ((64,), (40, 64)), ((48,), (9, 48)), ((520,), (5, 520)),
                                    ((1031,), (3, 1031))], ids=str)
def test_broadcast_fill_and_rows(ctx, rng, dtype, shapes):
    # One value to every element (a fill) and a row to every row, with widths that are and are
    # not whole 16-byte vectors of each element size (the CUDA kernels move vectors of 16 bytes
    # where they can, the rest one element at a time), narrower and wider than a warp of vectors.
    src, shape = shapes
    row = _data(rng, src, dtype)
    out = dlarray.empty(shape, ctx, dtype)
    ops.broadcast_to(_dev(row, ctx), out)
    np.testing.assert_array_equal(out.asnumpy(), np.broadcast_to(row, shape))


def test_bool_broadcast_and_set(ctx):
    row = np.array([True, False, True])
    out = dlarray.empty((4, 3), ctx, bool)
    ops.broadcast_to(_dev(row, ctx), out)
    np.testing.assert_array_equal(out.asnumpy(), np.broadcast_to(row, (4, 3)))
    ops.array_set(out, 0)
    assert not out.asnumpy().any()


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("mnk", [(1, 1, 1), (17, 33, 9), (128, 64, 96), (65, 130, 257)], ids=str)
@pytest.mark.parametrize("trans", [(False, False), (True, False), (False, True)], ids=str)
def test_matrix_multiply(ctx, rng, dtype, mnk, trans):
    m, n, k = mnk
    ta, tb = trans
    a = _data(rng, (k, m) if ta else (m, k), dtype)
    b = _data(rng, (n, k) if tb else (k, n), dtype)
    out = dlarray.empty((m, n), ctx, dtype)
    ops.matrix_multiply(_dev(a, ctx), ta, _dev(b, ctx), tb, out)
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    fa, fb = (fa.T if ta else fa), (fb.T if tb else fb)
    want = fa @ fb
    # Products accumulate in float32 (double for float64): at most k roundings of the
    # accumulator on the sum of |products|, then one rounding to the dtype.
    acc = k * ACC_U[dtype] * (np.abs(fa) @ np.abs(fb))
    _assert_rounded(out.asnumpy(), want, dtype, extra=acc * (1 + U[dtype]))


@pytest.mark.parametrize("src", ALL, ids=str)
def test_astype_every_pair(ctx, rng, src):
    a = _data(rng, (129, 3), src)
    x = _dev(a, ctx)
    for dst in ALL:
        if src.kind == "f" or src == BF16:
            if dst.kind == "u":  # negative floats to unsigned are undefined in NumPy
                a = np.abs(a)
                x = _dev(a, ctx)
        got = x.astype(dst)
        assert got.dtype == dst
        want = a.astype(dst)
        if dst.kind == "f" or dst == BF16:
            np.testing.assert_array_equal(got.asnumpy().astype(np.float64),
                                          want.astype(np.float64))
        else:
            np.testing.assert_array_equal(got.asnumpy(), want)


def test_astype_rounds_to_nearest_even(ctx):
    # Ties and subnormals of float16, exactly as NumPy rounds them.
    vals = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 2 ** -25, 3 * 2 ** -26, 65520.0, 65519.0,
                     -2 ** -24, 1e-8, np.inf, -np.inf], np.float64)
    x = _dev(vals, ctx)
    with np.errstate(over="ignore"):  # 65520 rounds to inf, on purpose
        want = vals.astype(np.float16)
    np.testing.assert_array_equal(x.astype(np.float16).asnumpy(), want)
    np.testing.assert_array_equal(_dev(vals.astype(np.float32), ctx).astype(BF16).asnumpy(),
                                  vals.astype(np.float32).astype(BF16))
    nan = _dev(np.array([np.nan], np.float32), ctx)
    assert np.isnan(nan.astype(np.float16).asnumpy()[0])
    assert np.isnan(nan.astype(BF16).asnumpy().astype(np.float32)[0])


def test_astype_of_nan_and_out_of_range_floats_to_integers(ctx):
    # dlarray's rule (NumPy leaves it undefined): truncate, saturate, NaN gives 0 on every
    # device. NVIDIA's OpenCL gave the type's minimum for NaN (convert_<T>_sat, against its spec).
    vals = np.array([np.nan, np.inf, -np.inf, 1e10, -1e10, -0.5, 2.7, -129.0, 300.0], np.float64)
    for src in (np.float32, np.float64):
        x = _dev(vals.astype(src), ctx)
        for dst in (np.int8, np.uint8, np.int32, np.int64):
            info = np.iinfo(dst)
            want = [0 if v != v else info.max if v == np.inf else info.min if v == -np.inf
                    else min(max(int(v), info.min), info.max) for v in vals.astype(src)]
            np.testing.assert_array_equal(x.astype(dst).asnumpy(), np.array(want, dst),
                                          err_msg="%s to %s" % (np.dtype(src), np.dtype(dst)))


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_compare(ctx, rng, dtype):
    a, b = _data(rng, (70, 9), dtype), _data(rng, (70, 9), dtype)
    b[::3] = a[::3]
    x, y = _dev(a, ctx), _dev(b, ctx)
    out = dlarray.empty(a.shape, ctx, bool)
    for cmp, fn in enumerate([np.equal, np.not_equal, np.less, np.less_equal, np.greater,
                              np.greater_equal]):
        ops.compare(x, y, out, cmp)
        np.testing.assert_array_equal(out.asnumpy(), fn(a, b))
        ops.compare_by_const(x, 1, out, cmp)
        np.testing.assert_array_equal(out.asnumpy(), fn(a.astype(np.float64), 1.0))


def test_dtype_errors(ctx):
    i = dlarray.empty((3,), ctx, np.int32)
    f = dlarray.empty((3,), ctx)
    with pytest.raises(TypeError, match="int32"):
        ops.relu(i, i)
    with pytest.raises(TypeError, match="operand 0 has float32"):
        ops.matrix_elementwise_add(f, i, f)
    with pytest.raises(TypeError, match="must be bool"):
        ops.compare(f, f, f, 0)
    with pytest.raises(TypeError, match="bool"):
        b = dlarray.empty((3,), ctx, bool)
        ops.matrix_elementwise_add(b, b, b)
    with pytest.raises(TypeError, match="unsupported dtype"):
        dlarray.empty((2,), ctx, np.clongdouble)
