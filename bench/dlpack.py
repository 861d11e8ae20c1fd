#!/usr/bin/env python3
"""DLPack exchange overhead per call: our import (dlarray.from_dlpack) and export (__dlpack__,
consumed by NumPy / PyTorch) next to PyTorch's own (torch.from_dlpack) measured in the same run,
and the ratio ours / peer's. The torch columns are left out where PyTorch is not installed.

    python bench/dlpack.py                 # cpu arrays (NumPy as producer and consumer)
    python bench/dlpack.py --device gpu    # gpu arrays (PyTorch CUDA tensors)
    python bench/dlpack.py --json out.json

Target (issue 10): <= 2 us per import or export.
"""
import argparse
import json
import platform
import time

import numpy as np

import dlarray


def per_call_us(fn, calls, repeat):
    """The best of `repeat` batches of the time per call, in microseconds: a per-call overhead
    is a floor, and the best batch is the one the machine's other work disturbed least."""
    for _ in range(calls // 10):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return min(times)


def cases(device, torch):
    """(name, ours, peer name, peer) rows: peer None where there is none."""
    rows = []
    if device == "cpu":
        src = np.ones((64, 64), np.float32)
        x = dlarray.asarray(src)
        rows.append(("import: from_dlpack(numpy array)", lambda: dlarray.from_dlpack(src),
                     "torch.from_dlpack(numpy array)",
                     (lambda: torch.from_dlpack(src)) if torch else None))
        rows.append(("export: np.from_dlpack(NDArray)", lambda: np.from_dlpack(x),
                     "np.from_dlpack(numpy array)", lambda: np.from_dlpack(src)))
        rows.append(("export: x.__dlpack__() capsule", lambda: x.__dlpack__(),
                     "numpy array.__dlpack__()", lambda: src.__dlpack__()))
        if torch is not None:
            t = torch.ones(64, 64)
            rows.append(("import: from_dlpack(torch tensor)", lambda: dlarray.from_dlpack(t),
                         "torch.from_dlpack(torch tensor)", lambda: torch.from_dlpack(t)))
            rows.append(("export: torch.from_dlpack(NDArray)", lambda: torch.from_dlpack(x),
                         "torch.from_dlpack(numpy array)", lambda: torch.from_dlpack(src)))
    else:
        t = torch.ones(64, 64, device="cuda")
        x = dlarray.array(np.ones((64, 64), np.float32), dlarray.gpu(0))
        t2 = torch.ones(64, 64, device="cuda")
        rows.append(("import: from_dlpack(torch cuda tensor)", lambda: dlarray.from_dlpack(t),
                     "torch.from_dlpack(torch cuda tensor)", lambda: torch.from_dlpack(t2)))
        rows.append(("export: torch.from_dlpack(NDArray)", lambda: torch.from_dlpack(x),
                     "torch.from_dlpack(torch cuda tensor)", lambda: torch.from_dlpack(t2)))
        rows.append(("export: x.__dlpack__(stream=1)", lambda: x.__dlpack__(stream=1),
                     "tensor.__dlpack__(stream=1)", lambda: t2.__dlpack__(stream=1)))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = p.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
    if args.device == "gpu":
        if dlarray.gpu(0) not in dlarray.devices():
            raise SystemExit("no usable GPU: " + "; ".join(
                f"{q['name']}: {q['status']} {q['reason']}" for q in dlarray.plugins()))
        if torch is None or not torch.cuda.is_available():
            raise SystemExit("the gpu rows need PyTorch with CUDA")
    print(f"# DLPack overhead per call ({args.device}), {platform.processor() or platform.machine()}"
          f", dlarray {dlarray.__version__}, numpy {np.__version__}, torch "
          f"{torch.__version__ if torch else 'not installed'}")
    print(f"{'ours':<42} {'us':>7}   {'peer':<40} {'us':>7} {'ratio':>6}")
    rows = []
    for name, ours, peer_name, peer in cases(args.device, torch):
        ours_us = per_call_us(ours, args.calls, args.repeat)
        peer_us = per_call_us(peer, args.calls, args.repeat) if peer else None
        ratio = ours_us / peer_us if peer_us else None
        rows.append(dict(op=name, ours_us=ours_us, peer=peer_name if peer else None,
                         peer_us=peer_us, ratio=ratio, target_us=2.0, within=ours_us <= 2.0))
        peer_text = f"{peer_name:<40} {peer_us:7.2f} {ratio:6.2f}" if peer else f"{'-':<40}"
        print(f"{name:<42} {ours_us:7.2f}   {peer_text}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
