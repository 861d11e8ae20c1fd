"""CUDA graphs in the autodiff executor and the CUDA plugin's "dlarray.graph.v1" extension:
results identical to op-by-op runs, no allocation after the recording, a new recording for new
feed shapes, feeds copied into the graph's buffers, clear errors for what a recording may not do.
The GPU tests skip without a GPU; the error paths of the binding run everywhere."""
import os
import sys

import numpy as np
import pytest

import dlarray
from dlarray import _core, ops
from dlarray import autodiff as ad

GPU = dlarray.gpu(0)
needs_gpu = pytest.mark.skipif(GPU not in dlarray.devices(),
                               reason="no usable GPU: CUDA graphs need one")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "examples"))


def trainer(cuda_graph):
    """examples/mnist.py's MLP (784-256-100-10) trainer on the GPU."""
    import mnist
    t = mnist.Trainer("mlp", GPU, 0.1, seed=0)
    for ex in (t.train_executor, t.eval_executor):
        ex.cuda_graph = cuda_graph  # read when a plan is made (at the first run)
    return t


def batch(size, seed=0):
    import mnist
    rng = np.random.default_rng(seed)
    return (rng.random((size, 784), dtype=np.float32),
            mnist.one_hot(rng.integers(0, 10, size)))


def train(cuda_graph, steps, batches=(100,)):
    """SGD steps (weights updated in place on the GPU); the losses, final weights, executor."""
    t = trainer(cuda_graph)
    data = {b: batch(b) for b in set(batches)}
    losses = []
    for step in range(steps):
        t.step(*data[batches[step % len(batches)]])
        losses.append(t.mean_loss(reset=True))
    return np.array(losses), [w.asnumpy() for w in t.weights], t.train_executor


@needs_gpu
def test_replays_give_identical_results():
    eager_losses, eager_w, eager_ex = train(False, 8)
    graph_losses, graph_w, ex = train(True, 8)
    stats = ex.graph_stats()
    assert stats["captures"] == 1 and stats["replays"] == 7 and stats["eager_runs"] == 1, stats
    assert eager_ex.graph_stats()["captures"] == 0
    np.testing.assert_array_equal(graph_losses, eager_losses)
    for a, b in zip(graph_w, eager_w):
        np.testing.assert_array_equal(a, b)
    assert graph_losses[-1] < graph_losses[0]  # it trains


@needs_gpu
def test_no_allocation_after_the_recording():
    t = trainer(True)
    images, labels = batch(100)
    x, y = t.to_device(images), t.to_device(labels)
    t.step(x, y)
    t.step(x, y)  # recorded here
    dlarray.synchronize(GPU)
    before = dlarray.memory_stats(GPU)
    for _ in range(20):
        t.step(x, y)
    dlarray.synchronize(GPU)
    after = dlarray.memory_stats(GPU)
    assert after["num_allocations"] == before["num_allocations"], (before, after)
    assert after["bytes_in_use"] == before["bytes_in_use"], (before, after)
    assert t.train_executor.graph_stats()["replays"] == 21


@needs_gpu
def test_new_shapes_are_recorded_again_and_old_ones_reused():
    eager_losses, eager_w, _ = train(False, 9, batches=(100, 50, 100))
    graph_losses, graph_w, ex = train(True, 9, batches=(100, 50, 100))
    stats = ex.graph_stats()
    assert stats["captures"] == 2, stats  # one graph per feed shape
    np.testing.assert_array_equal(graph_losses, eager_losses)
    for a, b in zip(graph_w, eager_w):
        np.testing.assert_array_equal(a, b)


@needs_gpu
def test_feeds_are_copied_into_the_graphs_buffers():
    # Fresh NDArrays (and NumPy arrays) every run: each run sees its own values.
    x = ad.Variable("x")
    y = ad.relu_op(x) * 2.0
    ex = ad.Executor([y], GPU)
    rng = np.random.default_rng(1)
    for i in range(6):
        v = rng.standard_normal((300, 70)).astype(np.float32)
        fed = dlarray.array(v, GPU) if i % 2 else v
        out, = ex.run({x: fed}, convert_to_numpy_ret_vals=True)
        np.testing.assert_array_equal(out, np.maximum(v, 0) * 2)
    assert ex.graph_stats()["captures"] == 1


@needs_gpu
def test_an_input_read_in_place_that_changes_object_is_recorded_again():
    x, w = ad.Variable("x"), ad.Variable("w")
    y = ad.matmul_op(x, w)
    ex = ad.Executor([y], GPU)
    rng = np.random.default_rng(2)
    xv = rng.standard_normal((64, 32)).astype(np.float32)
    w1 = dlarray.array(rng.standard_normal((32, 16)).astype(np.float32), GPU)
    for _ in range(3):  # w is the same object: read in place
        out, = ex.run({x: xv, w: w1}, convert_to_numpy_ret_vals=True)
    w2v = rng.standard_normal((32, 16)).astype(np.float32)
    out, = ex.run({x: xv, w: dlarray.array(w2v, GPU)}, convert_to_numpy_ret_vals=True)
    np.testing.assert_allclose(out, xv @ w2v, rtol=1e-5, atol=1e-5)
    assert ex.graph_stats()["captures"] == 2


@needs_gpu
def test_mnist_losses_are_the_same_with_and_without_graphs():
    import mnist
    train_x, train_y, _, _ = mnist.load_data(mnist.DEFAULT_DATA)
    losses = {}
    for graph in (False, True):
        trainer = mnist.Trainer("mlp", GPU, mnist.DEFAULT_LR["mlp"], seed=0)
        for ex in (trainer.train_executor, trainer.eval_executor):
            ex.cuda_graph = graph
        batches = mnist.EpochBatches(trainer, train_x[:2000], train_y[:2000], 100)
        rng = np.random.default_rng(0)
        epochs = []
        for _ in range(2):
            for images, labels in batches(rng.permutation(2000)):
                trainer.step(images, labels)
            epochs.append(trainer.mean_loss(reset=True))
        losses[graph] = epochs
    assert losses[True] == losses[False], losses


@needs_gpu
def test_what_a_recording_may_not_do_raises_clearly():
    a = dlarray.array(np.ones((1000, 100), np.float32), GPU)
    o = dlarray.empty((1000, 100), GPU)
    _core._graph_begin_capture(GPU)
    try:
        assert _core._graph_is_capturing(GPU)
        with pytest.raises(ValueError, match="already recording"):
            _core._graph_begin_capture(GPU)
        with pytest.raises(RuntimeError, match="records a CUDA graph"):
            a.asnumpy()  # a copy to the host waits for the stream
        with pytest.raises(RuntimeError, match="records a CUDA graph"):
            dlarray.synchronize(GPU)
    finally:
        _core._graph_abort_capture(GPU)
    assert not _core._graph_is_capturing(GPU)
    ops.relu(a, o)  # the stream works again
    np.testing.assert_array_equal(o.asnumpy(), np.ones((1000, 100), np.float32))
    with pytest.raises(ValueError, match="not recording"):
        _core._graph_end_capture(GPU)


@needs_gpu
def test_a_recording_allocates_what_the_cache_does_not_hold():
    # A split reduction needs scratch memory; a size never seen before is not in the cache, so
    # the recording cudaMallocs it (capture mode relaxed for the call) and keeps it as the
    # graph's scratch: replays are right, and nothing allocated later aliases it.
    dlarray.empty_cache(GPU)
    x = np.arange(300007 * 3, dtype=np.float32).reshape(300007, 3) % 7
    a = dlarray.array(x, GPU)
    o = dlarray.empty((3,), GPU)
    before = dlarray.memory_stats(GPU)["num_allocations"]
    graph = ad.record_cuda_graph(lambda: ops.reduce_sum_axis_zero(a, o), GPU)
    assert dlarray.memory_stats(GPU)["num_allocations"] > before
    o[:] = 0
    others = [dlarray.array(np.full((300007, 3), 9.0, np.float32), GPU) for _ in range(3)]
    graph.launch()
    graph.launch()
    np.testing.assert_allclose(o.asnumpy(), x.sum(0, dtype=np.float64), rtol=1e-5)
    for other in others:  # the replays' scratch writes never landed in these
        np.testing.assert_array_equal(other.asnumpy(), np.full((300007, 3), 9.0, np.float32))


@needs_gpu
def test_scratch_freed_in_a_recording_serves_its_later_ops():
    # One eager call caches one scratch block; a recording of 20 calls reuses it call after call
    # (the recorded nodes run in order), so nothing is allocated and every replay is right.
    a = dlarray.array(np.ones((300007, 3), np.float32), GPU)
    outs = [dlarray.empty((3,), GPU) for _ in range(20)]
    ops.reduce_sum_axis_zero(a, outs[0])
    before = dlarray.memory_stats(GPU)["num_allocations"]
    graph = ad.record_cuda_graph(lambda: [ops.reduce_sum_axis_zero(a, o) for o in outs], GPU)
    for o in outs:
        o[:] = 0
    graph.launch()
    graph.launch()
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy(), np.full(3, 300007, np.float32))
    assert dlarray.memory_stats(GPU)["num_allocations"] == before


@needs_gpu
def test_the_graphs_of_a_device_share_their_scratch():
    # One eager call caches one scratch block. Two graphs recorded one after the other (a
    # data-parallel plan's segments) both use it: they replay on the device's one stream, one
    # after another. The block leaves the graphs' keeping only with the last graph holding it.
    a = dlarray.array(np.ones((300007, 3), np.float32), GPU)
    b = dlarray.array(np.full((300007, 3), 2.0, np.float32), GPU)
    out_a, out_b = dlarray.empty((3,), GPU), dlarray.empty((3,), GPU)
    ops.reduce_sum_axis_zero(a, out_a)
    dlarray.synchronize(GPU)
    before = dlarray.memory_stats(GPU)
    first = ad.record_cuda_graph(lambda: ops.reduce_sum_axis_zero(a, out_a), GPU)
    second = ad.record_cuda_graph(lambda: ops.reduce_sum_axis_zero(b, out_b), GPU)
    assert dlarray.memory_stats(GPU)["num_allocations"] == before["num_allocations"]
    held = dlarray.memory_stats(GPU)["bytes_in_use"]
    assert held > before["bytes_in_use"]  # the scratch block, the graphs' now
    for _ in range(3):
        out_a[:] = 0
        out_b[:] = 0
        first.launch()
        second.launch()
        np.testing.assert_array_equal(out_a.asnumpy(), np.full(3, 300007, np.float32))
        np.testing.assert_array_equal(out_b.asnumpy(), np.full(3, 600014, np.float32))
    del first  # the second still holds the shared block: no array may be given it
    sizes = range(1, 20001, 257)  # float32 arrays of 4 B to 78 KiB: any block freed now
    fills = [dlarray.array(np.full(n, 7.0, np.float32), GPU) for n in sizes]
    out_b[:] = 0
    second.launch()
    np.testing.assert_array_equal(out_b.asnumpy(), np.full(3, 600014, np.float32))
    for n, fill in zip(sizes, fills):
        np.testing.assert_array_equal(fill.asnumpy(), np.full(n, 7.0, np.float32))
    del second, fills, fill
    dlarray.synchronize(GPU)
    assert dlarray.memory_stats(GPU)["bytes_in_use"] == before["bytes_in_use"]


@needs_gpu
def test_a_graph_freed_while_another_records_is_destroyed_after_it():
    # A garbage collection in the middle of a recording may free an older graph (the executor
    # of an earlier training run). Destroying an executable graph there broke the recording,
    # and the next op failed ("CUBLAS_STATUS_EXECUTION_FAILED": cudaErrorStreamCaptureInvalidated
    # on the 2-GPU data-parallel test): the destruction now waits for the recording's end.
    import gc
    a = dlarray.array(np.ones((300007, 3), np.float32), GPU)
    x = np.arange(-50, 50, dtype=np.float32).reshape(10, 10)
    b, c = dlarray.array(x, GPU), dlarray.empty((10, 10), GPU)
    out_old, out = dlarray.empty((3,), GPU), dlarray.empty((3,), GPU)
    ops.reduce_sum_axis_zero(a, out_old)
    dlarray.synchronize(GPU)
    gc.collect()  # earlier tests' garbage: freed here, not in the body's collection
    before = dlarray.memory_stats(GPU)["bytes_in_use"]
    old = [ad.record_cuda_graph(lambda: ops.reduce_sum_axis_zero(a, out_old), GPU)]

    def body():
        ops.relu(b, c)
        old.clear()  # its last reference
        gc.collect()
        ops.matrix_multiply(c, False, c, False, b)  # cuBLAS, then a reduction's scratch
        ops.reduce_sum_axis_zero(a, out)

    graph = ad.record_cuda_graph(body, GPU)
    out[:] = 0
    graph.launch()
    r = np.maximum(x, 0)
    np.testing.assert_allclose(b.asnumpy(), r @ r, rtol=1e-6)
    np.testing.assert_array_equal(out.asnumpy(), np.full(3, 300007, np.float32))
    del graph
    dlarray.synchronize(GPU)
    assert dlarray.memory_stats(GPU)["bytes_in_use"] == before  # both graphs' scratch returned


@needs_gpu
def test_an_array_made_while_recording_never_takes_another_graphs_scratch():
    # With the cache empty of a fitting block, a recording may borrow another graph's scratch,
    # but not for an array that outlives the recording (the other graph's replays would write
    # it): that recording fails, saying so, and nothing leaks.
    a = dlarray.array(np.ones((300007, 3), np.float32), GPU)
    out = dlarray.empty((3,), GPU)
    ops.reduce_sum_axis_zero(a, out)
    dlarray.synchronize(GPU)
    graph = ad.record_cuda_graph(lambda: ops.reduce_sum_axis_zero(a, out), GPU)
    held = dlarray.memory_stats(GPU)["bytes_in_use"]
    dlarray.empty_cache(GPU)
    kept = []
    with pytest.raises(RuntimeError, match="took scratch memory of another CUDA graph"):
        ad.record_cuda_graph(lambda: kept.append(dlarray.empty((4,), GPU)), GPU)
    kept.clear()
    assert dlarray.memory_stats(GPU)["bytes_in_use"] == held
    out[:] = 0
    graph.launch()
    np.testing.assert_array_equal(out.asnumpy(), np.full(3, 300007, np.float32))


@needs_gpu
def test_a_python_custom_op_runs_op_by_op():
    class Twice(ad.CustomOp):
        def forward_numpy(self, in_data, out_data):
            out_data[0][:] = 2 * in_data[0]

        def backward_numpy(self, out_grad, in_data, out_data, in_grad):
            in_grad[0][:] = 2 * out_grad[0]

    x = ad.Variable("x")
    ex = ad.Executor([Twice()(x)], GPU)
    for _ in range(3):
        out, = ex.run({x: np.arange(4.0)}, convert_to_numpy_ret_vals=True)
        np.testing.assert_array_equal(out, 2 * np.arange(4.0))
    stats = ex.graph_stats()
    assert stats["captures"] == 0 and stats["eager_runs"] == 3 and stats["notes"], stats


def test_cuda_graph_flag_must_be_a_bool():
    with pytest.raises(TypeError, match="cuda_graph"):
        ad.Executor([ad.Variable("x")], dlarray.cpu(0), cuda_graph="yes")


def test_cpu_executor_ignores_cuda_graph():
    x = ad.Variable("x")
    ex = ad.Executor([ad.relu_op(x)], dlarray.cpu(0), cuda_graph=True)
    for _ in range(3):
        out, = ex.run({x: np.array([-1.0, 2.0])}, convert_to_numpy_ret_vals=True)
    np.testing.assert_array_equal(out, [0.0, 2.0])
    stats = ex.graph_stats()  # (its other keys say what fusion did)
    assert {k: stats[k] for k in ("captures", "replays", "eager_runs", "notes")} == {
        "captures": 0, "replays": 0, "eager_runs": 0, "notes": []}


def test_recording_needs_a_gpu_context():
    with pytest.raises(ValueError, match=r"cpu\(0\) does not offer a complete dlarray.graph.v1"):
        _core._graph_begin_capture(dlarray.cpu(0))


@pytest.mark.skipif(GPU in dlarray.devices(), reason="checks the error without a GPU")
def test_recording_without_a_gpu_names_the_device():
    if any(p["name"] == "cuda" and p["status"] in ("loaded", "no devices")
           for p in dlarray.plugins()):
        # The plugin serves no device: its reason comes with the device's name.
        with pytest.raises(RuntimeError, match=r"cuda\(0\): the cuda plugin .* no devices"):
            _core._graph_begin_capture(GPU)
    else:
        with pytest.raises(RuntimeError, match=r"cuda\(0\): no plugin serving cuda devices"):
            _core._graph_begin_capture(GPU)
