"""plugins/sigmoid, the reference op plugin: its kernels on every usable device against NumPy,
its declared gradient in dlarray.autodiff (checked by finite differences), and a sigmoid MLP that
trains on the sample digits with no Python code for the plugin op."""
import pathlib

import numpy as np
import pytest

import dlarray
from dlarray import autodiff as ad

ROOT = pathlib.Path(__file__).resolve().parents[2]
SIZES = [(1,), (7,), (33, 1000), (32768 + 5,), (257, 129), (4, 5, 6)]


def reference(x):
    return (1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(np.float32)


def needs_kernel(ctx, op="sigmoid"):
    kind = repr(ctx).rsplit("(", 1)[0]  # the device type as op_info names it
    if kind not in dlarray.ops.op_info(op)["devices"]:
        pytest.skip("%s has no %s kernel in this build" % (op, kind))


@pytest.mark.parametrize("shape", SIZES, ids=str)
def test_sigmoid_matches_numpy(ctx, rng, shape):
    needs_kernel(ctx)
    x = (rng.standard_normal(shape) * 6).astype(np.float32)
    y = dlarray.ops.sigmoid(dlarray.array(x, ctx))
    assert y.ctx == ctx and y.shape == shape
    np.testing.assert_allclose(y.asnumpy(), reference(x), rtol=2e-6, atol=1e-30)


def test_sigmoid_special_values(ctx):
    needs_kernel(ctx)
    x = np.array([np.nan, np.inf, -np.inf, 0.0, 88.0, -88.0, -89.0, -1e30, 1e30], np.float32)
    y = dlarray.ops.sigmoid(dlarray.array(x, ctx)).asnumpy()
    assert np.isnan(y[0]) and y[1] == 1.0 and y[2] == 0.0 and y[3] == 0.5 and y[4] == 1.0
    np.testing.assert_allclose(y[5], 6.0546e-39, rtol=1e-3)
    assert y[6] < 1e-38 and y[7] == 0.0 and y[8] == 1.0


@pytest.mark.parametrize("shape", SIZES, ids=str)
def test_sigmoid_gradient_matches_numpy(ctx, rng, shape):
    needs_kernel(ctx, "sigmoid_gradient")
    y = rng.uniform(0, 1, shape).astype(np.float32)
    dy = rng.standard_normal(shape).astype(np.float32)
    dx = dlarray.ops.sigmoid_gradient(dlarray.array(y, ctx), dlarray.array(dy, ctx))
    np.testing.assert_allclose(dx.asnumpy(), dy * y * (1 - y), rtol=1e-6, atol=1e-7)


def test_in_place_and_errors(ctx, rng):
    needs_kernel(ctx)
    x = rng.standard_normal(100).astype(np.float32)
    a = dlarray.array(x, ctx)
    dlarray.ops.sigmoid(a, a)  # declared in-place capable
    np.testing.assert_allclose(a.asnumpy(), reference(x), rtol=2e-6)
    with pytest.raises(ValueError, match="same shape"):
        dlarray.ops.sigmoid(a, dlarray.empty((99,), ctx))
    with pytest.raises(TypeError, match="float64"):
        dlarray.ops.sigmoid(dlarray.array(x, ctx, dtype="float64"))


def test_declared_gradient_is_visible():
    info = dlarray.ops.op_info("sigmoid")
    assert info["gradients"] == [{"input": 0, "op": "sigmoid_gradient",
                                  "args": [("output", 0), ("output_grad", 0)]}]
    assert "Gradient of x: sigmoid_gradient(y, dy)." in dlarray.ops.sigmoid.__doc__


def loss_graph():
    x, w, b = ad.Variable("x"), ad.Variable("w"), ad.Variable("b")
    h = ad.ops.sigmoid(ad.matmul_op(x, w) + ad.broadcastto_op(b, ad.matmul_op(x, w)))
    loss = ad.reducesumaxiszero_op(ad.reducesumaxiszero_op(h * h))
    return x, w, b, loss


@pytest.mark.parametrize("exec_ctx", [None] + list(dlarray.devices()), ids=repr)
def test_autodiff_gradients_match_finite_differences(exec_ctx, rng):
    if exec_ctx is not None:
        needs_kernel(exec_ctx)
    x, w, b, loss = loss_graph()
    grads = ad.gradients(loss, [w, b])
    ex = ad.Executor([loss] + grads, ctx=exec_ctx)
    feed = {x: rng.standard_normal((6, 5)).astype(np.float32),
            w: (rng.standard_normal((5, 4)) * 0.5).astype(np.float32),
            b: (rng.standard_normal(4) * 0.5).astype(np.float32)}
    _, gw, gb = [np.asarray(v.asnumpy() if hasattr(v, "asnumpy") else v)
                 for v in ex.run(feed, convert_to_numpy_ret_vals=True)]

    def f(node, value):
        h = 1 / (1 + np.exp(-(feed[x].astype(np.float64) @ (value if node is w else feed[w])
                               + (value if node is b else feed[b]))))
        return (h * h).sum()

    for node, got in ((w, gw), (b, gb)):
        base = feed[node].astype(np.float64)
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            step = np.zeros_like(base)
            step[idx] = 1e-5
            numeric[idx] = (f(node, base + step) - f(node, base - step)) / 2e-5
        np.testing.assert_allclose(got, numeric, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("exec_ctx", list(dlarray.devices()), ids=repr)
def test_sigmoid_mlp_trains_on_digits(exec_ctx):
    needs_kernel(exec_ctx)
    data = np.load(ROOT / "data" / "mnist10k.npz")
    images = data["images"].astype(np.float32) / 255.0
    labels = np.eye(10, dtype=np.float32)[data["labels"]]
    train_x, train_y, test_x, test_labels = images[:8000], labels[:8000], images[8000:], \
        data["labels"][8000:]
    x, y_ = ad.Variable("x"), ad.Variable("y_")
    w1, b1, w2, b2 = (ad.Variable(n) for n in ("w1", "b1", "w2", "b2"))
    z1 = ad.matmul_op(x, w1)
    h = ad.ops.sigmoid(z1 + ad.broadcastto_op(b1, z1))
    logits = ad.matmul_op(h, w2)
    logits = logits + ad.broadcastto_op(b2, logits)
    loss = ad.softmaxcrossentropy_op(logits, y_)
    params = [w1, b1, w2, b2]
    train = ad.Executor([loss] + ad.gradients(loss, params), ctx=exec_ctx)
    predict = ad.Executor([logits], ctx=exec_ctx)
    rng = np.random.default_rng(0)
    values = {w1: rng.normal(0, 0.05, (784, 64)), b1: np.zeros(64), w2: rng.normal(0, 0.1, (64, 10)),
              b2: np.zeros(10)}
    values = {k: dlarray.array(v.astype(np.float32), exec_ctx) for k, v in values.items()}
    lr = 2.0
    for epoch in range(5):
        for i in range(0, 8000, 100):
            feed = dict(values)
            feed.update({x: train_x[i:i + 100], y_: train_y[i:i + 100]})
            out = train.run(feed, convert_to_numpy_ret_vals=True)
            for p, g in zip(params, out[1:]):
                values[p] = dlarray.array(values[p].asnumpy() - lr * g, exec_ctx)
    feed = dict(values)
    feed[x] = test_x
    scores = predict.run(feed, convert_to_numpy_ret_vals=True)[0]
    accuracy = (scores.argmax(1) == test_labels).mean()
    print("sigmoid MLP accuracy", accuracy)
    assert accuracy > 0.9, accuracy
