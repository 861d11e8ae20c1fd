#!/usr/bin/env python3
"""MLP training with dlarray.autodiff against its peers, measured in the same process.

1. One training step of the MNIST MLP (784-256-100-10, ReLU, batch 1000: forward, backward
   and the SGD update) with our executor on --device, against PyTorch eager (nn.Sequential,
   cross_entropy, backward, optim.SGD) for the same model on the same device. Target: our
   step <= 0.5x PyTorch's on the GPU. Our executor's run does the SGD update too (an
   ad.sgd_update_op node: one multi-tensor kernel). On a GPU our step replays the executor's
   CUDA graph (the update included); it is also timed without them, next to PyTorch with the whole step
   captured by torch.cuda.graphs (target: ours <= 0.1 ms and <= 1.0x), and next to the sum of
   its kernels' own times (target: <= 1.3x). The torch side is skipped, with a note, when torch
   is not installed.
2. One epoch of examples/mnist.py's MLP training on data/mnist10k.npz (8,000 images, batch
   100) with the executor on cpu(0), against the same executor with ctx=None (NumPy).
   Target: <= 0.5x.
3. The same epochs while another process keeps one core busy (a spinning Python child), for
   ours and NumPy's: threads must share the machine. Target: ours <= 1.5x our idle epoch.
   --no-busy skips it.

On a GPU the step is also timed without the dense layers' fused products (the executor's
cuBLASLt products with their bias, relu and bias-gradient epilogues), between two runs with them,
and the CUDA plugin's choice for each product is printed: fused (which of cuBLASLt's algorithms)
or its unfused kernels, with the times that decided it (DLARRAY_CUBLASLT_TUNE=0: cuBLASLt's first
heuristic result, untimed). --step-only skips the CPU epochs (2 and 3).

Each time is the median over --repeats; a step is timed over --inner steps and a device sync.

    python bench/mlp_step.py --device gpu [--step-only] [--json [FILE]]

--json alone prints the results as JSON only; --json FILE also writes them, with the machine,
to FILE (docs/benchmarks/ keeps such files; the docs render them as tables).
"""

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import dlarray
from dlarray import _linear_api

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                "examples"))
import mnist  # noqa: E402
from report import check_output_path, machine_info  # noqa: E402

STEP_BATCH = 1000
LR = 0.01


def median_seconds(fn, sync, repeats, inner, warmup=3):
    """Median over ``repeats`` of the time per call of ``inner`` calls to ``fn`` then ``sync``."""
    for _ in range(warmup):
        fn()
    sync()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples)


def step_batch(seed=0):
    rng = np.random.default_rng(seed)
    images = rng.random((STEP_BATCH, 784), dtype=np.float32)
    return images, rng.integers(0, 10, STEP_BATCH)


def make_trainer(ctx, cuda_graph=True):
    trainer = mnist.Trainer("mlp", ctx, LR, seed=0)
    trainer.train_executor.cuda_graph = cuda_graph  # read when the plan is made
    images, labels = step_batch()
    x, y = trainer.to_device(images), trainer.to_device(mnist.one_hot(labels))
    for _ in range(3):  # plan, then (on a GPU) the recording of the step (update included)
        trainer.step(x, y)
    return trainer, x, y


@contextlib.contextmanager
def fused_products(on):
    """The executor's fused dense-layer products (cuBLASLt epilogues on CUDA) on or off while
    plans are made (on: where the device has the native ops, the default)."""
    from dlarray.autodiff import _fusion_products
    saved = _fusion_products.FORCE
    _fusion_products.FORCE = None if on else False
    try:
        yield
    finally:
        _fusion_products.FORCE = saved


def dlarray_step(ctx, repeats, inner, cuda_graph=True, products=True):
    """Seconds per step of our executor, and the allocations made while timing (want 0)."""
    with fused_products(products):
        trainer, x, y = make_trainer(ctx, cuda_graph)
    before = dlarray.memory_stats(ctx)["num_allocations"]
    seconds = median_seconds(lambda: trainer.step(x, y), lambda: dlarray.synchronize(ctx),
                             repeats, inner)
    return seconds, dlarray.memory_stats(ctx)["num_allocations"] - before


def kernel_floor_seconds(ctx, reps=50):
    """The sum of the step's kernels' own times: each op call of the step (the plan's, its
    SGD update included, and the loss sum) recorded reps times in a CUDA graph of its own,
    timed with CUDA events on our stream, divided by reps (no launch gaps). The floor a
    replayed step can approach. Returns (seconds, calls, [(call, microseconds) of each])."""
    import torch
    from dlarray import autodiff as ad

    trainer, x, y = make_trainer(ctx, cuda_graph=False)
    plan = next(iter(trainer.train_executor._plans.values()))
    loss = trainer.train_executor.run({**trainer.feed, trainer.x: x, trainer.y_: y})[0]
    ops = dlarray.ops
    calls = list(plan.calls)  # the SGD update of every weight is the last: one kernel
    calls.append((ops.matrix_elementwise_add, [trainer.loss_sum, loss, trainer.loss_sum]))
    stream = torch.cuda.ExternalStream(dlarray._core.stream_handle(ctx))
    total, each = 0.0, []
    for fn, args in calls:
        fn(*args)
        graph = ad.record_cuda_graph(lambda: [fn(*args) for _ in range(reps)], ctx)
        graph.launch()
        samples = []
        for _ in range(5):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record(stream)
            graph.launch()
            end.record(stream)
            end.synchronize()
            samples.append(start.elapsed_time(end) / 1e3 / reps)
        total += statistics.median(samples)
        each.append((_call_text(fn, args), statistics.median(samples) * 1e6))
    return total, len(calls), each


def _call_text(fn, args):
    """A plan call as "name(shapes of its arrays)"."""
    name = getattr(fn, "__name__", type(fn).__name__)
    if name == "run":  # a fused product's runner (autodiff/_fusion_products.py)
        name = "fused product"
    shapes = ["x".join(map(str, a.shape)) or "()" for a in args if hasattr(a, "shape")]
    return "%s(%s)" % (name, ", ".join(shapes))


def torch_step(ctx, repeats, inner):
    """Seconds per step of the same model in PyTorch eager on the same device."""
    import torch

    device = torch.device("cuda" if dlarray.is_gpu_ctx(ctx) else "cpu")
    layers = mnist.LAYERS["mlp"]
    model = torch.nn.Sequential(torch.nn.Linear(layers[0], layers[1]), torch.nn.ReLU(),
                                torch.nn.Linear(layers[1], layers[2]), torch.nn.ReLU(),
                                torch.nn.Linear(layers[2], layers[3])).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    images, labels = step_batch()
    x = torch.from_numpy(images).to(device)
    y = torch.from_numpy(labels).to(device)
    loss_sum = torch.zeros((), device=device)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        loss_sum.add_(loss.detach())  # as the trainer sums its loss on the device

    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    eager = median_seconds(step, sync, repeats, inner)
    if device.type != "cuda":
        return eager, None
    # The same step captured whole with torch.cuda.graphs (forward, backward, SGD), replayed.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        loss_sum.add_(loss.detach())
    return eager, median_seconds(graph.replay, sync, repeats, inner)


def epoch_seconds(ctx, repeats):
    """Median seconds of an MLP epoch on mnist10k (batch 100) with the executor on ``ctx``."""
    train_x, train_y, _, _ = mnist.load_data(mnist.DEFAULT_DATA)
    trainer = mnist.Trainer("mlp", ctx, mnist.DEFAULT_LR["mlp"], seed=0)
    batches = mnist.EpochBatches(trainer, train_x, train_y, 100)
    rng = np.random.default_rng(0)
    samples = []
    for i in range(repeats + 1):  # the first epoch warms up (plans, uploads)
        epoch = batches(rng.permutation(len(train_x)))
        start = time.perf_counter()
        for images, labels in epoch:
            trainer.step(images, labels)
        trainer.mean_loss(reset=True)
        if i:
            samples.append(time.perf_counter() - start)
    return statistics.median(samples)


@contextlib.contextmanager
def busy_core():
    """Another process that keeps one core busy while the block runs."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)  # let it start spinning
        yield
    finally:
        spinner.kill()
        spinner.wait()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "gpu"], default=mnist.default_device())
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--inner", type=int, default=10, help="steps per timed sample")
    parser.add_argument("--epoch-repeats", type=int, default=3)
    parser.add_argument("--no-busy", action="store_true",
                        help="skip the epochs with one core kept busy by another process")
    parser.add_argument("--step-only", action="store_true",
                        help="time the step only (skip the CPU epochs)")
    parser.add_argument("--json", nargs="?", const="-", metavar="FILE",
                        help="without FILE: print the results as JSON only; with FILE: also "
                        "write them, with the machine, to FILE")
    args = parser.parse_args(argv)
    if args.json not in (None, "-"):
        check_output_path(parser, "--json", args.json)
    ctx = mnist.device_context(args.device)
    machine = machine_info()
    result = {"benchmark": "mlp_step", "device": repr(ctx), "batch": STEP_BATCH,
              "model": "784-256-100-10"}

    ours, allocations = dlarray_step(ctx, args.repeats, args.inner)
    result.update(step_ms=ours * 1e3, step_allocations=allocations)
    gpu = dlarray.is_gpu_ctx(ctx)
    if gpu:
        eager, _ = dlarray_step(ctx, args.repeats, args.inner, cuda_graph=False)
        result.update(step_no_graph_ms=eager * 1e3)
        # the same step without the dense layers' fused products, then with them again:
        # alternated, so that a drift of the machine shows
        unfused, _ = dlarray_step(ctx, args.repeats, args.inner, products=False)
        again, _ = dlarray_step(ctx, args.repeats, args.inner)
        trainer = make_trainer(ctx)[0]
        result.update(step_no_products_ms=unfused * 1e3, step_again_ms=again * 1e3,
                      products=trainer.train_executor.graph_stats()["products"],
                      cublaslt_choices=_linear_api.native_choices(ctx))
    try:
        theirs, theirs_graph = torch_step(ctx, args.repeats, args.inner)
        result.update(torch_step_ms=theirs * 1e3, step_ratio=ours / theirs)
        if theirs_graph is not None:
            result.update(torch_graph_step_ms=theirs_graph * 1e3,
                          graph_ratio=ours / theirs_graph)
        if gpu:
            floor, kernels, each = kernel_floor_seconds(ctx)
            result.update(kernel_floor_ms=floor * 1e3, kernels=kernels,
                          floor_ratio=ours / floor, kernel_us=each)
    except ImportError:
        result["torch_note"] = "torch is not installed: PyTorch side skipped"

    if args.step_only:
        return report(args, result, machine, allocations)
    cpu_epoch = epoch_seconds(dlarray.cpu(0), args.epoch_repeats)
    numpy_epoch = epoch_seconds(None, args.epoch_repeats)
    result.update(epoch_cpu_s=cpu_epoch, epoch_numpy_s=numpy_epoch,
                  epoch_ratio=cpu_epoch / numpy_epoch)
    if not args.no_busy:
        with busy_core():
            busy_cpu = epoch_seconds(dlarray.cpu(0), args.epoch_repeats)
            busy_numpy = epoch_seconds(None, args.epoch_repeats)
        result.update(busy_epoch_cpu_s=busy_cpu, busy_epoch_numpy_s=busy_numpy,
                      busy_slowdown=busy_cpu / cpu_epoch)

    return report(args, result, machine, allocations)


def report(args, result, machine, allocations):
    """Prints ``result`` (or writes it as JSON, as --json asks) and returns it."""
    if "torch" in sys.modules:
        machine["versions"]["torch"] = sys.modules["torch"].__version__
    result["settings"] = {"repeats": args.repeats, "inner": args.inner,
                          "epoch_repeats": args.epoch_repeats}
    result["machine"] = machine
    if args.json == "-":
        print(json.dumps(result, indent=2))
        return result
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    print("MLP step (784-256-100-10, batch %d) on %s" % (STEP_BATCH, result["device"]))
    print("  dlarray executor: %.3f ms median (%d allocations while timing)"
          % (result["step_ms"], allocations))
    if "step_no_graph_ms" in result:
        print("  dlarray, no CUDA graph (cuda_graph=False): %.3f ms median"
              % result["step_no_graph_ms"])
    if "step_no_products_ms" in result:
        print("  dlarray without the fused products (cuBLASLt epilogues): %.3f ms median; with "
              "them again: %.3f ms" % (result["step_no_products_ms"], result["step_again_ms"]))
        print("  products: " + "; ".join(result["products"]))
        print("  how the CUDA plugin runs each product (DLARRAY_CUBLASLT_TUNE=%s):"
              % os.environ.get("DLARRAY_CUBLASLT_TUNE", "1"))
        for line in result["cublaslt_choices"]:
            print("    " + line)
    if "torch_step_ms" in result:
        print("  PyTorch eager:    %.3f ms median" % result["torch_step_ms"])
        print("  ratio dlarray / PyTorch: %.2f (target <= 0.5 on the GPU)" % result["step_ratio"])
    if "torch_graph_step_ms" in result:
        print("  PyTorch, whole step in torch.cuda.graphs: %.3f ms median"
              % result["torch_graph_step_ms"])
        print("  ratio dlarray / PyTorch graphed: %.2f (target <= 1.0; our step <= 0.1 ms)"
              % result["graph_ratio"])
    if "kernel_floor_ms" in result:
        print("  sum of the step's %d kernels' own times: %.3f ms; ratio step / floor: %.2f "
              "(target <= 1.3)" % (result["kernels"], result["kernel_floor_ms"],
                                   result["floor_ratio"]))
        print("  the step's calls, slowest first (us, each recorded alone):")
        for text, us in sorted(result["kernel_us"], key=lambda c: -c[1]):
            print("    %7.2f  %s" % (us, text))
    if "torch_note" in result:
        print("  " + result["torch_note"])
    if "epoch_cpu_s" in result:
        print("MLP epoch on CPU (8,000 images, batch 100)")
        print("  executor on cpu(0):    %.3f s median" % result["epoch_cpu_s"])
        print("  executor on NumPy:     %.3f s median" % result["epoch_numpy_s"])
        print("  ratio cpu / NumPy: %.2f (target <= 0.5)" % result["epoch_ratio"])
    if "busy_epoch_cpu_s" in result:
        print("MLP epoch on CPU with one core kept busy by another process")
        print("  executor on cpu(0):    %.3f s median" % result["busy_epoch_cpu_s"])
        print("  executor on NumPy:     %.3f s median" % result["busy_epoch_numpy_s"])
        print("  slowdown cpu busy / idle: %.2f (target <= 1.5)" % result["busy_slowdown"])
    return result


if __name__ == "__main__":
    main()
