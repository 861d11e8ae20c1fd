#!/usr/bin/env python3
"""dlarray.fuse on ``a*b + c*d - e`` (float32, 5 inputs, 1 output): the fused call's median time
next to the memory floor (6 arrays moved at this device's measured copy bandwidth), the unfused
dlarray expression and, in the same run, NumPy and numexpr on the CPU (PyTorch eager and
torch.compile, CuPy's fuse on a GPU, where installed). Issue 23's targets: <= 1.1x the floor on
the CPU at 4096 x 4096 (so <= numexpr, >= 2x faster than NumPy); <= 1.05x the floor and <= 1.0x
torch.compile on a GPU at 8192 x 8192; first call <= 2 s on the CPU with a cold cache (50 ms on
CUDA), <= 1 ms with a warm disk cache; a cached call's host overhead <= 2 us (CPU), 5 us (GPU).

    python bench/fuse.py                       # cpu, 4096 x 4096
    python bench/fuse.py --device cuda:0       # 8192 x 8192
    python bench/fuse.py --device opencl:0     # the same table (no target)

The first-call times are measured in child processes with an empty and then a filled
``DLARRAY_CACHE_DIR``: the medians of --first-calls processes each (each cold one with a cache
of its own). --first-call-only prints only them; --warm-first-call-only only the warm one (one
process fills the cache), with the median of ``dlarray.fuse(fn)`` itself (its imports):

    python bench/fuse.py --device cuda:0 --warm-first-call-only --first-calls 15
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

import dlarray as xp
from report import median_time

EXPRESSION = "a*b + c*d - e"


def expression(a, b, c, d, e):
    return a * b + c * d - e


def summed_over(axis):
    """sum(a*b + c*d - e, axis=axis) as a function of the five arrays."""
    def summed(a, b, c, d, e):
        return xp.sum(expression(a, b, c, d, e), axis=axis)
    return summed


FIRST_CALL = r"""
import sys, time, numpy as np, dlarray as xp
ctx = xp.device(sys.argv[1])
xs = [xp.asarray(np.ones((64, 64), np.float32), device=ctx) for _ in range(5)]
xp.synchronize(ctx)
d = time.perf_counter(); f = xp.fuse(lambda a, b, c, d, e: a*b + c*d - e)
d = time.perf_counter() - d
t = time.perf_counter(); f(*xs); xp.synchronize(ctx); t = time.perf_counter() - t
print(t, f.explain(*xs)["backend"], d)
"""


def first_call(device, cache, decoration=False):
    """(seconds of the first call, its backend), and of dlarray.fuse(fn) with decoration."""
    env = dict(os.environ, DLARRAY_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", FIRST_CALL, device], env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    return (float(out[0]), out[1]) + ((float(out[2]),) if decoration else ())


def peer_rows(host, ctx, with_sum, timer, axis=None):
    """(name, seconds) of the peers found: NumPy and numexpr on the CPU; torch eager,
    torch.compile and cupy.fuse on a GPU (with a trailing sum over ``axis``: torch's rows)."""
    rows = []
    if ctx.device_type != 2:
        reduce = np.sum if with_sum else (lambda v: v)
        rows.append(("NumPy" + " + sum" * with_sum, timer(lambda: reduce(expression(*host)))))
        try:
            import numexpr
            names = dict(zip("abcde", host))
            text = "sum(%s)" % EXPRESSION if with_sum else EXPRESSION
            rows.append(("numexpr (%d threads)" % numexpr.get_num_threads(),
                         timer(lambda: numexpr.evaluate(text, local_dict=names))))
        except ImportError:
            print("numexpr is not installed (pip install numexpr): its row is left out")
        return rows
    try:
        import torch
        peer = [torch.from_numpy(h).to(torch.device("cuda", ctx.device_id)) for h in host]
        eager = ((lambda *v: torch.sum(expression(*v))) if with_sum and axis is None else
                 (lambda *v: torch.sum(expression(*v), dim=axis)) if with_sum else expression)
        compiled = torch.compile(eager)
        compiled(*peer)
        rows.append(("torch eager", timer(lambda: eager(*peer), torch.cuda.synchronize)))
        rows.append(("torch.compile", timer(lambda: compiled(*peer), torch.cuda.synchronize)))
    except ImportError:
        print("torch is not installed: its rows are left out")
    if axis is not None:
        return rows
    try:
        import cupy
        peer = [cupy.asarray(h) for h in host]
        def expression_sum(a, b, c, d, e):  # cupy.fuse names its kernel after the function,
            return cupy.sum(expression(a, b, c, d, e))  # so no lambda: "<lambda>" is no name

        cfused = cupy.fuse(expression_sum if with_sum else expression)
        rows.append(("cupy.fuse", timer(lambda: cfused(*peer), cupy.cuda.Device().synchronize)))
    except ImportError:
        print("cupy is not installed: its row is left out")
    return rows


def print_table(title, rows, floor, ours):
    print(title)
    print("%-40s %10s %9s %9s" % ("", "ms", "/ floor", "fused /"))
    for name, t in rows:
        print("%-40s %10.3f %9.2f %9.2f" % (name, t * 1e3, t / floor, ours / t))


def print_overhead(host, ctx, fused, fused_sum, timer):
    """The host overhead of a cached call: the fused expression on 1 x 1 arrays (the kernel
    itself is a few nanoseconds; rounds of calls with one synchronization at the end, so on a
    GPU the time per call is the host's while it stays ahead of the GPU), next to numexpr's ``evaluate`` of the same expression and one
    NumPy ``a * b`` on the same arrays (on the CPU)."""
    small_host = [h[:1, :1].copy() for h in host]
    small = [xp.asarray(h, device=ctx) for h in small_host]
    fused(*small)
    fused_sum(*small)
    rows = [("dlarray.fuse, cached call", timer(lambda: fused(*small))),
            ("dlarray.fuse + sum, cached call", timer(lambda: fused_sum(*small)))]
    if ctx.device_type != 2:
        a, b = small_host[:2]
        rows.append(("NumPy a * b (one op)", timer(lambda: a * b, lambda: None)))
        try:
            import numexpr
            names = dict(zip("abcde", small_host))
            numexpr.evaluate(EXPRESSION, local_dict=names)
            rows.append(("numexpr.evaluate",
                         timer(lambda: numexpr.evaluate(EXPRESSION, local_dict=names),
                               lambda: None)))
        except ImportError:
            pass
    print("host overhead of a cached call, %s on 1 x 1 arrays (target: <= %d us):"
          % (EXPRESSION, 5 if ctx.device_type == 2 else 2))
    for name, t in rows:
        print("%-40s %10.2f us %9.2f" % (name, t * 1e6, rows[0][1] / t))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--n", type=int, default=None, help="the arrays are n x n")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.2)
    parser.add_argument("--first-calls", type=int, default=1,
                        help="child processes per first-call time (the median is printed)")
    parser.add_argument("--first-call-only", action="store_true",
                        help="print only the first-call times")
    parser.add_argument("--warm-first-call-only", action="store_true",
                        help="print only the first call with a warm disk cache")
    parser.add_argument("--reduce-blocks", default="",
                        help="comma-separated block counts for the GPU reduction to aim for "
                             "(dlarray._fuse_reduce_gpu._GPU_BLOCKS): first a row of "
                             "sum(...) and of its sums over axis 0 and 1 for each")
    args = parser.parse_args()
    if args.first_call_only:
        print_first_calls(args.device, args.first_calls)
        return
    if args.warm_first_call_only:
        print_warm_first_call(args.device, args.first_calls)
        return
    ctx = xp.device(args.device)
    n = args.n or (8192 if ctx.device_type == 2 else 4096)
    rng = np.random.default_rng(0)
    host = [rng.standard_normal((n, n)).astype(np.float32) for _ in range(5)]
    ours = [xp.asarray(h, device=ctx) for h in host]
    fused = xp.fuse(expression)
    fused_sum = xp.fuse(lambda a, b, c, d, e: xp.sum(a * b + c * d - e))
    np.testing.assert_allclose(fused(*ours).asnumpy(), expression(*host), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(float(fused_sum(*ours).asnumpy()),
                               float(expression(*host).astype(np.float64).sum()), rtol=1e-3,
                               atol=1e-1 * n)

    def timer(fn, sync=lambda: xp.synchronize(ctx)):
        return median_time(fn, args.repeat, args.min_time, sync)
    copy_out = xp.empty((n, n), ctx, np.float32)
    bandwidth = 2 * host[0].nbytes / timer(lambda: xp.ops.copy(ours[0], copy_out))
    if args.reduce_blocks:
        print_reduce_blocks(args.reduce_blocks, ours, 5 * host[0].nbytes / bandwidth, timer)
    floor = 6 * host[0].nbytes / bandwidth
    t_fused = timer(lambda: fused(*ours))
    rows = [("memory floor (6 arrays at %.1f GB/s)" % (bandwidth / 1e9), floor),
            ("dlarray.fuse (%s)" % fused.explain(*ours)["backend"], t_fused),
            ("dlarray unfused", timer(lambda: expression(*ours)))]
    print_table("%s, float32 %d x %d on %r (medians of %d)" % (EXPRESSION, n, n, ctx,
                                                               args.repeat),
                rows + peer_rows(host, ctx, False, timer), floor, t_fused)
    # With a trailing sum the floor is the 5 inputs read once: the fused kernel folds each
    # element into the sum in registers (the unfused expression moves 7 arrays and more).
    floor_sum = 5 * host[0].nbytes / bandwidth
    t_sum = timer(lambda: fused_sum(*ours))
    rows = [("memory floor (5 arrays read)", floor_sum), ("dlarray.fuse + sum (%s)" % ("one kernel" if fused_sum.explain(*ours)["reduction_fused"]
                                   else "two kernels"), t_sum),
            ("dlarray unfused + sum", timer(lambda: xp.sum(expression(*ours))))]
    print_table("sum(%s):" % EXPRESSION, rows + peer_rows(host, ctx, True, timer), floor_sum,
                t_sum)
    if ctx.device_type == 2:  # the sums over one axis: one block per row, or per column range
        for axis in (0, 1):
            fused_axis = xp.fuse(summed_over(axis))
            t_axis = timer(lambda: fused_axis(*ours))
            rows = [("memory floor (5 arrays read)", floor_sum),
                    ("dlarray.fuse + sum(axis=%d)" % axis, t_axis)]
            print_table("sum(%s, axis=%d):" % (EXPRESSION, axis),
                        rows + peer_rows(host, ctx, True, timer, axis), floor_sum, t_axis)
    print_overhead(host, ctx, fused, fused_sum, timer)
    print_first_calls(args.device, args.first_calls)


def print_reduce_blocks(counts, ours, floor, timer):
    """The fused sums' times with the GPU reduction aiming for each of ``counts`` blocks."""
    from dlarray import _fuse_reduce_gpu
    saved = _fuse_reduce_gpu._GPU_BLOCKS
    print("%-40s %10s %9s" % ("sum over axis, blocks aimed for", "ms", "/ floor"))
    try:
        for count in (int(c) for c in counts.split(",")):
            _fuse_reduce_gpu._GPU_BLOCKS = count
            for axis in (None, 0, 1):
                f = xp.fuse(summed_over(axis))  # new: a cached call keeps its first grid
                t = timer(lambda: f(*ours))
                print("%-40s %10.3f %9.2f" % ("axis=%s, %d blocks" % (axis, count), t * 1e3,
                                              t / floor))
    finally:
        _fuse_reduce_gpu._GPU_BLOCKS = saved


def print_first_calls(device, count):
    """The median first call over ``count`` processes with a cold cache each, then over
    ``count`` processes sharing one warm cache."""
    cold, warm = [], []
    for _ in range(count):
        with tempfile.TemporaryDirectory() as cache:
            t, backend = first_call(device, cache)
            cold.append(t)
    with tempfile.TemporaryDirectory() as cache:
        first_call(device, cache)
        for _ in range(count):
            warm.append(first_call(device, cache)[0])
    print("first call (%s, medians of %d): %.1f ms with a cold cache, %.3f ms with a warm disk "
          "cache" % (backend, count, statistics.median(cold) * 1e3,
                     statistics.median(warm) * 1e3))


def print_warm_first_call(device, count):
    """The median first call over ``count`` processes sharing one warm cache (filled by one
    process before), and the median of dlarray.fuse(fn) in them."""
    with tempfile.TemporaryDirectory() as cache:
        first_call(device, cache)
        runs = [first_call(device, cache, decoration=True) for _ in range(count)]
    print("first call (%s, median of %d processes) with a warm disk cache: %.3f ms "
          "(dlarray.fuse(fn) before it: %.2f ms; target: <= 1 ms)"
          % (runs[0][1], count, statistics.median(r[0] for r in runs) * 1e3,
             statistics.median(r[2] for r in runs) * 1e3))


if __name__ == "__main__":
    main()
