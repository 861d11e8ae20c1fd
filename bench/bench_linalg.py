#!/usr/bin/env python3
"""dlarray.linalg next to numpy.linalg: medians measured in the same process, and the ratio
ours / NumPy (below 1 means we are faster). Both use OpenBLAS's LAPACK on cpu (dlarray the
scipy-openblas32 package it depends on, NumPy its own build); on other devices the table is the
device's (or the host fallback's) time against NumPy on the host.

    python bench/bench_linalg.py                      # cpu, float64
    python bench/bench_linalg.py --device opencl:0 --dtype float32
    python bench/bench_linalg.py --only solve cholesky --repeat 9
    python bench/bench_linalg.py --device cuda:0 --peer torch --scale 4   # vs torch.linalg
    python bench/bench_linalg.py --dtype complex128   # complex matrices (the c/z routines)

Cases (issue 22): solve 1024 x 1024 (one right-hand side), solve of a batch 512 x 64 x 64,
cholesky 2048 x 2048, svd 512 x 512, eigh 1024 x 1024, and batches of small matrices: eigh
4096 x 16 x 16, svd 1024 x 32 x 32 (not scaled). Each result is checked against NumPy.
"""
import argparse

import numpy as np

import dlarray as xp
from dlarray import linalg as la
from report import median_time


def cases(rng, dtype, scale):
    """(name, shape text, ours(x...), numpy(a...), host inputs); matrix sizes times scale."""
    def randn(shape):  # complex parts too for a complex dtype
        z = rng.standard_normal(shape)
        return z + 1j * rng.standard_normal(shape) if np.dtype(dtype).kind == "c" else z

    def spd(batch, n):  # symmetric (complex: Hermitian) positive definite
        a = randn(batch + (n, n))
        return (a @ np.conj(np.swapaxes(a, -1, -2)) / n + np.eye(n)).astype(dtype)

    def system(batch, n):
        return (randn(batch + (n, n)) + np.sqrt(n) * np.eye(n)).astype(dtype)

    n1, n2, n3, n4 = 1024 * scale, 64 * scale, 2048 * scale, 512 * scale
    return [
        ("solve", "%dx%d" % (n1, n1), la.solve, np.linalg.solve,
         [system((), n1), randn(n1).astype(dtype)]),
        ("solve", "512x%dx%d" % (n2, n2), la.solve, np.linalg.solve,
         [system((512,), n2), randn((512, n2, 1)).astype(dtype)]),
        ("cholesky", "%dx%d" % (n3, n3), la.cholesky, np.linalg.cholesky, [spd((), n3)]),
        ("svd", "%dx%d" % (n4, n4), lambda x: la.svd(x, full_matrices=False),
         lambda a: np.linalg.svd(a, full_matrices=False),
         [randn((n4, n4)).astype(dtype)]),
        ("eigh", "%dx%d" % (n1, n1), la.eigh, np.linalg.eigh, [spd((), n1)]),
        # gpulinalg: stacks of small matrices (cuda: one syevjBatched / gesvdjBatched call; 32 is
        # cuSOLVER's limit for them, so these sizes do not scale).
        ("eigh", "4096x16x16", la.eigh, np.linalg.eigh, [spd((4096,), 16)]),
        ("svd", "1024x32x32", lambda x: la.svd(x, full_matrices=False),
         lambda a: np.linalg.svd(a, full_matrices=False), [randn((1024, 32, 32)).astype(dtype)]),
    ]


def torch_peer(name, host):
    """torch.linalg's function and its inputs on cuda:0, and its synchronize."""
    import torch
    fns = {"solve": torch.linalg.solve, "cholesky": torch.linalg.cholesky,
           "svd": lambda a: torch.linalg.svd(a, full_matrices=False), "eigh": torch.linalg.eigh}
    return fns[name], [torch.from_numpy(a).cuda() for a in host], torch.cuda.synchronize


def check(name, got, want, dtype):
    rtol = 1e-3 if dtype in (np.float32, np.complex64) else 1e-8
    if name == "svd":  # singular vectors are unique up to sign: compare the values
        got, want = got[1:2], want[1:2]
    elif name == "eigh":
        got, want = got[:1], want[:1]
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.asnumpy(), w, rtol=rtol, atol=rtol * np.abs(w).max())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float64", choices=["float32", "float64", "complex64", "complex128"])
    parser.add_argument("--only", nargs="*", default=None, help="functions to time")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.05)
    parser.add_argument("--peer", default="numpy", choices=["numpy", "torch"],
                        help="torch: torch.linalg on cuda:0")
    parser.add_argument("--scale", type=int, default=1, help="matrix sizes times this")
    args = parser.parse_args()
    ctx = xp.device(args.device)
    dtype = np.dtype(args.dtype)
    rng = np.random.default_rng(0)
    print("device %s, %s" % (ctx, dtype))
    print("%-9s %-12s %11s %11s %7s" % ("function", "shape", "ours ms",
                                         "%s ms" % args.peer, "ratio"))
    for name, shape, ours_fn, peer_fn, host in cases(rng, dtype, args.scale):
        if args.only and name not in args.only:
            continue
        xs = [xp.asarray(a, device=ctx) for a in host]
        peer_args, peer_sync = host, lambda: None
        if args.peer == "torch":
            peer_fn, peer_args, peer_sync = torch_peer(name, host)
        want = peer_fn(*peer_args)
        if args.peer == "torch":
            want = tuple(w.cpu().numpy() for w in want) if isinstance(want, tuple) else \
                want.cpu().numpy()
        check(name, ours_fn(*xs), want, dtype)
        ours = median_time(lambda: ours_fn(*xs), args.repeat, args.min_time,
                           lambda: xp.synchronize(ctx))
        peer = median_time(lambda: peer_fn(*peer_args), args.repeat, args.min_time, peer_sync)
        print("%-9s %-12s %11.3f %11.3f %7.2f" % (name, shape, ours * 1e3, peer * 1e3,
                                                  ours / peer), flush=True)


if __name__ == "__main__":
    main()
