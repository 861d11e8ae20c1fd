"""The array API's creation functions composed from views (eye, tril, triu, meshgrid) and
linspace, the array object's to_device / __array_namespace__ / device, and the namespace's
constants, against NumPy on every device and dtype."""
import math

import numpy as np
import pytest

import dlarray as xp
from test_api_manip import DTYPES, make_view, pair, same


@pytest.mark.parametrize("dtype", [None] + DTYPES, ids=str)
def test_eye_every_dtype(ctx, dtype):
    got = xp.eye(4, 6, k=1, dtype=dtype, device=ctx)
    assert got.ctx == ctx
    same(got, np.eye(4, 6, k=1, dtype=np.float64 if dtype is None else dtype))


@pytest.mark.parametrize("n, m, k", [(0, None, 0), (1, None, 0), (3, None, 0), (3, 5, 2),
                                     (5, 3, -1), (3, 5, 7), (3, 5, -4), (2, 0, 0), (1025, 3, -1),
                                     (300, 300, 0)], ids=str)
def test_eye_shapes(ctx, n, m, k):
    same(xp.eye(n, m, k=k, dtype=xp.int8, device=ctx), np.eye(n, m, k=k, dtype=np.int8))


def test_eye_errors():
    with pytest.raises(ValueError, match="must not be negative"):
        xp.eye(-1)
    with pytest.raises(TypeError, match="n_cols must be an integer"):
        xp.eye(2, 2.5)
    with pytest.raises(TypeError, match="k must be an integer"):
        xp.eye(2, k=None)


@pytest.mark.parametrize("fn", ["tril", "triu"])
@pytest.mark.parametrize("shape, k", [((3, 3), 0), ((4, 6), 1), ((6, 4), -2), ((2, 5, 3), 0),
                                      ((3, 4), 10), ((3, 4), -10), ((0, 3), 0), ((3, 0), 1),
                                      ((1, 1), 0), ((70, 1030), 3), ((1030, 2), -1)], ids=str)
def test_tril_triu(ctx, fn, shape, k):
    x, a = pair(shape, np.dtype(np.float32), ctx)
    same(getattr(xp, fn)(x, k=k), getattr(np, fn)(a, k=k))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_tril_triu_every_dtype_and_views(ctx, dtype):
    v, b = make_view(ctx, dtype, "flipped")
    same(xp.tril(v, k=-1), np.tril(b, k=-1))
    same(xp.triu(v.mT), np.triu(np.swapaxes(b, -1, -2)))
    nan = xp.asarray(np.full((3, 3), np.nan), device=ctx)  # zeros, not nan * 0
    np.testing.assert_array_equal(xp.tril(nan).asnumpy(), np.tril(np.full((3, 3), np.nan)))


def test_tril_errors(ctx):
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        xp.tril(xp.asarray(np.zeros(3), device=ctx))
    with pytest.raises(TypeError, match="k must be an integer"):
        xp.triu(xp.asarray(np.zeros((2, 2)), device=ctx), k=0.5)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("shapes", [[], [(3,)], [(3,), (4,)], [(2,), (0,), (5,)],
                                    [(1,), (1025,)], [(2,), (3,), (4,), (1,)]], ids=str)
def test_meshgrid(ctx, indexing, shapes):
    pairs = [pair(s, np.dtype(d), ctx, i)
             for i, (s, d) in enumerate(zip(shapes, [np.int8, np.float32, np.complex64, bool]))]
    got = xp.meshgrid(*[p[0] for p in pairs], indexing=indexing)
    want = np.meshgrid(*[p[1] for p in pairs], indexing=indexing)
    assert isinstance(got, list) and len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w)
        assert g.is_contiguous  # its own memory, writable without touching the others


def test_meshgrid_errors(ctx):
    x = xp.asarray(np.zeros((2, 2)), device=ctx)
    with pytest.raises(ValueError, match=r"arrays\[0\] must be 1-D"):
        xp.meshgrid(x)
    with pytest.raises(ValueError, match="indexing must be"):
        xp.meshgrid(x[0], indexing="yx")


@pytest.mark.parametrize("start, stop, num, endpoint", [
    (0, 1, 5, True), (0, 1, 5, False), (-3.5, 2, 0, True), (2, 2, 1, True), (1, 0, 1, False),
    (0, 10, 70001, True), (1 + 2j, -1j, 7, True), (0.0, 1e10, 3, False)], ids=str)
def test_linspace(ctx, start, stop, num, endpoint):
    got = xp.linspace(start, stop, num, endpoint=endpoint, device=ctx)
    want = np.linspace(start, stop, num, endpoint=endpoint)
    assert got.ctx == ctx and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)
    f32 = xp.linspace(start, stop, num, endpoint=endpoint, dtype=xp.complex64 if isinstance(
        start, complex) or isinstance(stop, complex) else xp.float32, device=ctx)
    np.testing.assert_allclose(f32.asnumpy(), want, rtol=1e-6, atol=1e-6 * abs(stop))


def test_linspace_errors():
    with pytest.raises(ValueError, match="num must not be negative"):
        xp.linspace(0, 1, -1)
    with pytest.raises(TypeError, match="num must be an integer"):
        xp.linspace(0, 1, 2.0)
    with pytest.raises(TypeError, match="start must be"):
        xp.linspace("0", 1, 2)
    with pytest.raises(TypeError, match="needs a complex dtype"):
        xp.linspace(1j, 1, 2, dtype=xp.float32)


def test_to_device_and_namespace(ctx):
    x, a = pair((3, 4), np.dtype(np.float32), ctx)
    assert x.device == ctx
    assert x.to_device(ctx) is x
    for target in xp.devices():
        moved = x.to_device(target)
        assert moved.device == target
        same(moved, a)
        same(xp.flip(x).to_device(target), a[::-1, ::-1])
    with pytest.raises(ValueError, match="stream must be None"):
        x.to_device(ctx, stream=1)
    with pytest.raises((ValueError, TypeError)):
        x.to_device("nonsense:7")
    assert x.__array_namespace__() is xp
    assert x.__array_namespace__(api_version="2024.12") is xp
    with pytest.raises(ValueError, match="api_version"):
        x.__array_namespace__(api_version="2019.01")
    assert x.__dlpack_device__() == (ctx.device_type, ctx.device_id)


def test_constants():
    assert xp.e == math.e and xp.pi == math.pi and xp.inf == math.inf and math.isnan(xp.nan)
    assert xp.newaxis is None
    assert isinstance(xp.e, float)
    x = xp.asarray(np.zeros((2, 3)))
    assert x[:, xp.newaxis].shape == (2, 1, 3)


def test_empty_default_dtypes(ctx):
    assert xp.empty((2, 3), device=ctx).dtype == np.float64  # the standard's spelling
    assert xp.empty((2, 3), dtype=None, device=ctx).dtype == np.float64
    assert xp.empty((2,), ctx).dtype == np.float32  # the seed's
    assert xp.empty((2,)).dtype == np.float32
    assert xp.ndarray.empty((2,), ctx).dtype == np.float32
    assert xp.empty((0, 2), dtype=xp.int8, device=ctx).dtype == np.int8
