#!/usr/bin/env python3
"""Several GPUs: dlarray.distributed against torch.distributed (NCCL) in the same processes.

    NCCL_NVLS_ENABLE=0 python -m dlarray.distributed.run --nproc-per-node 2 bench/distributed.py

1. all_reduce (sum, float32) bus bandwidth from 4 KB (latency) to 1 GB, ours next to
   torch.distributed's, and the ratio (target >= 0.95). Bus bandwidth is NCCL's measure:
   bytes / time x 2 (n - 1) / n. Ours is what all_reduce does by default (the peer-memory
   all-reduce up to its byte limit, NCCL above); ``nccl us`` is ours with the peer path off,
   which sets the limit (DLARRAY_PEER_ALLREDUCE_MAX_BYTES): the size where the two cross.
2. Peer copy bandwidth gpu(0) -> gpu(1) and back (rank 0 alone, the others idle): our
   ``copyto`` next to torch ``Tensor.to('cuda:1')``, both making a new array each time.
3. examples/mnist.py's MLP step, data-parallel over every rank (gradients in one NCCL group,
   and one all-reduce per parameter) against the same global batch on one GPU.

Each time is the median of --repeats rounds; a round runs several operations back to back and
waits for the GPU once. Rank 0 prints; --json FILE saves the numbers.
"""

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast stays off (also for torch)

import numpy as np  # noqa: E402

import dlarray  # noqa: E402
import dlarray.distributed as dist  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                "examples"))
import mnist  # noqa: E402

SIZES = {"4KB": 4 << 10, "64KB": 64 << 10, "1MB": 1 << 20, "4MB": 4 << 20, "16MB": 16 << 20,
         "64MB": 64 << 20, "1GB": 1 << 30}
ITERS = {"4KB": 500, "64KB": 500, "1MB": 200, "4MB": 120, "16MB": 80, "64MB": 40, "1GB": 8}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(SIZES),
                        help="all_reduce and copy sizes, from %s" % ",".join(SIZES))
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=100, help="MNIST steps per round")
    parser.add_argument("--json", metavar="FILE", help="save the results")
    parser.add_argument("--parts", default="all_reduce,peer_copy,mnist",
                        help="which parts to run (two nodes of one GPU each: all_reduce)")
    args = parser.parse_args(argv)
    args.parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    if not args.parts <= {"all_reduce", "peer_copy", "mnist"}:
        parser.error("unknown parts %s" % sorted(args.parts - {"all_reduce", "peer_copy", "mnist"}))
    args.sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    unknown = [s for s in args.sizes if s not in SIZES]
    if unknown:
        parser.error("unknown sizes %s (choose from %s)" % (unknown, ", ".join(SIZES)))
    return args


def timed(fn, sync, inner, repeats, before=None):
    """Median seconds per call over ``repeats`` rounds of ``inner`` calls and one sync."""
    samples = []
    for _ in range(repeats):
        if before is not None:
            before()
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples)


def start_torch(rank, world, local_rank):
    """torch.distributed with NCCL beside ours (its store on MASTER_PORT + 1), or None."""
    try:
        import torch
        import torch.distributed as tdist
    except ImportError:
        return None, None
    torch.cuda.set_device(local_rank)
    url = "tcp://%s:%d" % (os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]) + 1)
    tdist.init_process_group("nccl", init_method=url, rank=rank, world_size=world,
                             device_id=torch.device("cuda", local_rank))
    return torch, tdist


def bench_all_reduce(args, ctx, world, torch, tdist):
    rows = []
    factor = 2.0 * (world - 1) / world
    for name in args.sizes:
        nbytes, inner = SIZES[name], ITERS[name]
        ours = dlarray.array(np.ones(nbytes // 4, np.float32), ctx)
        fn = lambda: dist.all_reduce(ours)  # noqa: E731
        sync = lambda: dlarray.synchronize(ctx)  # noqa: E731
        timed(fn, sync, 3, 1, before=dist.barrier)  # warm-up: NCCL connects at first use
        row = {"size": name, "bytes": nbytes}
        for label, peer in (("ours", True), ("nccl", False)):
            dist._use_peer_all_reduce(peer)
            timed(fn, sync, 3, 1, before=dist.barrier)
            before = dist.collective_stats()["peer_all_reduce"]
            seconds = timed(fn, sync, inner, args.repeats, before=dist.barrier)
            row[label + "_busbw_GBps"] = nbytes / seconds * factor / 1e9
            row[label + "_us"] = seconds * 1e6
            if peer:  # the barriers are peer all-reduces too: more than one a round
                took = dist.collective_stats()["peer_all_reduce"] - before
                row["path"] = "peer" if took >= inner * args.repeats else "nccl"
        dist._use_peer_all_reduce(True)
        ours = fn = None  # free it before the next size
        if torch is not None:
            theirs = torch.ones(nbytes // 4, dtype=torch.float32, device="cuda")
            tfn = lambda: tdist.all_reduce(theirs)  # noqa: E731
            tsync = torch.cuda.synchronize
            timed(tfn, tsync, 3, 1, before=tdist.barrier)
            torch_s = timed(tfn, tsync, inner, args.repeats, before=tdist.barrier)
            row["torch_busbw_GBps"] = nbytes / torch_s * factor / 1e9
            row["torch_us"] = torch_s * 1e6
            row["ratio"] = row["ours_busbw_GBps"] / row["torch_busbw_GBps"]
            theirs = tfn = None
            torch.cuda.empty_cache()
        dlarray.empty_cache(ctx)
        rows.append(row)
    return rows


def bench_peer_copies(args, torch):
    """Rank 0 only: copies between gpu(0) and gpu(1)."""
    g0, g1 = dlarray.gpu(0), dlarray.gpu(1)
    rows = []
    peer = dlarray._core.get_option(g0, "peer_access:0,1") == "1"
    both = lambda: (dlarray.synchronize(g0), dlarray.synchronize(g1))  # noqa: E731
    for name in args.sizes:
        nbytes, inner = SIZES[name], max(4, ITERS[name] // 2)
        for src, dst in ((g0, g1), (g1, g0)):
            x = dlarray.empty((nbytes // 4,), src)
            fn = lambda: x.copyto(dst)  # noqa: E731
            timed(fn, both, 2, 1)
            ours_s = timed(fn, both, inner, args.repeats)
            row = {"size": name, "direction": "%d->%d" % (src.device_id, dst.device_id),
                   "ours_GBps": nbytes / ours_s / 1e9}
            if torch is not None:
                t = torch.empty(nbytes // 4, dtype=torch.float32,
                                device="cuda:%d" % src.device_id)
                target = "cuda:%d" % dst.device_id
                tfn = lambda: t.to(target)  # noqa: E731
                tsync = lambda: (torch.cuda.synchronize(0), torch.cuda.synchronize(1))  # noqa
                timed(tfn, tsync, 2, 1)
                torch_s = timed(tfn, tsync, inner, args.repeats)
                row["torch_GBps"] = nbytes / torch_s / 1e9
                row["ratio"] = row["ours_GBps"] / row["torch_GBps"]
                t = tfn = None
            rows.append(row)
            x = fn = None
    dlarray.empty_cache()
    if torch is not None:
        torch.cuda.empty_cache()
    return rows, peer


def mnist_step_seconds(trainer, batches, steps, repeats, ctx, before=None):
    state = {"i": 0}

    def step():
        x, y = batches[state["i"] % len(batches)]
        state["i"] += 1
        trainer.step(x, y)

    timed(step, lambda: dlarray.synchronize(ctx), 10, 1, before=before)
    return timed(step, lambda: dlarray.synchronize(ctx), steps, repeats, before=before)


def device_batches(trainer, batch, rank, world, count=16):
    rng = np.random.default_rng(0)
    out = []
    local = batch // world
    for _ in range(count):
        images = rng.random((batch, 784), dtype=np.float32)[rank * local:(rank + 1) * local]
        labels = mnist.one_hot(rng.integers(0, 10, batch))[rank * local:(rank + 1) * local]
        out.append((trainer.to_device(images), trainer.to_device(labels)))
    return out


def bench_mnist(args, ctx, rank, world):
    rows = []
    for batch in (100, 1000):
        row = {"global_batch": batch}
        for mode in ("grouped", "per-param"):
            trainer = mnist.Trainer("mlp", ctx, 0.01, 0, dist=dist, allreduce=mode)
            batches = device_batches(trainer, batch, rank, world)
            row["%d_gpus_%s_ms" % (world, mode)] = 1e3 * mnist_step_seconds(
                trainer, batches, args.steps, args.repeats, ctx)
        dist.host_barrier()
        if rank == 0:  # one GPU, the whole global batch, the other ranks idle
            single = mnist.Trainer("mlp", ctx, 0.01, 0)
            batches = device_batches(single, batch, 0, 1)
            row["1_gpu_ms"] = 1e3 * mnist_step_seconds(single, batches, args.steps,
                                                       args.repeats, ctx)
            row["speedup_grouped"] = row["1_gpu_ms"] / row["%d_gpus_grouped_ms" % world]
        dist.host_barrier(timeout=600)
        rows.append(row)
    return rows


def main(argv=None):
    args = parse_args(argv)
    dist.init_process_group()
    rank, world, ctx = dist.get_rank(), dist.get_world_size(), dist.get_device()
    torch, tdist = start_torch(rank, world, ctx.device_id)
    say = print if rank == 0 else (lambda *a, **k: None)
    path, version = dist.nccl_library()
    say("dlarray.distributed: %d ranks, %s; NCCL %s (%s); torch %s"
        % (world, dlarray._core.device_name(ctx), version, path,
           "not installed" if torch is None else torch.__version__))
    results = {"world_size": world, "nccl": version, "device": dlarray._core.device_name(ctx)}

    if "all_reduce" in args.parts:
        all_reduce_table(args, ctx, world, torch, tdist, results, say)
    dist.host_barrier()
    if "peer_copy" in args.parts and rank == 0 and dlarray.gpu(1) in dlarray.devices():
        peer_copy_table(args, torch, results, say)
    dist.host_barrier(timeout=900)
    if "mnist" in args.parts:
        mnist_table(args, ctx, rank, world, results, say)
    if args.json and rank == 0:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if tdist is not None:
        tdist.destroy_process_group()
    dist.destroy_process_group()


def all_reduce_table(args, ctx, world, torch, tdist, results, say):
    results["all_reduce"] = bench_all_reduce(args, ctx, world, torch, tdist)
    say("\nall_reduce float32 sum, bus bandwidth GB/s (median of %d)" % args.repeats)
    say("%6s %10s %10s %7s %10s %5s %10s %10s %10s" % (
        "size", "dlarray", "torch", "ratio", "ours us", "path", "nccl us", "torch us",
        "nccl/ours"))
    for r in results["all_reduce"]:
        say("%6s %10.1f %10s %7s %10.1f %5s %10.1f %10s %10.2f" % (
            r["size"], r["ours_busbw_GBps"], "%.1f" % r["torch_busbw_GBps"] if "ratio" in r
            else "-", "%.3f" % r["ratio"] if "ratio" in r else "-", r["ours_us"], r["path"],
            r["nccl_us"], "%.1f" % r["torch_us"] if "ratio" in r else "-",
            r["nccl_us"] / r["ours_us"]))


def peer_copy_table(args, torch, results, say):
    results["peer_copy"], peer = bench_peer_copies(args, torch)
    say("\npeer copies (copyto vs Tensor.to), GB/s; peer access %s"
        % ("on" if peer else "off: staged by the driver"))
    say("%6s %6s %10s %10s %7s" % ("size", "dir", "dlarray", "torch", "ratio"))
    for r in results["peer_copy"]:
        say("%6s %6s %10.1f %10s %7s" % (
            r["size"], r["direction"], r["ours_GBps"],
            "%.1f" % r["torch_GBps"] if "ratio" in r else "-",
            "%.3f" % r["ratio"] if "ratio" in r else "-"))


def mnist_table(args, ctx, rank, world, results, say):
    results["mnist"] = bench_mnist(args, ctx, rank, world)
    say("\nMNIST MLP step (examples/mnist.py), ms (median of %d x %d steps)"
        % (args.repeats, args.steps))
    say("%6s %9s %13s %15s %8s" % ("batch", "1 GPU", "%d GPUs group" % world,
                                   "%d GPUs per-param" % world, "speedup"))
    for r in results["mnist"] if rank == 0 else []:
        say("%6d %9.3f %13.3f %15.3f %8.2f" % (
            r["global_batch"], r["1_gpu_ms"], r["%d_gpus_grouped_ms" % world],
            r["%d_gpus_per-param_ms" % world], r["speedup_grouped"]))


if __name__ == "__main__":
    main()
