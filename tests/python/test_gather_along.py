"""take_along_axis on every device against NumPy, through the backend's gather_along (cpu, cuda)
and through the composite of a backend without it (flat positions and one gather), so both give
NumPy's elements: every element size, any axis, rows and columns (inner > 1), broadcasting outside
the axis, negative indices, sizes around the vector and block widths, empty and 1-element arrays,
an index out of bounds (IndexError naming it, on both paths) and the op's own operand checks."""
import ml_dtypes
import numpy as np
import pytest

import dlarray as xp
from dlarray import _indexing_api, _kernels

DTYPES = [np.bool_, np.int8, np.int16, np.float16, ml_dtypes.bfloat16, np.int32, np.float32,
          np.int64, np.float64, np.complex64, np.complex128]
# (x shape, indices shape, axis): a row per output element, columns, 3-D both ways, broadcast.
CASES = [((1000, 37), (1000, 41), 1), ((37, 1000), (53, 1000), 0), ((5, 7, 3), (5, 9, 3), 1),
         ((4, 6, 129), (4, 6, 200), -1), ((1, 4099), (1, 4099), 1), ((3, 1, 8), (3, 5, 8), 0),
         ((6, 300), (1, 257), 1), ((1, 1), (1, 1), 0), ((0, 5), (0, 3), 1), ((4, 5), (4, 0), 1),
         ((130003,), (130003,), 0)]


@pytest.fixture(params=["kernel", "composite"])
def path(request, monkeypatch, ctx):
    """Run take_along_axis through gather_along, or as a backend without it does."""
    if request.param == "kernel":
        if not _kernels.has_kernel("gather_along", ctx):
            pytest.skip("%s's plugin has no gather_along kernel (the composite runs)" % ctx)
    else:
        real = _indexing_api.has_kernel
        monkeypatch.setattr(_indexing_api, "has_kernel",
                            lambda op, c: op != "gather_along" and real(op, c))
    return request.param


def _data(rng, shape, dtype):
    a = rng.standard_normal(shape) * 100
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_take_along_axis_as_numpy(ctx, rng, path, dtype):
    for xs, ks, axis in CASES:
        base = _data(rng, xs, dtype)
        n = xs[axis]
        idx = rng.integers(-n, n, ks) if n else np.zeros(ks, np.int64)
        want = np.take_along_axis(base, idx, axis=axis)
        got = xp.take_along_axis(xp.asarray(base, device=ctx), xp.asarray(idx, device=ctx),
                                 axis=axis).asnumpy()
        assert got.shape == want.shape and got.dtype == want.dtype, (xs, ks, axis)
        np.testing.assert_array_equal(got, want, err_msg="%s %s %s axis %d" % (ctx, xs, ks, axis))


def test_take_along_axis_int32_indices_and_sort_roundtrip(ctx, rng, path):
    x = rng.standard_normal((64, 333)).astype(np.float32)
    order = np.argsort(x, axis=1).astype(np.int32)
    got = xp.take_along_axis(xp.asarray(x, device=ctx), xp.asarray(order, device=ctx), axis=1)
    np.testing.assert_array_equal(got.asnumpy(), np.sort(x, axis=1))


@pytest.mark.parametrize("bad", [7, -8, 10 ** 12], ids=str)
def test_take_along_axis_out_of_bounds(ctx, rng, path, bad):
    x = xp.asarray(rng.standard_normal((3, 7)).astype(np.float32), device=ctx)
    idx = np.zeros((3, 5), np.int64)
    idx[2, 3] = bad
    with pytest.raises(IndexError, match="index %d is out of bounds .*size 7" % bad):
        xp.take_along_axis(x, xp.asarray(idx, device=ctx), axis=1)


def test_gather_along_op_checks_its_operands(ctx):
    if not _kernels.has_kernel("gather_along", ctx):
        pytest.skip("%s's plugin has no gather_along kernel (the composite runs)" % ctx)
    x = xp.asarray(np.ones((2, 3, 4), np.float32), device=ctx)
    out = xp.asarray(np.zeros((2, 5, 4), np.float32), device=ctx)
    with pytest.raises(TypeError, match="indices must be int64"):
        xp.ops.gather_along(x, xp.asarray(np.zeros((2, 5, 4), np.int32), device=ctx), out)
    with pytest.raises(ValueError, match="indices must be 3-D"):
        xp.ops.gather_along(x, xp.asarray(np.zeros(5, np.int64), device=ctx), out)
    with pytest.raises(ValueError, match="indices and picked must be"):
        xp.ops.gather_along(x, xp.asarray(np.zeros((2, 5, 3), np.int64), device=ctx), out)
    with pytest.raises(TypeError, match="dtypes differ"):
        xp.ops.gather_along(x, xp.asarray(np.zeros((2, 5, 4), np.int64), device=ctx),
                            xp.asarray(np.zeros((2, 5, 4), np.float64), device=ctx))


def test_take_along_axis_shape_errors(ctx):
    x = xp.asarray(np.ones((3, 4), np.float32), device=ctx)
    with pytest.raises(ValueError, match=r"\(3, 4\) and \(2, 5\) do not broadcast outside axis 1"):
        xp.take_along_axis(x, xp.asarray(np.zeros((2, 5), np.int64), device=ctx), axis=1)
    with pytest.raises(ValueError, match="same number of dimensions"):
        xp.take_along_axis(x, xp.asarray(np.zeros(4, np.int64), device=ctx), axis=1)
    with pytest.raises(IndexError, match="integer dtype"):
        xp.take_along_axis(x, xp.asarray(np.zeros((3, 4), np.float32), device=ctx), axis=1)
    with pytest.raises(IndexError, match="axis 2 is out of bounds"):
        xp.take_along_axis(x, xp.asarray(np.zeros((3, 4), np.int64), device=ctx), axis=2)
