"""Timing every op against a peer (NumPy on the CPU, PyTorch on the GPU) in one process.

Shared by ``python -m dlarray`` (a quick check of every device) and ``bench/ops.py`` (the full
benchmark). Each case builds its inputs once, checks our result against NumPy, then times both
sides and reports medians and the ratio ours / peer's.
"""
import statistics
import time

import numpy as np

from . import _core, ops

SEED_SIZES = {"elementwise": (500, 200), "broadcast": ((200, 300), (130, 200, 300)),
              "reduce": (500, 200, 100), "softmax": (400, 1000), "matmul": [(500, 700, 1000)]}
LARGE_SIZES = {"elementwise": (4096, 4096), "broadcast": ((4096,), (4096, 4096)),
               "reduce": (500, 200, 100), "softmax": (4096, 4096),
               # tall and narrow, wide, one column: the three paths of reduce_sum_axis_zero
               "reduce_more": [(8_000_000, 2), (1_000_000, 16), (4096, 4096), (16_000_000,)],
               "matmul": [(1024, 1024, 1024), (2048, 2048, 2048)]}
GPU_LARGE_SIZES = {"elementwise": (8192, 8192), "broadcast": ((8192,), (8192, 8192)),
                   "reduce": (500, 200, 100), "softmax": (8192, 8192),
                   "reduce_more": [(50_000_000, 2), (4_000_000, 16), (8192, 8192), (64_000_000,)],
                   "matmul": [(8192, 8192, 8192)]}


class Case:
    """One op at one size: ours(arrays), numpy_fn(arrays) -> reference, torch_fn(tensors)."""

    def __init__(self, op, shape_text, inputs, out_shape, ours, numpy_fn, torch_fn, nbytes=0,
                 flops=0, rtol=1e-5, ref_fn=None):
        self.op, self.shape_text, self.inputs, self.out_shape = op, shape_text, inputs, out_shape
        self.ours, self.numpy_fn, self.torch_fn = ours, numpy_fn, torch_fn
        self.nbytes, self.flops, self.rtol = nbytes, flops, rtol
        self.ref_fn = ref_fn or numpy_fn  # the reference of the check (numpy_fn is the peer)


def _softmax_np(x, out):
    np.subtract(x, x.max(axis=1, keepdims=True), out=out)
    np.exp(out, out=out)
    out /= out.sum(axis=1, keepdims=True)


def _sigmoid_np(x, out):
    np.negative(x, out=out)
    np.exp(out, out=out)
    out += np.float32(1)
    np.reciprocal(out, out=out)


def _sce_np(y, y_):
    m = y.max(axis=1, keepdims=True)
    lse = np.log(np.exp(y - m).sum(axis=1, keepdims=True)) + m
    return np.array([-(y_ * (y - lse)).sum(axis=1).mean()], np.float32)


def _sce_torch(torch, y, y_):
    return -(y_ * torch.log_softmax(y, dim=1)).sum(dim=1).mean()


def cases(sizes, rng):
    """Every core op at the given sizes."""
    def r(shape, lo=-1.0, hi=1.0):
        return rng.uniform(lo, hi, shape).astype(np.float32)

    ew = sizes["elementwise"]
    n = int(np.prod(ew))
    text = "x".join(map(str, ew))
    out = []
    out.append(Case("array_set", text, [], ew, lambda o: ops.array_set(o, 1.5),
                    lambda o: o.fill(1.5), lambda t, o: o.fill_(1.5), nbytes=4 * n))
    out.append(Case("matrix_elementwise_add", text, [r(ew), r(ew)], ew,
                    lambda a, b, o: ops.matrix_elementwise_add(a, b, o),
                    lambda a, b, o: np.add(a, b, out=o), lambda t, a, b, o: t.add(a, b, out=o),
                    nbytes=12 * n))
    out.append(Case("matrix_elementwise_add_by_const", text, [r(ew)], ew,
                    lambda a, o: ops.matrix_elementwise_add_by_const(a, 0.5, o),
                    lambda a, o: np.add(a, np.float32(0.5), out=o),
                    lambda t, a, o: t.add(a, 0.5, out=o), nbytes=8 * n))
    out.append(Case("matrix_elementwise_multiply", text, [r(ew), r(ew)], ew,
                    lambda a, b, o: ops.matrix_elementwise_multiply(a, b, o),
                    lambda a, b, o: np.multiply(a, b, out=o),
                    lambda t, a, b, o: t.mul(a, b, out=o), nbytes=12 * n))
    out.append(Case("matrix_elementwise_multiply_by_const", text, [r(ew)], ew,
                    lambda a, o: ops.matrix_elementwise_multiply_by_const(a, 0.5, o),
                    lambda a, o: np.multiply(a, np.float32(0.5), out=o),
                    lambda t, a, o: t.mul(a, 0.5, out=o), nbytes=8 * n))
    out.append(Case("relu", text, [r(ew)], ew, lambda a, o: ops.relu(a, o),
                    lambda a, o: np.maximum(a, np.float32(0), out=o),
                    lambda t, a, o: t.clamp_min(a, 0.0, out=o), nbytes=8 * n))
    # The elementwise table's ops (positive inputs for log).
    out.append(Case("exp", text, [r(ew)], ew, lambda a, o: ops.exp(a, o),
                    lambda a, o: np.exp(a, out=o), lambda t, a, o: t.exp(a, out=o), nbytes=8 * n))
    out.append(Case("log", text, [r(ew, 0.01, 10.0)], ew, lambda a, o: ops.log(a, o),
                    lambda a, o: np.log(a, out=o), lambda t, a, o: t.log(a, out=o), nbytes=8 * n))
    out.append(Case("tanh", text, [r(ew, -3.0, 3.0)], ew, lambda a, o: ops.tanh(a, o),
                    lambda a, o: np.tanh(a, out=o), lambda t, a, o: t.tanh(a, out=o),
                    nbytes=8 * n))
    out.append(Case("relu_gradient", text, [r(ew), r(ew)], ew,
                    lambda a, g, o: ops.relu_gradient(a, g, o),
                    lambda a, g, o: np.multiply(g, a > 0, out=o),
                    lambda t, a, g, o: t.mul(g, a > 0, out=o), nbytes=12 * n))
    out.append(Case("copy", text, [r(ew)], ew, lambda a, o: ops.copy(a, o),
                    lambda a, o: np.copyto(o, a), lambda t, a, o: o.copy_(a), nbytes=8 * n))
    if "sigmoid" in ops.op_names():  # the reference op plugin (plugins/sigmoid)
        out.append(Case("sigmoid (plugin op)", text, [r(ew, -8, 8)], ew,
                        lambda a, o: ops.sigmoid(a, o), _sigmoid_np,
                        lambda t, a, o: t.sigmoid(a, out=o), nbytes=8 * n))
    bin_, bout = sizes["broadcast"]
    out.append(Case("broadcast_to", "x".join(map(str, bin_)) + "->" + "x".join(map(str, bout)),
                    [r(bin_)], bout, lambda a, o: ops.broadcast_to(a, o),
                    lambda a, o: np.copyto(o, np.broadcast_to(a, bout)),
                    lambda t, a, o: o.copy_(a.expand(*bout)),
                    nbytes=4 * int(np.prod(bout)) + 4 * int(np.prod(bin_))))
    for rs in [sizes["reduce"]] + list(sizes.get("reduce_more", ())):
        # Checked against a float64 sum: NumPy's float32 sum over many rows drifts.
        out.append(Case("reduce_sum_axis_zero", "x".join(map(str, rs)), [r(rs, 0, 20)], rs[1:],
                        lambda a, o: ops.reduce_sum_axis_zero(a, o),
                        lambda a, o: np.sum(a, axis=0, out=o),
                        lambda t, a, o: t.sum(a, dim=0, out=o),
                        nbytes=4 * int(np.prod(rs)), rtol=1e-6,
                        ref_fn=lambda a, o: np.copyto(o, a.sum(axis=0, dtype=np.float64))))
    sm = sizes["softmax"]
    smt = "x".join(map(str, sm))
    out.append(Case("softmax", smt, [r(sm, -5, 5)], sm, lambda a, o: ops.softmax(a, o), _softmax_np,
                    lambda t, a, o: t.softmax(a, dim=1), nbytes=8 * int(np.prod(sm))))
    y_ = np.zeros(sm, np.float32)
    y_[np.arange(sm[0]), rng.integers(0, sm[1], sm[0])] = 1.0
    out.append(Case("softmax_cross_entropy", smt, [r(sm, -5, 5), y_], (1,),
                    lambda a, b, o: ops.softmax_cross_entropy(a, b, o),
                    lambda a, b, o: np.copyto(o, _sce_np(a, b)),
                    lambda t, a, b, o: _sce_torch(t, a, b),
                    nbytes=8 * int(np.prod(sm)), rtol=1e-4))
    for (m, k, nn) in sizes["matmul"]:
        for ta, tb in ((False, False), (False, True), (True, False), (True, True)):
            if (m, k, nn) != sizes["matmul"][0] and (ta or tb):
                continue  # all transpose flags at the first size only
            a = r((k, m) if ta else (m, k))
            b = r((nn, k) if tb else (k, nn))
            flags = ("T" if ta else "N") + ("T" if tb else "N")

            def ours(x, y, o, ta=ta, tb=tb):
                ops.matrix_multiply(x, ta, y, tb, o)

            def ref(x, y, o, ta=ta, tb=tb):
                np.matmul(x.T if ta else x, y.T if tb else y, out=o)

            def tref(t, x, y, o, ta=ta, tb=tb):
                t.matmul(x.T if ta else x, y.T if tb else y, out=o)

            out.append(Case("matrix_multiply", f"{m}x{k}x{nn} {flags}", [a, b], (m, nn), ours, ref,
                            tref, flops=2 * m * k * nn, rtol=1e-3))
    return out


def median_time(fn, repeat, min_time=0.0):
    """Median seconds of fn() over `repeat` runs (more while min_time has not passed)."""
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < repeat or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if len(times) >= 10 * repeat:
            break
    return statistics.median(times)


def check(case, ctx):
    """Runs our op once and compares with NumPy; returns (ok, message)."""
    from . import array, empty
    args = [array(x, ctx) for x in case.inputs]
    o = empty(case.out_shape, ctx)
    case.ours(*args, o)
    ref = np.empty(case.out_shape, np.float32)
    case.ref_fn(*case.inputs, ref)
    got = o.asnumpy()
    err = float(np.linalg.norm((got - ref).ravel()) / max(np.linalg.norm(ref.ravel()), 1e-30))
    return err <= case.rtol, err


def time_ours_cpu(case, ctx, repeat, min_time):
    from . import array, empty
    args = [array(x, ctx) for x in case.inputs]
    o = empty(case.out_shape, ctx)
    return median_time(lambda: case.ours(*args, o), repeat, min_time)


def time_numpy(case, repeat, min_time):
    o = np.empty(case.out_shape, np.float32)
    return median_time(lambda: case.numpy_fn(*case.inputs, o), repeat, min_time)


def overhead_per_call(ctx, calls=200000):
    """Seconds per call of an op on 1-element arrays (Python + binding + dispatch + kernel)."""
    from . import array, empty, synchronize
    a, o = array([1.0], ctx), empty((1,), ctx)
    relu = ops.relu
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            relu(a, o)
        synchronize(ctx)
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def numpy_overhead_per_call(calls=200000):
    a, o = np.ones(1, np.float32), np.empty(1, np.float32)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            np.maximum(a, 0, out=o)
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def rate(case, seconds):
    if case.flops:
        return f"{case.flops / seconds / 1e9:8.1f} GFLOP/s"
    return f"{case.nbytes / seconds / 1e9:8.1f} GB/s   "


def stream_handle(ctx):
    """Our stream (cudaStream_t as an int) for ctx, or 0."""
    return _core.stream_handle(ctx)
