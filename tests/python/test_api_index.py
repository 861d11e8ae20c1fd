"""Area "index" of the array API (issue 21): take, take_along_axis, integer-array and boolean-mask
indexing (get and set), nonzero, argsort/sort, searchsorted and the unique_* functions, on every
device and dtype, against NumPy: empty, 0-d and 1-element arrays, negative indices, sizes past
the kernels' chunk and block sizes (1024, 65536), and the errors."""
import numpy as np
import pytest

import dlarray as xp

REAL = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                              np.uint16, np.uint32, np.uint64, np.float16, np.float32,
                              np.float64)]
ALL = REAL + [np.dtype(np.complex64), np.dtype(np.complex128)]


def _data(rng, shape, dtype, low=-50, high=50):
    """Values of dtype with many repeats (sorting and unique see ties)."""
    v = rng.integers(low, high, size=shape)
    if dtype.kind == "b":
        return (v % 2 == 0)
    if dtype.kind == "u":
        v = np.abs(v)
    if dtype.kind == "c":
        return (v + 1j * rng.integers(-3, 3, size=shape)).astype(dtype)
    return v.astype(dtype)


def _dev(a, ctx):
    return xp.asarray(np.asarray(a), ctx)


def _eq(got, want):
    got = got.asnumpy()
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype,
                                                                 want.shape, want.dtype)
    np.testing.assert_array_equal(got, want)


# --- take, take_along_axis ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_take_every_dtype(ctx, rng, dtype):
    a = _data(rng, (3, 5, 4), dtype)
    idx = np.array([4, -1, 0, 0, -5, 2], np.int64)
    for axis in (0, 1, 2, -1):
        n = a.shape[axis]
        k = idx[(idx >= -n) & (idx < n)]
        _eq(xp.take(_dev(a, ctx), _dev(k, ctx), axis=axis), np.take(a, k, axis=axis))


@pytest.mark.parametrize("shape, axis", [((0,), 0), ((1,), 0), ((70001,), 0), ((2, 0, 3), 2),
                                         ((1025, 3), 0), ((3, 1025), 1)], ids=str)
def test_take_shapes(ctx, rng, shape, axis):
    a = rng.standard_normal(shape).astype(np.float32)
    n = shape[axis]
    idx = rng.integers(-n, n, size=1500) if n else np.zeros(0, np.int64)
    _eq(xp.take(_dev(a, ctx), _dev(idx, ctx), axis=axis), np.take(a, idx, axis=axis))
    for itype in (np.int8, np.int32, np.uint16):  # any integer dtype indexes
        k = np.clip(idx, 0, min(n - 1, 100)).astype(itype) if n else idx.astype(itype)
        _eq(xp.take(_dev(a, ctx), _dev(k, ctx), axis=axis), np.take(a, k, axis=axis))


def test_take_errors(ctx):
    a = _dev(np.arange(12.0).reshape(3, 4), ctx)
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for axis 0 with size 3"):
        xp.take(a, _dev([0, 3], ctx), axis=0)
    with pytest.raises(IndexError, match=r"index -5 is out of bounds for axis 1 with size 4"):
        xp.take(a, _dev([-5], ctx), axis=1)
    with pytest.raises(IndexError, match="integer dtype"):
        xp.take(a, _dev([0.0], ctx), axis=0)
    with pytest.raises(ValueError, match="axis is required"):
        xp.take(a, _dev([0], ctx))
    with pytest.raises(IndexError, match="axis 2 is out of bounds"):
        xp.take(a, _dev([0], ctx), axis=2)
    with pytest.raises(ValueError, match="1-D"):
        xp.take(a, _dev([[0]], ctx), axis=0)
    with pytest.raises(TypeError, match="indices must be an NDArray"):
        xp.take(a, [0], axis=0)
    with pytest.raises(TypeError, match="axis must be an integer"):
        xp.take(a, _dev([0], ctx), axis=0.5)
    if ctx != xp.cpu(0):
        with pytest.raises(ValueError, match="x is on .* but indices is on"):
            xp.take(a, _dev([0], xp.cpu(0)), axis=0)


@pytest.mark.parametrize("dtype", [np.dtype(np.float64), np.dtype(np.int8), np.dtype(np.bool_),
                                   np.dtype(np.complex64)], ids=str)
def test_take_along_axis(ctx, rng, dtype):
    a = _data(rng, (4, 6, 5), dtype)
    for axis in (0, 1, 2, -1):
        n = a.shape[axis]
        shape = list(a.shape)
        shape[axis] = 7
        idx = rng.integers(-n, n, size=shape)
        _eq(xp.take_along_axis(_dev(a, ctx), _dev(idx, ctx), axis=axis),
            np.take_along_axis(a, idx, axis=axis))
    idx = rng.integers(0, 6, size=(1, 3, 1))  # broadcasts against x outside the axis
    _eq(xp.take_along_axis(_dev(a, ctx), _dev(idx, ctx), axis=1),
        np.take_along_axis(a, idx, axis=1))
    with pytest.raises(IndexError, match="out of bounds"):
        xp.take_along_axis(_dev(a, ctx), _dev(np.full((4, 1, 5), 6), ctx), axis=1)
    with pytest.raises(ValueError, match="same number of dimensions"):
        xp.take_along_axis(_dev(a, ctx), _dev([0], ctx), axis=0)


# --- x[idx], x[mask] ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_integer_array_getitem(ctx, rng, dtype):
    a = _data(rng, (5, 6, 3), dtype)
    x = _dev(a, ctx)
    i = np.array([[0, -1], [4, 2]])
    j = np.array([5, -6])
    for key in [(i,), (i, j), (i, 2), (-1, j), (i, j, 0), (i, j, np.array([[2], [1]]))]:
        dkey = tuple(_dev(k, ctx) if isinstance(k, np.ndarray) else k for k in key)
        _eq(x[dkey], a[key])
    _eq(x[_dev(i, ctx)], a[i])
    _eq(x[_dev(np.zeros(0, np.int64), ctx)], a[np.zeros(0, np.int64)])
    _eq(x[_dev(i, ctx), ...], a[i, ...])


def test_integer_array_getitem_errors(ctx):
    x = _dev(np.arange(12).reshape(3, 4), ctx)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        x[_dev([3], ctx)]
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 1 with size 4"):
        x[_dev([0], ctx), _dev([-5], ctx)]
    with pytest.raises(IndexError, match="could not be broadcast"):
        x[_dev([0, 1], ctx), _dev([0, 1, 2], ctx)]
    with pytest.raises(IndexError, match="too many indices"):
        x[_dev([0], ctx), 0, 0]
    with pytest.raises(IndexError, match="integer dtype"):
        x[_dev([0.5], ctx)]
    # A mask with other indices is NumPy's (its nonzero), no longer refused.
    _eq(x[_dev([True, False, True], ctx), 0], np.arange(12).reshape(3, 4)[[True, False, True], 0])


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_mask_getitem(ctx, rng, dtype):
    a = _data(rng, (4, 5, 3), dtype)
    x = _dev(a, ctx)
    for m in [rng.random((4,)) < 0.5, rng.random((4, 5)) < 0.5, rng.random((4, 5, 3)) < 0.5,
              np.zeros((4, 5), bool), np.ones((4,), bool)]:
        _eq(x[_dev(m, ctx)], a[m])
    # a mask dimension of 0 selects nothing (the standard's suite allows it; NumPy refuses it)
    got = x[_dev(np.zeros((0, 5), bool), ctx)]
    assert got.shape == (0, 3) and got.dtype == dtype
    for m in (np.bool_(True), np.bool_(False)):  # 0-d masks add a dimension
        _eq(x[_dev(m, ctx)], a[m])
        _eq(_dev(np.float32(3), ctx)[_dev(m, ctx)], np.float32(3)[m])


@pytest.mark.parametrize("n", [0, 1, 1023, 1025, 65537, 200001])
def test_mask_getitem_sizes(ctx, rng, n):
    a = rng.standard_normal(n).astype(np.float32)
    for density in (0.0, 0.3, 1.0):
        m = rng.random(n) < density
        _eq(_dev(a, ctx)[_dev(m, ctx)], a[m])


def test_mask_errors(ctx):
    x = _dev(np.arange(12).reshape(3, 4), ctx)
    with pytest.raises(IndexError, match=r"boolean index of shape \(4,\)"):
        x[_dev(np.ones(4, bool), ctx)]
    with pytest.raises(IndexError, match="boolean index"):
        x[_dev(np.ones((3, 4, 1), bool), ctx)]


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_setitem(ctx, rng, dtype):
    a = _data(rng, (4, 5), dtype)
    m = rng.random((4, 5)) < 0.5
    value = _data(rng, (), dtype)[()]
    for key, val in [(m, value), (m[:, 0], _data(rng, (5,), dtype)),
                     (m, _data(rng, (int(m.sum()),), dtype)),
                     ((np.array([0, -1]), np.array([1, 2])), _data(rng, (2,), dtype)),
                     ((np.array([3, 1]),), value)]:
        x = _dev(a, ctx)
        want = a.copy()
        want[key if isinstance(key, tuple) else (key,)] = val
        dkey = (tuple(_dev(k, ctx) for k in key) if isinstance(key, tuple) else _dev(key, ctx))
        x[dkey] = _dev(val, ctx) if isinstance(val, np.ndarray) else val
        _eq(x, want)


def test_setitem_views_sizes_and_errors(ctx, rng):
    a = rng.standard_normal((70001, 2)).astype(np.float32)
    m = rng.random(70001) < 0.5
    x = _dev(a, ctx)
    x[_dev(m, ctx)] = -1.0
    want = a.copy()
    want[m] = -1.0
    _eq(x, want)
    x = _dev(a, ctx)
    view = x[:, 1]  # a strided view: written back through the view
    view[_dev(m, ctx)] = 7.0
    want = a.copy()
    want[:, 1][m] = 7.0
    _eq(x, want)
    x = _dev(np.zeros(3, np.int8), ctx)
    with pytest.raises(OverflowError):
        x[_dev([0], ctx)] = 1000
    with pytest.raises(IndexError, match="out of bounds"):
        x[_dev([3], ctx)] = 1
    _eq(x, np.zeros(3, np.int8))


# --- nonzero ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_nonzero(ctx, rng, dtype):
    for shape in [(0,), (1,), (7,), (3, 4, 5), (2, 0)]:
        a = _data(rng, shape, dtype, -2, 2)
        got = xp.nonzero(_dev(a, ctx))
        want = np.nonzero(a)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _eq(g, w.astype(np.int64))


def test_nonzero_large_and_errors(ctx, rng):
    a = rng.random(150001) < 0.01
    _eq(xp.nonzero(_dev(a, ctx))[0], np.nonzero(a)[0])
    with pytest.raises(ValueError, match="0-d"):
        xp.nonzero(_dev(np.float32(1), ctx))


# --- argsort, sort ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_sort_every_dtype(ctx, rng, dtype):
    a = _data(rng, (3, 37, 4), dtype)
    for axis in (0, 1, -1):
        _eq(xp.argsort(_dev(a, ctx), axis=axis), np.argsort(a, axis=axis, kind="stable"))
        _eq(xp.sort(_dev(a, ctx), axis=axis), np.sort(a, axis=axis, kind="stable"))
        # descending: reverse of the ascending sort of the reversed array (stable)
        flipped = np.flip(a, axis=axis)
        want = np.flip(np.argsort(flipped, axis=axis, kind="stable"), axis=axis)
        want = a.shape[axis] - 1 - want
        _eq(xp.argsort(_dev(a, ctx), axis=axis, descending=True), want)
        _eq(xp.sort(_dev(a, ctx), axis=axis, descending=True),
            np.take_along_axis(a, want, axis=axis))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=str)
def test_sort_nan_inf_signed_zero(ctx, dtype):
    a = np.array([np.nan, 1.0, -np.inf, -0.0, np.inf, 0.0, np.nan, -1.0, 0.0, -0.0], dtype)
    _eq(xp.argsort(_dev(a, ctx)), np.argsort(a, kind="stable"))
    _eq(xp.sort(_dev(a, ctx)), np.sort(a))
    want = len(a) - 1 - np.flip(np.argsort(np.flip(a), kind="stable"))
    _eq(xp.argsort(_dev(a, ctx), descending=True), want)


@pytest.mark.parametrize("n", [0, 1, 2, 63, 65, 1025, 70001])
def test_sort_sizes(ctx, rng, n):
    a = rng.standard_normal(n).astype(np.float32)
    a[::7] = a[:1] if n else a[::7]  # ties
    _eq(xp.argsort(_dev(a, ctx)), np.argsort(a, kind="stable"))
    _eq(xp.sort(_dev(a, ctx)), np.sort(a))
    b = rng.integers(-(2 ** 62), 2 ** 62, size=(3, n))
    _eq(xp.argsort(_dev(b, ctx)), np.argsort(b, kind="stable"))


def test_sort_0d_and_errors(ctx):
    _eq(xp.argsort(_dev(np.float32(2), ctx)), np.array(0, np.int64))
    _eq(xp.sort(_dev(np.float32(2), ctx)), np.array(2, np.float32))
    with pytest.raises(TypeError, match="complex"):
        xp.sort(_dev(np.array([1j]), ctx))
    with pytest.raises(IndexError, match="axis 1 is out of bounds"):
        xp.argsort(_dev(np.zeros(3), ctx), axis=1)


# --- searchsorted ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.dtype(t) for t in (np.int8, np.uint32, np.int64,
                                                         np.float32, np.float64)], ids=str)
def test_searchsorted(ctx, rng, dtype):
    x1 = np.sort(_data(rng, (40,), dtype, -10, 10))
    x2 = _data(rng, (3, 7), dtype, -12, 12)
    for side in ("left", "right"):
        _eq(xp.searchsorted(_dev(x1, ctx), _dev(x2, ctx), side=side),
            np.searchsorted(x1, x2, side=side).astype(np.int64))
    perm = rng.permutation(40)
    shuffled = x1[perm]
    sorter = np.argsort(shuffled, kind="stable")
    _eq(xp.searchsorted(_dev(shuffled, ctx), _dev(x2, ctx), sorter=_dev(sorter, ctx)),
        np.searchsorted(shuffled, x2, sorter=sorter).astype(np.int64))


def test_searchsorted_nan_empty_errors(ctx):
    x1 = np.array([0.0, 1.0, np.nan])
    x2 = np.array([np.nan, 0.5, -1.0, 2.0])
    for side in ("left", "right"):
        _eq(xp.searchsorted(_dev(x1, ctx), _dev(x2, ctx), side=side),
            np.searchsorted(x1, x2, side=side).astype(np.int64))
    _eq(xp.searchsorted(_dev(np.zeros(0), ctx), _dev(x2, ctx)), np.zeros(4, np.int64))
    _eq(xp.searchsorted(_dev(x1, ctx), _dev(np.zeros((2, 0)), ctx)), np.zeros((2, 0), np.int64))
    with pytest.raises(ValueError, match="side must be"):
        xp.searchsorted(_dev(x1, ctx), _dev(x2, ctx), side="middle")
    with pytest.raises(ValueError, match="1-D"):
        xp.searchsorted(_dev(np.zeros((2, 2)), ctx), _dev(x2, ctx))


# --- unique_* -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_unique(ctx, rng, dtype):
    for shape in [(0,), (1,), (5, 7), (1100,)]:
        a = _data(rng, shape, dtype, -20, 20)
        x = _dev(a, ctx)
        values, index, inverse, counts = np.unique(a, return_index=True, return_inverse=True,
                                                   return_counts=True)
        _eq(xp.unique_values(x), values)
        got = xp.unique_all(x)
        _eq(got.values, values)
        _eq(got.indices, index.astype(np.int64))
        _eq(got.inverse_indices, inverse.reshape(a.shape).astype(np.int64))
        _eq(got.counts, counts.astype(np.int64))
        got = xp.unique_counts(x)
        _eq(got.counts, counts.astype(np.int64))
        got = xp.unique_inverse(x)
        _eq(got.inverse_indices, inverse.reshape(a.shape).astype(np.int64))


def test_unique_nans_are_distinct(ctx):
    a = np.array([np.nan, 1.0, np.nan, 1.0, -0.0, 0.0], np.float32)
    got = xp.unique_counts(_dev(a, ctx))
    np.testing.assert_array_equal(got.values.asnumpy(), [0.0, 1.0, np.nan, np.nan])
    np.testing.assert_array_equal(got.counts.asnumpy(), [2, 2, 1, 1])
    inv = xp.unique_inverse(_dev(a, ctx)).inverse_indices.asnumpy()
    np.testing.assert_array_equal(got.values.asnumpy()[inv][[1, 3, 4, 5]], a[[1, 3, 4, 5]])


# --- the sort primitive (backends with a `sort` kernel; the others sort through argsort) ----


def _sorted_ok(got, a, descending):
    """got holds a's values (bit for bit, a NaN's sign aside) in order: NaN last (first
    descending); -0.0 and 0.0, being equal, in either order."""
    assert got.dtype == a.dtype and got.shape == a.shape
    if a.dtype.kind != "f":
        want = np.sort(a, axis=-1)
        np.testing.assert_array_equal(got, np.flip(want, axis=-1) if descending else want)
        return
    canon = lambda v: np.where(np.isnan(v), np.abs(v), v)  # noqa: E731
    uint = np.dtype("u%d" % a.dtype.itemsize)
    np.testing.assert_array_equal(np.sort(canon(got).view(uint), axis=-1),
                                  np.sort(canon(a).view(uint), axis=-1))
    sign = -1 if descending else 1
    for row in got.astype(np.float64).reshape(-1, a.shape[-1]):
        nan = np.isnan(row)
        assert (sign * np.diff(nan.astype(int)) >= 0).all(), row
        assert (sign * np.diff(row[~nan]) >= 0).all(), row


@pytest.mark.parametrize("dtype", ALL, ids=str)
@pytest.mark.parametrize("n", [1, 64, 65, 70001])
def test_sort_primitive_every_dtype(ctx, rng, dtype, n):
    if dtype.kind == "c":
        pytest.skip("complex numbers have no order")
    a = _data(rng, (3, n), dtype)
    if dtype.kind == "f" and n > 3:
        a[:, :3] = np.array([-0.0, np.nan, 0.0], dtype)
        a[1, 3:5] = np.array([np.inf, -np.inf], dtype)
    if dtype.kind in "iu" and n > 1:
        a[0, :2] = [np.iinfo(dtype).min, np.iinfo(dtype).max]
    for rows in (a[:1], a):
        for descending in (False, True):
            _sorted_ok(xp.sort(_dev(rows, ctx), descending=descending).asnumpy(), rows,
                       descending)


def test_sort_keeps_negative_zero_and_nan_payloads(ctx):
    a = np.array([0.0, -0.0, np.nan, 1.5, -0.0, -np.nan], np.float32)
    a[3] = np.array([0x7FC00123], np.uint32).view(np.float32)[0]
    got = xp.sort(_dev(a, ctx)).asnumpy()
    assert (got[:3] == 0).all() and np.signbit(got[:3]).sum() == 2  # -0.0 stays -0.0
    assert np.isnan(got[3:]).all()
    bits = sorted(int(v) & 0x7FFFFFFF for v in got[3:].view(np.uint32))
    assert 0x7FC00123 in bits  # a NaN's payload survives the sort (its sign may not)
