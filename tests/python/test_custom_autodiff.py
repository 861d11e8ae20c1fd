"""dlarray.custom.Custom ops in dlarray.autodiff graphs, on the NumPy executor and every device:
the seed's bprop, gradients against finite differences, bprops made of NumPy, dlarray ops and
other Custom ops, planned buffers, errors, and the MNIST MLP with AOT bias-adds."""
import importlib.util

import numpy as np
import pytest

import dlarray
from aot_util import ROOT, add_impls, example
from dlarray import autodiff as ad
from dlarray.custom import Custom

CONTEXTS = [None] + list(dlarray.devices())
IDS = [repr(c) for c in CONTEXTS]


@pytest.fixture(scope="module", autouse=True)
def shared_cache(aot_cache):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DLARRAY_CACHE_DIR", str(aot_cache))
        yield


def run(nodes, feed, ctx):
    return ad.Executor(nodes, ctx=ctx).run(feed, convert_to_numpy_ret_vals=True)


def finite_differences(loss, variables, feed, ctx, eps=1e-2):
    """Central differences of the (1,) node ``loss`` computed by an executor on ``ctx`` (float32
    on devices: the losses here are quadratic, for which central differences are exact)."""
    executor = ad.Executor([loss], ctx=ctx)
    grads = []
    for var in variables:
        value = feed[var]
        grad = np.zeros_like(value)
        for i in np.ndindex(value.shape):
            saved = value[i]
            value[i] = saved + eps
            plus = float(executor.run(feed, convert_to_numpy_ret_vals=True)[0][0])
            value[i] = saved - eps
            minus = float(executor.run(feed, convert_to_numpy_ret_vals=True)[0][0])
            value[i] = saved
            grad[i] = (plus - minus) / (2 * eps)
        grads.append(grad)
    return grads


def weighted_sum(node, r, ndim):
    node = node * r
    for _ in range(ndim):
        node = ad.reducesumaxiszero_op(node)
    return node


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
def test_the_seeds_bprop(exec_ctx):
    """The seed: Add's bprop returns (y,), so the gradient for x is y = [3, 2, 1]."""
    add = Custom(add_impls(), out_shape=lambda a, b: a, out_dtype="float32",
                 bprop=lambda x, y, out, dout: (y,))
    t1, t2 = ad.Variable("t1"), ad.Variable("t2")
    res = add(t1, t2)
    res_g, = ad.gradients(res, [t1])
    feed = {t1: np.array([1., 2., 3.], np.float32), t2: np.array([3., 2., 1.], np.float32)}
    value, grad = run([res, res_g], feed, exec_ctx)
    np.testing.assert_array_equal(value, [4, 4, 4])
    np.testing.assert_array_equal(grad, [3, 2, 1])


def numpy_bias_add_bprop(x, b, out, dout):
    g = np.asarray(dout)
    return g, g.sum(axis=0)


def ops_bias_add_bprop(x, b, out, dout):
    """dlarray ops only: dx = dout * 1 (a copy), db = column sums."""
    dx = dlarray.empty(dout.shape, dout.ctx)
    dlarray.ops.matrix_elementwise_multiply_by_const(dout, 1.0, dx)
    db = dlarray.empty(b.shape, b.ctx)
    dlarray.ops.reduce_sum_axis_zero(dout, db)
    return dx, db


def custom_bias_add_bprop():
    """Other Custom ops: BiasAddGrad (its shape from the library's BiasAddGradInferShape)."""
    funcs = {k: v.replace("custom_add", "bias_add").replace("CustomAdd", "BiasAddGrad")
             for k, v in add_impls().items()}
    column_sums = Custom(funcs, None, "float32")
    return lambda x, b, out, dout: (dout, column_sums(dout))


def bias_add(bprop):
    funcs = {k: v.replace("custom_add", "bias_add").replace("CustomAdd", "BiasAdd")
             for k, v in add_impls().items()}
    return Custom(funcs, lambda x, b: x, "float32", bprop=bprop)


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
@pytest.mark.parametrize("bprop", ["numpy", "ops", "custom"])
def test_bias_add_gradients_by_finite_differences(exec_ctx, bprop, rng):
    bprop_fn = {"numpy": numpy_bias_add_bprop, "ops": ops_bias_add_bprop,
                "custom": custom_bias_add_bprop()}[bprop]
    op = bias_add(bprop_fn)
    x, b, r = ad.Variable("x"), ad.Variable("b"), ad.Variable("r")
    y = op(x, b)
    loss = weighted_sum(y * x, r, 2)  # quadratic in x: exact central differences
    feed = {x: rng.standard_normal((5, 7)).astype(np.float32),
            b: rng.standard_normal(7).astype(np.float32),
            r: rng.standard_normal((5, 7)).astype(np.float32)}
    value, gx, gb = run([y] + ad.gradients(loss, [x, b]), feed, exec_ctx)
    np.testing.assert_allclose(value, feed[x] + feed[b], rtol=1e-6)
    ex, eb = finite_differences(loss, [x, b], feed, exec_ctx)
    np.testing.assert_allclose(gx, ex, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(gb, eb, rtol=2e-3, atol=2e-3)
    # and against the closed form
    np.testing.assert_allclose(gx, feed[r] * (2 * feed[x] + feed[b]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gb, (feed[r] * feed[x]).sum(axis=0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
def test_missing_and_none_gradients_are_zero(exec_ctx):
    add = Custom(add_impls(), lambda a, b: a, "float32", bprop=lambda x, y, out, dout: [None])
    x, y = ad.Variable("x"), ad.Variable("y")
    gx, gy = ad.gradients(add(x, y), [x, y])
    feed = {x: np.ones(3, np.float32), y: np.ones(3, np.float32)}
    for g in run([gx, gy], feed, exec_ctx):
        np.testing.assert_array_equal(g, np.zeros(3))


def test_bprop_errors():
    x, y = ad.Variable("x"), ad.Variable("y")
    feed = {x: np.ones(3, np.float32), y: np.ones(3, np.float32)}
    plain = Custom(add_impls(), lambda a, b: a, "float32")
    with pytest.raises(ValueError, match="has no bprop: make it with Custom\\(..., bprop=fn\\)"):
        ad.gradients(plain(x, y), [x])
    wrong = Custom(add_impls(), lambda a, b: a, "float32",
                   bprop=lambda a, b, out, dout: (np.ones(4),))
    with pytest.raises(ValueError, match="gradient for input 0 has shape \\(4,\\), the input "
                                         "\\(3,\\)"):
        run(ad.gradients(wrong(x, y), [x]), feed, dlarray.cpu(0))
    many = Custom(add_impls(), lambda a, b: a, "float32",
                  bprop=lambda a, b, out, dout: (dout, dout, dout))
    with pytest.raises(ValueError, match="bprop returned 3 gradients for 2 inputs"):
        run(ad.gradients(many(x, y), [x]), feed, None)
    with pytest.raises(TypeError, match="takes 2 input\\(s\\), got 1"):
        plain(x)
    two = Custom(example("custom_add.cc", "CustomAdd"), lambda a, b: [a, a],
                 ["float32", "float32"])
    with pytest.raises(TypeError, match="graph nodes have one output, the op has 2"):
        two(x, y)
    with pytest.raises(TypeError, match="out= cannot be given with graph nodes"):
        plain(x, y, out=dlarray.empty((3,)))


def test_forward_uses_planned_buffers(ctx, rng):
    add = Custom(add_impls(), lambda a, b: a, "float32")
    x, y = ad.Variable("x"), ad.Variable("y")
    executor = ad.Executor([add(add(x, y), y)], ctx=ctx)
    feed = {x: dlarray.array(rng.standard_normal((50, 3)), ctx),
            y: dlarray.array(rng.standard_normal((50, 3)), ctx)}
    first, = executor.run(feed)
    before = dlarray.memory_stats(ctx)["num_allocations"]
    again, = executor.run(feed)
    assert again is first
    assert dlarray.memory_stats(ctx)["num_allocations"] == before
    np.testing.assert_allclose(again.asnumpy(), feed[x].asnumpy() + 2 * feed[y].asnumpy(),
                               rtol=1e-6)


def load_mnist():
    spec = importlib.util.spec_from_file_location("mnist_example", ROOT / "examples" / "mnist.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
def test_mlp_with_aot_bias_add_trains_like_the_built_in_path(exec_ctx):
    pytest.importorskip("tqdm")
    mnist = load_mnist()
    train_x, train_y, test_x, test_y = mnist.load_data(mnist.DEFAULT_DATA)
    results = []
    for custom_ops in (False, True):
        trainer = mnist.Trainer("mlp", exec_ctx, mnist.DEFAULT_LR["mlp"], seed=0,
                                custom_ops=custom_ops)
        batches = mnist.EpochBatches(trainer, train_x, train_y, 100)
        for images, labels in batches(np.random.default_rng(0).permutation(len(train_x))):
            trainer.step(images, labels)
        loss = trainer.mean_loss(reset=True)
        results.append((loss, trainer.accuracy(trainer.to_device(test_x), test_y)))
    (loss, accuracy), (custom_loss, custom_accuracy) = results
    assert custom_accuracy > 0.85, results
    assert abs(custom_accuracy - accuracy) <= 0.005, results
    np.testing.assert_allclose(custom_loss, loss, rtol=2e-3)


def test_mnist_command_line_custom_ops(capsys):
    pytest.importorskip("tqdm")
    losses, accuracies = load_mnist().main(["--device", "cpu", "--model", "logreg", "--epochs",
                                            "1", "--custom-ops"])
    assert "bias-add by AOT custom ops" in capsys.readouterr().out
    assert accuracies[-1] > 0.85
