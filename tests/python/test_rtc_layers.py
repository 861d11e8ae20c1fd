"""Seed 003's custom layers (examples/rtc_layers): Reorg, Flatten and the softmax cross-entropy
as autodiff CustomOps, with Rtc kernels on GPUs and NumPy on the CPU and NumPy executors.
Layouts against the seed's definition, gradients by finite differences on every executor, the
reorg MLP equal to the plain MLP with permuted weights, and --model reorg training to 93%."""
import importlib.util
import sys

import numpy as np
import pytest

import dlarray
from dlarray import autodiff as ad
from rtc_util import GPUS, ROOT, needs_gpu, rtc_cache  # noqa: F401

sys.path.insert(0, str(ROOT / "examples" / "rtc_layers"))
import rtc_layers as layers  # noqa: E402

sys.path.pop(0)

# Executors: NumPy, then every usable device (the GPU ones only where rtc can launch).
CONTEXTS = [None, dlarray.cpu(0)] + (GPUS if dlarray.rtc.is_available() else [])
IDS = [repr(c) for c in CONTEXTS]


def load_mnist():
    spec = importlib.util.spec_from_file_location("mnist_example", ROOT / "examples" / "mnist.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reorg_by_definition(x):
    """The seed's reorg: output channel 4c + q of image n holds, for q = 0..3, the pixels
    (2t, 2s), (2t, 2s+1), (2t+1, 2s), (2t+1, 2s+1) of input channel c, at (t, s)."""
    n, c, h, w = x.shape
    y = np.empty((n, 4 * c, h // 2, w // 2), x.dtype)
    for q, (dy, dx) in enumerate([(0, 0), (0, 1), (1, 0), (1, 1)]):
        y[:, q::4] = x[:, :, dy::2, dx::2]
    return y


@pytest.mark.parametrize("shape", [(1, 1, 2, 2), (2, 3, 8, 8), (3, 2, 6, 10), (1, 1, 28, 28)])
def test_reorg_layout_is_the_seeds(shape):
    x = np.random.default_rng(0).standard_normal(shape)
    y = layers.reorg_numpy(x)
    np.testing.assert_array_equal(y, reorg_by_definition(x))
    # Its gradient is its adjoint: <reorg(x), g> == <x, reorg_grad(g)>, and it undoes reorg.
    g = np.random.default_rng(1).standard_normal(y.shape)
    assert np.isclose(np.sum(y * g), np.sum(x * layers.reorg_grad_numpy(g)))
    np.testing.assert_array_equal(layers.reorg_grad_numpy(y), x)


def seed_reorg_grad_as_written(gy, x_shape):
    """What the seed's reorg_grad body computes (each thread i: one input channel)."""
    n, c, h, w = x_shape
    yh, yw = h // 2, w // 2
    block = h * w
    flat_gy, dx = gy.reshape(n * c, -1), np.zeros((n * c, block), gy.dtype)
    for k in range(4):
        for j in range(yw):
            for t in range(yh):
                dx[:, 2 * j * yw + t * 2 + k] = flat_gy[:, k * yh * yw + j * yw + t]
    return dx.reshape(x_shape)


def test_the_seeds_reorg_grad_is_not_the_gradient_and_ours_is():
    # Seed 003's reorg_grad writes input row j where it means rows 2j and 2j + 1 (and leaves
    # rows unwritten): its result fails the adjoint identity of reorg; ours passes it.
    # test_rtc_gpu.py checks on a GPU that the seed's own body computes what this emulates.
    rng = np.random.default_rng(2)
    shape = (2, 3, 8, 8)
    x, g = rng.standard_normal(shape), rng.standard_normal((2, 12, 4, 4))
    forward = np.sum(layers.reorg_numpy(x) * g)
    seed, ours = seed_reorg_grad_as_written(g, shape), layers.reorg_grad_numpy(g)
    assert np.isclose(np.sum(x * ours), forward)
    assert not np.isclose(np.sum(x * seed), forward)
    # It writes offsets 8j + 2t + k < 34 of each 8x8 channel: the rest stays as it was.
    assert np.all(seed.reshape(6, 64)[:, 34:] == 0) and np.count_nonzero(ours == 0) == 0


def test_reorg_refuses_odd_sizes():
    x = ad.Variable("x")
    y = layers.Reorg()(x)
    with pytest.raises(ValueError, match="even H and W"):
        ad.Executor([y]).run({x: np.zeros((1, 1, 3, 4))})
    with pytest.raises(ValueError, match="only stride 2"):
        layers.Reorg(stride=3)


def fd_check(make_loss, inputs, ctx, wrt=0, samples=12):
    """Checks the executor's gradient of a scalar loss against central differences (float64 on
    the NumPy executor; float32 on devices, with a step and tolerances to match)."""
    nodes = [ad.Variable("in%d" % i) for i in range(len(inputs))]
    loss = make_loss(*nodes)
    grad_exec = ad.Executor([loss] + ad.gradients(loss, [nodes[wrt]]), ctx)
    loss_exec = ad.Executor([loss], ctx)
    dtype, eps, atol = (np.float64, 1e-5, 1e-7) if ctx is None else (np.float32, 1e-2, 5e-4)
    values = [np.asarray(v, dtype) for v in inputs]

    def run(executor, vals):
        out = executor.run(dict(zip(nodes, vals)), convert_to_numpy_ret_vals=True)
        return [np.asarray(o, np.float64) for o in out]

    _, grad = run(grad_exec, values)
    rng = np.random.default_rng(7)
    for flat in rng.choice(values[wrt].size, size=min(samples, values[wrt].size), replace=False):
        idx = np.unravel_index(flat, values[wrt].shape)
        plus, minus = [v.copy() for v in values], [v.copy() for v in values]
        plus[wrt][idx] += eps
        minus[wrt][idx] -= eps
        numeric = (run(loss_exec, plus)[0].sum() - run(loss_exec, minus)[0].sum()) / (2 * eps)
        assert np.isclose(grad[idx], numeric, rtol=2e-2, atol=atol), (idx, grad[idx], numeric)
    return grad


def weighted_sum(y, weights):
    """sum(y * weights) as a (1,) node, so that gradients() starts from a scalar."""
    return ad.reducesumaxiszero_op(ad.reducesumaxiszero_op(ad.reducesumaxiszero_op(
        ad.reducesumaxiszero_op(y * weights))))


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
def test_reorg_gradient_by_finite_differences(exec_ctx):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 6, 8))
    w = rng.standard_normal((2, 12, 3, 4))
    grad = fd_check(lambda a, b: weighted_sum(layers.Reorg()(a), b), [x, w], exec_ctx)
    np.testing.assert_allclose(grad, layers.reorg_grad_numpy(w), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
def test_flatten_gradient_by_finite_differences(exec_ctx):
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((3, 2, 5, 5)), rng.standard_normal((3, 50))
    make = lambda a, b: ad.reducesumaxiszero_op(ad.reducesumaxiszero_op(  # noqa: E731
        layers.Flatten()(a) * b))
    grad = fd_check(make, [x, w], exec_ctx)
    np.testing.assert_allclose(grad, w.reshape(x.shape), rtol=1e-6)


@pytest.mark.parametrize("rows", [1, 7, 300])
@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
def test_softmax_cross_entropy_value_and_gradient(exec_ctx, rows):
    rng = np.random.default_rng(rows)
    logits = rng.standard_normal((rows, 10)) * 3
    labels = np.eye(10)[rng.integers(0, 10, rows)]
    x, y_ = ad.Variable("x"), ad.Variable("y_")
    ours = ad.Executor([layers.SoftmaxCrossEntropy()(x, y_)], exec_ctx)
    builtin = ad.Executor([ad.softmaxcrossentropy_op(x, y_)], exec_ctx)
    feed = {x: logits.astype(np.float32), y_: labels.astype(np.float32)}
    value = ours.run(feed, convert_to_numpy_ret_vals=True)[0]
    reference = builtin.run(feed, convert_to_numpy_ret_vals=True)[0]
    assert value.shape == (1,)
    np.testing.assert_allclose(value, reference, rtol=1e-5)
    np.testing.assert_allclose(value, layers.softmax_xent_numpy(logits, labels), rtol=1e-5)
    # A scale on the loss checks that backward multiplies by the incoming gradient.
    grad = fd_check(lambda a, b: layers.SoftmaxCrossEntropy()(a, b) * 3.0, [logits, labels],
                    exec_ctx)
    expected = (layers.softmax_numpy(logits) - labels) * 3.0 / rows
    np.testing.assert_allclose(grad, expected, rtol=1e-4, atol=1e-6)


def test_the_loss_layer_checks_its_shapes():
    x, y_ = ad.Variable("x"), ad.Variable("y_")
    executor = ad.Executor([layers.SoftmaxCrossEntropy()(x, y_)])
    with pytest.raises(ValueError, match=r"\(N, K\) alike"):
        executor.run({x: np.zeros((4, 10)), y_: np.zeros((4, 9))})


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
def test_the_reorg_mlp_is_the_mlp_with_permuted_weights(exec_ctx):
    # Reorg then Flatten only reorders pixels: with W1's rows reordered alike, the plain MLP
    # takes the same SGD steps (same losses, same weights), through every custom layer.
    mnist = load_mnist()
    train_x, train_y = mnist.load_data(mnist.DEFAULT_DATA)[:2]
    perm = layers.reorg_numpy(np.arange(784).reshape(1, 1, 28, 28)).reshape(-1)
    inverse = np.argsort(perm)
    ctx = exec_ctx
    reorg = mnist.Trainer("reorg", ctx, 0.2, seed=5)
    plain = mnist.Trainer("mlp", ctx, 0.2, seed=5)
    w1 = reorg.weights[0] if ctx is None else reorg.weights[0].asnumpy()
    plain.weights[0][:] = w1[inverse]
    for start in range(0, 500, 100):
        images, labels = train_x[start:start + 100], mnist.one_hot(train_y[start:start + 100])
        reorg.step(reorg.to_device(reorg.shape_images(images)), reorg.to_device(labels))
        plain.step(plain.to_device(images), plain.to_device(labels))
        np.testing.assert_allclose(reorg.mean_loss(reset=True), plain.mean_loss(reset=True),
                                   rtol=1e-4)
    host = [w if ctx is None else w.asnumpy() for w in reorg.weights]
    other = [w if ctx is None else w.asnumpy() for w in plain.weights]
    np.testing.assert_allclose(host[0][inverse], other[0], rtol=1e-3, atol=1e-5)
    for a, b in zip(host[1:], other[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)


def test_mnist_reorg_trains_on_the_cpu_to_93_percent(capsys):
    mnist = load_mnist()
    losses, accuracies = mnist.main(["--model", "reorg", "--device", "cpu", "--epochs", "6"])
    assert losses[-1] < losses[0] and accuracies[-1] >= 0.93, accuracies
    assert "reorg on cpu" in capsys.readouterr().out


@needs_gpu
def test_mnist_reorg_trains_on_the_gpu_to_93_percent(capsys):
    mnist = load_mnist()
    losses, accuracies = mnist.main(["--model", "reorg", "--device", "gpu"])
    assert accuracies[-1] >= 0.93, accuracies
    assert "reorg on gpu" in capsys.readouterr().out
