"""The seed's gpu_op tests (dlsys), run on every device: the import line changed, and the data
drawn from the seeded ``rng`` fixture instead of the unseeded np.random (a failure reproduces)."""
import numpy as np

from dlarray import gpu_op, ndarray


def softmax_func(y):
    """NumPy softmax, as the seed's autodiff.softmax_func."""
    b = y - np.max(y, axis=1, keepdims=True)
    expb = np.exp(b)
    return expb / np.sum(expb, axis=1, keepdims=True)


def test_array_set(ctx):
    shape = (500, 200)
    arr_x = ndarray.empty(shape, ctx=ctx)
    gpu_op.array_set(arr_x, 1.)
    np.testing.assert_allclose(np.ones(shape), arr_x.asnumpy())
    gpu_op.array_set(arr_x, 0.)
    np.testing.assert_allclose(np.zeros(shape), arr_x.asnumpy())


def test_broadcast_to(ctx, rng):
    shape = (200, 300)
    to_shape = (130, 200, 300)
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    arr_x = ndarray.array(x, ctx=ctx)
    arr_y = ndarray.empty(to_shape, ctx=ctx)
    gpu_op.broadcast_to(arr_x, arr_y)
    np.testing.assert_allclose(np.broadcast_to(x, to_shape), arr_y.asnumpy())


def test_reduce_sum_axis_zero(ctx, rng):
    shape = (500, 200, 100)
    to_shape = (200, 100)
    x = rng.uniform(0, 20, shape).astype(np.float32)
    arr_x = ndarray.array(x, ctx=ctx)
    arr_y = ndarray.empty(to_shape, ctx=ctx)
    gpu_op.reduce_sum_axis_zero(arr_x, arr_y)
    np.testing.assert_allclose(np.sum(x, axis=0), arr_y.asnumpy(), rtol=1e-5)


def test_matrix_elementwise_add(ctx, rng):
    shape = (500, 200)
    x = rng.uniform(0, 10, size=shape).astype(np.float32)
    y = rng.uniform(0, 10, size=shape).astype(np.float32)
    arr_x, arr_y = ndarray.array(x, ctx=ctx), ndarray.array(y, ctx=ctx)
    arr_z = ndarray.empty(shape, ctx=ctx)
    gpu_op.matrix_elementwise_add(arr_x, arr_y, arr_z)
    np.testing.assert_allclose(x + y, arr_z.asnumpy(), rtol=1e-5)


def test_matrix_elementwise_add_by_const(ctx, rng):
    shape = (2000, 3000)
    x = rng.uniform(0, 10, size=shape).astype(np.float32)
    val = rng.uniform(-5, 5)
    arr_x = ndarray.array(x, ctx=ctx)
    arr_y = ndarray.empty(shape, ctx=ctx)
    gpu_op.matrix_elementwise_add_by_const(arr_x, val, arr_y)
    np.testing.assert_allclose(x + val, arr_y.asnumpy(), rtol=1e-5)


def test_matrix_elementwise_multiply(ctx, rng):
    shape = (500, 200)
    x = rng.uniform(0, 10, size=shape).astype(np.float32)
    y = rng.uniform(0, 10, size=shape).astype(np.float32)
    arr_x, arr_y = ndarray.array(x, ctx=ctx), ndarray.array(y, ctx=ctx)
    arr_z = ndarray.empty(shape, ctx=ctx)
    gpu_op.matrix_elementwise_multiply(arr_x, arr_y, arr_z)
    np.testing.assert_allclose(x * y, arr_z.asnumpy(), rtol=1e-5)


def test_matrix_multiply_by_const(ctx, rng):
    shape = (2000, 3000)
    x = rng.uniform(0, 10, size=shape).astype(np.float32)
    val = rng.uniform(-5, 5)
    arr_x = ndarray.array(x, ctx=ctx)
    arr_y = ndarray.empty(shape, ctx=ctx)
    gpu_op.matrix_elementwise_multiply_by_const(arr_x, val, arr_y)
    np.testing.assert_allclose(x * val, arr_y.asnumpy(), rtol=1e-5)


def test_matrix_multiply(ctx, rng):
    x = rng.uniform(0, 10, size=(500, 700)).astype(np.float32)
    y = rng.uniform(0, 10, size=(700, 1000)).astype(np.float32)
    arr_x, arr_y = ndarray.array(x, ctx=ctx), ndarray.array(y, ctx=ctx)
    arr_z = ndarray.empty((500, 1000), ctx=ctx)
    gpu_op.matrix_multiply(arr_x, False, arr_y, False, arr_z)
    np.testing.assert_allclose(np.dot(x, y), arr_z.asnumpy(), rtol=1e-5)

    x = rng.uniform(0, 10, size=(1000, 500)).astype(np.float32)
    y = rng.uniform(0, 10, size=(2000, 500)).astype(np.float32)
    arr_x, arr_y = ndarray.array(x, ctx=ctx), ndarray.array(y, ctx=ctx)
    arr_z = ndarray.empty((1000, 2000), ctx=ctx)
    gpu_op.matrix_multiply(arr_x, False, arr_y, True, arr_z)
    np.testing.assert_allclose(np.dot(x, np.transpose(y)), arr_z.asnumpy(), rtol=1e-5)

    x = rng.uniform(0, 10, size=(500, 1000)).astype(np.float32)
    y = rng.uniform(0, 10, size=(2000, 500)).astype(np.float32)
    arr_x, arr_y = ndarray.array(x, ctx=ctx), ndarray.array(y, ctx=ctx)
    arr_z = ndarray.empty((1000, 2000), ctx=ctx)
    gpu_op.matrix_multiply(arr_x, True, arr_y, True, arr_z)
    np.testing.assert_allclose(np.dot(np.transpose(x), np.transpose(y)), arr_z.asnumpy(), rtol=1e-5)


def test_relu(ctx, rng):
    shape = (2000, 2500)
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    arr_x = ndarray.array(x, ctx=ctx)
    arr_y = ndarray.empty(shape, ctx=ctx)
    gpu_op.relu(arr_x, arr_y)
    np.testing.assert_allclose(np.maximum(x, 0).astype(np.float32), arr_y.asnumpy())


def test_relu_gradient(ctx, rng):
    shape = (2000, 2500)
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    grad_x = rng.uniform(-5, 5, shape).astype(np.float32)
    arr_x, arr_grad_x = ndarray.array(x, ctx=ctx), ndarray.array(grad_x, ctx=ctx)
    arr_y = ndarray.empty(shape, ctx=ctx)
    gpu_op.relu_gradient(arr_x, arr_grad_x, arr_y)
    np.testing.assert_allclose(((x > 0) * grad_x).astype(np.float32), arr_y.asnumpy())


def test_softmax(ctx, rng):
    shape = (400, 1000)
    x = rng.uniform(-5, 5, shape).astype(np.float32)
    arr_x = ndarray.array(x, ctx=ctx)
    arr_y = ndarray.empty(shape, ctx=ctx)
    gpu_op.softmax(arr_x, arr_y)
    np.testing.assert_allclose(softmax_func(x), arr_y.asnumpy(), rtol=1e-5)


def test_softmax_cross_entropy(ctx, rng):
    shape = (400, 1000)
    y = rng.uniform(-5, 5, shape).astype(np.float32)
    y_ = rng.uniform(-5, 5, shape).astype(np.float32)
    arr_y, arr_y_ = ndarray.array(y, ctx=ctx), ndarray.array(y_, ctx=ctx)
    arr_out = ndarray.empty((1,), ctx=ctx)
    gpu_op.softmax_cross_entropy(arr_y, arr_y_, arr_out)
    out = arr_out.asnumpy()
    # The reference in float64: the mean over rows cancels row values of a few hundred down to a
    # few units, so a float32 reference is itself off by ~1e-5 of the result. The absolute
    # tolerance is float32's rounding of those row values.
    y64 = y.astype(np.float64)
    desired = -np.sum(y_.astype(np.float64) * np.log(softmax_func(y64)), axis=1).mean()
    np.testing.assert_allclose(out, desired, rtol=1e-5, atol=5e-5)
