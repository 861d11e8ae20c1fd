#!/usr/bin/env python3
"""The array API reductions (sum, max, argmax, mean, all) of float32 arrays over the axes the issue
names: ours next to the peer's (NumPy; PyTorch on a GPU), medians measured in the same process, and
the ratio ours / peer's (below 1 means we are faster).

    python bench/reductions.py                      # cpu against NumPy
    python bench/reductions.py --device cuda:0      # against PyTorch on the same GPU
    python bench/reductions.py --device opencl:0    # another device, still against NumPy
    python bench/reductions.py --only sum --repeat 9

Cases: 4096 x 4096 over axis None, 0 and 1; (256, 256, 256) over (0, 2); the narrow 4096 x 3
over axis 1 and the tall 3 x 4096 over axis 0. Every result is checked against NumPy first.
"""
import argparse

import numpy as np

import dlarray as xp
from report import median_time

CASES = [((4096, 4096), None), ((4096, 4096), 0), ((4096, 4096), 1), ((256, 256, 256), (0, 2)),
         ((4096, 3), 1), ((3, 4096), 0)]
FUNCTIONS = ["sum", "max", "mean", "all", "argmax"]


def torch_reduction(torch, name):
    """PyTorch's form of the reduction over an axis, a tuple or everything (None)."""
    fn = {"max": torch.amax, "min": torch.amin}.get(name) or getattr(torch, name)

    def run(t, axis):
        return fn(t) if axis is None else fn(t, dim=axis)
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--only", nargs="*", default=None, help="functions to time")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.05)
    args = parser.parse_args()
    ctx = xp.device(args.device)
    torch = None
    if ctx.device_type == 2:
        import torch  # noqa: F811  (the GPU's peer)
    peer_name = "torch" if torch else "numpy"
    rng = np.random.default_rng(0)
    print("%-8s %-14s %-8s %11s %11s %7s" % ("function", "shape", "axis", "ours ms",
                                             peer_name + " ms", "ratio"))
    for shape, axis in CASES:
        a = rng.standard_normal(shape).astype(np.float32)
        x = xp.asarray(a, device=ctx)
        for name in args.only or FUNCTIONS:
            if name.startswith("arg") and not (axis is None or isinstance(axis, int)):
                continue
            ours_fn = getattr(xp, name)
            peer_fn = getattr(np, name)
            got = ours_fn(x, axis=axis).asnumpy()
            want = peer_fn(a, axis=axis)
            if name.startswith("arg") or name == "all":
                assert np.array_equal(got, want), (name, shape, axis)
            else:
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3 * np.sqrt(a.size))
            ours = median_time(lambda: ours_fn(x, axis=axis), args.repeat, args.min_time,
                               lambda: xp.synchronize(ctx))
            if torch is not None:
                t = torch.from_numpy(a).to(torch.device("cuda", ctx.device_id))
                peer = median_time(lambda: torch_reduction(torch, name)(t, axis), args.repeat,
                                   args.min_time, torch.cuda.synchronize)
            else:
                peer = median_time(lambda: peer_fn(a, axis=axis), args.repeat, args.min_time,
                                   lambda: None)
            print("%-8s %-14s %-8s %11.3f %11.3f %7.2f" % (
                name, "x".join(map(str, shape)), str(axis).replace(" ", ""), ours * 1e3,
                peer * 1e3, ours / peer), flush=True)


if __name__ == "__main__":
    main()
