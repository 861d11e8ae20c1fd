"""The autodiff Executor's fusion: chains of elementwise nodes (bias add through a broadcast, relu,
the relu-gradient mask, the *_by_const ops, tanh and its gradient) run as one kernel each, with
the unfused run's values (bit for bit for + * relu and the masks; within an ulp per op for tanh),
forward and backward, on every device; what graph_stats() reports; the chains that must not form
(a value returned or used twice); fuse=False; no fusion without a generated kernel; bad feeds."""
import numpy as np
import pytest

import dlarray
from dlarray import autodiff as ad


@pytest.fixture(autouse=True)
def _no_fused_products(monkeypatch):
    """These compare with the unfused run bit for bit: the dense layers' fused products (a
    cuBLASLt product on CUDA, test_fused_matmul.py checks them) stay off."""
    from dlarray.autodiff import _fusion_products
    monkeypatch.setattr(_fusion_products, "FORCE", False)


def _mlp(act=ad.relu_op):
    """An MLP with a scaled activation between its layers, its loss and its gradients."""
    x, y_ = ad.Variable("x"), ad.Variable("y_")
    w1, b1, w2, b2 = (ad.Variable(n) for n in ("w1", "b1", "w2", "b2"))

    def dense(h, w, b):
        z = ad.matmul_op(h, w)
        return z + ad.broadcastto_op(b, z)
    h = act(dense(x, w1, b1))
    h = act(h * 0.75 + 0.5)
    logits = dense(h, w2, b2)
    loss = ad.softmaxcrossentropy_op(logits, y_)
    params = [w1, b1, w2, b2]
    return [x, y_] + params, [loss, logits] + ad.gradients(loss, params)


def _feed(nodes, rng, batch, n_in=37, hidden=65, n_out=10):
    x, y_, w1, b1, w2, b2 = nodes
    return {x: rng.standard_normal((batch, n_in)).astype(np.float32),
            y_: np.eye(n_out, dtype=np.float32)[rng.integers(0, n_out, batch)],
            w1: rng.standard_normal((n_in, hidden)).astype(np.float32),
            b1: rng.standard_normal(hidden).astype(np.float32),
            w2: rng.standard_normal((hidden, n_out)).astype(np.float32),
            b2: rng.standard_normal(n_out).astype(np.float32)}


def _runs(ctx, evals, feed, **kwargs):
    fused = ad.Executor(evals, ctx, **kwargs)
    plain = ad.Executor(evals, ctx, fuse=False, **kwargs)
    got = fused.run(feed, convert_to_numpy_ret_vals=True)
    want = plain.run(feed, convert_to_numpy_ret_vals=True)
    assert plain.graph_stats()["fused_kernels"] == 0
    return got, want, fused.graph_stats()


@pytest.mark.parametrize("batch", [1, 7, 300], ids=lambda b: "batch%d" % b)
def test_mlp_equals_unfused_bit_for_bit(ctx, rng, batch):
    nodes, evals = _mlp()
    got, want, stats = _runs(ctx, evals, _feed(nodes, rng, batch))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    # bias adds (broadcast folded), 0.75 * relu + 0.5 then relu, the backward masks
    assert stats["fused_kernels"] >= 4 and stats["fused_nodes"] >= 9, stats
    assert all(line.endswith(("(cpp)", "(opencl)", "(cuda)")) for line in stats["fused"])


def test_tanh_chains_within_an_ulp_per_op(ctx, rng):
    """tanh in the generated code is within an ulp of the backend's kernel: the chain's value
    within an ulp per op; its gradient, dy * (1 - y*y), turns an ulp of y near 1 into more of
    the result's: within a few ulp of its largest element."""
    a = ad.Variable("a")
    y = ad.ops.tanh(a * 0.75 + 0.5) * 2.0
    loss = ad.ops.tanh(y) * 3.0
    evals = [loss] + ad.gradients(loss, [a])
    got, want, stats = _runs(ctx, evals, {a: rng.standard_normal((40, 70)).astype(np.float32)})
    assert any("tanh" in line for line in stats["fused"]), stats
    np.testing.assert_array_max_ulp(got[0], want[0], maxulp=6)  # 6 ops
    np.testing.assert_allclose(got[1], want[1], rtol=0,
                               atol=8 * np.spacing(np.abs(want[1]).max()))


def test_large_chain_across_threads(ctx, rng):
    """A chain over arrays past the CPU's one-thread size, on a CUDA graph where there is one."""
    a, b = ad.Variable("a"), ad.Variable("b")
    t = ad.matmul_op(a, b)
    y = ad.relu_op(t * 2.0 + 1.0) * t
    feed = {a: rng.standard_normal((300, 3)).astype(np.float32),
            b: rng.standard_normal((3, 301)).astype(np.float32)}
    fused = ad.Executor([y], ctx)
    plain = ad.Executor([y], ctx, fuse=False)
    for _ in range(3):  # a GPU records its graph on the second run and replays on the third
        got = fused.run(feed, convert_to_numpy_ret_vals=True)[0]
        np.testing.assert_array_equal(got, plain.run(feed, convert_to_numpy_ret_vals=True)[0])
    assert fused.graph_stats()["fused_nodes"] == 4


def test_returned_and_shared_values_stay_unfused(ctx, rng):
    a = ad.Variable("a")
    m = a * 3.0
    r = ad.relu_op(m)  # m is returned too: r alone would be a chain of one
    s = r + r  # r is used twice (and returned): not folded
    feed = {a: rng.standard_normal((4, 5)).astype(np.float32)}
    got, want, stats = _runs(ctx, [s, m, r], feed)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert stats["fused_kernels"] == 0
    got, want, stats = _runs(ctx, [ad.relu_op(a * 3.0) + 1.0], feed)
    np.testing.assert_array_equal(got[0], want[0])
    assert stats["fused_kernels"] == 1 and stats["fused_nodes"] == 3


def test_no_generated_kernel_runs_the_ops(ctx, rng, monkeypatch):
    """Where a chain would run in the interpreter (here DLARRAY_FUSE=interpret) its nodes run
    their own ops: a backend serves autodiff with the kernels of its ops."""
    monkeypatch.setenv("DLARRAY_FUSE", "interpret")
    nodes, evals = _mlp()
    got, want, stats = _runs(ctx, evals, _feed(nodes, rng, 9))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert stats["fused_kernels"] == 0


def test_bad_arguments_and_feeds(rng):
    a, b = ad.Variable("a"), ad.Variable("b")
    with pytest.raises(TypeError, match="fuse must be True or False"):
        ad.Executor([a], dlarray.cpu(0), fuse=1)
    y = ad.relu_op(a + b)
    executor = ad.Executor([y], dlarray.cpu(0))
    wide = dlarray.asarray(np.ones((2, 3), np.float64))
    with pytest.raises(TypeError, match="fused chain reads it as float32"):
        executor.run({a: wide, b: np.ones((2, 3), np.float32)})
