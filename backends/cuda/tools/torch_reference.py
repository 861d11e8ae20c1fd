"""Times PyTorch at the cases cuda_bench printed and prints ours / PyTorch ratios.

    cuda_bench > ours.txt && python3 torch_reference.py ours.txt

Both sides are timed the same way: CUDA events around groups of calls on the current stream,
median of 15 groups after 3 warm-up calls; TF32 is off for PyTorch's matrix products.
"""
import statistics
import sys
import time

import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

TARGETS = {"relu_gradient": 0.6, "softmax": 0.6, "softmax_cross_entropy": 0.35,
           "reduce_sum_axis_zero": 0.8, "matrix_multiply": 1.05}


def host_us(fn, calls=200):
    """Host microseconds per call with the calls queued and not waited for."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t = time.perf_counter() - t0
    torch.cuda.synchronize()
    return t / calls * 1e6


def time_ms(fn, inner):
    for _ in range(3):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(15):
        start.record()
        for _ in range(inner):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / inner)
    return statistics.median(times)


def dims(text):
    return [int(x) for x in text.split("x")]


def case(op, shape):
    """A zero-argument callable running PyTorch's version of op at shape, and its byte count."""
    r = lambda s, lo=-1.0, hi=1.0: torch.empty(s, device="cuda").uniform_(lo, hi)
    if op == "broadcast_to":
        src, dst = (dims(s) for s in shape.split("->"))
        a, o = r(src), torch.empty(dst, device="cuda")
        return (lambda: o.copy_(a.expand(*dst))), 4 * (a.numel() + o.numel())
    if op == "matrix_multiply":
        size, flags = shape.split()
        m, k, n = dims(size)
        ta, tb = flags[0] == "T", flags[1] == "T"
        a = r((k, m) if ta else (m, k))
        b = r((n, k) if tb else (k, n))
        o = torch.empty((m, n), device="cuda")
        return (lambda: torch.matmul(a.T if ta else a, b.T if tb else b, out=o)), 4 * (m * n)
    s = dims(shape)
    n = 1
    for d in s:
        n *= d
    a, b, o = r(s), r(s), torch.empty(s, device="cuda")
    if op == "array_set":
        return (lambda: o.fill_(1.5)), 4 * n
    if op == "matrix_elementwise_add":
        return (lambda: torch.add(a, b, out=o)), 12 * n
    if op == "matrix_elementwise_add_by_const":
        return (lambda: torch.add(a, 0.5, out=o)), 8 * n
    if op == "matrix_elementwise_multiply":
        return (lambda: torch.mul(a, b, out=o)), 12 * n
    if op == "matrix_elementwise_multiply_by_const":
        return (lambda: torch.mul(a, 0.5, out=o)), 8 * n
    if op == "relu":
        return (lambda: torch.clamp_min(a, 0.0, out=o)), 8 * n
    if op == "relu_gradient":
        return (lambda: torch.mul(b, a > 0, out=o)), 12 * n
    if op == "copy":
        return (lambda: o.copy_(a)), 8 * n
    if op == "reduce_sum_axis_zero":
        x = r(s, 0, 20)
        y = torch.empty(s[1:], device="cuda")
        return (lambda: torch.sum(x, dim=0, out=y)), 4 * n
    if op == "softmax":
        x = r(s, -5, 5)
        return (lambda: torch.softmax(x, dim=1)), 8 * n
    if op == "softmax_cross_entropy":
        y = r(s, -5, 5)
        y_ = torch.zeros(s, device="cuda")
        y_[torch.arange(s[0]), torch.randint(0, s[1], (s[0],))] = 1.0
        loss = torch.empty(1, device="cuda")
        return (lambda: loss.copy_(-(y_ * torch.log_softmax(y, dim=1)).sum(dim=1).mean())), 8 * n
    raise ValueError(op)


def main(path):
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print(f"{'op':38s} {'shape':22s} {'ours ms':>10s} {'torch ms':>10s} {'ratio':>7s} target"
          "   host us/call ours, torch (small sizes)")
    for line in open(path):
        if not line.startswith("BENCH "):
            continue
        parts = line.split()
        op = parts[1]
        ms_at = parts.index("ms")
        shape = " ".join(parts[2:ms_at - 1])
        ours = float(parts[ms_at - 1])
        fn, nbytes = case(op, shape)
        inner = 20 if (op != "matrix_multiply" and nbytes < 64e6) or (
            op == "matrix_multiply" and "8192" not in shape) else 1
        theirs = time_ms(fn, inner)
        target = TARGETS.get(op, 1.0)
        flag = "" if ours / theirs <= target else " <-- over"
        host = ""
        if "host" in parts and inner > 1:
            host = f"   {float(parts[parts.index('host') + 1]):5.2f}, {host_us(fn):5.2f}"
        print(f"{op:38s} {shape:22s} {ours:10.4f} {theirs:10.4f} {ours / theirs:7.2f} "
              f"{target:.2f}{flag}{host}")
        del fn
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main(sys.argv[1])
