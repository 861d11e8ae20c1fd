#!/usr/bin/env python3
"""dlarray.fft next to numpy.fft (and torch.fft on a CUDA device when PyTorch is importable):
medians measured in the same process (rounds interleaved), and the ratio ours / peer (below 1
means we are faster).

    python bench/bench_fft.py                      # cpu, against NumPy
    python bench/bench_fft.py --device cuda:0      # also against torch.fft on the same GPU
    python bench/bench_fft.py --device opencl:0    # the host fallback, against NumPy

Cases (issue 22): fft of 2^20 and of 1000003 (a prime: Bluestein), rfft2 and fftn of 2048^2,
a batch of 4096 x 1024 along the last axis, rfftn of 256^3; float64 / complex128. Every result is
checked against NumPy first. --scale 4 multiplies the sizes as the issue asks on the GPU.
"""
import argparse
import statistics
import time

import numpy as np

import dlarray as xp
from dlarray import fft as dfft
from report import calls_per_round


def median_times(fns, repeat, min_time, syncs):
    """Median seconds per call of each function, rounds of the functions interleaved (so that
    a busy machine slows every side alike)."""
    inners = [calls_per_round(f, min_time, s) for f, s in zip(fns, syncs)]
    times = [[] for _ in fns]
    for _ in range(repeat):
        for f, s, inner, out in zip(fns, syncs, inners, times):
            t0 = time.perf_counter()
            for _ in range(inner):
                f()
            s()
            out.append((time.perf_counter() - t0) / inner)
    return [statistics.median(t) for t in times]


def cases(scale):
    """(label, shape, input dtype, name of the function in both namespaces, keyword arguments)."""
    side = 2048 * (2 if scale > 1 else 1)
    return [
        ("fft 2^20", (scale << 20,), np.complex128, "fft", {}),
        ("fft 1000003 (prime)", (1000003,), np.complex128, "fft", {}),
        ("rfft2 %d^2" % side, (side, side), np.float64, "rfftn", {"axes": (0, 1)}),
        ("fftn %d^2" % side, (side, side), np.complex128, "fftn", {}),
        ("fft batch %dx1024" % (4096 * scale), (4096 * scale, 1024), np.complex128, "fft", {}),
        ("rfftn 256^3", (256, 256, 256 * scale), np.float64, "rfftn", {}),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.2)
    parser.add_argument("--scale", type=int, default=1)
    args = parser.parse_args()
    ctx = xp.device(args.device)
    torch = None
    if repr(ctx).startswith("cuda"):
        try:
            import torch  # noqa: F811  (optional peer on the GPU)
        except ImportError:
            torch = None
    rng = np.random.default_rng(0)
    print("device %s, threads %d; ratio = ours / peer" % (ctx, xp.get_num_threads()))
    print("%-22s %10s %10s %7s %10s %7s" % ("case", "ours ms", "numpy ms", "ratio", "torch ms",
                                          "ratio"))
    for label, shape, dtype, name, kw in cases(args.scale):
        v = rng.standard_normal(shape)
        if np.dtype(dtype).kind == "c":
            v = v + 1j * rng.standard_normal(shape)
        host = v.astype(dtype)
        a = xp.asarray(host, ctx)
        ours = lambda: getattr(dfft, name)(a, **kw)  # noqa: E731
        peer = lambda: getattr(np.fft, name)(host, **kw)  # noqa: E731
        want = peer()
        err = np.max(np.abs(ours().asnumpy() - want)) / max(1.0, np.max(np.abs(want)))
        assert err < 1e-9, (label, err)
        fns, syncs = [ours, peer], [lambda: xp.synchronize(ctx), lambda: None]
        if torch is not None:
            t = torch.as_tensor(host, device="cuda:%d" % ctx.device_id)
            tfn = getattr(torch.fft, name)
            targs = {"dim": kw["axes"]} if "axes" in kw else {}
            fns.append(lambda: tfn(t, **targs))
            syncs.append(torch.cuda.synchronize)
        measured = median_times(fns, args.repeat, args.min_time, syncs)
        t_ours, t_np = measured[0], measured[1]
        torch_text = ""
        if torch is not None:
            torch_text = " %10.3f %7.2f" % (measured[2] * 1e3, t_ours / measured[2])
        print("%-22s %10.3f %10.3f %7.2f%s" % (label, t_ours * 1e3, t_np * 1e3, t_ours / t_np,
                                              torch_text))


if __name__ == "__main__":
    main()
