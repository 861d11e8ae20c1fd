"""One rank of test_distributed_gpu.py's NCCL runs (one GPU per rank).

    python -m dlarray.distributed.run --nproc-per-node 2 dist_gpu_worker.py collectives OUTDIR
    RANK=1 WORLD_SIZE=2 ... python dist_gpu_worker.py peer_exits OUTDIR

Every collective is compared with NumPy on the ranks' inputs (rank r's input is a known
function of r, so each rank knows the others'). Writes OUTDIR/rank<r>.json.
"""
import json
import os
import sys
import time
import traceback

import numpy as np

import dlarray
import dlarray.distributed as dist
from dlarray import ops

SCENARIO, OUT = sys.argv[1], sys.argv[2]
RANK = int(os.environ["RANK"])
START = time.monotonic()
result = {"rank": RANK, "checks": 0, "errors": []}


def save():
    result["elapsed"] = round(time.monotonic() - START, 3)
    with open(os.path.join(OUT, "rank%d.json" % RANK), "w") as f:
        json.dump(result, f)


def data(rank, shape, dtype, salt=0):
    rng = np.random.default_rng(1000 * rank + salt)
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(shape) * 3).astype(dtype)
    return rng.integers(-50, 50, shape).astype(dtype)


def check(got, want, **tol):
    if np.dtype(want.dtype).kind == "f":
        np.testing.assert_allclose(got, want, **(tol or {"rtol": 1e-5, "atol": 1e-5}))
    else:
        np.testing.assert_array_equal(got, want)
    result["checks"] += 1


def expect_error(kind, fragment, fn):
    try:
        fn()
    except kind as e:
        if fragment not in str(e):
            raise AssertionError("%s without %r: %s" % (kind.__name__, fragment, e))
        result["errors"].append("%s: %s" % (kind.__name__, e))
        return
    raise AssertionError("no %s (%s)" % (kind.__name__, fragment))


def collectives():
    world, ctx = dist.get_world_size(), dist.get_device()
    assert ctx == dlarray.gpu(int(os.environ["LOCAL_RANK"]))
    result["nccl"] = list(dist.nccl_library())
    reductions = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}
    for n in (1, 1000, (1 << 20) + 3):
        for op, fn in reductions.items():
            if op == "prod" and n > 1000:
                continue
            x = dlarray.array(data(RANK, n, np.float32, n), ctx)
            dist.all_reduce(x, op=op)
            want = fn(np.stack([data(r, n, np.float32, n) for r in range(world)]), axis=0)
            check(x.asnumpy(), want.astype(np.float32), rtol=1e-5, atol=1e-4)
    for dtype, op in ((np.float64, "sum"), (np.int32, "sum"), (np.int64, "max"),
                      (np.uint8, "min"), (np.float16, "sum")):
        x = dlarray.array(data(RANK, (7, 9), dtype) if dtype != np.uint8
                          else np.arange(63, dtype=np.uint8).reshape(7, 9) + RANK, ctx,
                          dtype=dtype)
        dist.all_reduce(x, op=op)
        stack = np.stack([data(r, (7, 9), dtype) if dtype != np.uint8 else
                          np.arange(63, dtype=np.uint8).reshape(7, 9) + r for r in range(world)])
        want = {"sum": np.sum, "max": np.max, "min": np.min}[op](stack, axis=0).astype(dtype)
        check(x.asnumpy(), want, **({"rtol": 1e-2, "atol": 1e-2} if dtype == np.float16 else {}))
    # Several arrays in one NCCL group.
    shapes = [(784, 256), (256,), (256, 100), (100,), (1,)]
    xs = [dlarray.array(data(RANK, s, np.float32, i), ctx) for i, s in enumerate(shapes)]
    dist.all_reduce_coalesced(xs, op="mean")
    for i, (s, x) in enumerate(zip(shapes, xs)):
        check(x.asnumpy(), np.mean([data(r, s, np.float32, i) for r in range(world)], axis=0))
    # broadcast, all_gather, reduce_scatter.
    b = dlarray.array(data(RANK, (5, 3), np.float32, 7), ctx)
    dist.broadcast(b, src=world - 1)
    check(b.asnumpy(), data(world - 1, (5, 3), np.float32, 7))
    g = dist.all_gather(dlarray.array(data(RANK, (3, 5), np.float32, 8), ctx))
    check(g.asnumpy(), np.concatenate([data(r, (3, 5), np.float32, 8) for r in range(world)]))
    out = dlarray.empty((world,), ctx, dtype=np.int64)
    dist.all_gather(dlarray.array(np.array([RANK * 11], np.int64), ctx, dtype=np.int64), out=out)
    check(out.asnumpy(), np.arange(world, dtype=np.int64) * 11)
    rs = dist.reduce_scatter(dlarray.array(data(RANK, (2 * world, 7), np.float32, 9), ctx))
    total = np.sum([data(r, (2 * world, 7), np.float32, 9) for r in range(world)], axis=0)
    check(rs.asnumpy(), total[2 * RANK:2 * RANK + 2])
    # Ordering on the GPU's stream, nothing waited for in between.
    big = data(RANK, 1 << 22, np.float32, 10)
    y = dlarray.array(big, ctx)
    ops.matrix_elementwise_multiply_by_const(y, 2.0, y)
    dist.all_reduce(y)
    ops.matrix_elementwise_add_by_const(y, 1.0, y)
    check(y.asnumpy(), 2 * np.sum([data(r, 1 << 22, np.float32, 10) for r in range(world)],
                                  axis=0) + 1, rtol=1e-5, atol=1e-3)
    dist.barrier()
    # Mistakes are ValueError / TypeError, and the group survives them.
    other = dlarray.gpu(1 - RANK) if dlarray.gpu(1) in dlarray.devices() else dlarray.cpu()
    expect_error(ValueError, "but this rank's process group uses cuda(%d)" % ctx.device_id,
                 lambda: dist.all_reduce(dlarray.empty((4,), other)))
    expect_error(ValueError, "is on cpu(0)", lambda: dist.all_reduce(dlarray.empty((4,),
                                                                                   dlarray.cpu())))
    expect_error(TypeError, "NCCL has no uint16",
                 lambda: dist.all_reduce(dlarray.empty((4,), ctx, dtype=np.uint16)))
    expect_error(ValueError, "op must be one of", lambda: dist.all_reduce(y, op="xor"))
    z = dlarray.array(np.full(3, RANK + 1, np.float32), ctx)
    dist.all_reduce(z)
    check(z.asnumpy(), np.full(3, world * (world + 1) / 2, np.float32))
    dist.destroy_process_group()
    result["destroyed"] = not dist.is_initialized()


def wait_then_collect():
    """Queues an all-reduce the peer never joins, waits for it, then tries another. The first
    call itself may wait (NCCL connects to a peer at its first collective)."""
    x = dlarray.array(np.ones(1 << 20, np.float32), dist.get_device())
    try:
        dist.all_reduce(x)
        try:
            x.asnumpy()  # waits on the GPU until the watchdog aborts NCCL
        except RuntimeError as e:
            result["wait_error"] = "%s: %s" % (type(e).__name__, e)
        result["waited"] = round(time.monotonic() - START, 3)
        dist.all_reduce(x)
        dist.barrier()
        result["error"] = None
    except dist.DistributedError as e:
        result["waited"] = result.get("waited", round(time.monotonic() - START, 3))
        result["error"] = str(e)


def peer_exits():
    """Rank 1 leaves right after init; rank 0's all-reduce waits for it on the GPU."""
    if RANK == 1:
        time.sleep(1.0)
        os._exit(7)
    wait_then_collect()


def skipped_collective():
    """Rank 1 stays alive but never joins rank 0's all-reduce: the collective timeout ends it."""
    if RANK == 1:
        time.sleep(120)
        result["error"] = "rank 1 was not stopped"
        return
    wait_then_collect()


def main():
    try:
        dist.init_process_group()
        {"collectives": collectives, "peer_exits": peer_exits,
         "skipped_collective": skipped_collective}[SCENARIO]()
    except BaseException as e:  # noqa: BLE001 - recorded for the test, then re-raised
        result["exception"] = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        save()
        raise
    save()


if __name__ == "__main__":
    main()
