#!/usr/bin/env python3
"""Indexing, gather and sort at 10**7 elements: our median time next to the peer's, measured in
the same process, and the ratio ours / peer's (below 1 means we are faster). Issue 21's targets:
boolean-mask get and set, take, take_along_axis and sort of 10**7 float32 at most 1.0x NumPy on
cpu (PyTorch on a GPU). Rounds of ours and the peer's alternate (a loaded machine slows both).

    python bench/indexing.py                       # cpu against NumPy
    python bench/indexing.py --device opencl:0     # the same table on OpenCL (no target)
    python bench/indexing.py --device cuda:0       # against PyTorch on the same GPU
    python bench/indexing.py --n 1000000 --repeat 5
"""
import argparse
import statistics
import time

import numpy as np

import dlarray as xp
from report import cpu_model


def paired_medians(ours, ours_sync, peer, peer_sync, repeat):
    """Median seconds of ours and of the peer's, their rounds alternating so that a busy machine
    slows both alike (each warmed up first: kernels built, buffers cached)."""
    ours()
    ours_sync()
    peer()
    peer_sync()
    times = ([], [])
    for _ in range(repeat):
        for fn, sync, out in ((ours, ours_sync, times[0]), (peer, peer_sync, times[1])):
            start = time.perf_counter()
            fn()
            sync()
            out.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def set_mask(a, m):
    a[m] = 1.0
    return a


def cases(n, rng):
    """(name, host inputs, ours, NumPy's (its default, fastest sort kind; ours is always
    stable), PyTorch's). take_along_axis in 2-D takes along the last axis of (n / 1000, 1000).
    The float64 and int32 sorts (no target) show the 8-byte keys and integer keys."""
    x = rng.standard_normal(n).astype(np.float32)
    mask = rng.random(n) < 0.5
    idx = rng.integers(0, n, n)
    rows = 1000
    x2 = x.reshape(rows, n // rows)
    idx2 = rng.integers(0, n // rows, (rows, n // rows))
    return [("x[mask] (half True)", (x, mask), lambda a, b: a[b], lambda a, b: a[b],
             lambda a, b: a[b]),
            ("x[mask] = 1.0", (x.copy(), mask), set_mask, set_mask, set_mask),
            ("take(x, idx) random", (x, idx), lambda a, b: xp.take(a, b, axis=0),
             lambda a, b: np.take(a, b, axis=0), lambda a, b: a[b]),
            ("take int32 idx", (x, idx.astype(np.int32)), lambda a, b: xp.take(a, b, axis=0),
             lambda a, b: np.take(a, b, axis=0), lambda a, b: a[b.long()]),
            ("take_along_axis 1-D", (x, idx), lambda a, b: xp.take_along_axis(a, b, axis=0),
             lambda a, b: np.take_along_axis(a, b, axis=0),
             lambda a, b: a.gather(0, b)),
            ("take_along_axis 2-D", (x2, idx2),
             lambda a, b: xp.take_along_axis(a, b, axis=1),
             lambda a, b: np.take_along_axis(a, b, axis=1), lambda a, b: a.gather(1, b)),
            ("sort float32", (x,), xp.sort, np.sort, lambda a: a.sort(stable=True)[0]),
            ("sort float64", (rng.standard_normal(n),), xp.sort, np.sort,
             lambda a: a.sort(stable=True)[0]),
            ("sort int32", (idx.astype(np.int32),), xp.sort, np.sort,
             lambda a: a.sort(stable=True)[0]),
            ("argsort float32", (x,), xp.argsort, np.argsort,
             lambda a: a.argsort(stable=True))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--n", type=int, default=10 ** 7)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    ctx = xp.device(args.device)
    rng = np.random.default_rng(0)
    torch = None
    if ctx.device_type == 2:
        import torch  # noqa: F811  (the GPU's peer)
    peer_name = "torch" if torch else "numpy"
    print(f"{cpu_model()}; dlarray {xp.__version__}, numpy {np.__version__}")
    print(f"n = {args.n}, device {ctx}, peer {peer_name}, medians of {args.repeat} "
          "alternating rounds")
    print(f"{'case':24} {'ours ms':>10} {peer_name + ' ms':>10} {'ratio':>7}")
    for name, host, ours_fn, numpy_fn, torch_fn in cases(args.n, rng):
        ours_in = [xp.asarray(a, ctx) for a in host]
        got = ours_fn(*ours_in).asnumpy()
        want = numpy_fn(*[a.copy() for a in host])
        if name.startswith("argsort"):  # ties may order differently: compare the values
            got, want = host[0][got], host[0][want]
        np.testing.assert_array_equal(got, want)
        ours_sync = lambda: xp.synchronize(ctx)  # noqa: E731
        if torch is not None:
            dev = torch.device("cuda", ctx.device_id)
            peer_in = [torch.from_numpy(a).to(dev) for a in host]
            ours, peer = paired_medians(lambda: ours_fn(*ours_in), ours_sync,
                                        lambda: torch_fn(*peer_in), torch.cuda.synchronize,
                                        args.repeat)
        else:
            ours, peer = paired_medians(lambda: ours_fn(*ours_in), ours_sync,
                                        lambda: numpy_fn(*host), lambda: None, args.repeat)
        print(f"{name:24} {ours * 1e3:10.2f} {peer * 1e3:10.2f} {ours / peer:7.2f}", flush=True)

if __name__ == "__main__":
    main()
