"""The split reductions (issue 21) against NumPy on every device: a reduction cut into pieces
along its axis, whose last piece to finish combines the partials (the CUDA kernels' single pass),
from a few pieces to more pieces than a block has threads; ties and NaN in different pieces
(the lowest index wins, the first NaN wins); misaligned contiguous views; tall columns; the
same reductions again (the pieces' counters start from zero each time); and x[mask] = scalar,
whose where reads a bool mask beside wider data in vectors, for complex data and misaligned views.
"""
import ml_dtypes
import numpy as np
import pytest

import dlarray as xp

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
# A block-row piece is 64 chunks of 16 bytes a thread: 16384 float32. Sizes of 2 pieces plus an odd
# tail, of many pieces, and (float32 and bool) of more pieces than the 256 threads that combine.
PIECE = 16384
SIZES = {F32: [2 * PIECE + 5, 40 * PIECE + 3, 300 * PIECE + 17], F16: [2 * PIECE + 5, 40 * PIECE],
         BF16: [3 * PIECE - 1], F64: [2 * PIECE + 5, 20 * PIECE + 1],
         np.dtype(np.int8): [2 * PIECE + 5, 70 * PIECE + 3],
         np.dtype(np.uint16): [5 * PIECE + 1], np.dtype(np.int64): [9 * PIECE + 7],
         np.dtype(np.bool_): [2 * PIECE + 5, 300 * PIECE + 17]}
NAMES = ("sum", "max", "min", "argmax", "argmin", "all", "any", "mean")


def _host(got):
    """got on the host, the 16-bit floats as float64 (NaN compares equal to NaN below)."""
    out = got.asnumpy()
    return out.astype(np.float64) if out.dtype in (F16, BF16) else out


def _want(name, a):
    if name in ("sum", "mean") and (a.dtype.kind == "f" or a.dtype == BF16):
        return getattr(np, name)(a.astype(np.float64))
    return getattr(np, name)(a)


def _check(name, got, want, dtype, n):
    out = _host(got)
    if name in ("sum", "mean") and (dtype.kind == "f" or dtype == BF16):
        rtol = {F32: 1e-5, F64: 1e-12}.get(dtype, 1e-2)
        atol = rtol * (n ** 0.5 if name == "sum" else 1)
        np.testing.assert_allclose(out, want, rtol=rtol, atol=atol, err_msg=name)
    else:
        np.testing.assert_array_equal(out, np.asarray(want).astype(out.dtype), err_msg=name)


def _data(rng, n, dtype):
    if dtype == np.bool_:
        return rng.random(n) < 0.999
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), n).astype(dtype)
    return rng.standard_normal(n).astype(dtype)


@pytest.mark.parametrize("dtype", list(SIZES), ids=str)
def test_whole_array_in_pieces(ctx, rng, dtype):
    for n in SIZES[dtype]:
        a = _data(rng, n, dtype)
        x = xp.asarray(a, device=ctx)
        for name in NAMES:
            if name == "mean" and dtype.kind in "biu":
                continue
            _check(name, getattr(xp, name)(x), _want(name, a), dtype, n)
        if dtype == np.bool_:  # all and any decided by one element in the last piece
            b = np.ones(n, bool)
            b[-1] = False
            assert not bool(xp.all(xp.asarray(b, device=ctx)).asnumpy())
            assert bool(xp.any(xp.asarray(~b, device=ctx)).asnumpy())


@pytest.mark.parametrize("dtype", [F32, F16, BF16, F64, np.dtype(np.int8)], ids=str)
def test_ties_and_nan_across_pieces(ctx, dtype):
    n = 40 * PIECE + 3
    a = np.zeros(n, dtype)
    x = xp.asarray(a, device=ctx)
    assert int(xp.argmax(x).asnumpy()) == 0 and int(xp.argmin(x).asnumpy()) == 0
    for spots in ([n - 1], [30 * PIECE, 5 * PIECE + 1, 20 * PIECE], [PIECE - 1, PIECE]):
        a = np.zeros(n, dtype)
        a[spots] = 7
        a[[s + 1 for s in spots if s + 1 < n]] = -7
        x = xp.asarray(a, device=ctx)
        assert int(xp.argmax(x).asnumpy()) == min(spots), spots
        assert int(xp.argmin(x).asnumpy()) == np.argmin(a), spots
        assert float(xp.max(x).asnumpy()) == 7
        if dtype.kind != "f" and dtype != BF16:
            continue
        a[spots[-1]] = np.nan  # NaN beats every number, the first NaN wins
        x = xp.asarray(a, device=ctx)
        for name in ("argmax", "argmin"):
            assert int(getattr(xp, name)(x).asnumpy()) == spots[-1], (name, spots)
        assert np.isnan(_host(xp.max(x))) and np.isnan(_host(xp.min(x)))
        assert np.isnan(_host(xp.sum(x)))
        a[spots[0]] = np.nan
        x = xp.asarray(a, device=ctx)
        assert int(xp.argmax(x).asnumpy()) == min(spots[0], spots[-1])


@pytest.mark.parametrize("dtype", [F32, F16, np.dtype(np.int8), F64], ids=str)
def test_misaligned_contiguous_views(ctx, rng, dtype):
    """A contiguous view that starts an element past an alignment boundary: the rows' scalar
    head before the first 16-byte chunk."""
    for n in (2 * PIECE + 5, 3000, 17):
        a = _data(rng, n + 3, dtype)
        base = xp.asarray(a, device=ctx)
        for skip in (1, 3):
            x = base[skip:]
            assert x.is_contiguous
            for name in ("sum", "max", "argmin"):
                _check(name, getattr(xp, name)(x), _want(name, a[skip:]), dtype, n)


@pytest.mark.parametrize("dtype", [F32, F16, F64, np.dtype(np.int8), np.dtype(np.bool_)],
                         ids=str)
def test_rows_around_the_warp_limit(ctx, rng, dtype):
    """Rows reduced over their last axis on both sides of where CUDA gives a row a warp rather
    than a block (4096 elements), with as many rows as fill a GPU or a few, rows of a
    misaligned view (each row's scalar head differs), and pieces of few rows."""
    for rows, n in [(600, 4095), (600, 4096), (600, 4097), (40, 4096), (3, 4097), (513, 2048),
                    (2, 70_001)]:
        a = _data(rng, rows * n + 1, dtype)
        for skip in (0, 1):
            flat = xp.asarray(a, device=ctx)[skip:skip + rows * n]
            x, want_from = flat.reshape(rows, n), a[skip:skip + rows * n].reshape(rows, n)
            for name in NAMES:
                if name == "mean" and dtype.kind in "biu":
                    continue
                want = (getattr(np, name)(want_from.astype(np.float64), axis=1)
                        if name in ("sum", "mean") and dtype.kind == "f"
                        else getattr(np, name)(want_from, axis=1))
                _check(name, getattr(xp, name)(x, axis=1), want, dtype, n)


@pytest.mark.parametrize("dtype", [F32, BF16, np.dtype(np.int16), np.dtype(np.bool_)], ids=str)
def test_columns_in_pieces(ctx, rng, dtype):
    """Tall narrow columns (up to a thousand pieces, each thread of the last block combining its
    column's), several outer blocks of columns, and (0, 2) of a 3-D array."""
    for shape, axis in [((100_003, 3), 0), ((5, 4099, 3), 1), ((300, 7, 33), (0, 2)),
                        ((3000, 257), 0), ((2, 129, 300), (0, 2))]:
        a = _data(rng, shape, dtype)
        x = xp.asarray(a, device=ctx)
        for name in ("sum", "max", "argmax", "all"):
            if name == "argmax" and isinstance(axis, tuple):
                continue
            got = getattr(xp, name)(x, axis=axis)
            want = getattr(np, name)(a.astype(np.float64) if name == "sum" and dtype == BF16
                                     else a, axis=axis)
            if name == "sum" and dtype.kind == "f" or name == "sum" and dtype == BF16:
                np.testing.assert_allclose(_host(got), want, rtol=1e-2 if dtype == BF16 else 1e-5,
                                           atol=1e-2 if dtype == BF16 else 1e-3)
            else:
                np.testing.assert_array_equal(_host(got), np.asarray(want).astype(
                    _host(got).dtype), err_msg=str((name, shape, axis)))


def test_the_same_reductions_again(ctx, rng):
    """Each grid column of pieces counts its finished pieces and resets the count: reductions
    of other grids in between, then the first ones again, give the same answers."""
    arrays = [rng.standard_normal(s).astype(np.float32) for s in
              [(40 * PIECE + 3,), (100_003, 3), (3, 70001), (300, 7, 33)]]
    runs = []
    for _ in range(2):
        got = []
        for a in arrays:
            x = xp.asarray(a, device=ctx)
            got += [xp.sum(x).asnumpy(), xp.argmax(x).asnumpy(), xp.max(x, axis=0).asnumpy(),
                    xp.min(x, axis=-1).asnumpy()]
        runs.append(got)
    for first, second in zip(*runs):
        np.testing.assert_array_equal(first, second)
    a = arrays[1]
    np.testing.assert_array_equal(runs[1][6], a.max(axis=0))
    assert int(runs[1][5]) == np.argmax(a)


@pytest.mark.parametrize("dtype", [np.dtype(np.complex64), np.dtype(np.complex128), F16,
                                   np.dtype(np.uint8), F64], ids=str)
def test_mask_set_scalar_misaligned_and_complex(ctx, rng, dtype):
    """x[mask] = scalar through the in-place where: complex elements (one per 16 bytes), and a
    contiguous view one element past an alignment boundary (the element-wise loop)."""
    for n in (1, 3, 5, 17, 1025 + 2):
        a = (np.abs(rng.standard_normal(n + 1)) * 10).astype(dtype)
        mask = rng.random(n + 1) < 0.5
        value = 2 - 1j if dtype.kind == "c" else 3
        want = a.copy()
        want[mask] = value
        got = xp.asarray(a, device=ctx)
        got[xp.asarray(mask, device=ctx)] = value
        np.testing.assert_array_equal(got.asnumpy(), want)
        base = xp.asarray(a, device=ctx)
        view = base[1:]
        view[xp.asarray(mask[1:], device=ctx)] = value
        want = a.copy()
        want[1:][mask[1:]] = value
        np.testing.assert_array_equal(base.asnumpy(), want)


@pytest.mark.parametrize("dtype", [np.dtype(np.complex64), np.dtype(np.complex128)], ids=str)
def test_complex_sum_and_prod_in_pieces(ctx, rng, dtype):
    """Complex sums and products (accumulated in complex128) of the whole array, of a view one
    element past a 16-byte boundary, and down tall columns, against NumPy in complex128."""
    tol = 1e-5 if dtype == np.complex64 else 1e-11
    for n in (1, 7, 2 * PIECE + 5, 40 * PIECE + 3):
        # On the unit circle: products stay finite, sums stay of order sqrt(n).
        a = np.exp(1j * rng.uniform(-np.pi, np.pi, n + 1)).astype(dtype)
        base = xp.asarray(a, device=ctx)
        for x, host in ((base, a), (base[1:], a[1:])):
            wide = host.astype(np.complex128)
            np.testing.assert_allclose(xp.sum(x).asnumpy(), wide.sum(), rtol=tol,
                                       atol=tol * n ** 0.5)
            np.testing.assert_allclose(xp.prod(x).asnumpy(), wide.prod(), rtol=tol * 10,
                                       atol=tol * 10)
    a = np.exp(1j * rng.uniform(-np.pi, np.pi, (100_003, 3))).astype(dtype)
    x = xp.asarray(a, device=ctx)
    wide = a.astype(np.complex128)
    np.testing.assert_allclose(xp.sum(x, axis=0).asnumpy(), wide.sum(axis=0), rtol=tol,
                               atol=tol * 400)
    np.testing.assert_allclose(xp.prod(x, axis=0).asnumpy(), wide.prod(axis=0), rtol=tol * 10,
                               atol=tol * 10)
