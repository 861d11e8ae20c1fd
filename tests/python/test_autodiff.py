"""dlarray.autodiff: graph building, gradients against finite differences, the executor's
memory plan, and its errors, on NumPy (ctx=None) and every usable device."""
import re

import numpy as np
import pytest

import dlarray
from dlarray import autodiff as ad

CONTEXTS = [None] + list(dlarray.devices())
IDS = [repr(c) for c in CONTEXTS]
DEVICES = list(dlarray.devices())


def run(nodes, feed, ctx):
    return ad.Executor(nodes, ctx=ctx).run(feed, convert_to_numpy_ret_vals=True)


def sum_all(node, ndim):
    """A (1,) node summing every element of ``node`` (of ``ndim`` dimensions)."""
    for _ in range(max(ndim, 1)):
        node = ad.reducesumaxiszero_op(node)
    return node


def numeric_gradients(loss, variables, feed, eps=1e-6):
    """Central differences of the (1,) node ``loss`` in float64 with the NumPy executor."""
    executor = ad.Executor([loss])
    grads = []
    for var in variables:
        value = feed[var]
        grad = np.zeros_like(value)
        for i in np.ndindex(value.shape):
            saved = value[i]
            value[i] = saved + eps
            plus = executor.run(feed)[0][0]
            value[i] = saved - eps
            minus = executor.run(feed)[0][0]
            value[i] = saved
            grad[i] = (plus - minus) / (2 * eps)
        grads.append(grad)
    return grads


def check_gradients(ctx, build, inputs, rng, constants=(), weighted=True):
    """Checks build(*variables, *constants)'s value and its gradients for the variables
    (fed ``inputs``) on ``ctx`` against NumPy float64 and finite differences.

    The output is reduced to a scalar as sum(output * r) with a random r, so every output
    element gets its own weight, or used as it is when ``weighted`` is False (a (1,) loss).
    """
    variables = [ad.Variable("x%d" % i) for i in range(len(inputs))]
    fixed = [ad.Variable("c%d" % i) for i in range(len(constants))]
    feed = {v: np.array(x, dtype=np.float64) for v, x in zip(variables + fixed,
                                                             list(inputs) + list(constants))}
    out = build(*variables, *fixed)
    expected_out = run([out], feed, None)[0]
    if weighted:
        r = ad.Variable("r")
        feed[r] = rng.standard_normal(expected_out.shape)
        loss = sum_all(out * r, expected_out.ndim)
    else:
        loss = out
    expected = numeric_gradients(loss, variables, feed)
    got = run([out] + ad.gradients(loss, variables), feed, ctx)
    rtol, atol = (1e-6, 1e-7) if ctx is None else (2e-3, 2e-4)
    np.testing.assert_allclose(got[0], expected_out, rtol=rtol, atol=atol)
    for var, g, e in zip(variables, got[1:], expected):
        assert g.shape == e.shape, var.name
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol * max(1.0, np.abs(e).max()),
                                   err_msg="gradient for %s" % var.name)


def away_from_zero(rng, shape):
    """Values with |x| >= 0.1, so ReLU's kink stays out of the finite differences."""
    x = rng.uniform(0.1, 1.5, shape)
    return x * rng.choice([-1.0, 1.0], shape)


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
class TestGradients:
    def test_add(self, exec_ctx, rng):
        check_gradients(exec_ctx, lambda a, b: a + b,
                        [rng.normal(size=(7, 5)), rng.normal(size=(7, 5))], rng)

    def test_mul(self, exec_ctx, rng):
        check_gradients(exec_ctx, lambda a, b: a * b,
                        [rng.normal(size=(3, 9)), rng.normal(size=(3, 9))], rng)

    def test_add_byconst(self, exec_ctx, rng):
        check_gradients(exec_ctx, lambda a: 2.5 + (a + 1), [rng.normal(size=(4, 3))], rng)

    def test_mul_byconst(self, exec_ctx, rng):
        check_gradients(exec_ctx, lambda a: -0.5 * (a * 3), [rng.normal(size=(11,))], rng)

    def test_same_node_twice(self, exec_ctx, rng):
        check_gradients(exec_ctx, lambda a: a * a + a, [rng.normal(size=(5, 2))], rng)

    @pytest.mark.parametrize("trans_a", [False, True])
    @pytest.mark.parametrize("trans_b", [False, True])
    def test_matmul(self, exec_ctx, rng, trans_a, trans_b):
        a = rng.normal(size=(4, 6) if trans_a else (6, 4))
        b = rng.normal(size=(3, 4) if trans_b else (4, 3))
        check_gradients(exec_ctx, lambda x, y: ad.matmul_op(x, y, trans_a, trans_b), [a, b], rng)

    def test_reducesumaxiszero(self, exec_ctx, rng):
        check_gradients(exec_ctx, ad.reducesumaxiszero_op, [rng.normal(size=(6, 5))], rng)

    def test_reducesumaxiszero_1d(self, exec_ctx, rng):
        check_gradients(exec_ctx, ad.reducesumaxiszero_op, [rng.normal(size=(7,))], rng)

    def test_broadcastto(self, exec_ctx, rng):
        check_gradients(exec_ctx, ad.broadcastto_op,
                        [rng.normal(size=(5,)), rng.normal(size=(3, 5))], rng)

    def test_softmaxcrossentropy_loss(self, exec_ctx, rng):
        labels = np.eye(7)[rng.integers(0, 7, size=5)]
        check_gradients(exec_ctx, ad.softmaxcrossentropy_op, [rng.normal(size=(5, 7)) * 3], rng,
                        constants=[labels], weighted=False)

    def test_softmaxcrossentropy_weighted(self, exec_ctx, rng):
        soft_labels = rng.dirichlet(np.ones(4), size=6)
        check_gradients(exec_ctx, ad.softmaxcrossentropy_op, [rng.normal(size=(6, 4))], rng,
                        constants=[soft_labels])

    def test_softmaxcrossentropy_labels_get_zero_gradient(self, exec_ctx, rng):
        y, y_ = ad.Variable("y"), ad.Variable("y_")
        grad, = ad.gradients(ad.softmaxcrossentropy_op(y, y_), [y_])
        np.testing.assert_array_equal(run([grad], {y_: np.eye(4)[[0, 1, 2]]}, exec_ctx)[0],
                                      np.zeros((3, 4)))

    def test_softmax(self, exec_ctx, rng):
        check_gradients(exec_ctx, ad.softmax_op, [rng.normal(size=(5, 8)) * 2], rng)

    def test_relu(self, exec_ctx, rng):
        check_gradients(exec_ctx, ad.relu_op, [away_from_zero(rng, (6, 7))], rng)

    def test_relu_gradient(self, exec_ctx, rng):
        check_gradients(exec_ctx, ad.relu_gradient_op,
                        [away_from_zero(rng, (6, 7)), rng.normal(size=(6, 7))], rng)

    def test_oneslike_zeroslike(self, exec_ctx, rng):
        check_gradients(exec_ctx, lambda a: a * ad.oneslike_op(a) + ad.zeroslike_op(a),
                        [rng.normal(size=(3, 4))], rng)

    def test_mlp(self, exec_ctx, rng):
        def build(x, w1, b1, w2):
            h = ad.matmul_op(x, w1)
            h = ad.relu_op(h + ad.broadcastto_op(b1, h))
            return ad.softmax_op(ad.matmul_op(h, w2))

        inputs = [rng.normal(size=(5, 4)), rng.normal(size=(4, 6)), rng.normal(size=(6,)),
                  rng.normal(size=(6, 3))]
        check_gradients(exec_ctx, build, inputs, rng)


def test_node_operators():
    x, y = ad.Variable("x"), ad.Variable("y")
    assert (x + y).op is ad.add_op and (x * y).op is ad.mul_op
    for node in (x + 2, 2 + x):
        assert node.op is ad.add_byconst_op and node.inputs == [x] and node.const_attr == 2
    for node in (x * 3, 3 * x):
        assert node.op is ad.mul_byconst_op and node.inputs == [x] and node.const_attr == 3
    assert str(x + y) == "(x+y)" and x.name == "x"
    node = np.float32(2) * x
    assert node.op is ad.mul_byconst_op and node.const_attr == 2
    for bad in (lambda: x + np.ones(3), lambda: np.ones(3) * x, lambda: x * "2"):
        with pytest.raises(TypeError, match="real number"):
            bad()


def test_find_topo_sort_puts_inputs_first():
    x, w = ad.Variable("x"), ad.Variable("w")
    h = ad.matmul_op(x, w)
    out = ad.relu_op(h) + h * 2
    order = ad.find_topo_sort([out])
    assert len(order) == len(set(order)) == 6
    for node in order:
        assert all(order.index(i) < order.index(node) for i in node.inputs)


def test_deep_graph_needs_no_recursion(rng):
    x = ad.Variable("x")
    y = x
    for _ in range(5000):
        y = y + 1
    grad, = ad.gradients(y, [x])
    value = rng.normal(size=(2, 3))
    out, g = ad.Executor([y, grad]).run({x: value})
    np.testing.assert_allclose(out, value + 5000)
    np.testing.assert_allclose(g, np.ones((2, 3)))


def test_gradient_of_unrelated_node_is_zero(rng):
    x, z = ad.Variable("x"), ad.Variable("z")
    grad, = ad.gradients(x * 2, [z])
    np.testing.assert_array_equal(ad.Executor([grad]).run({z: np.ones((2, 2))})[0],
                                  np.zeros((2, 2)))


def test_softmax_func_is_stable():
    y = np.array([[1000.0, 1000.0, 0.0], [1.0, 2.0, 3.0]])
    s = ad.softmax_func(y)
    np.testing.assert_allclose(s[0], [0.5, 0.5, 0.0])
    np.testing.assert_allclose(s[1], np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum())


def mlp_graph():
    x, w1, b1, w2, y_ = (ad.Variable(n) for n in ("x", "w1", "b1", "w2", "y_"))
    h = ad.matmul_op(x, w1)
    h = ad.relu_op(h + ad.broadcastto_op(b1, h))
    loss = ad.softmaxcrossentropy_op(ad.matmul_op(h, w2), y_)
    return (x, w1, b1, w2, y_), [loss] + ad.gradients(loss, [w1, b1, w2])


def mlp_feed(nodes, rng, batch=16):
    x, w1, b1, w2, y_ = nodes
    return {x: rng.normal(size=(batch, 10)), w1: rng.normal(size=(10, 8)),
            b1: rng.normal(size=(8,)), w2: rng.normal(size=(8, 4)),
            y_: np.eye(4)[rng.integers(0, 4, size=batch)]}


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
def test_run_returns_values_in_order(exec_ctx, rng):
    nodes, outputs = mlp_graph()
    feed = mlp_feed(nodes, rng)
    expected = ad.Executor(outputs).run(feed)
    got = ad.Executor(outputs[::-1], exec_ctx).run(feed)
    for g, e in zip(got[::-1], expected):
        if exec_ctx is not None:
            assert isinstance(g, dlarray.NDArray) and g.ctx == exec_ctx
            g = g.asnumpy()
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


def test_repeated_runs_allocate_nothing(ctx, rng):
    nodes, outputs = mlp_graph()
    executor = ad.Executor(outputs, ctx)
    reference = ad.Executor(outputs)
    w1 = nodes[1]
    feeds = [mlp_feed(nodes, rng) for _ in range(4)]
    for feed in feeds[1:]:
        feed[w1] = dlarray.array(feed[w1], ctx)  # NDArray feeds, a new one each run
    executor.run(feeds[0])
    before = dlarray.memory_stats(ctx)["num_allocations"]
    for feed in feeds:
        expected = reference.run({k: v if isinstance(v, np.ndarray) else v.asnumpy()
                                  for k, v in feed.items()})
        got = executor.run(feed, convert_to_numpy_ret_vals=True)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
    assert dlarray.memory_stats(ctx)["num_allocations"] == before


def test_shapes_seen_before_reuse_their_plan(ctx, rng):
    nodes, outputs = mlp_graph()
    executor = ad.Executor(outputs, ctx)
    reference = ad.Executor(outputs)
    first = {}
    for batch in (16, 5, 16, 5, 16):
        if batch == 16 and len(first) == 2:  # both plans made and run once: a steady state
            before = dlarray.memory_stats(ctx)["num_allocations"]
        feed = mlp_feed(nodes, rng, batch)
        got = executor.run(feed)
        assert all(g is f for g, f in zip(got, first.setdefault(batch, got)))  # same buffers
        for g, e in zip(got, reference.run(feed)):
            np.testing.assert_allclose(g.asnumpy(), e, rtol=1e-4, atol=1e-5)
    assert dlarray.memory_stats(ctx)["num_allocations"] == before


def test_buffers_are_shared(ctx, rng):
    """A chain of 40 ops on (256, 256) float32 (256 KiB each) needs about two buffers."""
    import gc

    x = ad.Variable("x")
    y = x
    for i in range(20):
        y = ad.relu_op(ad.matmul_op(y, x) * 0.01 + i)
    gc.collect()
    before = dlarray.memory_stats(ctx)["bytes_in_use"]
    executor = ad.Executor([y], ctx)
    value = rng.normal(size=(256, 256))
    got = executor.run({x: value}, convert_to_numpy_ret_vals=True)[0]
    used = dlarray.memory_stats(ctx)["bytes_in_use"] - before
    assert used <= 4 * 256 * 1024, used
    np.testing.assert_allclose(got, ad.Executor([y]).run({x: value})[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
def test_feed_float64_and_ndarrays(exec_ctx, rng):
    x, w = ad.Variable("x"), ad.Variable("w")
    y = ad.matmul_op(x, w)
    xv, wv = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    feed = {x: xv, w: wv if exec_ctx is None else dlarray.array(wv, exec_ctx)}
    out = ad.Executor([y, w], exec_ctx).run(feed)
    if exec_ctx is not None:
        assert out[1] is feed[w]  # an NDArray on the executor's device is used as it is
        out = [v.asnumpy() for v in out]
    np.testing.assert_allclose(out[0], xv @ wv, rtol=1e-5, atol=1e-6)


def test_returned_arrays_are_overwritten_by_next_run(ctx):
    x = ad.Variable("x")
    executor = ad.Executor([x * 2], ctx)
    first, = executor.run({x: np.ones((2, 2))})
    second, = executor.run({x: np.full((2, 2), 5.0)})
    assert first is second
    np.testing.assert_array_equal(first.asnumpy(), np.full((2, 2), 10.0))


def test_feeding_back_an_output(ctx, rng):
    x, w = ad.Variable("x"), ad.Variable("w")
    executor = ad.Executor([ad.matmul_op(x, w)], ctx)
    xv, wv = rng.normal(size=(4, 4)), rng.normal(size=(4, 4))
    out, = executor.run({x: xv, w: wv})
    out, = executor.run({x: out, w: wv})  # x is the executor's own output buffer
    np.testing.assert_allclose(out.asnumpy(), xv @ wv @ wv, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
def test_feeding_an_inner_node(exec_ctx, rng):
    x, w = ad.Variable("x"), ad.Variable("w")
    h = ad.matmul_op(x, w)
    y = ad.relu_op(h)
    hv = rng.normal(size=(3, 3))
    out = ad.Executor([y], exec_ctx).run({h: hv}, convert_to_numpy_ret_vals=True)[0]
    np.testing.assert_allclose(out, np.maximum(hv, 0), rtol=1e-6)


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
class TestErrors:
    def setup_method(self):
        self.x, self.w = ad.Variable("x"), ad.Variable("w")
        self.y = ad.matmul_op(self.x, self.w)
        self.feed = {self.x: np.ones((3, 4)), self.w: np.ones((4, 2))}

    def test_wrong_shape(self, exec_ctx):
        executor = ad.Executor([self.y], exec_ctx)
        self.feed[self.w] = np.ones((5, 2))
        with pytest.raises(ValueError, match=r"matmul_op node .*'x' \(3, 4\), 'w' \(5, 2\)"):
            executor.run(self.feed)
        self.feed[self.w] = np.ones((4, 2))
        assert executor.run(self.feed, True)[0].shape == (3, 2)  # still usable

    def test_wrong_shape_elementwise(self, exec_ctx):
        z = ad.Variable("z")
        with pytest.raises(ValueError, match=r"add_op node '\(x\+z\)'.*same shape"):
            ad.Executor([self.x + z], exec_ctx).run({self.x: np.ones(3), z: np.ones(4)})

    def test_cannot_broadcast(self, exec_ctx):
        b = ad.Variable("b")
        with pytest.raises(ValueError, match=r"broadcastto_op .*'b' \(3,\).*\(3, 2\)"):
            ad.Executor([ad.broadcastto_op(b, self.y)], exec_ctx).run({**self.feed, b: np.ones(3)})

    def test_missing_placeholder(self, exec_ctx):
        del self.feed[self.w]
        with pytest.raises(ValueError, match="no value for placeholder 'w'"):
            ad.Executor([self.y], exec_ctx).run(self.feed)

    def test_node_of_another_graph(self, exec_ctx):
        stranger = ad.Variable("stranger")
        self.feed[stranger] = np.ones(2)
        with pytest.raises(ValueError, match="'stranger' is not in this executor's graph"):
            ad.Executor([self.y], exec_ctx).run(self.feed)

    def test_key_not_a_node(self, exec_ctx):
        with pytest.raises(TypeError, match="keys must be Nodes"):
            ad.Executor([self.y], exec_ctx).run({"x": np.ones((3, 4))})

    def test_value_not_an_array(self, exec_ctx):
        self.feed[self.x] = [[1.0] * 4] * 3
        with pytest.raises(TypeError, match="node 'x': expected a NumPy array or an NDArray"):
            ad.Executor([self.y], exec_ctx).run(self.feed)

    @pytest.mark.parametrize("array_ctx", DEVICES, ids=repr)
    def test_value_on_another_device(self, exec_ctx, array_ctx):
        if exec_ctx == array_ctx:
            pytest.skip("same device")
        self.feed[self.x] = dlarray.array(np.ones((3, 4)), array_ctx)
        message = "node 'x'.*" + re.escape(repr(array_ctx))
        with pytest.raises((ValueError, TypeError), match=message):
            ad.Executor([self.y], exec_ctx).run(self.feed)

    def test_softmax_gradient_needs_2d(self, exec_ctx):
        grad, = ad.gradients(ad.softmax_op(self.x), [self.x])
        with pytest.raises(ValueError, match="softmax_op gradient needs a 2-D input"):
            ad.Executor([grad], exec_ctx).run({self.x: np.ones((2, 3, 4))})


def test_executor_takes_nodes_only():
    with pytest.raises(TypeError, match="evaluates Nodes"):
        ad.Executor([np.ones(3)])
