"""dlarray.autodiff.CustomOp: Python ops as graph nodes (MXNet's NDArrayOp), on the NumPy executor
and every device: values, gradients against finite differences, per-device dispatch, planned
buffers (no allocation per run) and errors."""
import numpy as np
import pytest

import dlarray
from dlarray import autodiff as ad
from test_autodiff import check_gradients, run

CONTEXTS = [None] + list(dlarray.devices())
IDS = [repr(c) for c in CONTEXTS]
ops = dlarray.ops


class Scale(ad.CustomOp):
    """y = 3 x, in dlarray ops (any device) and in NumPy."""

    def forward(self, in_data, out_data):
        ops.matrix_elementwise_multiply_by_const(in_data[0], 3.0, out_data[0])

    def backward(self, out_grad, in_data, out_data, in_grad):
        ops.matrix_elementwise_multiply_by_const(out_grad[0], 3.0, in_grad[0])

    def forward_numpy(self, in_data, out_data):
        out_data[0][:] = 3 * in_data[0]

    def backward_numpy(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = 3 * out_grad[0]


class MulAdd(ad.NDArrayOp):
    """y = a * b + a (two inputs) in NumPy only: devices run it on host copies."""

    def list_arguments(self):
        return ["a", "b"]

    def infer_shape(self, in_shape):
        if in_shape[0] != in_shape[1]:
            raise ValueError("a and b differ: %s vs %s" % (in_shape[0], in_shape[1]))
        return in_shape, [in_shape[0]]

    def forward_numpy(self, in_data, out_data):
        a, b = in_data
        out_data[0][:] = a * b + a

    def backward_numpy(self, out_grad, in_data, out_data, in_grad):
        a, b = in_data
        g = out_grad[0]
        in_grad[0][:] = g * (b + 1)
        in_grad[1][:] = g * a


class RowDot(ad.CustomOp):
    """y[i] = sum_j a[i, j] * b[i, j], shape (n,): an output shape of its own; three inputs where
    the third (c, added) shows a third gradient. NDArray code only (NumPy executor: fallback)."""

    def list_arguments(self):
        return ["a", "b", "c"]

    def infer_shape(self, in_shape):
        return in_shape, [[in_shape[0][0]]]

    def forward(self, in_data, out_data):
        a, b, c = (x.asnumpy() for x in in_data)
        out_data[0][:] = (a * b).sum(axis=1) + c

    def backward(self, out_grad, in_data, out_data, in_grad):
        a, b, _ = (x.asnumpy() for x in in_data)
        g = out_grad[0].asnumpy()[:, None]
        in_grad[0][:] = g * b
        in_grad[1][:] = g * a
        in_grad[2][:] = out_grad[0]


class HalfSquaredLoss(ad.CustomOp):
    """A loss layer (need_top_grad False): value sum(x^2)/2 of shape (1,), gradient x."""

    def infer_shape(self, in_shape):
        return in_shape, [[1]]

    def need_top_grad(self):
        return False

    def forward_numpy(self, in_data, out_data):
        out_data[0][:] = 0.5 * np.sum(in_data[0] ** 2)

    def backward_numpy(self, out_grad, in_data, out_data, in_grad):
        assert out_grad == [None]
        in_grad[0][:] = in_data[0]


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
@pytest.mark.parametrize("shape", [(1,), (3, 5), (67, 129)])
def test_scale_value_and_gradient(exec_ctx, shape, rng):
    check_gradients(exec_ctx, lambda x: Scale()(x) + x, [rng.standard_normal(shape)], rng)


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
def test_two_inputs_numpy_layer_on_every_executor(exec_ctx, rng):
    a, b = rng.standard_normal((2, 7, 9))
    check_gradients(exec_ctx, lambda x, y: MulAdd()(x, y) * x, [a, b], rng)


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
def test_three_inputs_own_output_shape(exec_ctx, rng):
    """NDArray code only: the NumPy executor runs it on the CPU in float32, so the expected
    gradients are the analytic ones, not finite differences."""
    a0, b0 = rng.standard_normal((2, 5, 4))
    c0, r0 = rng.standard_normal((2, 5))
    a, b, c, r = (ad.Variable(n) for n in "abcr")
    y = RowDot()(a, b, c)
    loss = ad.reducesumaxiszero_op(y * r)
    got = run([y] + ad.gradients(loss, [a, b, c]), {a: a0, b: b0, c: c0, r: r0}, exec_ctx)
    expected = [(a0 * b0).sum(axis=1) + c0, r0[:, None] * b0, r0[:, None] * a0, r0]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
def test_loss_layer_without_top_grad(exec_ctx, rng):
    x0 = rng.standard_normal((4, 3))
    x = ad.Variable("x")
    loss = HalfSquaredLoss()(Scale()(x))
    value, grad = run([loss, ad.gradients(loss, [x])[0]], {x: x0}, exec_ctx)
    np.testing.assert_allclose(value, [0.5 * np.sum((3 * x0) ** 2)], rtol=1e-5)
    np.testing.assert_allclose(grad, 9 * x0, rtol=1e-5)


class Recorder(ad.CustomOp):
    """Says which implementation ran."""

    def __init__(self):
        self.calls = []

    def forward_cpu(self, in_data, out_data):
        self.calls.append("forward_cpu")
        ops.copy(in_data[0], out_data[0])

    def forward_gpu(self, in_data, out_data):
        self.calls.append("forward_gpu")
        ops.copy(in_data[0], out_data[0])

    def forward_numpy(self, in_data, out_data):
        self.calls.append("forward_numpy")
        out_data[0][:] = in_data[0]


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
def test_per_device_implementation(exec_ctx):
    op = Recorder()
    x = ad.Variable("x")
    executor = ad.Executor([op(x)], ctx=exec_ctx)
    x0 = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(2):
        y, = executor.run({x: x0}, convert_to_numpy_ret_vals=True)
        np.testing.assert_array_equal(y, x0)
    expected = "forward_" + ("numpy" if exec_ctx is None else
                             "gpu" if dlarray.is_gpu_ctx(exec_ctx) else "cpu")
    assert op.calls == [expected, expected]


def test_numpy_executor_keeps_float64_with_numpy_code(rng):
    x0 = rng.standard_normal(5)
    x = ad.Variable("x")
    y, = ad.Executor([Scale()(x)]).run({x: x0})
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y, 3 * x0)


def test_fallback_ctx_runs_ndarray_code_for_numpy_executor(rng):
    class OnCpu(ad.CustomOp):
        def forward(self, in_data, out_data):
            assert all(isinstance(a, dlarray.NDArray) and a.ctx == dlarray.cpu(0)
                       for a in in_data + out_data)
            ops.relu(in_data[0], out_data[0])

    x0 = rng.standard_normal((3, 4))
    x = ad.Variable("x")
    y, = ad.Executor([OnCpu()(x)]).run({x: x0})
    np.testing.assert_allclose(y, np.maximum(x0, 0), rtol=1e-6)


def test_planned_buffers_no_allocation_per_run(ctx, rng):
    x, w = ad.Variable("x"), ad.Variable("w")
    loss = HalfSquaredLoss()(MulAdd()(Scale()(x), w))
    grads = ad.gradients(loss, [x, w])
    executor = ad.Executor([loss] + grads, ctx=ctx)
    feed = {x: dlarray.array(rng.standard_normal((8, 3)), ctx),
            w: dlarray.array(rng.standard_normal((8, 3)), ctx)}
    first = executor.run(feed)
    dlarray.synchronize(ctx)
    before = dlarray.memory_stats(ctx)["num_allocations"]
    again = executor.run(feed)
    dlarray.synchronize(ctx)
    assert dlarray.memory_stats(ctx)["num_allocations"] == before
    assert all(a is b for a, b in zip(first, again))


def test_errors():
    x, y = ad.Variable("x"), ad.Variable("y")
    with pytest.raises(TypeError, match=r"MulAdd takes 2 inputs \(a, b\), got 1"):
        MulAdd()(x)
    with pytest.raises(TypeError, match="input 'data' must be a graph Node, got ndarray"):
        Scale()(np.ones(3))

    class TwoOutputs(Scale):
        def list_outputs(self):
            return ["y", "z"]

    with pytest.raises(TypeError, match="one output, list_outputs.. gives 2"):
        TwoOutputs()(x)

    with pytest.raises(ValueError, match="a and b differ"):
        ad.Executor([MulAdd()(x, y)]).run({x: np.ones(2), y: np.ones(3)})

    class BadShape(Scale):
        def infer_shape(self, in_shape):
            return [3]

    with pytest.raises(ValueError, match="BadShape.*infer_shape must return"):
        ad.Executor([BadShape()(x)]).run({x: np.ones(2)})

    class NoCode(ad.CustomOp):
        pass

    with pytest.raises(NotImplementedError, match="NoCode has no forward for numpy executors: "
                                                  "define one of forward_numpy, forward_cpu"):
        ad.Executor([NoCode()(x)]).run({x: np.ones(2)})
    for ctx in dlarray.devices():
        with pytest.raises(NotImplementedError, match="no forward for cpu|no forward for gpu"):
            ad.Executor([NoCode()(x)], ctx=ctx).run({x: np.ones(2)})

    grad, = ad.gradients(Scale()(x), [x])
    with pytest.raises(ValueError, match="second derivatives"):
        ad.gradients(grad, [x])
