#!/usr/bin/env python3
"""float16 / bfloat16 speed: elementwise ops and matrix products, our median next to the peer's
measured in the same run (PyTorch on the GPU, timed with CUDA events on each side's stream;
NumPy float16 / ml_dtypes bfloat16 on the CPU), and the ratio ours / peer's.

    python bench/half_precision.py --device gpu                     # both dtypes vs PyTorch
    python bench/half_precision.py --device gpu --dtype bfloat16 --json out.json
    python bench/half_precision.py                                  # cpu vs NumPy (small sizes)

Target (issue 10): ratio <= 1.05 on the GPU.
"""
import argparse
import json
import statistics
import time

import numpy as np

import dlarray
from dlarray import ops


def numpy_dtype(name):
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def cases(elements, matmuls):
    """(op, shape text, inputs (shapes), out shape, ours(args...), torch(t, args...), numpy)."""
    rows = []
    for n in elements:
        rows.append(("add", f"{n}x{n}", [(n, n), (n, n)], (n, n),
                     lambda a, b, o: ops.matrix_elementwise_add(a, b, o),
                     lambda t, a, b, o: t.add(a, b, out=o), lambda a, b, o: np.add(a, b, out=o)))
        rows.append(("multiply", f"{n}x{n}", [(n, n), (n, n)], (n, n),
                     lambda a, b, o: ops.matrix_elementwise_multiply(a, b, o),
                     lambda t, a, b, o: t.mul(a, b, out=o),
                     lambda a, b, o: np.multiply(a, b, out=o)))
        rows.append(("add_by_const", f"{n}x{n}", [(n, n)], (n, n),
                     lambda a, o: ops.matrix_elementwise_add_by_const(a, 1.5, o),
                     lambda t, a, o: t.add(a, 1.5, out=o), lambda a, o: np.add(a, 1.5, out=o)))
        rows.append(("relu", f"{n}x{n}", [(n, n)], (n, n), lambda a, o: ops.relu(a, o),
                     lambda t, a, o: t.clamp_min(a, 0.0, out=o),
                     lambda a, o: np.maximum(a, 0, out=o)))
    for m, k, n in matmuls:
        rows.append(("matrix_multiply", f"{m}x{k}x{n}", [(m, k), (k, n)], (m, n),
                     lambda a, b, o: ops.matrix_multiply(a, False, b, False, o),
                     lambda t, a, b, o: t.matmul(a, b, out=o), lambda a, b, o: np.matmul(a, b, out=o)))
    return rows


def run_gpu(args, dtypes):
    import torch
    ctx = dlarray.gpu(0)
    tdev = torch.device("cuda", 0)
    ours_stream = torch.cuda.ExternalStream(dlarray._core.stream_handle(ctx), device=tdev)

    def timeit(fn, stream, inner):
        for _ in range(3):
            fn()
        times = []
        for _ in range(args.repeat):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record(stream)
            for _ in range(inner):
                fn()
            end.record(stream)
            end.synchronize()
            times.append(start.elapsed_time(end) / inner / 1e3)
        return statistics.median(times)

    rows = []
    rng = np.random.default_rng(0)
    for name in dtypes:
        npdt = numpy_dtype(name)
        tdt = getattr(torch, name)
        for op, shape, in_shapes, out_shape, ours_fn, torch_fn, _ in cases(args.elements,
                                                                           args.matmuls):
            host = [rng.uniform(-1, 1, s).astype(np.float32) for s in in_shapes]
            a = [dlarray.array(h, ctx, npdt) for h in host]
            o = dlarray.empty(out_shape, ctx, npdt)
            ta = [torch.from_numpy(h).to(tdev, tdt) for h in host]
            to = torch.empty(out_shape, dtype=tdt, device=tdev)
            inner = 5 if op == "matrix_multiply" else 20
            ours = timeit(lambda: ours_fn(*a, o), ours_stream, inner)
            peer = timeit(lambda: torch_fn(torch, *ta, to), torch.cuda.current_stream(tdev), inner)
            torch_fn(torch, *ta, to)
            ours_fn(*a, o)
            ref = to.float().cpu().numpy()
            err = float(np.abs(o.asnumpy().astype(np.float32) - ref).max() /
                        max(1e-6, np.abs(ref).max()))
            rows.append(dict(dtype=name, op=op, shape=shape, ours_s=ours, peer_s=peer,
                             ratio=ours / peer, max_rel_diff=err))
            print_row(rows[-1], "torch")
        dlarray.empty_cache(ctx)
        torch.cuda.empty_cache()
    return rows


def run_cpu(args, dtypes):
    ctx = dlarray.cpu(0)
    rows = []
    rng = np.random.default_rng(0)
    for name in dtypes:
        npdt = numpy_dtype(name)
        for op, shape, in_shapes, out_shape, ours_fn, _, numpy_fn in cases(args.elements,
                                                                           args.matmuls):
            host = [rng.uniform(-1, 1, s).astype(npdt) for s in in_shapes]
            a = [dlarray.array(h, ctx, npdt) for h in host]
            o = dlarray.empty(out_shape, ctx, npdt)
            ho = np.empty(out_shape, npdt)
            time.sleep(0.15)  # NumPy's BLAS threads busy-wait after its calls: let them sleep
            ours = median_time(lambda: ours_fn(*a, o), args.repeat)
            peer = median_time(lambda: numpy_fn(*host, ho), args.repeat)
            err = float(np.abs(o.asnumpy().astype(np.float32) - ho.astype(np.float32)).max() /
                        max(1e-6, np.abs(ho.astype(np.float32)).max()))
            rows.append(dict(dtype=name, op=op, shape=shape, ours_s=ours, peer_s=peer,
                             ratio=ours / peer, max_rel_diff=err))
            print_row(rows[-1], "numpy")
    return rows


def median_time(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def print_row(r, peer):
    print(f"{r['dtype']:<9} {r['op']:<16} {r['shape']:<16} ours {r['ours_s'] * 1e3:9.3f} ms   "
          f"{peer} {r['peer_s'] * 1e3:9.3f} ms   ratio {r['ratio']:5.2f}   "
          f"max rel diff {r['max_rel_diff']:.1e}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    p.add_argument("--dtype", choices=["float16", "bfloat16", "both"], default="both")
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = p.parse_args()
    dtypes = ["float16", "bfloat16"] if args.dtype == "both" else [args.dtype]
    if args.device == "gpu":
        if dlarray.gpu(0) not in dlarray.devices():
            raise SystemExit("no usable GPU: " + "; ".join(
                f"{q['name']}: {q['status']} {q['reason']}" for q in dlarray.plugins()))
        args.elements, args.matmuls = [4096, 8192], [(4096, 4096, 4096), (8192, 8192, 8192),
                                                     (1024, 4096, 1024)]
        rows = run_gpu(args, dtypes)
    else:
        args.elements, args.matmuls = [1024], [(256, 256, 256)]
        rows = run_cpu(args, dtypes)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
