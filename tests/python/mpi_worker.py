"""One CPU rank of dlarray.distributed on MPI, for test_mpi.py: started by ``mpirun -n 2`` or by
``python -m dlarray.distributed.run --device cpu``. Writes ``<out>/rank<R>.json``.

    mpirun -n 2 --oversubscribe python mpi_worker.py SCENARIO OUT_DIR
"""
import json
import os
import sys
import time

import ml_dtypes
import numpy as np

import dlarray
import dlarray.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO, OUT = (sys.argv[1], sys.argv[2]) if __name__ == "__main__" else ("", "")
OPS = ("sum", "prod", "max", "min", "mean")
SHAPES = [(), (0,), (1,), (3, 5), (70001,)]  # 70001: past the MPI's eager and pipeline limits
DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
          "uint16", "uint32", "uint64", "bool", "complex64", "complex128"]


def report(**fields):
    if "rank" not in fields:
        fields["rank"] = dist.get_rank() if dist.is_initialized() else -1
    with open(os.path.join(OUT, "rank%s.json" % os.environ.get("RANK", fields["rank"])), "w") as f:
        json.dump(fields, f)


def data(dtype, shape, rank):
    """Rank `rank`'s array: small values, so that sums and products stay exact in every dtype."""
    n = int(np.prod(shape, dtype=np.int64))
    rng = np.random.default_rng(1000 * rank + n)
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    values = rng.integers(-6 if not dtype.startswith("uint") else 0, 7, n).astype(np.float64)
    if dtype.startswith("complex"):
        return (values + 1j * rng.integers(-4, 5, n)).astype(dtype).reshape(shape)
    return values.reshape(shape).astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)


def expected(dtype, op, a, b, world):
    if dtype == "bool":
        return (a | b) if op in ("sum", "max") else (a & b)
    if op == "sum":
        return a + b
    if op == "prod":
        return a * b
    if op == "max":
        return np.maximum(a, b)
    if op == "min":
        return np.minimum(a, b)
    s = a + b  # mean: the sum in the dtype, then divided (integers truncate toward zero)
    if np.issubdtype(s.dtype, np.integer):
        return (np.trunc(s.astype(np.float64) / world)).astype(s.dtype)
    return (s.astype(np.complex128 if dtype.startswith("complex") else np.float64) / world).astype(
        s.dtype)


def allowed(dtype, op):
    return not ((dtype == "bool" and op == "mean")
                or (dtype.startswith("complex") and op in ("max", "min")))


def collectives():
    """Every dtype and op against NumPy; broadcast, all_gather, reduce_scatter; bad input."""
    rank, world = dist.get_rank(), dist.get_world_size()
    assert world == 2
    cpu = dlarray.cpu()
    failures, checked, errors = [], 0, {}
    for dtype in DTYPES:
        for shape in SHAPES:
            mine, other = data(dtype, shape, rank), data(dtype, shape, 1 - rank)
            a0, a1 = (mine, other) if rank == 0 else (other, mine)
            for op in OPS:
                x = dlarray.array(mine, cpu, dtype=dtype)
                if not allowed(dtype, op):
                    try:
                        dist.all_reduce(x, op=op)
                        failures.append("%s %s %s: no error" % (dtype, shape, op))
                    except TypeError as e:
                        errors["%s %s" % (dtype, op)] = str(e)
                    continue
                dist.all_reduce(x, op=op)
                got, want = x.asnumpy(), expected(dtype, op, a0, a1, world)
                if got.dtype != want.dtype or got.shape != want.shape \
                        or not np.array_equal(got, want):
                    failures.append("all_reduce %s %s %s: %r != %r"
                                    % (dtype, shape, op, got.ravel()[:4], want.ravel()[:4]))
                checked += 1
            x = dlarray.array(mine, cpu, dtype=dtype)
            dist.broadcast(x, src=1)
            if not np.array_equal(x.asnumpy(), a1):
                failures.append("broadcast %s %s" % (dtype, shape))
            g = dist.all_gather(dlarray.array(mine, cpu, dtype=dtype)).asnumpy()
            want = np.concatenate([a0.reshape(-1, *shape[1:]) if shape else a0.reshape(1),
                                   a1.reshape(-1, *shape[1:]) if shape else a1.reshape(1)])
            if not np.array_equal(g, want):
                failures.append("all_gather %s %s" % (dtype, shape))
            if shape and shape[0] % world == 0 and dtype != "bool":
                part = dist.reduce_scatter(dlarray.array(mine, cpu, dtype=dtype),
                                           op="sum").asnumpy()
                half = shape[0] // world
                if not np.array_equal(part, (a0 + a1)[rank * half:(rank + 1) * half]):
                    failures.append("reduce_scatter %s %s" % (dtype, shape))
    try:
        dist.all_reduce(dlarray.array(np.ones(3), dlarray.opencl(0)))
    except ValueError as e:
        errors["opencl array"] = str(e)
    grads = [dlarray.array(np.full((3, 4), rank + 1.0, np.float32), cpu),
             dlarray.array(np.full(5, 2.0 * rank), cpu, dtype="float64")]
    dist.all_reduce_coalesced(grads, op="mean")
    coalesced = [g.asnumpy().ravel()[0].item() for g in grads]
    dist.barrier()
    return failures, checked, errors, coalesced


def fast_path_errors():
    """all_reduce's C++ fast path (no DLARRAY_DIST_DEBUG): what it hands to the general path
    raises the general path's errors, the group stays usable, and odd ops still reduce."""
    rank, cpu = dist.get_rank(), dlarray.cpu()
    errors = {}

    def attempt(name, *args, **kwargs):
        try:
            dist.all_reduce(*args, **kwargs)
            errors[name] = "no error"
        except (TypeError, ValueError, RuntimeError) as e:
            errors[name] = "%s: %s" % (type(e).__name__, e)

    source = np.ones(4, np.float32)
    source.flags.writeable = False
    readonly = dlarray.asarray(source, cpu)  # shares the read-only NumPy memory
    attempt("read-only", readonly)
    attempt("numpy array", np.ones(4, np.float32))
    attempt("unknown op", dlarray.array(np.ones(4, np.float32), cpu), op="median")
    attempt("op None", dlarray.array(np.ones(4, np.float32), cpu), op=None)
    attempt("op list", dlarray.array(np.ones(4, np.float32), cpu), op=["sum"])
    attempt("strided view", dlarray.array(np.ones(8, np.float32), cpu)[::2])
    attempt("not constructed", dlarray.NDArray.__new__(dlarray.NDArray))

    class Name(str):
        pass

    results = {}
    x = dlarray.array(np.array([1.0, rank + 2.0], np.float64), cpu)
    dist.all_reduce(x, op=Name("max"))  # a str subclass takes the general path
    results["str subclass max"] = x.asnumpy().tolist()
    y = dlarray.array(np.full(3, rank + 1), cpu, dtype="int32")
    dist.all_reduce(y, "avg")  # positional op, the alias of mean
    results["avg"] = y.asnumpy().tolist()
    z = dlarray.array(np.full(5, 1.5, np.float32), cpu)
    assert dist.all_reduce(z) is z
    results["after errors"] = z.asnumpy().tolist()
    fast = dist._group_state.fast_all_reduce is not None
    dist.destroy_process_group()
    attempt("after destroy", z)
    return errors, results, fast


def train_mnist(distributed, epochs=2, batch=100):
    """examples/mnist.py's data-parallel training (its Trainer and EpochBatches) on the CPU:
    returns (losses, test accuracy, parameter checksum)."""
    import importlib.util
    path = os.path.join(os.path.dirname(HERE), os.pardir, "examples", "mnist.py")
    spec = importlib.util.spec_from_file_location("mnist_example", os.path.abspath(path))
    mnist = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mnist)
    rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
    train_x, train_y, test_x, test_y = mnist.load_data(mnist.DEFAULT_DATA)
    trainer = mnist.Trainer("mlp", dlarray.cpu(), mnist.DEFAULT_LR["mlp"], 0,
                            dist=dist if distributed else None)
    batches = mnist.EpochBatches(trainer, train_x, train_y, batch, rank, world)
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(epochs):
        for images, labels in batches(rng.permutation(len(train_x))):
            trainer.step(images, labels)
        losses.append(trainer.mean_loss(reset=True))
    test_images = trainer.to_device(test_x)
    return losses, trainer.accuracy(test_images, test_y), trainer.checksum()


def main():
    # Both ranks share the one OpenCL device here (LOCAL_RANK would pick opencl(1)).
    opencl = os.environ.get("DLARRAY_DIST_DEVICE") == "opencl"
    dist.init_process_group(device=dlarray.opencl(0) if opencl else None)
    device = repr(dist.get_device())
    if SCENARIO == "collectives":
        failures, checked, errors, coalesced = collectives()
        report(failures=failures, checked=checked, errors=errors, coalesced=coalesced,
               device=device, library=list(dist.mpi_library()),
               fast=dist._group_state.fast_all_reduce is not None)
    elif SCENARIO == "mismatch":  # DLARRAY_DIST_DEBUG=1: different dtypes on the two ranks
        rank = dist.get_rank()
        x = dlarray.array(np.ones(4), dlarray.cpu(), dtype="float32" if rank == 0 else "float64")
        try:
            dist.all_reduce(x)
            error = None
        except ValueError as e:
            error = str(e)
        y = dlarray.array(np.ones(3, np.float32), dlarray.cpu())
        dist.all_reduce(y)  # the group still works
        report(error=error, after=y.asnumpy().tolist())
    elif SCENARIO == "dies":  # rank 1 dies while rank 0 waits in an all-reduce
        x = dlarray.array(np.ones(1 << 16, np.float32), dlarray.cpu())
        dist.all_reduce(x)
        if dist.get_rank() == 1:
            time.sleep(0.5)
            os._exit(7)
        report(started=time.time())
        dist.all_reduce(x)
        report(error="the all-reduce returned")
    elif SCENARIO == "opencl":  # DLARRAY_DIST_DEVICE=opencl: staged through host arrays
        rank, ctx = dist.get_rank(), dist.get_device()
        failures = []
        for dtype in ("float32", "int32"):
            mine, other = data(dtype, (4, 3), rank), data(dtype, (4, 3), 1 - rank)
            a0, a1 = (mine, other) if rank == 0 else (other, mine)
            x = dlarray.array(mine, ctx, dtype=dtype)
            dist.all_reduce(x, op="max")
            b = dlarray.array(mine, ctx, dtype=dtype)
            dist.broadcast(b, src=0)
            g = dist.all_gather(dlarray.array(mine, ctx, dtype=dtype))
            r = dist.reduce_scatter(dlarray.array(mine, ctx, dtype=dtype))
            checks = [(x, np.maximum(a0, a1)), (b, a0), (g, np.concatenate([a0, a1])),
                      (r, (a0 + a1)[2 * rank:2 * rank + 2])]
            for i, (got, want) in enumerate(checks):
                if got.ctx != ctx or not np.array_equal(got.asnumpy(), want):
                    failures.append("%s check %d" % (dtype, i))
        dist.barrier()
        report(failures=failures, device=repr(ctx))
    elif SCENARIO == "skips":  # rank 1 never joins the all-reduce: the timeout ends rank 0
        x = dlarray.array(np.ones(8), dlarray.cpu())
        if dist.get_rank() == 1:
            time.sleep(60)
        dist.all_reduce(x)
        report(error="the all-reduce returned")
    elif SCENARIO == "fast":
        rank = dist.get_rank()
        errors, results, fast = fast_path_errors()  # ends with destroy_process_group
        report(errors=errors, results=results, fast=fast, rank=rank)
        return
    elif SCENARIO == "mnist":
        losses, accuracy, checksum = train_mnist(True)
        report(losses=[float(v) for v in losses], accuracy=accuracy, checksum=checksum)
    else:
        raise SystemExit("unknown scenario " + SCENARIO)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
