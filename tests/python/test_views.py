"""Views and shapes on every device: basic indexing, reshape, transpose, strides, len, iteration,
bool, tolist, pickling, copy(), zero-size arrays, and ops on strided views."""
import pickle

import numpy as np
import pytest

import dlarray
from dlarray import ops


def _arr(a, ctx):
    return dlarray.array(a, ctx, dtype=a.dtype)


@pytest.mark.parametrize("key", [0, -1, 2, slice(1, 3), slice(None, None, 2), (1, 2),
                                 (slice(None), slice(None, None, 2)), (Ellipsis, 1),
                                 (slice(3, 0, -1), slice(None, None, -2)), (None, 1),
                                 (slice(None), None, slice(1, 4)), slice(5, 2), (0, slice(None))])
def test_basic_indexing_matches_numpy_and_shares_memory(ctx, key):
    a = np.arange(4 * 5 * 3, dtype=np.float32).reshape(4, 5, 3)
    x = _arr(a, ctx)
    v = x[key]
    expect = a[key]
    assert v.shape == expect.shape
    assert v.strides == expect.strides or v.size <= 1 or v.is_contiguous
    np.testing.assert_array_equal(v.asnumpy(), expect)
    if v.size:
        v[...] = -1.0  # writes through the view
        a[key] = -1.0
        np.testing.assert_array_equal(x.asnumpy(), a)


def test_index_errors(ctx):
    x = _arr(np.zeros((2, 3), np.float32), ctx)
    with pytest.raises(IndexError, match="out of bounds"):
        x[2]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(TypeError, match="basic indexing"):
        x["a"]  # (a list is an index array: tests/python/test_api_index_mixed.py)
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]


def test_reshape_transpose(ctx, rng):
    a = rng.standard_normal((6, 4)).astype(np.float32)
    x = _arr(a, ctx)
    r = x.reshape(3, 8)
    assert r.data_ptr == x.data_ptr  # a view
    np.testing.assert_array_equal(r.asnumpy(), a.reshape(3, 8))
    np.testing.assert_array_equal(x.reshape((-1, 2)).asnumpy(), a.reshape(-1, 2))
    np.testing.assert_array_equal(x.T.asnumpy(), a.T)
    assert x.T.strides == a.T.strides
    np.testing.assert_array_equal(x.transpose(1, 0).asnumpy(), a.transpose(1, 0))
    np.testing.assert_array_equal(x.T.reshape(-1).asnumpy(), a.T.reshape(-1))  # copy: not compact
    b = rng.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(_arr(b, ctx).transpose(2, 0, 1).asnumpy(), b.transpose(2, 0, 1))
    with pytest.raises(ValueError, match="cannot reshape"):
        x.reshape(5, 5)
    with pytest.raises(ValueError, match="repeated axis"):
        x.transpose(0, 0)


def test_len_iter_bool_tolist(ctx):
    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    x = _arr(a, ctx)
    assert len(x) == 3 and x.ndim == 2
    rows = list(x)
    assert len(rows) == 3
    np.testing.assert_array_equal(rows[2].asnumpy(), a[2])
    assert x.tolist() == a.tolist()
    assert bool(_arr(np.array([0.0], np.float32), ctx)) is False
    assert bool(_arr(np.array([2.0], np.float32), ctx)) is True
    with pytest.raises(ValueError, match="ambiguous"):
        bool(x)
    with pytest.raises(ValueError, match="empty"):
        bool(dlarray.empty((0,), ctx))
    assert float(x[1, 1]) == 3.0 and int(x[2, 0]) == 4 and x[0, 1].item() == 1.0


def test_pickle_keeps_device_and_data(ctx):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = _arr(a, ctx)
    y = pickle.loads(pickle.dumps(x[:, 1:3]))
    assert y.ctx == ctx and y.dtype == np.int32
    np.testing.assert_array_equal(y.asnumpy(), a[:, 1:3])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int8, np.int64,
                                   np.uint8, np.bool_])
def test_copy_makes_strided_views_compact(ctx, rng, dtype):
    a = (rng.standard_normal((33, 17, 5)) * 50).astype(dtype)
    x = _arr(a, ctx)
    for key in [(slice(None, None, 3), slice(2, None), 1), (Ellipsis, slice(None, None, -2)),
                (slice(1, 30, 4),)]:
        view = x[key]
        c = view.copy()
        assert c.is_contiguous and c.data_ptr != x.data_ptr
        np.testing.assert_array_equal(c.asnumpy(), a[key])
    t = x.transpose(2, 0, 1).copy()
    np.testing.assert_array_equal(t.asnumpy(), a.transpose(2, 0, 1))


def test_ops_on_strided_views_say_copy(ctx):
    x = _arr(np.ones((4, 4), np.float32), ctx)
    out = dlarray.empty((4, 2), ctx)
    with pytest.raises(ValueError, match=r"\.copy\(\)"):
        ops.relu(x[:, ::2], out)
    ops.relu(x[:, ::2].copy(), out)  # compact: fine
    np.testing.assert_array_equal(out.asnumpy(), np.ones((4, 2)))


def test_overlapping_copy_is_refused_or_buffered(ctx):
    a = np.arange(10, dtype=np.float32)
    x = _arr(a, ctx)
    with pytest.raises(ValueError, match="overlaps"):
        ops.copy(x[1:], x[:-1])
    x[:-1] = x[1:]  # assignment reads the source fully before writing
    a[:-1] = a[1:].copy()
    np.testing.assert_array_equal(x.asnumpy(), a)


def test_zero_size_arrays(ctx):
    e = dlarray.empty((0, 3), ctx)
    assert e.shape == (0, 3) and e.size == 0 and e.nbytes == 0 and len(e) == 0
    assert e.asnumpy().shape == (0, 3) and list(e) == []
    out = dlarray.empty((0, 3), ctx)
    ops.relu(e, out)  # no kernel runs
    ops.matrix_elementwise_add(e, e, out)
    ops.array_set(out, 1.0)
    ops.copy(e, out)
    s = dlarray.empty((3,), ctx)
    ops.reduce_sum_axis_zero(e, s)  # a sum of nothing is 0
    np.testing.assert_array_equal(s.asnumpy(), np.zeros(3))
    a = dlarray.array(np.ones((2, 0), np.float32), ctx)
    b = dlarray.array(np.ones((0, 4), np.float32), ctx)
    c = dlarray.empty((2, 4), ctx)
    ops.matrix_multiply(a, False, b, False, c)
    np.testing.assert_array_equal(c.asnumpy(), np.zeros((2, 4)))
    loss = dlarray.empty((1,), ctx)
    ops.softmax_cross_entropy(dlarray.empty((0, 5), ctx), dlarray.empty((0, 5), ctx), loss)
    assert np.isnan(loss.asnumpy()[0])
    assert e.reshape(3, 0).shape == (3, 0)
    assert x_empty_slice(ctx).shape == (0,)
    moved = e.copyto(dlarray.cpu(0))
    assert moved.shape == (0, 3)


def x_empty_slice(ctx):
    return _arr(np.arange(5, dtype=np.float32), ctx)[3:1]


def test_assign_scalars_and_arrays_into_views(ctx):
    a = np.zeros((4, 6), np.float32)
    x = _arr(a, ctx)
    x[1] = 5.0
    x[:, 4:] = np.array([1.0, 2.0], np.float32)
    x[2:, ::3] = _arr(np.full((2, 2), 7.0, np.float32), ctx)
    a[1] = 5.0
    a[:, 4:] = [1.0, 2.0]
    a[2:, ::3] = 7.0
    np.testing.assert_array_equal(x.asnumpy(), a)
