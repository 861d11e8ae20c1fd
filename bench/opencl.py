#!/usr/bin/env python3
"""The OpenCL backend (opencl_backend.so, e.g. on PoCL) against NumPy and our CPU backend, on the
same machine and in the same run:

1. every op at the seed's sizes and at large sizes: medians of opencl, NumPy and cpu, and the
   ratios opencl / NumPy and opencl / cpu (below 1: OpenCL is faster);
2. matrix_multiply at 1024^3 against CLBlast's SGEMM (Debian's libclblast, untuned, and with
   --clblast-tuning, tuned by its own tuner) on the same device, in GFLOP/s, and CLBlast's first
   call (it builds its kernels then);
3. first use of every op in a new process: cold (empty dlarray and PoCL caches), with only
   dlarray's program-binary cache warm, and warm;
4. an epoch of examples/mnist.py's MLP on opencl, cpu and NumPy.

    python bench/opencl.py [--sizes seed|large|all] [--only OP] [--skip-mnist] [--json FILE]
"""
import argparse
import json
import os
import pathlib
import platform
import re
import subprocess
import sys
import tempfile

import numpy as np

import dlarray
from dlarray import _opbench

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))


def cpu_model():
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def synced(ctx, fn):
    def run():
        fn()
        dlarray.synchronize(ctx)
    return run


def time_on(case, ctx, repeat, min_time):
    args = [dlarray.array(x, ctx) for x in case.inputs]
    out = dlarray.empty(case.out_shape, ctx)
    _opbench.let_peer_idle()
    return _opbench.median_time(synced(ctx, lambda: case.ours(*args, out)), repeat, min_time)


def op_table(ctx, args):
    rows = []
    sizes = {"seed": [("seed", _opbench.SEED_SIZES)], "large": [("large", _opbench.LARGE_SIZES)],
             "all": [("seed", _opbench.SEED_SIZES), ("large", _opbench.LARGE_SIZES)]}[args.sizes]
    rng = np.random.default_rng(0)
    print(f"{'op':<38} {'shape':<20} {'ok':<5} {'opencl':>10} {'numpy':>10} {'cpu':>10} "
          f"{'/numpy':>7} {'/cpu':>6}")
    for label, s in sizes:
        for case in _opbench.cases(s, rng):
            if args.only and case.op not in args.only:
                continue
            kind = repr(ctx).rsplit("(", 1)[0]
            if kind not in dlarray.ops.op_info(case.op.split()[0])["devices"]:
                print(f"{case.op:<38} {case.shape_text:<20} (no kernel for this device)")
                continue
            ok, err = _opbench.check(case, ctx)
            ours = time_on(case, ctx, args.repeat, args.min_time)
            peer = _opbench.time_numpy(case, args.repeat, args.min_time)
            cpu = time_on(case, dlarray.cpu(), args.repeat, args.min_time)
            rows.append(dict(sizes=label, op=case.op, shape=case.shape_text, ok=ok, rel_err=err,
                             opencl_s=ours, numpy_s=peer, cpu_s=cpu, ratio_numpy=ours / peer,
                             ratio_cpu=ours / cpu, rate=_opbench.rate(case, ours)))
            print(f"{case.op:<38} {case.shape_text:<20} {'ok' if ok else 'WRONG':<5} "
                  f"{ours * 1e3:8.3f}ms {peer * 1e3:8.3f}ms {cpu * 1e3:8.3f}ms "
                  f"{ours / peer:7.2f} {ours / cpu:6.2f}  {_opbench.rate(case, ours)}", flush=True)
    return rows


def matmul_vs_clblast(ctx, n=1024, repeat=5, tuning=None):
    import clblast_ref
    why = clblast_ref.available()
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    y = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    a, b, c = dlarray.array(x, ctx), dlarray.array(y, ctx), dlarray.empty((n, n), ctx)
    ours = _opbench.median_time(
        synced(ctx, lambda: dlarray.ops.matrix_multiply(a, False, b, False, c)), repeat, 0.5)
    t_np = _opbench.median_time(lambda: np.matmul(x, y), repeat, 0.5)
    flops = 2.0 * n ** 3
    row = dict(n=n, opencl_s=ours, numpy_s=t_np, opencl_gflops=flops / ours / 1e9,
               numpy_gflops=flops / t_np / 1e9)
    print(f"\nmatrix_multiply {n}^3: opencl {ours * 1e3:.1f} ms "
          f"({flops / ours / 1e9:.1f} GFLOP/s), "
          f"NumPy {t_np * 1e3:.1f} ms ({flops / t_np / 1e9:.1f} GFLOP/s): "
          f"{ours / t_np:.2f}x NumPy's time")
    if why:
        print("CLBlast: not measured: " + why)
        return row
    name = dlarray._core.device_name(ctx).split(" (")[0]
    first, blast, result = clblast_ref.time_sgemm(x, y, repeat, device_name=name)
    ref = x.astype(np.float64) @ y
    err = float(np.linalg.norm(result - ref) / np.linalg.norm(ref))
    row.update(clblast_s=blast, clblast_first_call_s=first, clblast_gflops=flops / blast / 1e9,
               speedup_vs_clblast=blast / ours, clblast_rel_err=err)
    print(f"CLBlast (untuned) {blast * 1e3:.1f} ms ({flops / blast / 1e9:.1f} GFLOP/s, first call "
          f"{first:.1f} s, rel. err {err:.1e}): ours is {blast / ours:.1f}x faster")
    if tuning:
        params = clblast_ref.parse_tuning(pathlib.Path(tuning).read_text())
        _, tuned, result = clblast_ref.time_sgemm(x, y, repeat, device_name=name, params=params)
        err = float(np.linalg.norm(result - ref) / np.linalg.norm(ref))
        row.update(clblast_tuned_s=tuned, clblast_tuned_gflops=flops / tuned / 1e9,
                   clblast_tuned_params=params, speedup_vs_clblast_tuned=tuned / ours)
        print(f"CLBlast tuned ({' '.join(f'{k}={v}' for k, v in params.items())}) "
              f"{tuned * 1e3:.1f} ms ({flops / tuned / 1e9:.1f} GFLOP/s, rel. err {err:.1e}): "
              f"ours is {tuned / ours:.2f}x as fast")
    return row


FIRST_USE = r"""
import json, time, numpy as np, dlarray
from dlarray import _opbench
ctx = dlarray.opencl(0)
rng = np.random.default_rng(0)
out = {}
sizes = dict(_opbench.SEED_SIZES, matmul=[(33, 65, 17)])
for case in _opbench.cases(sizes, rng):
    kind = repr(ctx).rsplit("(", 1)[0]
    if case.op in out or kind not in dlarray.ops.op_info(case.op.split()[0])["devices"]:
        continue
    args = [dlarray.array(x, ctx) for x in case.inputs]
    o = dlarray.empty(case.out_shape, ctx)
    dlarray.synchronize(ctx)
    t0 = time.perf_counter(); case.ours(*args, o); dlarray.synchronize(ctx)
    first = time.perf_counter() - t0
    t0 = time.perf_counter(); case.ours(*args, o); dlarray.synchronize(ctx)
    out[case.op] = max(first - (time.perf_counter() - t0), 0.0)
print(json.dumps(out))
"""


def first_use():
    """Seconds the first call of each op adds (its programs' build or load), in new processes."""
    results = {}
    with tempfile.TemporaryDirectory() as ours, tempfile.TemporaryDirectory() as pocl, \
            tempfile.TemporaryDirectory() as pocl_empty:
        for label, pocl_dir in (("cold", pocl), ("dlarray cache warm, PoCL cache empty",
                                                 pocl_empty), ("warm", pocl)):
            env = dict(os.environ, DLARRAY_CACHE_DIR=ours, POCL_CACHE_DIR=pocl_dir)
            out = subprocess.run([sys.executable, "-c", FIRST_USE], env=env, capture_output=True,
                                 text=True, timeout=900)
            if out.returncode != 0:
                raise SystemExit(out.stderr)
            results[label] = json.loads(out.stdout.strip().splitlines()[-1])
    print("\nfirst use of each op in a new process (seconds added to the first call)")
    labels = list(results)
    print(f"{'op':<38} " + " ".join(f"{x:>14}" for x in ("cold", "ours warm", "warm")))
    for op in results["cold"]:
        print(f"{op:<38} " + " ".join(f"{results[x][op]:14.3f}" for x in labels))
    worst = {x: max(results[x].values()) for x in labels}
    print("longest: " + ", ".join(f"{x} {worst[x]:.2f} s" for x in labels))
    return results


def mnist_epochs(devices=("opencl", "cpu", "numpy"), epochs=2):
    rows = {}
    print("\nexamples/mnist.py --model mlp, 8,000 images, batch 100 (epoch 2: warm)")
    for dev in devices:
        out = subprocess.run([sys.executable, str(ROOT / "examples" / "mnist.py"), "--model", "mlp",
                              "--device", dev, "--epochs", str(epochs)], capture_output=True,
                             text=True, timeout=1800)
        if out.returncode != 0:
            raise SystemExit(out.stderr)
        times = [float(t) for t in re.findall(r"epoch +\d+: .* ([0-9.]+) s", out.stdout)]
        acc = re.findall(r"test accuracy ([0-9.]+)%", out.stdout)
        rows[dev] = dict(epoch_s=times, test_accuracy=float(acc[-1]) if acc else None)
        print(f"  {dev:<7} epochs {', '.join(f'{t:.2f} s' for t in times)}; test accuracy "
              f"{acc[-1] if acc else '?'}%")
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device-id", type=int, default=0)
    p.add_argument("--sizes", choices=["seed", "large", "all"], default="all")
    p.add_argument("--repeat", type=int, default=11)
    p.add_argument("--min-time", type=float, default=0.2)
    p.add_argument("--only", metavar="OP", action="append", help="only this op (repeatable)")
    p.add_argument("--clblast-tuning", metavar="FILE",
                   help="also time CLBlast with the fastest Xgemm parameters in FILE (the output "
                        "of clblast_tuner_xgemm, Debian's clblast-utils, or NAME=VALUE text)")
    p.add_argument("--skip-first-use", action="store_true")
    p.add_argument("--skip-mnist", action="store_true")
    p.add_argument("--json", metavar="FILE")
    args = p.parse_args()
    ctx = dlarray.opencl(args.device_id)
    if ctx not in dlarray.devices():
        sys.exit(f"{ctx!r} is not usable: " + "; ".join(
            f"{q['name']}: {q['status']} {q['reason']}" for q in dlarray.plugins()
            if q["name"] == "opencl"))
    device = dlarray._core.device_name(ctx)
    print(f"dlarray {dlarray.__version__}; opencl: {device}; "
          f"{dlarray._core.get_option(ctx, 'platform')}; NumPy {np.__version__}; "
          f"CPU: {cpu_model()} "
          f"({os.cpu_count()} logical CPUs); median of {args.repeat}")
    report = dict(device=device, cpu=cpu_model(), numpy=np.__version__,
                  platform=dlarray._core.get_option(ctx, "platform"))
    report["ops"] = op_table(ctx, args)
    if not args.only or "matrix_multiply" in args.only:
        report["matmul"] = matmul_vs_clblast(ctx, tuning=args.clblast_tuning)
    if not args.skip_first_use:
        report["first_use"] = first_use()
    if not args.skip_mnist:
        report["mnist"] = mnist_epochs()
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=1))
    return 1 if any(not r["ok"] for r in report["ops"]) else 0


if __name__ == "__main__":
    sys.exit(main())
