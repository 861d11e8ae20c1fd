"""Issue 23's SGD update inside the autodiff Executor (``ad.sgd_update_op``): one ``run`` does
forward, backward and the update; on every device the update is one multi-tensor kernel per 64
parameters whose results equal the unfused run's (``fuse=False``: two ops per parameter) and the
per-tensor ops after a run without the node, bit for bit; graph_stats() counts it; on a GPU it is
recorded in the plan's CUDA graph; the NumPy executor updates in place in the fed dtype; bad
graphs and feeds raise errors that name the problem."""
import numpy as np
import pytest

import dlarray
from dlarray import autodiff as ad

LR = 0.0137


@pytest.fixture(autouse=True)
def _no_fused_products(monkeypatch):
    """These compare with the unfused run bit for bit: the dense layers' fused products (a
    cuBLASLt product on CUDA, test_fused_matmul.py checks them) stay off."""
    from dlarray.autodiff import _fusion_products
    monkeypatch.setattr(_fusion_products, "FORCE", False)


def _mlp(n_in, hidden, n_out=10):
    """An MLP (bias adds, relu), its loss, its gradients and its parameters' initial values."""
    x, y_ = ad.Variable("x"), ad.Variable("y_")
    params = [ad.Variable(n) for n in ("w1", "b1", "w2", "b2")]
    w1, b1, w2, b2 = params

    def dense(h, w, b):
        z = ad.matmul_op(h, w)
        return z + ad.broadcastto_op(b, z)
    logits = dense(ad.relu_op(dense(x, w1, b1)), w2, b2)
    loss = ad.softmaxcrossentropy_op(logits, y_)
    rng = np.random.default_rng(1)
    values = [rng.standard_normal(s).astype(np.float32) * 0.3
              for s in ((n_in, hidden), (hidden,), (hidden, n_out), (n_out,))]
    return (x, y_), params, values, loss, ad.gradients(loss, params)


def _batches(n_in, batch, steps, n_out=10):
    rng = np.random.default_rng(2)
    return [(rng.standard_normal((batch, n_in)).astype(np.float32),
             np.eye(n_out, dtype=np.float32)[rng.integers(0, n_out, batch)])
            for _ in range(steps)]


def _train(ctx, n_in, hidden, batch, steps, mode, **kwargs):
    """The parameters after ``steps`` SGD steps, and the executor. mode "node": the update is
    an sgd_update_op of the executor; "ops": a run without it, then the per-tensor ops."""
    (x, y_), params, values, loss, grads = _mlp(n_in, hidden)
    evals = [loss] + grads
    if mode == "node":
        evals.append(ad.sgd_update_op(params, grads, LR))
    executor = ad.Executor(evals, ctx, **kwargs)
    weights = [v.copy() if ctx is None else dlarray.array(v.copy(), ctx) for v in values]
    feed = dict(zip(params, weights))
    for images, labels in _batches(n_in, batch, steps):
        feed[x], feed[y_] = images, labels
        out = executor.run(feed)
        if mode == "node":
            assert out[-1] is None  # the update has no value
            continue
        for w, g in zip(weights, out[1:]):
            step = dlarray.empty(g.shape, ctx)
            dlarray.ops.matrix_elementwise_multiply_by_const(g, -LR, step)
            dlarray.ops.matrix_elementwise_add(w, step, w)
    return [w if ctx is None else w.asnumpy() for w in weights], executor


def _same_bits(got, want):
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.tobytes() == w.tobytes()


@pytest.mark.parametrize("n_in,hidden,batch", [(37, 65, 7), (1, 1, 1), (300, 257, 33)],
                         ids=["odd", "one", "past64Ki"])
def test_update_node_equals_unfused_and_per_tensor_ops_bit_for_bit(ctx, n_in, hidden, batch):
    # 300 x 257 > 64Ki elements: the CPU kernel runs split over the thread pool
    steps = 3
    fused, executor = _train(ctx, n_in, hidden, batch, steps, "node")
    unfused, plain = _train(ctx, n_in, hidden, batch, steps, "node", fuse=False)
    ops, _ = _train(ctx, n_in, hidden, batch, steps, "ops", fuse=False)
    _same_bits(fused, unfused)
    _same_bits(fused, ops)
    initial = _mlp(n_in, hidden)[2]
    assert all(not np.array_equal(a, b) for a, b in zip(fused, initial))  # they did change
    stats = executor.graph_stats()
    assert (stats["multi_tensor_kernels"], stats["multi_tensor_params"]) == (1, 4), stats
    stats = plain.graph_stats()
    assert (stats["multi_tensor_kernels"], stats["multi_tensor_params"]) == (0, 0), stats


def test_update_node_equals_numpy_executor(ctx):
    """The device run against the NumPy executor's (float32; matmul sums in another order)."""
    got, _ = _train(ctx, 37, 65, 7, 3, "node")
    want, _ = _train(None, 37, 65, 7, 3, "node")
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _many(count, shape):
    """``count`` parameters of ``shape`` (some empty when it is), the gradients of
    sum(w_k * w_k) (2 w_k each), and their values."""
    ws = [ad.Variable("w%d" % k) for k in range(count)]
    loss = ad.sum_node_list([w * w for w in ws])
    rng = np.random.default_rng(3)
    values = [rng.standard_normal(shape).astype(np.float32) for _ in ws]
    return ws, ad.gradients(loss, ws), values


@pytest.mark.parametrize("count,shape,kernels", [(65, (7, 3), 2), (64, (5,), 1), (3, (0,), 0)],
                         ids=["65pairs", "64pairs", "empty"])
def test_update_node_many_parameters(ctx, count, shape, kernels):
    """64 pairs per launch: 65 parameters take two kernels; empty ones take none."""
    ws, grads, values = _many(count, shape)
    results = {}
    for fuse in (True, False):
        executor = ad.Executor([ad.sgd_update_op(ws, grads, LR)], ctx, fuse=fuse)
        weights = [dlarray.array(v.copy(), ctx) for v in values]
        executor.run(dict(zip(ws, weights)))
        results[fuse] = [w.asnumpy() for w in weights]
        stats = executor.graph_stats()
        assert stats["multi_tensor_kernels"] == (kernels if fuse else 0), stats
        assert stats["multi_tensor_params"] == (count if fuse and kernels else 0), stats
    _same_bits(results[True], results[False])
    scale = np.float32(-LR)
    _same_bits(results[True], [v + (v * np.float32(2)) * scale for v in values])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_numpy_executor_updates_in_place_in_the_fed_dtype(dtype):
    w, v = ad.Variable("w"), ad.Variable("v")
    loss = w * v + v
    grads = ad.gradients(loss, [w, v])
    rng = np.random.default_rng(4)
    w_val, v_val = (rng.standard_normal(9).astype(dtype) for _ in range(2))
    w0, v0 = w_val.copy(), v_val.copy()
    out = ad.Executor([loss, ad.sgd_update_op([w, v], grads, LR)]).run({w: w_val, v: v_val})
    assert out[1] is None
    s = np.asarray(-LR, dtype)
    # the gradients were computed from the values before the update
    np.testing.assert_array_equal(w_val, w0 + v0 * s)
    np.testing.assert_array_equal(v_val, v0 + (w0 + np.ones_like(w0)) * s)
    assert w_val.dtype == dtype


def test_update_node_errors():
    w, v, x = ad.Variable("w"), ad.Variable("v"), ad.Variable("x")
    g, = ad.gradients(w * w, [w])
    with pytest.raises(ValueError, match="1 parameters and 2 gradients"):
        ad.sgd_update_op([w], [g, g], LR)
    with pytest.raises(ValueError, match="at least one"):
        ad.sgd_update_op([], [], LR)
    with pytest.raises(ValueError, match="parameter '.*' is a mul_op node"):
        ad.sgd_update_op([w * w], [g], LR)
    with pytest.raises(ValueError, match="given twice"):
        ad.sgd_update_op([w, w], [g, g], LR)
    with pytest.raises(TypeError, match="must be Nodes"):
        ad.sgd_update_op([w], [np.ones(3)], LR)
    with pytest.raises(TypeError, match="lr must be a real number"):
        ad.sgd_update_op([w], [g], True)
    with pytest.raises(TypeError, match="real number"):
        ad.sgd_update_op([w], [g], "0.1")
    update = ad.sgd_update_op([w], [g], LR)
    with pytest.raises(ValueError, match="two sgd_update_op nodes update one parameter"):
        ad.Executor([update, ad.sgd_update_op([w], [g], LR)])
    with pytest.raises(ValueError, match="has no gradient"):
        ad.gradients(update, [w])
    with pytest.raises(ValueError, match="has no value to feed"):
        ad.Executor([update]).run({w: np.ones(2), update: np.ones(1)})
    with pytest.raises(ValueError, match=r"parameter 'v' is \(3,\) but its gradient is \(2,\)"):
        ad.Executor([ad.sgd_update_op([v], [g], LR)]).run({w: np.ones(2), v: np.ones(3)})
    with pytest.raises(TypeError, match="writable NumPy float array"):
        ad.Executor([update]).run({w: np.ones(2, np.int64)})
    with pytest.raises(ValueError, match="feed_dict has no value for placeholder 'x'"):
        gx, = ad.gradients(w * x, [w])
        ad.Executor([ad.sgd_update_op([w], [gx], LR)]).run({w: np.ones(2)})


def test_update_node_bad_device_feeds(ctx):
    w, v = ad.Variable("w"), ad.Variable("v")
    grads = ad.gradients(w * v, [w, v])
    executor = ad.Executor([w * v, ad.sgd_update_op([w, v], grads, LR)], ctx)
    ones = np.ones(4, np.float32)
    with pytest.raises(ValueError, match="feed for node 'w': sgd_update_op updates it in place"):
        executor.run({w: ones, v: dlarray.array(ones, ctx)})
    a = dlarray.array(ones, ctx)
    with pytest.raises(ValueError, match="one NDArray for two parameters"):
        executor.run({w: a, v: a})
    wide = dlarray.array(np.ones((4, 2), np.float32), ctx)
    with pytest.raises(ValueError, match="contiguous"):
        executor.run({w: wide[:, 0], v: a})
    product, _ = executor.run({w: a, v: dlarray.array(ones, ctx)})
    with pytest.raises(ValueError, match="not a NumPy array, nor an array the executor returned"):
        executor.run({w: product, v: a})
    with pytest.raises(TypeError, match="sgd_update_op reads it as float32, got float64"):
        executor.run({w: dlarray.asarray(np.ones(4), device=ctx), v: a})
    # the executor is still usable, and the feeds it refused were not updated
    w_val, v_val = dlarray.array(ones * 2, ctx), dlarray.array(ones * 3, ctx)
    executor.run({w: w_val, v: v_val})
    np.testing.assert_array_equal(w_val.asnumpy(), 2 + 3 * np.float32(-LR))
    np.testing.assert_array_equal(v_val.asnumpy(), 3 + 2 * np.float32(-LR))


def _gpu():
    return [c for c in dlarray.devices() if dlarray.is_gpu_ctx(c)]


@pytest.mark.skipif(not _gpu(), reason="needs a GPU (CUDA graphs)")
def test_update_node_recorded_in_the_cuda_graph():
    """The update is one launch inside the plan's graph: replays update the parameters as the
    op-by-op run does, bit for bit; another array fed for a parameter records the graph again
    and is the one updated."""
    ctx = _gpu()[0]
    steps = 5
    graphed, executor = _train(ctx, 37, 65, 7, steps, "node", cuda_graph=True)
    eager, _ = _train(ctx, 37, 65, 7, steps, "node", cuda_graph=False, fuse=False)
    _same_bits(graphed, eager)
    stats = executor.graph_stats()
    assert stats["captures"] == 1 and stats["replays"] == steps - 1, stats
    assert (stats["multi_tensor_kernels"], stats["multi_tensor_params"]) == (1, 4), stats
    (x, y_), params, values, loss, grads = _mlp(37, 65)
    images, labels = _batches(37, 7, 1)[0]

    def steps_from(weights_list, **kwargs):
        executor = ad.Executor([loss, ad.sgd_update_op(params, grads, LR)], ctx, **kwargs)
        for weights in weights_list:
            executor.run({x: images, y_: labels, **dict(zip(params, weights))})
        return executor

    first = [dlarray.array(v.copy(), ctx) for v in values]
    second = [dlarray.array(v.copy(), ctx) for v in values]
    executor = steps_from([first, first, first, second])  # eager, record, replay, record
    assert executor.graph_stats()["captures"] == 2, executor.graph_stats()
    for weights, steps in ((first, 3), (second, 1)):
        want = [dlarray.array(v.copy(), ctx) for v in values]
        steps_from([want] * steps, cuda_graph=False)
        _same_bits([w.asnumpy() for w in weights], [w.asnumpy() for w in want])
