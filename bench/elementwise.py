#!/usr/bin/env python3
"""Every elementwise function of the array API on float32: our median time next to the peer's,
measured in the same process, and the ratio ours / peer's (below 1 means we are faster). Issue 21's
targets: at most 1.0x NumPy on cpu (4096 x 4096), at most 1.0x PyTorch on a GPU (8192 x 8192), and a
1-element op's per-call overhead at most NumPy's on cpu.

    python bench/elementwise.py                      # cpu against NumPy, 4096 x 4096
    python bench/elementwise.py --device cuda:0      # against PyTorch on the same GPU, 8192 x 8192
    python bench/elementwise.py --device opencl:0    # the same table against NumPy (no target)
    python bench/elementwise.py --only exp add --n 1024
    python bench/elementwise.py --per-call           # only the 1-element rows

Inputs are drawn inside each function's domain (log of positive values, acosh of values >= 1, ...).
Each result is checked against NumPy first (float32 tolerance). The last rows time one call on a
1-element array (the per-call overhead).
"""
import argparse

import numpy as np

import dlarray as xp
from report import cpu_model, median_time

# name -> (the low and high of its inputs, arity); the peer's function has the same name in NumPy
# and PyTorch except where PEER_NAMES says.
UNARY = {
    "abs": (-4, 4), "acos": (-1, 1), "acosh": (1, 8), "asin": (-1, 1), "asinh": (-4, 4),
    "atan": (-4, 4), "atanh": (-0.99, 0.99), "ceil": (-4, 4), "cos": (-4, 4), "cosh": (-4, 4),
    "exp": (-4, 4), "expm1": (-4, 4), "floor": (-4, 4), "isfinite": (-4, 4), "isinf": (-4, 4),
    "isnan": (-4, 4), "log": (0.01, 8), "log1p": (-0.9, 8), "log2": (0.01, 8), "log10": (0.01, 8),
    "logical_not": (-1, 1), "negative": (-4, 4), "positive": (-4, 4), "reciprocal": (0.5, 4),
    "round": (-4, 4), "sign": (-4, 4), "signbit": (-4, 4), "sin": (-4, 4), "sinh": (-4, 4),
    "sqrt": (0, 8), "square": (-4, 4), "tan": (-1.5, 1.5), "tanh": (-4, 4), "trunc": (-4, 4),
}
BINARY = {
    "add": (-4, 4), "atan2": (-4, 4), "copysign": (-4, 4), "divide": (0.5, 4), "equal": (-2, 2),
    "floor_divide": (0.5, 4), "greater": (-4, 4), "hypot": (-4, 4), "less_equal": (-4, 4),
    "logaddexp": (-4, 4), "maximum": (-4, 4), "minimum": (-4, 4), "multiply": (-4, 4),
    "nextafter": (-4, 4), "pow": (0.5, 2), "remainder": (0.5, 4), "subtract": (-4, 4),
}
BOOL_INPUT = {"logical_not"}  # applied to x > 0, as the standard takes bool only
PEER_NAMES = {  # ours -> (NumPy's, PyTorch's)
    "acos": ("arccos", "acos"), "acosh": ("arccosh", "acosh"), "asin": ("arcsin", "asin"),
    "asinh": ("arcsinh", "asinh"), "atan": ("arctan", "atan"), "atanh": ("arctanh", "atanh"),
    "atan2": ("arctan2", "atan2"), "pow": ("power", "pow"), "signbit": ("signbit", "signbit"),
    "round": ("round", "round"), "less_equal": ("less_equal", "le"), "greater": ("greater", "gt"),
    "equal": ("equal", "eq"), "copysign": ("copysign", "copysign"),
    "remainder": ("remainder", "remainder"), "floor_divide": ("floor_divide", "floor_divide"),
    "logaddexp": ("logaddexp", "logaddexp"), "reciprocal": ("reciprocal", "reciprocal"),
    "square": ("square", "square"), "positive": ("positive", "positive"),
}


def peer_function(name, peer, torch):
    numpy_name, torch_name = PEER_NAMES.get(name, (name, name))
    if torch is None:
        return getattr(np, numpy_name)
    return getattr(torch, torch_name)


def inputs(name, shape, rng):
    low, high = UNARY.get(name) or BINARY[name]
    arity = 1 if name in UNARY else 2
    host = [rng.uniform(low, high, shape).astype(np.float32) for _ in range(arity)]
    if name in BOOL_INPUT:
        host = [a > 0 for a in host]
    if name == "equal":  # some equal pairs
        host[1][::3] = host[0][::3]
    return host


def check(name, got, host):
    numpy_name = PEER_NAMES.get(name, (name, name))[0]
    want = getattr(np, numpy_name)(*host)
    if want.dtype == np.bool_:
        mismatch = np.count_nonzero(got != want)
        assert mismatch <= got.size // 10**5, (name, mismatch)  # ties at float32 rounding
    else:
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6, err_msg=name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--n", type=int, default=None,
                        help="side of the square arrays (4096 on cpu/opencl, 8192 on cuda)")
    parser.add_argument("--only", nargs="*", default=None, help="functions to time")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.05)
    parser.add_argument("--per-call", action="store_true",
                        help="only the per-call rows (1-element operands)")
    args = parser.parse_args()
    ctx = xp.device(args.device)
    torch = None
    if ctx.device_type == 2:
        import torch  # noqa: F811  (the GPU's peer)
    n = args.n or (8192 if torch else 4096)
    peer_name = "torch" if torch else "numpy"
    sync_ours = lambda: xp.synchronize(ctx)  # noqa: E731
    sync_peer = torch.cuda.synchronize if torch else (lambda: None)
    rng = np.random.default_rng(0)
    print(f"{cpu_model()}; dlarray {xp.__version__}, numpy {np.__version__}")
    if args.per_call:
        per_call(ctx, torch, args, sync_ours, sync_peer)
        return
    print(f"float32 {n} x {n} on {ctx}, peer {peer_name}, medians of {args.repeat}")
    print(f"{'function':14} {'ours ms':>10} {peer_name + ' ms':>10} {'ratio':>7}")
    names = args.only or sorted(UNARY) + sorted(BINARY)
    ratios = []
    for name in names:
        host = inputs(name, (n, n), rng)
        ours_in = [xp.asarray(a, device=ctx) for a in host]
        ours_fn = getattr(xp, name)
        check(name, ours_fn(*ours_in).asnumpy(), host)
        peer_fn = peer_function(name, peer_name, torch)
        peer_in = [torch.from_numpy(a).to(torch.device("cuda", ctx.device_id)) for a in host] \
            if torch else host
        ours = median_time(lambda: ours_fn(*ours_in), args.repeat, args.min_time, sync_ours)
        peer = median_time(lambda: peer_fn(*peer_in), args.repeat, args.min_time, sync_peer)
        ratios.append(ours / peer)
        print(f"{name:14} {ours * 1e3:10.3f} {peer * 1e3:10.3f} {ours / peer:7.2f}", flush=True)
    worst = max(ratios)
    print(f"{len(ratios)} functions: median ratio {np.median(ratios):.2f}, worst {worst:.2f}")
    per_call(ctx, torch, args, sync_ours, sync_peer)


# The per-call rows: (label, function of the operands x, y); the same expression runs on ours
# and on the peer's arrays (NumPy's functions for the namespaced ones).
PER_CALL = [("x + y", lambda m, x, y: x + y), ("x * 2", lambda m, x, y: x * 2),
            ("x - 1.5", lambda m, x, y: x - 1.5), ("x / y", lambda m, x, y: x / y),
            ("exp(x)", lambda m, x, y: m.exp(x)), ("sum(x)", lambda m, x, y: m.sum(x)),
            ("x[0]", lambda m, x, y: x[0]), ("x[...]", lambda m, x, y: x[...]),
            ("x[1:]", lambda m, x, y: x[1:])]

# The dtypes of the per-call rows (None: every row): issue 21 names float32 and float64, and int32
# for x + y.
PER_CALL_DTYPES = [(np.float32, None), (np.float64, ("x + y", "x / y", "exp(x)")),
                   (np.int32, ("x + y",))]


def per_call(ctx, torch, args, sync_ours, sync_peer):
    """The per-call overhead: 1-element float32 operands, so the time is all dispatch. The
    rounds of ours and the peer's alternate, so that a busy machine slows both alike."""
    peer_name = "torch" if torch else "numpy"
    print(f"{'1-element op':22} {'ours us':>10} {peer_name + ' us':>10} {'ratio':>7}")
    peer_ns = torch if torch else np
    for dtype, labels in PER_CALL_DTYPES:
        host = [np.ones(1, dtype), np.full(1, 2, dtype)]
        ours_in = [xp.asarray(a, device=ctx) for a in host]
        peer_in = [torch.from_numpy(a).to(torch.device("cuda", ctx.device_id)) for a in host] \
            if torch else host
        for label, fn in PER_CALL:
            if labels is not None and label not in labels:
                continue
            ours, peer = [], []
            for _ in range(args.repeat):
                ours.append(median_time(lambda: fn(xp, *ours_in), 1, args.min_time, sync_ours))
                peer.append(median_time(lambda: fn(peer_ns, *peer_in), 1, args.min_time,
                                        sync_peer))
            o, p = np.median(ours), np.median(peer)
            name = f"{label} {np.dtype(dtype).name}"
            print(f"{name:22} {o * 1e6:10.2f} {p * 1e6:10.2f} {o / p:7.2f}", flush=True)


if __name__ == "__main__":
    main()
