#!/usr/bin/env python3
"""dlarray.custom: the call overhead of an AOT custom op next to a built-in op's, and the custom
add at 8192x8192 on the GPU next to the built-in matrix_elementwise_add, measured in one process.

    python bench/custom_ops.py                    # CPU overheads (and the GPU part when usable)
    python bench/custom_ops.py --device gpu       # the GPU part only
    python bench/custom_ops.py --torch-extension  # also a PyTorch C++ extension's call (builds it)

Overhead: seconds per call on 1-element arrays (Python + binding + kernel; on the GPU the launch
too), the minimum over interleaved batches, so that both sides see the same machine load. The
custom add (examples/custom_ops/custom_add.cc / .cu) with out= is compared with the built-in
matrix_elementwise_add (and relu, the op bench/ops.py uses); its allocating form with
``dlarray.empty`` + the built-in op. Target: ratio <= 1.5. With PyTorch installed, ``torch.add(a,
b, out=c)`` is printed as the peer framework's own call, and with --torch-extension a C++
extension doing the same add (torch.utils.cpp_extension.load_inline).

Bandwidth (GPU): our grid-stride custom add (custom_add.cu) and the seed's naive kernel
(extracted from ../shared/seeds/002_*.txt and built with the seed's nvcc command, when present)
against matrix_elementwise_add, median of batches timed with a synchronize. Target: <= 1.05.
"""
import argparse
import json
import pathlib
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import dlarray
from dlarray.custom import Custom

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "custom_ops"
SEEDS = ROOT.parent / "shared" / "seeds"


def interleaved_min(fns, ctx, calls, rounds):
    """Seconds per call of each fn: the minimum over `rounds` batches of `calls`, interleaved."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            if ctx is not None:
                dlarray.synchronize(ctx)
            best[i] = min(best[i], (time.perf_counter() - t0) / calls)
    return best


def custom_add(ctx):
    source = "custom_add.cu" if dlarray.is_gpu_ctx(ctx) else "custom_add.cc"
    return Custom("%s:CustomAdd" % (EXAMPLES / source), lambda a, b: a, "float32")


def overhead_fns(ctx):
    """The timed calls on fresh arrays and a fresh op."""
    add = custom_add(ctx)
    a, b = dlarray.array([1.0], ctx), dlarray.array([2.0], ctx)
    c = dlarray.empty((1,), ctx)
    builtin, relu, empty = (dlarray.ops.matrix_elementwise_add, dlarray.ops.relu, dlarray.empty)
    add(a, b, out=c)
    assert c.asnumpy()[0] == 3.0
    return [lambda: builtin(a, b, c), lambda: add(a, b, out=c), lambda: relu(a, c),
            lambda: builtin(a, b, empty((1,), ctx)), lambda: add(a, b)]


def overheads(ctx, calls, rounds, copies=3):
    """Each call is timed on `copies` sets of objects (their minimum): one set can land on memory
    that makes every call of it slower for the whole process, built-in ops too."""
    names = ["built-in add(a, b, c)", "custom add(a, b, out=c)", "built-in relu(a, c)",
             "empty + built-in add", "custom add(a, b) (allocates)"]
    sets = [overhead_fns(ctx) for _ in range(copies)]
    flat = interleaved_min([fn for fns in sets for fn in fns], ctx, calls, rounds)
    times = [min(flat[k * len(names) + i] for k in range(copies)) for i in range(len(names))]
    rows = dict(zip(names, times))
    print("\ncall overhead on %r, 1-element arrays (min over %d interleaved batches of %d calls, "
          "%d sets of objects):" % (ctx, rounds, calls, copies))
    for name, t in rows.items():
        print("  %-30s %8.0f ns" % (name, t * 1e9))
    ratios = {"custom out= / built-in add": times[1] / times[0],
              "custom out= / built-in relu": times[1] / times[2],
              "custom allocating / (empty + built-in add)": times[4] / times[3]}
    for name, r in ratios.items():
        print("  ratio %-42s %5.2f   (target <= 1.5)" % (name, r))
    return {"device": repr(ctx), "ns": {k: v * 1e9 for k, v in rows.items()}, "ratios": ratios}


TORCH_EXT = """
#include <torch/extension.h>
void add_out(const torch::Tensor& a, const torch::Tensor& b, torch::Tensor& c) {
  auto pa = a.data_ptr<float>(); auto pb = b.data_ptr<float>(); auto pc = c.data_ptr<float>();
  for (int64_t i = 0; i < c.numel(); ++i) pc[i] = pa[i] + pb[i];
}
"""


def torch_overheads(calls, rounds, extension):
    try:
        import torch
    except ImportError:
        print("\nPyTorch is not installed: no peer framework call timed")
        return None
    a, b, c = torch.ones(1), torch.ones(1), torch.empty(1)
    names, fns = ["torch.add(a, b, out=c)"], [lambda: torch.add(a, b, out=c)]
    if extension:
        from torch.utils.cpp_extension import load_inline
        ext = load_inline("dlarray_bench_add", TORCH_EXT, functions=["add_out"], verbose=False)
        names.append("torch C++ extension add_out")
        fns.append(lambda: ext.add_out(a, b, c))
    ours = custom_add(dlarray.cpu(0))
    x, y, z = dlarray.array([1.0]), dlarray.array([1.0]), dlarray.empty((1,))
    names.append("dlarray custom add(out=)")
    fns.append(lambda: ours(x, y, out=z))
    times = interleaved_min(fns, None, calls, rounds)
    print("\nPyTorch %s on the CPU, 1-element tensors:" % torch.__version__)
    for name, t in zip(names, times):
        print("  %-30s %8.0f ns" % (name, t * 1e9))
    for name, t in zip(names[:-1], times[:-1]):
        print("  ratio dlarray custom / %-24s %5.2f" % (name, times[-1] / t))
    return {name: t * 1e9 for name, t in zip(names, times)}


def seed_library(folder):
    """The seed's custom_add.so built with the seed's nvcc command, or None (with the reason)."""
    seeds = sorted(SEEDS.glob("002_*.txt")) if SEEDS.is_dir() else []
    if not seeds:
        return None, "no ../shared/seeds/002_*.txt"
    sys.path.insert(0, str(ROOT / "tests" / "python"))
    from test_custom_seed import extract_custom_add  # the tests' extraction
    source, command = extract_custom_add(seeds[0].read_text(encoding="utf-8"))
    (folder / "custom_add.cu").write_text(source)
    proc = subprocess.run(shlex.split(command), cwd=folder, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, "the seed's command failed: " + proc.stderr.strip()
    return folder / "custom_add.so", None


def bandwidth(ctx, shape, rounds, inner):
    rng = np.random.default_rng(0)
    a_np, b_np = rng.standard_normal((2,) + shape).astype(np.float32)
    a, b, c = dlarray.array(a_np, ctx), dlarray.array(b_np, ctx), dlarray.empty(shape, ctx)
    ops = [("built-in matrix_elementwise_add", lambda: dlarray.ops.matrix_elementwise_add(a, b, c))]
    ours = custom_add(ctx)
    ops.append(("custom add (grid-stride, ours)", lambda: ours(a, b, out=c)))
    with tempfile.TemporaryDirectory() as tmp:
        seed, why = seed_library(pathlib.Path(tmp))
        if seed is not None:  # the seed's kernel reads shapes[2][0]: give it a 1-D view
            flat = [dlarray.array(a_np.ravel(), ctx), dlarray.array(b_np.ravel(), ctx),
                    dlarray.empty((a_np.size,), ctx)]
            naive = Custom("%s:CustomAdd" % seed, lambda x, y: x, "float32")
            ops.append(("seed's naive kernel", lambda: naive(flat[0], flat[1], out=flat[2])))
        for name, fn in ops:  # every kernel checked before it is timed
            fn()
            got = (flat[2] if name.startswith("seed") else c).asnumpy().reshape(shape)
            assert np.array_equal(got, a_np + b_np), name
        samples = {name: [] for name, _ in ops}
        for _ in range(rounds):
            for name, fn in ops:
                dlarray.synchronize(ctx)
                t0 = time.perf_counter()
                for _ in range(inner):
                    fn()
                dlarray.synchronize(ctx)
                samples[name].append((time.perf_counter() - t0) / inner)
    nbytes = 3 * 4 * a_np.size
    base = statistics.median(samples[ops[0][0]])
    print("\n%s add on %r (median of %d batches of %d, 12 bytes per element):"
          % ("x".join(map(str, shape)), ctx, rounds, inner))
    result = {}
    for name, _ in ops:
        t = statistics.median(samples[name])
        result[name] = {"ms": t * 1e3, "GB/s": nbytes / t / 1e9, "ratio": t / base}
        print("  %-32s %8.3f ms %8.1f GB/s   ratio %5.2f" % (name, t * 1e3, nbytes / t / 1e9,
                                                            t / base))
    if seed is None:
        print("  (seed's naive kernel skipped: %s)" % why)
    print("  target: custom / built-in <= 1.05")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", choices=["cpu", "gpu", "all"], default="all")
    parser.add_argument("--calls", type=int, default=20000, help="calls per overhead batch")
    parser.add_argument("--rounds", type=int, default=20, help="interleaved batches")
    parser.add_argument("--torch-extension", action="store_true",
                        help="also build and time a PyTorch C++ extension (needs torch, ninja)")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    results = {}
    gpus = [c for c in dlarray.devices() if dlarray.is_gpu_ctx(c)]
    if args.device in ("cpu", "all"):
        results["cpu_overhead"] = overheads(dlarray.cpu(0), args.calls, args.rounds)
        results["torch"] = torch_overheads(args.calls, args.rounds, args.torch_extension)
    if args.device in ("gpu", "all"):
        if not gpus:
            print("\nno usable GPU: the GPU part is skipped")
        else:
            results["gpu_overhead"] = overheads(gpus[0], args.calls // 4, args.rounds)
            results["gpu_bandwidth"] = bandwidth(gpus[0], (8192, 8192), rounds=15, inner=20)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
