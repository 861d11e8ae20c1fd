#!/usr/bin/env python3
"""The executor's data-parallel mode on several GPUs against one GPU (issue 24, item 2).

    NCCL_NVLS_ENABLE=0 python -m dlarray.distributed.run --nproc-per-node 2 bench/ddp_overlap.py

Step time (forward, backward, gradient all-reduce, SGD update) of
1. an MLP 4096-4096-4096-10 at global batch 4096 (gradients: 128 MB, about 6 buckets of 25 MB);
   target: 2 GPUs <= 0.55x one GPU's step time;
2. examples/mnist.py's MLP at global batch 1000; target: 2 GPUs not slower than one (also with
   the peer all-reduce off, ``_nccl``: every all-reduce through NCCL; and ``1_gpu_local_batch``,
   one GPU on one rank's share of the batch with nothing all-reduced: the floor).
Each on N GPUs with the gradients all-reduced in buckets during the backward pass (``buckets``,
the data-parallel mode: CUDA graph segments with the collectives between them) and in one NCCL
group after it (``after``), and on one GPU with the whole global batch while the other ranks
wait. MNIST's buckets mode also runs with each of --mnist-bucket-mb: at 0.5 MB W1's gradient
(0.77 MB, computed first in the backward pass) is a bucket of its own, so its all-reduce overlaps
the other gradients' kernels; at 0.05 MB the last bucket (b2, W3, b3: 4 KB) is the only one left
for after the backward pass. Times are the median of --repeats rounds of --steps steps
(--mnist-steps for MNIST), each round ended by one wait for the GPU. Rank 0 prints the table;
--json FILE saves it.
"""

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast stays off

import numpy as np  # noqa: E402

import dlarray  # noqa: E402
import dlarray.distributed as dist  # noqa: E402
from dlarray import autodiff as ad  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                "examples"))
import mnist  # noqa: E402



def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=20, help="the wide MLP's steps per round")
    parser.add_argument("--mnist-steps", type=int, default=200,
                        help="MNIST's steps per round: each round starts when its rank's host "
                             "does, so the first barrier waits for the later rank (tens of us "
                             "of host skew); over 200 steps of 0.1 ms that is under 1%%")
    parser.add_argument("--batch", type=int, default=4096, help="the wide MLP's global batch")
    parser.add_argument("--width", type=int, default=4096, help="the wide MLP's layer width")
    parser.add_argument("--bucket-mb", type=float, default=25.0)
    parser.add_argument("--mnist-bucket-mb", default="0.5,0.05",
                        help="more bucket sizes (MB, comma-separated) for MNIST's buckets mode")
    parser.add_argument("--models", default="mlp,mnist",
                        help="which models (comma-separated): mlp, mnist")
    parser.add_argument("--json", metavar="FILE", help="save the results")
    args = parser.parse_args(argv)
    args.models = {m.strip() for m in args.models.split(",") if m.strip()}
    if not args.models or not args.models <= {"mlp", "mnist"}:
        parser.error("--models takes mlp and/or mnist, got %r" % sorted(args.models))
    return args


def timed(step, ctx, steps, repeats, host=None):
    """Median seconds per step over ``repeats`` rounds of ``steps`` steps and one wait. ``host``
    (a list) gets the median seconds per step the host took to queue them (before the wait):
    close to the step time, the step is bound by the host, not the GPU."""
    for _ in range(3):
        step()
    dlarray.synchronize(ctx)
    samples, queued = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        queued.append((time.perf_counter() - start) / steps)
        dlarray.synchronize(ctx)
        samples.append((time.perf_counter() - start) / steps)
    if host is not None:
        host.append(statistics.median(queued))
    return statistics.median(samples)


class WideMLP:
    """x -> [matmul + bias -> relu] x 2 -> matmul + bias -> softmax cross-entropy, SGD."""

    def __init__(self, ctx, rows, width, mode, bucket_mb, group):
        self.ctx, self.mode, self.group = ctx, mode, group
        widths = (width, width, width, 10)
        self.x, self.y_ = ad.Variable("x"), ad.Variable("y_")
        rng = np.random.default_rng(0)
        h, params, values = self.x, [], []
        for i, (n_in, n_out) in enumerate(zip(widths[:-1], widths[1:])):
            w, b = ad.Variable("w%d" % i), ad.Variable("b%d" % i)
            z = ad.matmul_op(h, w)
            z = z + ad.broadcastto_op(b, z)
            h = ad.relu_op(z) if i < len(widths) - 2 else z
            params += [w, b]
            values += [rng.standard_normal((n_in, n_out), np.float32) / np.sqrt(n_in),
                       np.zeros(n_out, np.float32)]
        loss = ad.softmaxcrossentropy_op(h, self.y_)
        grads = ad.gradients(loss, params)
        overlap = group and mode == "buckets"
        self.executor = ad.Executor([loss] + grads, ctx, data_parallel=grads if overlap else None,
                                    bucket_mb=bucket_mb)
        self.weights = [dlarray.array(v, ctx) for v in values]
        self.feed = dict(zip(params, self.weights))
        self.feed[self.x] = dlarray.array(rng.standard_normal((rows, widths[0]), np.float32), ctx)
        labels = np.eye(widths[-1], dtype=np.float32)[rng.integers(0, widths[-1], rows)]
        self.feed[self.y_] = dlarray.array(labels, ctx)

    def step(self):
        _loss, *grads = self.executor.run(self.feed)
        if self.group and self.mode == "after":
            dist.all_reduce_coalesced(grads, op="mean")
        for w, g in zip(self.weights, grads):
            dlarray.ops.matrix_elementwise_multiply_by_const(g, -1e-3, g)
            dlarray.ops.matrix_elementwise_add(w, g, w)


def mnist_trainer(ctx, rows, mode, group, bucket_mb=25.0):
    trainer = mnist.Trainer("mlp", ctx, 0.01, 0, dist=dist if group else None,
                            allreduce="buckets" if mode == "buckets" else "grouped",
                            bucket_mb=bucket_mb)
    rng = np.random.default_rng(0)
    batches = [(trainer.to_device(rng.random((rows, 784), dtype=np.float32)),
                trainer.to_device(mnist.one_hot(rng.integers(0, 10, rows)))) for _ in range(8)]
    state = {"i": 0}

    def step():
        trainer.step(*batches[state["i"] % len(batches)])
        state["i"] += 1
    step.executor = trainer.train_executor
    return step


def graphs(executor):
    """What the executor's CUDA graphs did: segments per plan, replays, notes."""
    stats = executor.graph_stats()
    return "segments %s, %d replays, %d runs op by op%s" % (
        stats["segments"], stats["replays"], stats["eager_runs"],
        "; " + "; ".join(stats["notes"]) if stats["notes"] else "")


def bench(args, ctx, rank, world):
    rows = []
    models = [("MLP %dx3, batch %d" % (args.width, args.batch), args.batch)]
    models = (models if "mlp" in args.models else []) + (
        [("MNIST MLP, batch 1000", 1000)] if "mnist" in args.models else [])
    for name, batch in models:
        row = {"model": name, "graphs": {}}
        steps = args.mnist_steps if name.startswith("MNIST") else args.steps
        modes = [("buckets", args.bucket_mb, True), ("after", None, True)]
        if name.startswith("MNIST"):
            modes += [("buckets", float(mb), True) for mb in args.mnist_bucket_mb.split(",") if mb]
            # The same with every all-reduce on NCCL: what the peer all-reduce (small
            # all-reduces in one kernel over peer memory) changes.
            modes += [("buckets", args.bucket_mb, False), ("after", None, False)]
        for mode, bucket_mb, peer in modes:
            key = "%d_gpus_%s" % (world, mode)
            if mode == "buckets" and bucket_mb != args.bucket_mb:
                key += "_%gmb" % bucket_mb
            if not peer:
                key += "_nccl"
            dist._use_peer_all_reduce(peer)
            if name.startswith("MNIST"):
                step = mnist_trainer(ctx, batch // world, mode, True, bucket_mb or 25.0)
                executor = step.executor
            else:
                model = WideMLP(ctx, batch // world, args.width, mode, args.bucket_mb, True)
                step, executor = model.step, model.executor
            host = []
            before = dist.collective_stats()
            row[key + "_ms"] = 1e3 * timed(step, ctx, steps, args.repeats, host)
            after = dist.collective_stats()
            row["graphs"][key] = "host %.3f ms a step; all-reduces peer %d, NCCL %d; %s" % (
                1e3 * host[0], after["peer_all_reduce"] - before["peer_all_reduce"],
                after["nccl_all_reduce"] - before["nccl_all_reduce"], graphs(executor))
            dist._use_peer_all_reduce(True)
        dist.host_barrier()
        if rank == 0:  # one GPU, the whole global batch, the other ranks idle
            if name.startswith("MNIST"):
                step = mnist_trainer(ctx, batch, "after", False)
            else:
                step = WideMLP(ctx, batch, args.width, "after", args.bucket_mb, False).step
            host = []
            row["1_gpu_ms"] = 1e3 * timed(step, ctx, steps, args.repeats, host)
            row["graphs"]["1_gpu"] = "host %.3f ms a step" % (1e3 * host[0])
            row["ratio_buckets"] = row["%d_gpus_buckets_ms" % world] / row["1_gpu_ms"]
            row["ratio_after"] = row["%d_gpus_after_ms" % world] / row["1_gpu_ms"]
            if name.startswith("MNIST"):  # the floor: one rank's share, nothing all-reduced
                step = mnist_trainer(ctx, batch // world, "after", False)
                row["1_gpu_local_batch_ms"] = 1e3 * timed(step, ctx, steps, args.repeats)
        dist.host_barrier(timeout=900)
        rows.append(row)
    return rows


def main(argv=None):
    args = parse_args(argv)
    dist.init_process_group()
    rank, world, ctx = dist.get_rank(), dist.get_world_size(), dist.get_device()
    results = {"world_size": world, "device": dlarray._core.device_name(ctx),
               "nccl": dist.nccl_library()[1] if dlarray.is_gpu_ctx(ctx) else "-",
               "bucket_mb": args.bucket_mb,
               "rows": bench(args, ctx, rank, world)}
    if rank == 0:
        print("data-parallel step time on %s, NCCL %s: ms (median of %d rounds of %d steps, "
              "MNIST %d); ratio = %d GPUs / 1 GPU (targets: MLP <= 0.55, MNIST <= 1.0)"
              % (results["device"], results["nccl"], args.repeats, args.steps, args.mnist_steps,
                 world))
        print("%-24s %9s %14s %12s %13s %11s" % ("model", "1 GPU", "%d GPUs buckets" % world,
                                                 "%d GPUs after" % world, "ratio buckets",
                                                 "ratio after"))
        for r in results["rows"]:
            print("%-24s %9.3f %14.3f %12.3f %13.3f %11.3f" % (
                r["model"], r["1_gpu_ms"], r["%d_gpus_buckets_ms" % world],
                r["%d_gpus_after_ms" % world], r["ratio_buckets"], r["ratio_after"]))
            main = ("%d_gpus_buckets_ms" % world, "%d_gpus_after_ms" % world, "1_gpu_ms")
            for key, ms in r.items():  # the other bucket sizes, NCCL alone, the floor
                if (key.startswith("%d_gpus_" % world) or key == "1_gpu_local_batch_ms") and \
                        key.endswith("_ms") and key not in main:
                    print("%-24s %s: %.3f ms, ratio %.3f" % ("", key[:-3], ms,
                                                            ms / r["1_gpu_ms"]))
            for key, text in r["graphs"].items():
                print("%-24s %s graphs: %s" % ("", key, text))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
