#!/usr/bin/env python3
"""Every op at the seed's sizes and at large sizes: our median time next to the peer's, measured in
the same process, and the ratio ours / peer's (below 1 means we are faster).

    python bench/ops.py                  # cpu against NumPy
    python bench/ops.py --device gpu     # gpu against PyTorch on the same GPU (CUDA events)
    python bench/ops.py --json out.json  # also write the rows and the machine as JSON

The JSON files in docs/benchmarks/ come from --json; the docs render them as tables.
"""
import argparse
import json
import platform
import statistics
import sys
import time

import numpy as np

import dlarray
from dlarray import _opbench
from report import check_output_path, machine_info


def gpu_timer(torch):
    """Times fn on a stream with CUDA events: median ms per call over `repeat` batches."""
    def timeit(fn, stream, repeat, inner):
        for _ in range(3):
            fn()
        times = []
        for _ in range(repeat):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record(stream)
            for _ in range(inner):
                fn()
            end.record(stream)
            end.synchronize()
            times.append(start.elapsed_time(end) / inner / 1e3)
        return statistics.median(times)
    return timeit


def selected(cases, only):
    return [c for c in cases if not only or c.op in only]


def run_cpu(args, sizes_list):
    rows = []
    ctx = dlarray.cpu(0)
    rng = np.random.default_rng(0)
    for label, sizes in sizes_list:
        for case in selected(_opbench.cases(sizes, rng), args.only):
            ok, err = _opbench.check(case, ctx)
            ours = _opbench.time_ours_cpu(case, ctx, args.repeat, args.min_time)
            peer = _opbench.time_numpy(case, args.repeat, args.min_time)
            rows.append(dict(sizes=label, op=case.op, shape=case.shape_text, ok=ok, rel_err=err,
                             ours_s=ours, peer_s=peer, ratio=ours / peer,
                             rate=_opbench.rate(case, ours)))
            print_row(rows[-1], "numpy")
    over = _opbench.overhead_per_call(ctx)
    np_over = _opbench.numpy_overhead_per_call()
    rows.append(dict(sizes="1 element", op="relu (Python overhead per call)", shape="1", ok=True,
                     rel_err=0.0, ours_s=over, peer_s=np_over, ratio=over / np_over, rate=""))
    print_row(rows[-1], "numpy")
    return rows


def run_gpu(args, sizes_list):
    ctx = dlarray.gpu(args.gpu_id)
    if ctx not in dlarray.devices():
        sys.exit(f"{ctx!r} is not usable: " + "; ".join(
            f"{p['name']}: {p['status']} {p['reason']}" for p in dlarray.plugins()))
    try:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        tdev = torch.device("cuda", args.gpu_id)
    except ImportError:
        torch = None
    if torch is None:
        sys.exit("PyTorch is needed for CUDA-event timing and the comparison")
    timeit = gpu_timer(torch)
    ours_stream = torch.cuda.ExternalStream(_opbench.stream_handle(ctx), device=tdev)
    rows = []
    rng = np.random.default_rng(0)
    for label, sizes in sizes_list:
        for case in selected(_opbench.cases(sizes, rng), args.only):
            ok, err = _opbench.check(case, ctx)
            a = [dlarray.array(x, ctx) for x in case.inputs]
            o = dlarray.empty(case.out_shape, ctx)
            big = case.flops > 1e11 or case.nbytes > 1e9
            inner = 3 if big else 20
            ours = timeit(lambda: case.ours(*a, o), ours_stream, args.repeat, inner)
            ta = [torch.from_numpy(x).to(tdev) for x in case.inputs]
            to = torch.empty(case.out_shape, dtype=torch.float32, device=tdev)
            peer = timeit(lambda: case.torch_fn(torch, *ta, to), torch.cuda.current_stream(tdev),
                          args.repeat, inner)
            rows.append(dict(sizes=label, op=case.op, shape=case.shape_text, ok=ok, rel_err=err,
                             ours_s=ours, peer_s=peer, ratio=ours / peer,
                             rate=_opbench.rate(case, ours)))
            print_row(rows[-1], "torch")
        if label != "seed":
            dlarray.empty_cache(ctx)
            torch.cuda.empty_cache()
    # TF32 mode, opt-in, against PyTorch with TF32 on.
    dlarray.set_matmul_precision("tf32")
    torch.backends.cuda.matmul.allow_tf32 = True
    for (m, k, n) in sizes_list[-1][1]["matmul"]:
        x = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        y = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        a, b, c = dlarray.array(x, ctx), dlarray.array(y, ctx), dlarray.empty((m, n), ctx)
        ta, tb, tc = (torch.from_numpy(v).to(tdev) for v in (x, y, np.empty((m, n), np.float32)))
        ours = timeit(lambda: dlarray.ops.matrix_multiply(a, False, b, False, c), ours_stream,
                      args.repeat, 3)
        peer = timeit(lambda: torch.matmul(ta, tb, out=tc), torch.cuda.current_stream(tdev),
                      args.repeat, 3)
        ref = x.astype(np.float64) @ y
        err = float(np.linalg.norm(c.asnumpy() - ref) / np.linalg.norm(ref))
        rows.append(dict(sizes="tf32", op="matrix_multiply (tf32)", shape=f"{m}x{k}x{n} NN",
                         ok=err < 5e-3, rel_err=err, ours_s=ours, peer_s=peer, ratio=ours / peer,
                         rate=f"{2 * m * k * n / ours / 1e12:8.1f} TFLOP/s"))
        print_row(rows[-1], "torch")
    dlarray.set_matmul_precision("highest")
    torch.backends.cuda.matmul.allow_tf32 = False
    # Python overhead of an asynchronous op on a 1-element array, against PyTorch's.
    over = _opbench.overhead_per_call(ctx, calls=100000)
    t1, t2 = torch.ones(1, device=tdev), torch.empty(1, device=tdev)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(100000):
            torch.clamp_min(t1, 0.0, out=t2)
        torch.cuda.synchronize(tdev)
        best = min(best, (time.perf_counter() - t0) / 100000)
    rows.append(dict(sizes="1 element", op="relu (Python overhead per call)", shape="1", ok=True,
                     rel_err=0.0, ours_s=over, peer_s=best, ratio=over / best, rate=""))
    print_row(rows[-1], "torch")
    return rows


def print_row(r, peer):
    unit, scale = ("us", 1e6) if r["ours_s"] < 1e-4 else ("ms", 1e3)
    print(f"{r['op']:<38} {r['shape']:<22} {'ok' if r['ok'] else 'WRONG':<5} "
          f"ours {r['ours_s'] * scale:9.3f}{unit}  {peer} {r['peer_s'] * scale:9.3f}{unit}  "
          f"ratio {r['ratio']:6.2f}  {r['rate']}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    p.add_argument("--gpu-id", type=int, default=0)
    p.add_argument("--sizes", choices=["seed", "large", "all"], default="all")
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--min-time", type=float, default=0.2, help="seconds of timing per side (cpu)")
    p.add_argument("--only", metavar="OP", action="append",
                   help="time only this op (repeatable), e.g. --only softmax")
    p.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = p.parse_args()
    if args.json:
        check_output_path(p, "--json", args.json)
    large = _opbench.GPU_LARGE_SIZES if args.device == "gpu" else _opbench.LARGE_SIZES
    sizes_list = {"seed": [("seed", _opbench.SEED_SIZES)], "large": [("large", large)],
                  "all": [("seed", _opbench.SEED_SIZES), ("large", large)]}[args.sizes]
    device_name = dlarray._core.device_name(dlarray.gpu(args.gpu_id) if args.device == "gpu"
                                            else dlarray.cpu())
    print(f"dlarray {dlarray.__version__} on {device_name}; NumPy {np.__version__}; "
          f"{platform.machine()}; ratio = ours / peer (median of {args.repeat})")
    machine = machine_info()
    rows = run_gpu(args, sizes_list) if args.device == "gpu" else run_cpu(args, sizes_list)
    if "torch" in sys.modules:
        machine["versions"]["torch"] = sys.modules["torch"].__version__
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"benchmark": "ops", "device": device_name,
                       "peer": "torch" if args.device == "gpu" else "numpy",
                       "settings": {"sizes": args.sizes, "repeat": args.repeat,
                                    "min_time": args.min_time, "only": args.only},
                       "machine": machine, "rows": rows}, f, indent=1)
    bad = [r for r in rows if not r["ok"]]
    if bad:
        print(f"{len(bad)} result(s) disagreed with the reference")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
