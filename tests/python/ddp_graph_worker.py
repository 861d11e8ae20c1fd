"""One rank of test_ddp_graph.py: the executor's data-parallel plans cut into CUDA graph segments.

    python ddp_graph_worker.py segments OUT_DIR     (one CPU rank: the plans' segment lists)
    python ddp_graph_worker.py fused_steps OUT_DIR  (one CPU rank: the steps in the buckets)
    python -m dlarray.distributed.run --nproc-per-node N ddp_graph_worker.py train OUT_DIR STEPS

``segments`` describes, for a few models and bucket sizes, how the plan's calls split into
recorded segments and eager calls (dlarray.autodiff._cuda_graph.split) and which buckets' arrays
each call touches; the test checks the rules. ``train`` runs STEPS data-parallel SGD steps on
this rank's GPU (graph replays, with an eager all-reduce of the loss every CHECK_EVERY steps and
an all_gather of a parameter checksum every SYNC_EVERY), and the same steps of one executor on
the whole global batch, for each bucket configuration; writes ``<out>/rank<R>.json``. A hang
dumps every thread's stack (faulthandler, re-armed at every progress line) and exits.
"""
import faulthandler
import json
import os
import sys
import time

import numpy as np

import dlarray
import dlarray.distributed as dist
from dlarray import autodiff as ad
from dlarray.autodiff import _cuda_graph

LAYERS = (784, 256, 100, 10)  # examples/mnist.py's MLP
# Inputs centred and small, a modest step: training that float32 rounding does not throw onto
# another path over a thousand steps (uniform [0, 1) pixels at 0.05 did, after ~150 steps).
ROWS, BATCHES, LR, SCALE = 64, 8, 0.05, 0.3  # rows per rank, distinct batches cycled, SGD step
CHECK_EVERY, SYNC_EVERY, LOG_EVERY = 5, 50, 100
HANG_S = float(os.environ.get("DDP_GRAPH_HANG_S", "60"))  # no progress for this long: dump


def log(text):
    print("[rank %d %s] %s" % (dist.get_rank(), time.strftime("%H:%M:%S"), text), flush=True)
    faulthandler.dump_traceback_later(HANG_S, exit=True)  # re-armed: a hang from here on dumps


def model(layers=LAYERS):
    """An MLP (relu between layers, softmax cross-entropy): x, y_, params, loss, grads."""
    x, y_ = ad.Variable("x"), ad.Variable("y_")
    h, params = x, []
    for i in range(1, len(layers)):
        w, b = ad.Variable("W%d" % i), ad.Variable("b%d" % i)
        z = ad.matmul_op(h, w)
        h = z + ad.broadcastto_op(b, z)
        if i < len(layers) - 1:
            h = ad.relu_op(h)
        params += [w, b]
    loss = ad.softmaxcrossentropy_op(h, y_)
    return x, y_, params, loss, ad.gradients(loss, params)


def init_weights(layers=LAYERS, seed=3):
    rng = np.random.default_rng(seed)
    out = []
    for n_in, n_out in zip(layers, layers[1:]):
        out += [(rng.standard_normal((n_in, n_out)) * np.sqrt(2.0 / n_in)).astype(np.float32),
                np.zeros(n_out, np.float32)]
    return out


# -- segments (no GPU) ---------------------------------------------------------------------------

def describe(plan):
    """The plan's steps as [recorded, [label per call]] and, per call, the buckets whose arrays
    it reads or writes."""
    buckets = plan.buckets
    owner = {id(a): b for b, members in enumerate(buckets.buckets) for a in members}
    updates = {id(fn) for fn, _args in plan.calls[-len(plan.updates):]} if plan.updates else set()
    steps = []
    for recorded, calls in _cuda_graph.split(plan.calls, plan.eager):
        labels = []
        for fn, args in calls:
            if fn == buckets.start:
                labels.append(["start", args[0], []])
            elif fn == buckets.wait:
                labels.append(["wait", None, []])
            elif fn == buckets.finish:  # the others' wait, then the last bucket, on the stream
                labels.append(["finish", args[0], []])
            else:
                touched = sorted({owner[id(a)] for a in args if id(a) in owner})
                labels.append(["update" if id(fn) in updates else "op", None, touched])
        steps.append([recorded, labels])
    return {"steps": steps, "buckets": len(buckets), "calls": len(plan.calls)}


def segments(out):
    dist.init_process_group(rank=0, world_size=1, device=dlarray.cpu(0))
    cases = {}
    for name, layers in (("mnist", LAYERS), ("small", (7, 5, 3)), ("unfused", LAYERS)):
        for bucket_mb in (1e-6, 0.5, 25.0):
            for update in (False, True):
                x, y_, params, loss, grads = model(layers)
                nodes = [loss] + grads + ([ad.sgd_update_op(params, grads, LR)] if update else [])
                executor = ad.Executor(nodes, dist.get_device(), data_parallel=grads,
                                       bucket_mb=bucket_mb, fuse=name != "unfused")
                weights = [dlarray.array(w, dist.get_device()) for w in init_weights(layers)]
                feed = dict(zip(params, weights))
                feed[x] = np.ones((4, layers[0]), np.float32)
                feed[y_] = np.eye(layers[-1], dtype=np.float32)[[0, 1, 0, 1]]
                executor.run(feed)
                plan = next(iter(executor._plans.values()))
                cases["%s %g %s" % (name, bucket_mb, update)] = describe(plan)
    with open(os.path.join(out, "segments.json"), "w") as f:
        json.dump(cases, f)
    dist.destroy_process_group()


# -- fused_steps (no GPU) ------------------------------------------------------------------------

class FakePeerComm:
    """The communicator as a data-parallel plan sees it where every bucket goes to the peer
    kernel, on one CPU rank: the mean over one rank is the array itself, and all_reduce_sgd then
    steps the parameters as the kernel does (p + g * scale, the product and the sum each rounded
    in the dtype). Everything else goes to the real (MPI) communicator."""

    def __init__(self, real):
        self.real, self.calls = real, []

    def __getattr__(self, name):
        return getattr(self.real, name)

    sgd = True  # False: a CUDA plugin from before all_reduce_sgd

    def has_all_reduce_sgd(self):
        return self.sgd

    def set_stream(self, side):
        self.calls.append("set_stream %d" % side)

    def all_reduce_group(self, arrays, code):
        self.calls.append("group")

    def all_reduce_sgd(self, arrays, params, scale):
        self.calls.append("sgd %d" % sum(p is not None for p in params))
        for g, p in zip(arrays, params):
            if p is not None:
                dtype = np.dtype(str(p.dtype))
                p[:] = p.asnumpy() + g.asnumpy() * dtype.type(scale)


def fused_steps(out, steps=4):
    """The plan of a data-parallel executor with an sgd_update_op when its buckets' kernels make
    the steps (GradientBuckets.recordable and all_reduce_sgd faked on one CPU rank): no update
    call left, no op after a bucket's start reading its parameters, and training equal, bit for
    bit, to one executor with the update op."""
    from dlarray.distributed import _buckets
    dist.init_process_group(rank=0, world_size=1, device=dlarray.cpu(0))
    group, cpu = dist._require(), dlarray.cpu(0)
    real, backend = group.comm, group.backend
    recordable = _buckets.GradientBuckets.recordable
    cases = {}
    try:
        group.comm, group.backend = FakePeerComm(real), "nccl"
        _buckets.GradientBuckets.recordable = lambda self: True
        batches = data(1)
        for key, bucket_mb in (("1e-06", 1e-6), ("0.5", 0.5), ("25.0", 25.0),
                               ("reader", 1e-6), ("older plugin", 0.5)):
            group.comm.sgd = key != "older plugin"
            runs = []
            for dp in (False, True):
                x, y_, params, loss, grads = model()
                extra = []
                if key == "reader":  # reads W1 after its gradient (and b1's) is computed
                    extra = [ad.mul_op(params[0], ad.broadcastto_op(grads[1], params[0]))]
                nodes = [loss] + grads + extra + [ad.sgd_update_op(params, grads, LR)]
                executor = ad.Executor(nodes, cpu, data_parallel=grads if dp else None,
                                       bucket_mb=bucket_mb)
                weights = [dlarray.array(w, cpu) for w in init_weights()]
                feed = dict(zip(params, weights))
                losses = []
                for i in range(steps):
                    feed[x], feed[y_] = batches[i % len(batches)]
                    values = executor.run(feed)
                    losses.append(float(values[0].asnumpy().reshape(-1)[0]))
                    if extra:
                        losses.append(float(values[1 + len(grads)].asnumpy().sum()))
                runs.append((losses, [w.asnumpy() for w in weights], executor, weights))
            (ref_losses, ref_weights, _, _), (losses, got, executor, weights) = runs
            plan = next(iter(executor._plans.values()))
            cases[key] = {
                "buckets": len(plan.buckets), "calls": group.comm.calls,
                "stats": {k: executor.graph_stats()[k] for k in ("updates_in_all_reduce",
                                                                 "multi_tensor_kernels")},
                "late_readers": late_readers(plan, weights),
                "losses_equal": losses == ref_losses,
                "weights_equal": all(np.array_equal(a, b) for a, b in zip(got, ref_weights))}
            group.comm.calls = []
    finally:
        group.comm, group.backend = real, backend
        _buckets.GradientBuckets.recordable = recordable
    with open(os.path.join(out, "fused_steps.json"), "w") as f:
        json.dump(cases, f)
    dist.destroy_process_group()


def late_readers(plan, weights):
    """Ops that read a parameter after the start of the bucket whose kernel steps it."""
    late = []
    for i, (fn, args) in enumerate(plan.calls):
        if getattr(fn, "__name__", "") not in ("start", "finish") or len(args) < 3:
            continue
        stepped = {id(p) for p in args[-2] if p is not None}
        for j, (fn2, args2) in enumerate(plan.calls[i + 1:], i + 1):
            if getattr(fn2, "__name__", "") in ("start", "finish", "wait"):
                continue
            if any(id(a) in stepped for a in args2):
                late.append("call %d reads a parameter bucket %d steps at call %d"
                            % (j, args[0], i))
    assert len({id(w) for w in weights}) == len(weights)
    return late


# -- train (GPUs) --------------------------------------------------------------------------------

def data(world):
    """BATCHES global batches (images, one-hot labels of a random teacher) as NumPy arrays."""
    rng = np.random.default_rng(11)
    teacher = rng.standard_normal((LAYERS[0], LAYERS[-1])).astype(np.float32)
    out = []
    for _ in range(BATCHES):
        images = (rng.random((ROWS * world, LAYERS[0]), dtype=np.float32) - 0.5) * SCALE
        out.append((images, np.eye(LAYERS[-1], dtype=np.float32)[np.argmax(images @ teacher, 1)]))
    return out


class Run:
    """SGD on this rank's GPU: data-parallel (bucket_mb given) on this rank's rows, or one
    executor on the whole global batch (the reference). ``update_node``: the executor's
    sgd_update_op (the last segment, after the buckets' wait); else two ops per weight after
    each run, outside the executor."""

    def __init__(self, batches, rows, bucket_mb, update_node, graphs=True):
        self.ctx = dist.get_device()
        x, y_, params, loss, grads = model()
        self.update_node = update_node
        nodes = [loss] + grads + ([ad.sgd_update_op(params, grads, LR)] if update_node else [])
        # graphs=False: op by op and unfused (the update: two ops per weight)
        self.executor = ad.Executor(nodes, self.ctx, data_parallel=grads if bucket_mb else None,
                                    bucket_mb=bucket_mb or 25.0, cuda_graph=graphs,
                                    fuse=graphs)
        self.weights = [dlarray.array(w, self.ctx) for w in init_weights()]
        self.feed = dict(zip(params, self.weights))
        self.x, self.y_ = x, y_
        # NDArrays, another object each step: copied into the graph's buffers before segment 1
        self.batches = [(dlarray.array(i[rows], self.ctx), dlarray.array(l[rows], self.ctx))
                        for i, l in batches]

    def step(self, i):
        self.feed[self.x], self.feed[self.y_] = self.batches[i % len(self.batches)]
        loss, *grads = self.executor.run(self.feed)
        if not self.update_node:
            for w, g in zip(self.weights, grads):
                dlarray.ops.matrix_elementwise_multiply_by_const(g, -LR, g)
                dlarray.ops.matrix_elementwise_add(w, g, w)
        return loss

    def checksum(self):
        return float(sum(np.abs(w.asnumpy()).sum(dtype=np.float64) for w in self.weights))


def train_case(batches, steps, bucket_mb, update_node, graphs):
    rank, world = dist.get_rank(), dist.get_world_size()
    label = "bucket_mb=%g update_node=%s graphs=%s" % (bucket_mb, update_node, graphs)
    log("%s: reference (one executor, global batch of %d rows)" % (label, ROWS * world))
    ref = Run(batches, slice(None), None, update_node, graphs)
    ref_losses = []
    for i in range(steps):
        loss = ref.step(i)
        if i % CHECK_EVERY == 0:
            ref_losses.append(float(loss.asnumpy().reshape(-1)[0]))
    log("%s: data-parallel, %d rows a rank, %d steps" % (label, ROWS, steps))
    run = Run(batches, slice(rank * ROWS, (rank + 1) * ROWS), bucket_mb, update_node, graphs)
    losses, syncs = [], 0
    start = time.perf_counter()
    for i in range(steps):
        loss = run.step(i)
        if i % CHECK_EVERY == 0:  # an eager collective between two replays
            mean = loss.copyto(run.ctx)
            dist.all_reduce(mean, op="mean")
            losses.append(float(mean.asnumpy().reshape(-1)[0]))
        if i % SYNC_EVERY == 0:
            mine = dlarray.array(np.array([run.checksum()]), run.ctx, dtype=np.float64)
            every = dist.all_gather(mine).asnumpy().tolist()
            if len(set(every)) != 1:
                raise RuntimeError("%s: parameters differ across ranks after step %d: %s"
                                   % (label, i, every))
            syncs += 1
        if (i + 1) % LOG_EVERY == 0:
            log("%s: step %d, loss %.5f" % (label, i + 1, losses[-1]))
    dlarray.synchronize(run.ctx)
    seconds = time.perf_counter() - start
    stats = run.executor.graph_stats()
    errors = [abs(a - b) / max(abs(b), 0.1) for a, b in zip(losses, ref_losses)]
    weight_error = max(float(np.max(np.abs(a.asnumpy() - b.asnumpy())))
                       for a, b in zip(run.weights, ref.weights))
    log("%s: done in %.2f s, max loss error %.2e (relative), weight error %.2e, %s" % (
        label, seconds, max(errors), weight_error,
        {k: stats[k] for k in ("captures", "replays", "eager_runs", "segments", "notes")}))
    plan = next(iter(run.executor._plans.values()))
    return {"graph": {k: stats[k] for k in ("captures", "replays", "eager_runs", "segments",
                                            "notes", "updates_in_all_reduce")},
            "expected_segments": sum(1 for recorded, _c in _cuda_graph.split(plan.calls,
                                                                             plan.eager)
                                     if recorded),
            "buckets": len(plan.buckets), "recordable": plan.buckets.recordable(),
            "graphs": graphs, "loss_error": max(errors),
            "weight_error": weight_error, "syncs": syncs, "losses": losses[::20],
            "first_loss": losses[0], "last_loss": losses[-1], "seconds": seconds}


def train(out, steps):
    faulthandler.enable()
    dist.init_process_group()
    log("group of %d on %s" % (dist.get_world_size(), dist.get_device()))
    batches = data(dist.get_world_size())
    cases = {}
    for bucket_mb, update_node, graphs in ((25.0, True, True), (0.5, True, True),
                                           (1e-6, False, True), (0.5, True, False)):
        key = "%g %s %s" % (bucket_mb, update_node, graphs)
        cases[key] = train_case(batches, steps // (1 if graphs else 4), bucket_mb, update_node,
                                graphs)
    with open(os.path.join(out, "rank%d.json" % dist.get_rank()), "w") as f:
        json.dump({"cases": cases, "world": dist.get_world_size()}, f)
    log("destroying the group")
    dist.destroy_process_group()
    faulthandler.cancel_dump_traceback_later()


if __name__ == "__main__":
    if sys.argv[1] == "segments":
        segments(sys.argv[2])
    elif sys.argv[1] == "fused_steps":
        fused_steps(sys.argv[2])
    else:
        train(sys.argv[2], int(sys.argv[3]))
