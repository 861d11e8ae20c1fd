"""The CPU sort of values (backends/cpu/sort_radix.h for 4- and 8-byte keys): one distribution pass
by the top 16 bits into groups of at most 32768 keys, each group sorted in cache, a prefix of
more keys distributed again by the next 16 bits. Checked bit for bit against NumPy (a key sort
written here independently) across those boundaries: group and chunk sizes, the recursion, one
value everywhere, rows of a 2-D array, both directions, one thread and two.

Our documented order where NumPy's sort leaves it open: -0.0 just before 0.0 (after when
descending), every NaN last (first when descending) with its payload and without its sign, the
NaNs ordered by payload."""
import numpy as np
import pytest

import dlarray as xp

FLOATS = [np.float16, np.float32, np.float64]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _keys(a):
    """Our key of each element, an unsigned integer of the element's size in the values' order."""
    u = UINT[a.dtype.itemsize]
    bits = a.view(u).copy()
    top = u(1) << u(8 * a.dtype.itemsize - 1)
    if a.dtype.kind == "f":
        bits[np.isnan(a)] &= ~top
        neg = (bits & top) != 0
        return np.where(neg, ~bits, bits | top).astype(u)
    if a.dtype.kind == "i":
        return bits ^ top
    return bits


def _from_keys(keys, dtype):
    u = keys.dtype.type
    top = u(1) << u(8 * keys.dtype.itemsize - 1)
    if np.dtype(dtype).kind == "f":
        bits = np.where((keys & top) != 0, keys & ~top, ~keys).astype(keys.dtype)
    elif np.dtype(dtype).kind == "i":
        bits = keys ^ top
    else:
        bits = keys
    return bits.view(dtype)


def _want(a, descending=False):
    """Rows (last axis) sorted in our documented order, computed by NumPy on the keys."""
    keys = np.sort(_keys(a), axis=-1)
    if descending:
        keys = np.flip(keys, axis=-1)
    return _from_keys(np.ascontiguousarray(keys), a.dtype)


def _check(a, descending=False):
    got = xp.sort(xp.asarray(a), descending=descending).asnumpy()
    want = _want(a, descending)
    assert got.dtype == a.dtype and got.shape == a.shape
    if a.dtype == np.bool_:
        np.testing.assert_array_equal(got, want)
        return
    u = UINT[a.dtype.itemsize]
    mism = np.flatnonzero(got.view(u).ravel() != want.view(u).ravel())
    assert mism.size == 0, (a.dtype, a.shape, descending, mism[:5], got.ravel()[mism[:5]],
                            want.ravel()[mism[:5]])
    # and NumPy's own sort agrees on the values (NaN equal to NaN, -0.0 to 0.0)
    # (float16 through float32: NumPy 2.4's float16 sort puts negative subnormals after -0.0)
    ref = np.sort(a.astype(np.float32), axis=-1).astype(a.dtype) if a.dtype == np.float16 else \
        np.sort(a, axis=-1)
    if descending:  # NaNs first, as NumPy's ascending sort reversed
        ref = np.flip(ref, axis=-1)
    np.testing.assert_array_equal(got, ref)


def _dist(rng, kind, n, dtype):
    """n values of dtype: random, heavy in one group, one value, sorted, reversed, few values."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        if kind == "random":
            v = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)
        elif kind == "narrow":  # one 16-bit prefix for float32: the distribution recurses
            v = 1.0 + rng.random(n) * 1e-3
        elif kind == "uniform":  # [0.5, 1) holds half: prefixes of ~n/256 keys
            v = rng.random(n)
        else:
            v = rng.integers(-5, 5, n) * 0.5
        v = v.astype(dtype)
        if kind == "random" and n > 10:  # specials, NaNs with both signs and other payloads
            u = UINT[dtype.itemsize]
            specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0], dtype)
            v[rng.integers(0, n, n // 10)] = specials[rng.integers(0, 6, n // 10)]
            payload = (np.array([np.nan], dtype).view(u) | u(3)).view(dtype)
            v[rng.integers(0, n, 3)] = payload
            v[rng.integers(0, n, 3)] = -payload
    else:
        info = np.iinfo(dtype)
        if kind == "random":
            v = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        elif kind == "narrow":
            v = (rng.integers(0, 3000, n) + info.max // 3).astype(dtype)
        elif kind == "uniform":
            v = rng.integers(0, max(info.max // 4096, 2), n).astype(dtype)
        else:
            v = rng.integers(0, 3, n).astype(dtype)
    if kind == "equal":
        v[:] = v[:1]
    elif kind == "sorted":
        v = np.sort(v)
    elif kind == "reversed":
        v = np.sort(v)[::-1].copy()
    return v


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    old = xp.get_num_threads()
    xp.set_num_threads(request.param)
    yield request.param
    xp.set_num_threads(old)


# The sizes cross: comparison sort (64), the in-cache limit (32768), the distribution's chunks
# (2^18 keys each, up to 8 of them).
SIZES = [0, 1, 2, 64, 65, 1000, 32768, 32769, 300_001, 2_100_003]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64, np.uint64], ids=str)
def test_sort_sizes_random(threads, rng, n, dtype):
    a = _dist(rng, "random", n, dtype)
    _check(a)
    _check(a, descending=True)


@pytest.mark.parametrize("kind", ["narrow", "uniform", "few", "equal", "sorted", "reversed"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint32],
                         ids=str)
def test_sort_distributions(threads, rng, kind, dtype):
    for n in (5000, 300_001):
        a = _dist(rng, kind, n, dtype)
        _check(a)
        _check(a, descending=kind in ("narrow", "few"))


@pytest.mark.parametrize("dtype", FLOATS + INTS + [np.bool_], ids=str)
def test_sort_every_dtype(rng, dtype):
    for n in (1, 77, 40_000):
        if np.dtype(dtype) == np.bool_:
            a = rng.random(n) < 0.3
        else:
            a = _dist(rng, "random", n, dtype)
        _check(a)
        _check(a, descending=True)


@pytest.mark.parametrize("shape", [(3, 50_000), (1000, 37), (2, 70_000), (4, 1),
                                   (3, 0), (0, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float16], ids=str)
def test_sort_rows(threads, rng, shape, dtype):
    a = _dist(rng, "random", shape[0] * shape[1], dtype).reshape(shape)
    _check(a)
    _check(a, descending=True)
    # along axis 0: NumPy's values order (the rows are columns here)
    got = xp.sort(xp.asarray(a), axis=0).asnumpy()
    want = np.sort(a.astype(np.float32), axis=0).astype(a.dtype) if a.dtype == np.float16 else \
        np.sort(a, axis=0)
    np.testing.assert_array_equal(got, want)


def test_sort_signed_zero_and_nan_order():
    a = np.array([0.0, -0.0, np.nan, 1.0, -np.nan, -0.0, -1.0, 0.0] * 5000, np.float32)
    got = xp.sort(xp.asarray(a)).asnumpy()
    zeros = got[got == 0]
    assert np.signbit(zeros[:10000]).all() and not np.signbit(zeros[10000:]).any()
    assert np.isnan(got[-10000:]).all() and not np.signbit(got[-10000:]).any()
    down = xp.sort(xp.asarray(a), descending=True).asnumpy()
    assert np.isnan(down[:10000]).all()
    np.testing.assert_array_equal(down.view(np.uint32), got[::-1].view(np.uint32))


@pytest.mark.parametrize("kind", ["narrow", "equal", "uniform"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64], ids=str)
def test_sort_large_groups(threads, rng, kind, dtype):
    """One prefix of more than 2^20 keys: distributed again by every thread, not by one."""
    _check(_dist(rng, kind, 2_100_003, dtype))


def test_sort_dense_int_range(threads, rng):
    """Every prefix a little over the cache limit (int32 in [0, 2^22)): many small re-distributions."""
    a = rng.integers(0, 2 ** 22, 3_000_000).astype(np.int32)
    _check(a)
    _check(a, descending=True)


@pytest.mark.parametrize("dtype", [np.int32, np.uint64, np.float32], ids=str)
def test_sort_outlier_outside_sample(threads, rng, dtype):
    """The distribution's bit window comes from a sample of 256 keys; a key the sample missed
    that differs above it must still sort right (the counting pass sees it and counts again)."""
    a = rng.integers(0, 1000, 300_001).astype(dtype)
    a[1] = np.array(-5).astype(dtype) if dtype != np.uint64 else np.iinfo(np.uint64).max
    a[2] = 2 ** 30
    _check(a)
    b = np.full(300_001, 7, dtype)  # the sample sees one value
    b[5] = 8
    _check(b)
    _check(b, descending=True)
