"""GPU memory running out in the middle of an autodiff run: MemoryError naming the GPU, and the
next run (once memory is back) succeeds and computes right. Needs a GPU (skipped without)."""
import numpy as np
import pytest

import dlarray
from dlarray import autodiff as ad
from conftest import has_gpu

pytestmark = pytest.mark.skipif(not has_gpu(), reason="needs a usable GPU")

CHUNK = 64 << 20  # bytes per filler array


def mlp(batch, width):
    x, y_ = ad.Variable("x"), ad.Variable("y_")
    w1, w2, w3 = ad.Variable("w1"), ad.Variable("w2"), ad.Variable("w3")
    h1 = ad.relu_op(ad.matmul_op(x, w1))
    h2 = ad.relu_op(ad.matmul_op(h1, w2))
    loss = ad.softmaxcrossentropy_op(ad.matmul_op(h2, w3), y_)
    grads = ad.gradients(loss, [w1, w2, w3])
    rng = np.random.default_rng(0)
    feed = {x: rng.standard_normal((batch, width), dtype=np.float32),
            y_: np.eye(16, dtype=np.float32)[rng.integers(0, 16, batch)],
            w1: rng.standard_normal((width, width), dtype=np.float32) * 0.02,
            w2: rng.standard_normal((width, width), dtype=np.float32) * 0.02,
            w3: rng.standard_normal((width, 16), dtype=np.float32) * 0.02}
    return [loss] + grads, feed


def fill_gpu(ctx):
    """Allocates CHUNK-sized arrays until the GPU refuses; returns them."""
    held = []
    while True:
        try:
            held.append(dlarray.empty((CHUNK // 4,), ctx))
        except MemoryError:
            return held
        if len(held) > 100_000:
            pytest.fail("the GPU never ran out of memory")


def test_oom_in_the_middle_of_a_run_then_the_next_run_succeeds():
    ctx = dlarray.gpu(0)
    nodes, feed = mlp(batch=4096, width=4096)  # activations and gradients of 64 MB each
    reference = ad.Executor(nodes).run({k: v.astype(np.float64) for k, v in feed.items()})
    executor = ad.Executor(nodes, ctx=ctx)
    held = fill_gpu(ctx)
    assert len(held) > 8
    # Leave room for a few of the run's buffers, not for all of them.
    del held[:4]
    with pytest.raises(MemoryError, match=r"cuda\(0\)"):
        executor.run(feed)
    del held
    dlarray.empty_cache(ctx)
    dlarray.synchronize(ctx)
    values = executor.run(feed, convert_to_numpy_ret_vals=True)
    for got, want in zip(values, reference):
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-4)
    # And once more, with the plan made by that run.
    again = executor.run(feed, convert_to_numpy_ret_vals=True)
    for got, want in zip(again, values):
        np.testing.assert_array_equal(got, want)
