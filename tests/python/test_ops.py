"""Every op on every device against NumPy, at sizes that cross thread and block boundaries,
odd shapes and 1-element arrays, in place where the op allows it."""
import numpy as np
import pytest

import dlarray
from dlarray import ops

SHAPES = [(1,), (1, 1), (7,), (3, 5), (33, 65), (257, 1025), (1000, 1001), (65537,), (2, 3, 4, 5)]


def rand(rng, shape, lo=-3.0, hi=3.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def to(ctx, x):
    return dlarray.array(x, ctx)


def softmax_ref(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("shape", SHAPES)
def test_array_set(ctx, shape):
    a = dlarray.empty(shape, ctx)
    for v in (0.0, -2.5, 1e30):
        ops.array_set(a, v)
        np.testing.assert_array_equal(a.asnumpy(), np.full(shape, v, np.float32))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name,fn", [
    ("matrix_elementwise_add", np.add), ("matrix_elementwise_multiply", np.multiply)])
def test_binary(ctx, rng, shape, name, fn):
    x, y = rand(rng, shape), rand(rng, shape)
    a, b, c = to(ctx, x), to(ctx, y), dlarray.empty(shape, ctx)
    getattr(ops, name)(a, b, c)
    np.testing.assert_allclose(c.asnumpy(), fn(x, y), rtol=1e-6)
    getattr(ops, name)(a, b, a)  # in place, as the seed's SGD update does
    np.testing.assert_allclose(a.asnumpy(), fn(x, y), rtol=1e-6)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name,fn", [
    ("matrix_elementwise_add_by_const", np.add),
    ("matrix_elementwise_multiply_by_const", np.multiply)])
def test_by_const(ctx, rng, shape, name, fn):
    x = rand(rng, shape)
    a, c = to(ctx, x), dlarray.empty(shape, ctx)
    getattr(ops, name)(a, 1.75, c)
    np.testing.assert_allclose(c.asnumpy(), fn(x, np.float32(1.75)), rtol=1e-6)
    getattr(ops, name)(a, -0.5, a)
    np.testing.assert_allclose(a.asnumpy(), fn(x, np.float32(-0.5)), rtol=1e-6)


@pytest.mark.parametrize("shape", SHAPES)
def test_relu_and_gradient(ctx, rng, shape):
    x, g = rand(rng, shape), rand(rng, shape)
    x.flat[0] = 0.0  # the boundary: relu'(0) = 0
    a, ga, out = to(ctx, x), to(ctx, g), dlarray.empty(shape, ctx)
    ops.relu(a, out)
    np.testing.assert_array_equal(out.asnumpy(), np.maximum(x, 0))
    ops.relu_gradient(a, ga, out)
    np.testing.assert_array_equal(out.asnumpy(), g * (x > 0))
    ops.relu_gradient(a, ga, ga)
    np.testing.assert_array_equal(ga.asnumpy(), g * (x > 0))
    ops.relu(a, a)
    np.testing.assert_array_equal(a.asnumpy(), np.maximum(x, 0))


@pytest.mark.parametrize("shape", SHAPES)
def test_copy(ctx, rng, shape):
    x = rand(rng, shape)
    a, b = to(ctx, x), dlarray.empty(shape, ctx)
    ops.copy(a, b)
    np.testing.assert_array_equal(b.asnumpy(), x)


@pytest.mark.parametrize("in_shape,out_shape", [
    ((1,), (1,)), ((1,), (5, 3)), ((7,), (3, 7)), ((200, 300), (130, 200, 300)), ((3, 1), (3, 4)),
    ((1, 5), (4, 5)), ((2, 1, 3), (4, 2, 5, 3)), ((1025,), (257, 1025)), ((), (3, 3))])
def test_broadcast_to(ctx, rng, in_shape, out_shape):
    x = rand(rng, in_shape)
    a, b = to(ctx, x), dlarray.empty(out_shape, ctx)
    ops.broadcast_to(a, b)
    np.testing.assert_array_equal(b.asnumpy(), np.broadcast_to(x, out_shape))


@pytest.mark.parametrize("shape", [(1,), (1, 1), (7,), (5, 3), (500, 200, 100), (1001, 33),
                                   (3, 65537), (4097, 2), (2, 3, 4)])
def test_reduce_sum_axis_zero(ctx, rng, shape):
    x = rand(rng, shape, 0, 20)
    out_shape = shape[1:] if len(shape) > 1 else (1,)
    a, b = to(ctx, x), dlarray.empty(out_shape, ctx)
    ops.reduce_sum_axis_zero(a, b)
    ref = x.astype(np.float64).sum(axis=0).reshape(out_shape)
    np.testing.assert_allclose(b.asnumpy(), ref, rtol=2e-5)


@pytest.mark.parametrize("shape", [(3000,), (3000, 1), (3000, 5), (3000, 63), (3000, 64),
                                   (1500, 2, 70)], ids=str)
def test_reduce_sum_accumulates_beyond_float32(ctx, rng, shape):
    # 2**24 at a random row of the first half of each column, ones in the others: a float32
    # running sum stops counting the ones that follow it (2**24 + 1 rounds back to 2**24). The
    # kernels promise float partial sums of at most 16 values moved into double (CPU; 4 on CUDA),
    # so at most 15 ones are lost per column: within 16 float roundings of the sum of magnitudes.
    # Every path: one column, narrow outputs (< 64 columns), wide ones.
    rows = shape[0]
    cols = int(np.prod(shape[1:]))
    x = np.ones((rows, cols), np.float32)
    x[rng.integers(0, rows // 2, cols), np.arange(cols)] = 2.0 ** 24
    x = x.reshape(shape)
    out_shape = shape[1:] if len(shape) > 1 else (1,)
    b = dlarray.empty(out_shape, ctx)
    ops.reduce_sum_axis_zero(to(ctx, x), b)
    ref = x.astype(np.float64).sum(axis=0).reshape(out_shape)
    np.testing.assert_array_less(np.abs(b.asnumpy() - ref), 16 * 2.0 ** -24 * ref + 1)


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (1, 7, 1), (3, 5, 7), (33, 65, 17), (500, 700, 1000),
                                   (129, 257, 63)])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matrix_multiply(ctx, rng, m, k, n, ta, tb):
    x, y = rand(rng, (m, k)), rand(rng, (k, n))
    a = to(ctx, x.T.copy() if ta else x)
    b = to(ctx, y.T.copy() if tb else y)
    c = dlarray.empty((m, n), ctx)
    ops.matrix_multiply(a, ta, b, tb, c)
    ref = x.astype(np.float64) @ y.astype(np.float64)
    err = np.linalg.norm(c.asnumpy() - ref) / max(np.linalg.norm(ref), 1e-30)
    assert err < 1e-5, err


@pytest.mark.parametrize("shape", [(1, 1), (1, 5), (5, 1), (3, 7), (400, 1000), (33, 4097),
                                   (2, 100000), (257, 31), (2, 3, 4)])
def test_softmax(ctx, rng, shape):
    x = rand(rng, shape, -5, 5)
    a, b = to(ctx, x), dlarray.empty(shape, ctx)
    ops.softmax(a, b)
    np.testing.assert_allclose(b.asnumpy(), softmax_ref(x), rtol=1e-5, atol=1e-7)
    ops.softmax(a, a)
    np.testing.assert_allclose(a.asnumpy(), softmax_ref(x), rtol=1e-5, atol=1e-7)


def large_logits(rng, shape, dtype=np.float32):
    """Logits of a few units with one to four near +1000 at random places of every row (never at
    index 0), and -1000 at index 0 of every other row: exp of a logit minus anything but the
    row's maximum overflows (also in float64), so only a kernel that shifts by the maximum gets
    them right."""
    rows, cols = int(np.prod(shape[:-1])), shape[-1]
    x = rng.uniform(-3, 3, (rows, cols))
    for r in range(rows):
        k = min(cols - 1, int(rng.integers(1, 5))) if cols > 1 else 0
        big = rng.choice(np.arange(1, cols), size=k, replace=False) if k else []
        x[r, big] = 1000 + rng.uniform(-2, 2, len(big))
        if cols > 2 and r % 2:
            x[r, 0] = -1000.0  # a tiny first logit: shifting by it overflows even without the big
    return x.reshape(shape).astype(dtype)


@pytest.mark.parametrize("shape", [(1, 2), (3, 7), (64, 33), (257, 31), (33, 4097), (2, 3, 100)],
                         ids=str)
def test_softmax_shifts_by_the_row_maximum(ctx, rng, shape):
    x = large_logits(rng, shape)
    a, b = to(ctx, x), dlarray.empty(shape, ctx)
    ops.softmax(a, b)
    np.testing.assert_allclose(b.asnumpy(), softmax_ref(x), rtol=1e-5, atol=1e-30)
    ops.softmax(a, a)
    np.testing.assert_allclose(a.asnumpy(), softmax_ref(x), rtol=1e-5, atol=1e-30)


@pytest.mark.parametrize("shape", [(1, 2), (3, 7), (64, 33), (257, 31), (33, 4097)], ids=str)
def test_softmax_cross_entropy_shifts_by_the_row_maximum(ctx, rng, shape):
    y = large_logits(rng, shape)
    y64 = y.astype(np.float64)
    # log_softmax directly (the softmax of the small logits underflows to 0: log would be -inf).
    m = y64.max(axis=1, keepdims=True)
    log_p = y64 - m - np.log(np.exp(y64 - m).sum(axis=1, keepdims=True))
    # One-hot labels on a large logit in some rows, soft labels over the whole row in others.
    labels = rng.random(shape).astype(np.float32)
    labels /= labels.sum(axis=1, keepdims=True)
    hot = np.argmax(y, axis=1)
    labels[::3] = 0
    labels[np.arange(shape[0])[::3], hot[::3]] = 1
    out = dlarray.empty((1,), ctx)
    ops.softmax_cross_entropy(to(ctx, y), to(ctx, labels), out)
    ref = -(labels.astype(np.float64) * log_p).sum(axis=1).mean()
    np.testing.assert_allclose(out.asnumpy(), [ref], rtol=1e-5)


def test_softmax_is_stable_for_large_inputs(ctx):
    x = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1000.0, -1000.0]], np.float32)
    a, b = to(ctx, x), dlarray.empty(x.shape, ctx)
    ops.softmax(a, b)
    np.testing.assert_allclose(b.asnumpy(), softmax_ref(x), rtol=1e-5)
    loss = dlarray.empty((1,), ctx)
    ops.softmax_cross_entropy(a, to(ctx, np.eye(2, 3, dtype=np.float32)), loss)
    assert np.isfinite(loss.asnumpy()).all()


@pytest.mark.parametrize("shape", [(1, 1), (1, 10), (7, 3), (100, 10), (400, 1000), (33, 4097),
                                   (2, 100000)])
def test_softmax_cross_entropy(ctx, rng, shape):
    y = rand(rng, shape, -5, 5)
    labels = rng.integers(0, shape[1], shape[0])
    y_ = np.zeros(shape, np.float32)
    y_[np.arange(shape[0]), labels] = 1.0
    out = dlarray.empty((1,), ctx)
    ops.softmax_cross_entropy(to(ctx, y), to(ctx, y_), out)
    ref = -(y_ * np.log(softmax_ref(y))).sum(axis=1).mean()
    np.testing.assert_allclose(out.asnumpy(), [ref], rtol=1e-5)


def test_ops_after_many_calls_stay_correct(ctx, rng):
    """A steady loop (like an SGD step) keeps giving the right answer."""
    x = rand(rng, (64, 32))
    w = to(ctx, x)
    g = to(ctx, np.ones_like(x))
    for _ in range(100):
        ops.matrix_elementwise_multiply_by_const(g, -0.01, g)
        ops.matrix_elementwise_add(w, g, w)
        ops.array_set(g, 1.0)
    np.testing.assert_allclose(w.asnumpy(), x - 1.0, rtol=1e-4, atol=1e-5)
