"""The array API's manipulation functions (reshape, permute_dims, flip, concat, roll, repeat, ...)
on every device and dtype against NumPy: 0-d, empty and one-element arrays, odd shapes, sizes past
the kernels' 1024 and 65536 boundaries, views of views (transposed, flipped, sliced inputs), which
results are views, and the errors."""
import numpy as np
import pytest

import dlarray as xp

DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                np.uint16, np.uint32, np.uint64, np.float16, np.float32,
                                np.float64, np.complex64, np.complex128)]


def sample(shape, dtype, seed=0):
    """Distinct-ish values of dtype (so a wrong element shows)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype.kind == "b":
        return (rng.random(n) < 0.5).reshape(shape)
    values = np.arange(n) % 97 + rng.integers(0, 3, n)
    if dtype.kind == "c":
        return (values + 1j * (values % 7)).astype(dtype).reshape(shape)
    return values.astype(dtype).reshape(shape)


def same(got, want):
    assert isinstance(got, xp.NDArray)
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want.shape, want.dtype)
    np.testing.assert_array_equal(got.asnumpy(), want)


def pair(shape, dtype, ctx, seed=0):
    a = sample(shape, np.dtype(dtype), seed)
    return xp.asarray(a, device=ctx), a


# Inputs that are views already: (name, how to make it from a 3-D array).
VIEWS = {
    "compact": lambda a: a,
    "transposed": lambda a: a.transpose(2, 0, 1),
    "flipped": lambda a: a[::-1, :, ::-2],
    "sliced": lambda a: a[1:, ::2, 1:],
}


def make_view(ctx, dtype, kind, shape=(4, 5, 6)):
    x, a = pair(shape, dtype, ctx)
    if kind == "flipped":  # NDArray indexing takes negative steps only through flip
        return xp.flip(x, axis=(0, 2))[:, :, ::2], VIEWS[kind](a)
    return VIEWS[kind](x), VIEWS[kind](a)


# ---- reshape -------------------------------------------------------------------------------

RESHAPES = [((), (1, 1)), ((), ()), ((1,), ()), ((0,), (0, 5)), ((3, 0, 2), (-1,)),
            ((3, 0, 2), (2, 0, 5)), ((7, 13), (13, 7)), ((7, 13), (-1,)), ((6, 4), (2, 3, 4)),
            ((70007,), (-1, 7)), ((33, 1025), (1025, 33))]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, new", RESHAPES, ids=str)
def test_reshape(ctx, dtype, shape, new):
    x, a = pair(shape, dtype, ctx)
    y = xp.reshape(x, new)
    same(y, a.reshape(new))
    assert y.ctx == ctx
    if x.size:
        assert y.data_ptr == x.data_ptr  # a compact array: always a view
    z = xp.reshape(x, new, copy=True)
    same(z, a.reshape(new))
    if x.size:
        assert z.data_ptr != x.data_ptr


@pytest.mark.parametrize("kind", list(VIEWS))
@pytest.mark.parametrize("target", ["flat", "merge01", "merge12", "split0", "ones"])
def test_reshape_of_views(ctx, kind, target):
    x, a = make_view(ctx, np.dtype(np.int32), kind)
    d0, d1, d2 = a.shape
    new = {"flat": (-1,), "merge01": (d0 * d1, d2), "merge12": (1, d0, 1, d1 * d2),
           "split0": (2, d0 // 2, d1, 1, d2) if d0 % 2 == 0 else (d0, d1, d2, 1),
           "ones": (d0, 1, d1, d2, 1)}[target]
    want = a.reshape(new)
    same(xp.reshape(x, new), want)
    same(xp.reshape(x, new, copy=True), want)
    view = np.shares_memory(want, a)  # NumPy's answer: could it be a view?
    if view:
        y = xp.reshape(x, new, copy=False)
        same(y, want)
        y[(0,) * y.ndim] = -7  # a view: the write reaches x's element
        w = a.copy()
        w.reshape(new)[(0,) * y.ndim] = -7
        np.testing.assert_array_equal(x.asnumpy(), w)
    else:
        with pytest.raises(ValueError, match="copy=False"):
            xp.reshape(x, new, copy=False)


def test_reshape_errors(ctx):
    x = xp.asarray(np.arange(6), device=ctx)
    with pytest.raises(ValueError, match="size 6 into shape"):
        xp.reshape(x, (4,))
    with pytest.raises(ValueError, match="only one dimension can be -1"):
        xp.reshape(x, (-1, -1))
    with pytest.raises(ValueError, match=">= 0"):
        xp.reshape(x, (-2, -3))
    with pytest.raises(TypeError, match="shape must be"):
        xp.reshape(x, "6")
    with pytest.raises(TypeError, match="shape must be an integer"):
        xp.reshape(x, (2.0, 3))
    with pytest.raises(TypeError, match="copy must be"):
        xp.reshape(x, (6,), copy="no")
    with pytest.raises(TypeError, match="x must be an NDArray"):
        xp.reshape(np.arange(6), (6,))
    with pytest.raises(ValueError, match="with a -1"):
        xp.reshape(xp.asarray(np.zeros((0, 3)), device=ctx), (0, -1))
    assert x.reshape(2, 3).shape == (2, 3)  # the method keeps its seed form


# ---- views: permute_dims, matrix_transpose, expand_dims, squeeze, flip, moveaxis ... ---------

VIEW_CASES = [
    ("permute_dims", lambda m, x: m.permute_dims(x, (1, 2, 0)),
     lambda x: np.transpose(x, (1, 2, 0))),
    ("matrix_transpose", lambda m, x: m.matrix_transpose(x), lambda x: np.swapaxes(x, -1, -2)),
    ("mT", lambda m, x: x.mT, lambda x: np.swapaxes(x, -1, -2)),
    ("expand_dims", lambda m, x: m.expand_dims(x, axis=-1), lambda x: np.expand_dims(x, -1)),
    ("expand_dims_tuple", lambda m, x: m.expand_dims(x, axis=(0, 3, -1)),
     lambda x: np.expand_dims(x, (0, 3, -1))),
    ("squeeze", lambda m, x: m.squeeze(m.expand_dims(x, axis=1), axis=1), lambda x: x),
    ("flip", lambda m, x: m.flip(x), lambda x: np.flip(x)),
    ("flip_axis", lambda m, x: m.flip(x, axis=-2), lambda x: np.flip(x, -2)),
    ("flip_tuple", lambda m, x: m.flip(x, axis=(0, 2)), lambda x: np.flip(x, (0, 2))),
    ("moveaxis", lambda m, x: m.moveaxis(x, 0, -1), lambda x: np.moveaxis(x, 0, -1)),
    ("moveaxis_tuple", lambda m, x: m.moveaxis(x, (0, 1), (2, 0)),
     lambda x: np.moveaxis(x, (0, 1), (2, 0))),
    ("broadcast_to", lambda m, x: m.broadcast_to(x[:, :1], (2,) + x[:, :1].shape[:1] + (3,) +
                                                 x.shape[2:]),
     lambda x: np.broadcast_to(x[:, :1], (2,) + x[:, :1].shape[:1] + (3,) + x.shape[2:])),
    ("unstack", lambda m, x: m.unstack(x, axis=1)[-1], lambda x: x[:, -1]),
]


@pytest.mark.parametrize("case", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
@pytest.mark.parametrize("kind", list(VIEWS))
def test_views(ctx, case, kind):
    _, ours, numpys = case
    x, a = make_view(ctx, np.dtype(np.float32), kind)
    got = ours(xp, x)
    want = numpys(a)
    same(got, want)
    same(got.copy(), want)  # the compact copy, made on the device from the strided view
    same(xp.flip(got).copy(), np.flip(want))  # a view of a view


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (3, 0, 2), (1, 1, 1), (70001,), (3, 1025)],
                         ids=str)
def test_views_every_dtype(ctx, dtype, shape):
    x, a = pair(shape, dtype, ctx)
    same(xp.flip(x), np.flip(a))
    same(xp.expand_dims(x, axis=0), a[None])
    same(xp.permute_dims(x, tuple(range(x.ndim))[::-1]), a.T)
    same(xp.broadcast_to(x, (2,) + a.shape), np.broadcast_to(a, (2,) + a.shape))
    if a.ndim:
        same(xp.flip(x, axis=0).copy(), a[::-1])
        same(xp.roll(x, 5, axis=-1), np.roll(a, 5, axis=-1))
    if a.ndim >= 2:
        same(x.mT.copy(), np.swapaxes(a, -1, -2))


def test_views_share_memory(ctx):
    x, a = pair((3, 4), np.float32, ctx)
    for v in (xp.flip(x), xp.permute_dims(x, (1, 0)), xp.expand_dims(x, axis=0),
              xp.moveaxis(x, 0, 1), xp.broadcast_to(x, (2, 3, 4))):
        assert v.data_ptr >= x.data_ptr
    f = xp.flip(x, axis=1)
    f[0, 0] = 100  # f[0, 0] is x[0, 3]
    assert x.asnumpy()[0, 3] == 100
    assert xp.flip(xp.flip(x)).asnumpy().tolist() == x.asnumpy().tolist()


def test_view_errors(ctx):
    x = xp.asarray(np.zeros((2, 1, 3)), device=ctx)
    with pytest.raises(ValueError, match="not a permutation"):
        xp.permute_dims(x, (0, 1))
    with pytest.raises(ValueError, match="repeated axes"):
        xp.permute_dims(x, (0, 0, 1))
    with pytest.raises(IndexError, match="axes 3 is out of bounds"):
        xp.permute_dims(x, (0, 1, 3))
    with pytest.raises(TypeError, match="axes must be a tuple"):
        xp.permute_dims(x, 0)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        xp.matrix_transpose(xp.asarray(np.zeros(3), device=ctx))
    with pytest.raises(ValueError, match="axis 0 has extent 2, not 1"):
        xp.squeeze(x, axis=0)
    with pytest.raises(IndexError, match="out of bounds"):
        xp.squeeze(x, axis=3)
    with pytest.raises(ValueError, match="repeated axis"):
        xp.squeeze(x, axis=(1, -2))
    with pytest.raises(IndexError, match="axis 4 is out of bounds"):
        xp.expand_dims(x, axis=4)
    with pytest.raises(ValueError, match="repeated axis"):
        xp.expand_dims(x, axis=(0, 0))
    with pytest.raises(ValueError, match="repeated axis"):
        xp.flip(x, axis=(0, -3))
    with pytest.raises(TypeError, match="axis must be an integer"):
        xp.flip(x, axis=1.0)
    with pytest.raises(ValueError, match="same number of axes"):
        xp.moveaxis(x, (0, 1), 0)
    with pytest.raises(ValueError, match="cannot be broadcast to"):
        xp.broadcast_to(x, (3, 2, 3))
    with pytest.raises(ValueError, match="cannot be broadcast to"):
        xp.broadcast_to(x, (2, -1, 3))
    with pytest.raises(ValueError, match="cannot be broadcast to"):
        xp.broadcast_to(x, (3,))
    with pytest.raises(ValueError, match="at least one dimension"):
        xp.unstack(xp.asarray(np.float32(1), device=ctx))
    with pytest.raises(TypeError, match="x must be an NDArray"):
        xp.flip([1, 2])


def test_broadcast_shapes_and_arrays(ctx):
    assert xp.broadcast_shapes((2, 1), (3,), ()) == (2, 3)
    assert xp.broadcast_shapes() == ()
    assert xp.broadcast_shapes((0, 1), (1, 4)) == (0, 4)
    with pytest.raises(ValueError, match="cannot be broadcast together"):
        xp.broadcast_shapes((2,), (3,))
    x, a = pair((4, 1), np.int16, ctx)
    y, b = pair((3,), np.float32, ctx, 1)
    got = xp.broadcast_arrays(x, y)
    assert isinstance(got, list)
    for g, w in zip(got, np.broadcast_arrays(a, b)):
        same(g, w)
    assert xp.broadcast_arrays() == []
    with pytest.raises(ValueError, match="cannot be broadcast"):
        xp.broadcast_arrays(x, xp.asarray(np.zeros((3, 2)), device=ctx))


def two_devices():
    devs = xp.devices()
    if len(devs) < 2:
        pytest.skip("needs two devices")
    return devs[0], devs[1]


def test_two_devices_named():
    a, b = two_devices()
    x, y = xp.asarray(np.zeros(2), device=a), xp.asarray(np.zeros(2), device=b)
    for fn in (lambda: xp.concat([x, y]), lambda: xp.stack((x, y)),
               lambda: xp.broadcast_arrays(x, y), lambda: xp.meshgrid(x, y)):
        with pytest.raises(ValueError, match=r"arrays\[0\] is on .* but arrays\[1\] is on"):
            fn()


# ---- concat, stack -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_concat_stack_every_dtype(ctx, dtype):
    x, a = pair((3, 5), dtype, ctx)
    y, b = pair((2, 5), dtype, ctx, 1)
    same(xp.concat([x, y]), np.concatenate([a, b]))
    same(xp.concat((x.mT, y.mT), axis=-1), np.concatenate([a.T, b.T], axis=-1))
    same(xp.concat([x, y], axis=None), np.concatenate([a, b], axis=None))
    same(xp.stack([x, x, xp.flip(x)], axis=1), np.stack([a, a, a[::-1, ::-1]], axis=1))
    same(xp.concat([x]), a)


@pytest.mark.parametrize("dtypes", [(np.int8, np.float32), (np.int32, np.int64),
                                    (np.uint8, np.int8), (np.bool_, np.bool_),
                                    (np.float16, np.float64), (np.float32, np.complex64),
                                    (np.uint16, np.int16, np.int8)], ids=str)
def test_concat_promotes(ctx, dtypes):
    pairs = [pair((2, 3), np.dtype(d), ctx, i) for i, d in enumerate(dtypes)]
    got = xp.concat([p[0] for p in pairs], axis=1)
    want = np.concatenate([p[1] for p in pairs], axis=1)
    same(got, want)
    same(xp.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs]))


@pytest.mark.parametrize("shapes, axis", [([(0,), (0,)], 0), ([(70001,), (3,)], 0),
                                          ([(1025, 2), (1, 2)], 0), ([(2, 0), (2, 3)], 1),
                                          ([(), ()], None), ([(2, 3), (4,)], None)], ids=str)
def test_concat_shapes(ctx, shapes, axis):
    pairs = [pair(s, np.dtype(np.float32), ctx, i) for i, s in enumerate(shapes)]
    same(xp.concat([p[0] for p in pairs], axis=axis),
         np.concatenate([p[1] for p in pairs], axis=axis))


def test_concat_stack_errors(ctx):
    x = xp.asarray(np.zeros((2, 3)), device=ctx)
    with pytest.raises(ValueError, match=r"arrays\[1\] has shape \(3, 3\)"):
        xp.concat([x, xp.asarray(np.zeros((3, 3)), device=ctx)], axis=1)
    with pytest.raises(ValueError, match="must not be empty"):
        xp.concat([])
    with pytest.raises(TypeError, match="tuple or list"):
        xp.concat(x)
    with pytest.raises(TypeError, match=r"arrays\[1\] must be an NDArray"):
        xp.concat([x, np.zeros((2, 3))])
    with pytest.raises(ValueError, match="0-d arrays"):
        xp.concat([xp.asarray(np.float32(1), device=ctx)] * 2)
    with pytest.raises(IndexError, match="out of bounds"):
        xp.concat([x, x], axis=2)
    with pytest.raises(ValueError, match=r"arrays\[1\] has shape \(3,\)"):
        xp.stack([xp.asarray(np.zeros(2), device=ctx), xp.asarray(np.zeros(3), device=ctx)])
    with pytest.raises(IndexError, match="out of bounds"):
        xp.stack([x, x], axis=3)


def test_unstack(ctx):
    x, a = pair((3, 0, 2), np.int64, ctx)
    assert xp.unstack(x, axis=1) == ()
    got = xp.unstack(x, axis=-1)
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, np.moveaxis(a, -1, 0)):
        same(g, w)


# ---- roll, repeat, tile --------------------------------------------------------------------

@pytest.mark.parametrize("shape, shift, axis", [
    ((), 3, None), ((0,), 2, None), ((1,), -1, 0), ((7, 13), 5, None), ((7, 13), -20, 1),
    ((7, 13), (1, 2), (0, 1)), ((7, 13), (3, 4), (1, 1)), ((7, 13), 2, (0, -1)),
    ((70001,), 1025, 0), ((3, 0, 2), 1, 2), ((4, 5, 6), (1, -2), (-1, 0))], ids=str)
def test_roll(ctx, shape, shift, axis):
    x, a = pair(shape, np.dtype(np.int32), ctx)
    same(xp.roll(x, shift, axis=axis), np.roll(a, shift, axis=axis))
    v, b = make_view(ctx, np.dtype(np.float64), "flipped")
    same(xp.roll(v, 7, axis=1), np.roll(b, 7, axis=1))


def test_roll_errors(ctx):
    x = xp.asarray(np.zeros((2, 3)), device=ctx)
    with pytest.raises(ValueError, match="same length"):
        xp.roll(x, (1, 2), axis=(0, 1, 1))
    with pytest.raises(ValueError, match="shift must be an int when axis is None"):
        xp.roll(x, (1, 2))
    with pytest.raises(TypeError, match="shift must be an integer"):
        xp.roll(x, 1.5)
    with pytest.raises(IndexError, match="out of bounds"):
        xp.roll(x, 1, axis=2)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, repeats, axis", [
    ((), 3, None), ((0,), 2, None), ((1,), 0, 0), ((7, 13), 2, None), ((7, 13), 3, 1),
    ((7, 13), [1, 0, 2, 3, 1, 1, 0], 0), ((2, 3), [4], 1), ((3, 0, 2), 2, 2), ((70001,), 1, 0)],
    ids=str)
def test_repeat(ctx, dtype, shape, repeats, axis):
    x, a = pair(shape, dtype, ctx)
    r = repeats if isinstance(repeats, int) else xp.asarray(np.array(repeats), device=ctx)
    same(xp.repeat(x, r, axis=axis), np.repeat(a, repeats, axis=axis))


def test_repeat_of_view_and_errors(ctx):
    v, b = make_view(ctx, np.dtype(np.int16), "transposed")
    same(xp.repeat(v, 2, axis=1), np.repeat(b, 2, axis=1))
    counts = np.arange(v.shape[0]) % 3
    same(xp.repeat(v, xp.asarray(counts, device=ctx), axis=0), np.repeat(b, counts, axis=0))
    x = xp.asarray(np.zeros((2, 3)), device=ctx)
    with pytest.raises(ValueError, match="must not be negative"):
        xp.repeat(x, -1)
    with pytest.raises(ValueError, match="2 counts for an axis of extent 3"):
        xp.repeat(x, xp.asarray(np.array([1, 2]), device=ctx), axis=1)
    with pytest.raises(TypeError, match="integer dtype"):
        xp.repeat(x, xp.asarray(np.array([1.0]), device=ctx))
    with pytest.raises(TypeError, match="repeats must be an integer"):
        xp.repeat(x, 1.5)
    with pytest.raises(IndexError, match="out of bounds"):
        xp.repeat(x, 2, axis=-3)


@pytest.mark.parametrize("shape, reps", [((), (2, 3)), ((0,), (3,)), ((1,), ()), ((2, 3), (2,)),
                                         ((2, 3), (3, 1, 2)), ((7, 13), (2, 0)),
                                         ((5,), (1, 1025)), ((4, 5, 6), (1, 2, 1))], ids=str)
@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.float16, np.int64, np.complex128],
                         ids=str)
def test_tile(ctx, shape, reps, dtype):
    x, a = pair(shape, np.dtype(dtype), ctx)
    same(xp.tile(x, reps), np.tile(a, reps))


def test_tile_errors(ctx):
    x = xp.asarray(np.zeros(3), device=ctx)
    with pytest.raises(TypeError, match="tuple of ints"):
        xp.tile(x, 2)
    with pytest.raises(ValueError, match="must not be negative"):
        xp.tile(x, (-1,))
