"""One rank of the executor's data-parallel mode, for test_ddp.py (CPU ranks, ``mpirun -n 2``) and
test_ddp_gpu.py (GPUs, ``python -m dlarray.distributed.run --nproc-per-node 2``): trains a
small MLP with the gradients averaged in buckets and compares it, on every rank, with one
process training on the whole global batch; then reduces arrays of mixed dtypes and odd shapes
through GradientBuckets. Writes ``<out>/rank<R>.json``.

    mpirun -n 2 --oversubscribe python ddp_worker.py OUT_DIR   (DLARRAY_DIST_DEVICE=cpu)
"""
import json
import os
import sys

import numpy as np

import dlarray
import dlarray.distributed as dist
from dlarray import autodiff as ad

OUT = sys.argv[1] if __name__ == "__main__" else ""
# Odd widths; a batch of 2 x 13 rows; 3 steps of SGD.
IN, HIDDEN, CLASSES, HALF, STEPS, LR = 37, 19, 5, 13, 3, 0.5


def model():
    """An MLP x -> relu(x W1 + b1) W2 + b2 -> softmax cross-entropy: (params, loss, grads)."""
    x, y_ = ad.Variable("x"), ad.Variable("y_")
    w1, b1, w2, b2 = (ad.Variable(n) for n in ("w1", "b1", "w2", "b2"))
    z1 = ad.matmul_op(x, w1)
    h = ad.relu_op(z1 + ad.broadcastto_op(b1, z1))
    z2 = ad.matmul_op(h, w2)
    logits = z2 + ad.broadcastto_op(b2, z2)
    loss = ad.softmaxcrossentropy_op(logits, y_)
    params = [w1, b1, w2, b2]
    return x, y_, params, loss, ad.gradients(loss, params)


def data():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2 * HALF, IN)).astype(np.float32)
    y = np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, 2 * HALF)]
    shapes = [(IN, HIDDEN), (HIDDEN,), (HIDDEN, CLASSES), (CLASSES,)]
    weights = [(0.3 * rng.standard_normal(s)).astype(np.float32) for s in shapes]
    return x, y, weights


def train(rows, bucket_mb=None, update_node=False):
    """STEPS of SGD on x[rows] on this rank's device: data-parallel (bucket_mb given) or alone;
    the update by two ops per weight after each run, or (update_node) by the executor's
    sgd_update_op, which must follow the buckets' all-reduces. Returns the losses (the global
    batch's: averaged over the ranks), the final weights and the number of buckets."""
    cpu = dist.get_device()
    x_val, y_val, init = data()
    x, y_, params, loss, grads = model()
    update = [ad.sgd_update_op(params, grads, LR)] if update_node else []
    executor = ad.Executor([loss] + grads + update, cpu,
                           data_parallel=grads if bucket_mb else None,
                           bucket_mb=bucket_mb or 25.0)
    weights = [dlarray.array(w, cpu) for w in init]
    feed = dict(zip(params, weights))
    feed[x], feed[y_] = x_val[rows], y_val[rows]
    losses = []
    for _ in range(STEPS):
        loss_val, *grad_vals = executor.run(feed)
        loss_val = loss_val.copyto(cpu)
        if bucket_mb:
            dist.all_reduce(loss_val, op="mean")
        losses.append(float(loss_val.asnumpy().reshape(-1)[0]))
        for w, g in zip(weights, grad_vals if not update_node else ()):
            dlarray.ops.matrix_elementwise_multiply_by_const(g, -LR, g)
            dlarray.ops.matrix_elementwise_add(w, g, w)
    buckets = next(iter(executor._plans.values())).buckets if bucket_mb else None
    stats = executor.graph_stats()
    stats["recordable"] = bool(buckets and buckets.recordable())
    return losses, [w.asnumpy() for w in weights], (len(buckets) if buckets else 0), stats


def training():
    rank = dist.get_rank()
    mine = slice(rank * HALF, (rank + 1) * HALF)
    ref_losses, ref_weights, _, _ = train(slice(0, 2 * HALF))
    runs = {}
    # 1e-6 MB: every gradient its own bucket; 25 MB: all in one; 0.0003 MB (315 bytes): some
    # together (the gradients have 2812, 380, 76 and 20 bytes).
    for bucket_mb, update_node in ((1e-6, False), (0.0003, False), (25.0, False),
                                   (0.0003, True)):
        losses, weights, count, stats = train(mine, bucket_mb, update_node)
        runs[str(bucket_mb) + " sgd_update_op" * update_node] = {
            "buckets": count,
            "recordable": stats["recordable"],  # the peer kernel's all-reduces, in the graph
            "in_all_reduce": stats["updates_in_all_reduce"],  # parameters its kernels step
            # captures, replays, eager runs, notes, segments of the executor's CUDA graphs
            "graph": [stats["captures"], stats["replays"], stats["eager_runs"], stats["notes"],
                      stats["segments"]],
            "loss_error": max(abs(a - b) for a, b in zip(losses, ref_losses)),
            "weight_error": max(float(np.max(np.abs(w - r))) for w, r in zip(weights,
                                                                              ref_weights)),
            "losses": losses}
    return runs, ref_losses


def mixed_dtypes():
    """GradientBuckets over mixed dtypes and odd shapes (empty, one element, past a thread's
    block), in buckets of every size; compared with NumPy's mean of both ranks' values."""
    rank, cpu = dist.get_rank(), dist.get_device()
    specs = [("float32", (3, 5)), ("float64", (70001,)), ("int32", (7,)), ("float16", (1,)),
             ("float32", (0,)), ("int64", ()), ("float64", (2, 3, 4))]
    failures = []
    for bucket_mb in (1e-6, 0.1, 100.0):
        values = [np.random.default_rng(100 * r + i).integers(-50, 50, s).astype(d)
                  for r in (0, 1) for i, (d, s) in enumerate(specs)]
        mine = values[rank * len(specs):(rank + 1) * len(specs)]
        arrays = [dlarray.array(v, cpu, dtype=d) for v, (d, _s) in zip(mine, specs)]
        buckets = dist.GradientBuckets(arrays, bucket_mb)
        for b in range(len(buckets)):
            buckets.start(b)
        buckets.wait()
        for i, (d, s) in enumerate(specs):
            a, b = values[i], values[len(specs) + i]
            s_ = a + b
            want = (np.trunc(s_ / 2).astype(d) if np.issubdtype(np.dtype(d), np.integer)
                    else (s_.astype(np.float64) / 2).astype(d))
            got = arrays[i].asnumpy()
            if got.dtype != np.dtype(d) or got.shape != tuple(s) or not np.array_equal(got,
                                                                                     want):
                failures.append("%s%s at %g MB" % (d, s, bucket_mb))
        if bucket_mb == 1e-6 and len(buckets) != len(specs) - 1:  # (0,) rides along
            failures.append("1e-6 MB made %d buckets" % len(buckets))
        if bucket_mb == 100.0 and len(buckets) != 1:
            failures.append("100 MB made %d buckets" % len(buckets))
    return failures


def read_after_production():
    """A gradient that a later op reads: that op sees this rank's own gradient, and the bucket
    (started after that read) averages it. Returns the failures."""
    rank, device = dist.get_rank(), dist.get_device()
    x, w = ad.Variable("x"), ad.Variable("w")
    g, = ad.gradients(ad.mul_op(x, w), [w])  # = x
    twice = g * 2
    executor = ad.Executor([g, twice], device, data_parallel=[g], bucket_mb=1e-6)
    mine = np.arange(5, dtype=np.float32) + 10 * rank
    g_val, twice_val = executor.run({x: mine, w: np.ones(5, np.float32)})
    failures = []
    if not np.array_equal(g_val.asnumpy(), np.arange(5, dtype=np.float32) + 5):
        failures.append("the gradient is not averaged: %s" % g_val.asnumpy())
    if not np.array_equal(twice_val.asnumpy(), 2 * mine):
        failures.append("the later op read an averaged gradient: %s" % twice_val.asnumpy())
    return failures


def main():
    dist.init_process_group()
    runs, ref_losses = training()
    failures = mixed_dtypes() + read_after_production()
    with open(os.path.join(OUT, "rank%d.json" % dist.get_rank()), "w") as f:
        json.dump({"runs": runs, "reference": ref_losses, "mixed_failures": failures}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
