#!/usr/bin/env python3
"""MLP training with dlarray.autodiff against its peers, measured in the same process.

1. One training step of the MNIST MLP (784-256-100-10, ReLU, batch 1000: forward, backward
   and the SGD update) with our executor on --device, against PyTorch eager (nn.Sequential,
   cross_entropy, backward, optim.SGD) for the same model on the same device. Target: our
   step <= 0.5x PyTorch's on the GPU. The torch side is skipped, with a note, when torch is
   not installed.
2. One epoch of examples/mnist.py's MLP training on data/mnist10k.npz (8,000 images, batch
   100) with the executor on cpu(0), against the same executor with ctx=None (NumPy).
   Target: <= 0.5x.

Each time is the median over --repeats; a step is timed over --inner steps and a device sync.

    python bench/mlp_step.py --device gpu [--json [FILE]]

--json alone prints the results as JSON only; --json FILE also writes them, with the machine,
to FILE (docs/benchmarks/ keeps such files; the docs render them as tables).
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

import dlarray

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


def dlarray_step(ctx, repeats, inner):
    """Seconds per step of our executor, and the allocations made while timing (want 0)."""
    trainer = mnist.Trainer("mlp", ctx, LR, seed=0)
    images, labels = step_batch()
    x, y = trainer.to_device(images), trainer.to_device(mnist.one_hot(labels))
    trainer.step(x, y)  # makes the plan
    before = dlarray.memory_stats(ctx)["num_allocations"]
    seconds = median_seconds(lambda: trainer.step(x, y), lambda: dlarray.synchronize(ctx),
                             repeats, inner)
    return seconds, dlarray.memory_stats(ctx)["num_allocations"] - before


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
    return median_seconds(step, sync, repeats, inner)


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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "gpu"], default=mnist.default_device())
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--inner", type=int, default=10, help="steps per timed sample")
    parser.add_argument("--epoch-repeats", type=int, default=3)
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
    try:
        theirs = torch_step(ctx, args.repeats, args.inner)
        result.update(torch_step_ms=theirs * 1e3, step_ratio=ours / theirs)
    except ImportError:
        result["torch_note"] = "torch is not installed: PyTorch side skipped"

    cpu_epoch = epoch_seconds(dlarray.cpu(0), args.epoch_repeats)
    numpy_epoch = epoch_seconds(None, args.epoch_repeats)
    result.update(epoch_cpu_s=cpu_epoch, epoch_numpy_s=numpy_epoch,
                  epoch_ratio=cpu_epoch / numpy_epoch)

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
    if "torch_step_ms" in result:
        print("  PyTorch eager:    %.3f ms median" % result["torch_step_ms"])
        print("  ratio dlarray / PyTorch: %.2f (target <= 0.5 on the GPU)" % result["step_ratio"])
    else:
        print("  " + result["torch_note"])
    print("MLP epoch on CPU (8,000 images, batch 100)")
    print("  executor on cpu(0):    %.3f s median" % cpu_epoch)
    print("  executor on NumPy:     %.3f s median" % numpy_epoch)
    print("  ratio cpu / NumPy: %.2f (target <= 0.5)" % result["epoch_ratio"])
    return result


if __name__ == "__main__":
    main()
