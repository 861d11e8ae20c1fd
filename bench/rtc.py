"""dlarray.rtc: launch overhead of a cached RawKernel on a 1-element array next to CuPy's
RawKernel, an ElementwiseKernel add at 8192x8192 next to the built-in add, and NVRTC's cold
compile time next to the warm load from the disk cache, all measured in this run.

Usage: python bench/rtc.py [--size 8192] [--launches 20000] [--json FILE]

Targets (issue 9): launch overhead <= 1.0x CuPy's; ElementwiseKernel add <= 1.05x the built-in
add; warm load <= 5 ms. Without a GPU only the compile times are measured (for sm_90, no load).
"""
import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

import numpy as np

import dlarray
import dlarray.rtc as rtc
import report

KERNEL = r"""
extern "C" __global__ void touch(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
"""


def median(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def per_launch(launch, sync, launches, repeat=7):
    """Seconds per call of launch() over a loop of `launches` calls (then one sync)."""
    def loop():
        for _ in range(launches):
            launch()
        sync()
    loop()  # warm up: compile, load, allocate
    return median(loop, repeat) / launches


def launch_overhead(ctx, launches):
    rows = []
    x = dlarray.array(np.zeros(1, np.float32), ctx)
    k = rtc.RawKernel(KERNEL, "touch")
    ours = per_launch(lambda: k(1, 1, (x, 1)), lambda: dlarray.synchronize(ctx), launches)
    ours_np = per_launch(lambda: k(1, 1, (x, np.int32(1))), lambda: dlarray.synchronize(ctx),
                         launches)
    try:
        import cupy
    except ImportError as e:
        print("launch overhead: ours %.2f us per launch (Python int), %.2f us (np.int32); CuPy "
              "is not installed (%s): no ratio" % (ours * 1e6, ours_np * 1e6, e))
        return [{"case": "RawKernel launch, 1 element", "ours_us": ours * 1e6}]
    with cupy.cuda.Device(ctx.device_id):
        cx = cupy.zeros(1, cupy.float32)
        ck = cupy.RawKernel(KERNEL, "touch")
        peer = per_launch(lambda: ck((1,), (1,), (cx, np.int32(1))),
                          cupy.cuda.get_current_stream().synchronize, launches)
    for label, value in (("Python int", ours), ("np.int32", ours_np)):
        print("RawKernel launch, 1 element (%-10s): ours %6.2f us   CuPy %6.2f us   ratio %.2f"
              % (label, value * 1e6, peer * 1e6, value / peer))
        rows.append({"case": "RawKernel launch, 1 element, %s" % label, "ours_us": value * 1e6,
                     "peer": "cupy %s" % cupy.__version__, "peer_us": peer * 1e6,
                     "ratio": value / peer})
    return rows


def elementwise_add(ctx, size):
    rng = np.random.default_rng(0)
    a = dlarray.array(rng.standard_normal((size, size), dtype=np.float32), ctx)
    b = dlarray.array(rng.standard_normal((size, size), dtype=np.float32), ctx)
    c = dlarray.empty((size, size), ctx)
    add = rtc.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x + y", "ew_add")
    add(a, b, c)
    np.testing.assert_array_equal(c.asnumpy()[:4, :4], a.asnumpy()[:4, :4] + b.asnumpy()[:4, :4])
    sync = lambda: dlarray.synchronize(ctx)  # noqa: E731
    ours = per_launch(lambda: add(a, b, c), sync, 20)
    builtin = per_launch(lambda: dlarray.ops.matrix_elementwise_add(a, b, c), sync, 20)
    gbs = 3 * 4 * size * size / 1e9
    print("ElementwiseKernel add %dx%d: ours %7.3f ms (%6.0f GB/s)   built-in add %7.3f ms "
          "(%6.0f GB/s)   ratio %.3f" % (size, size, ours * 1e3, gbs / ours, builtin * 1e3,
                                        gbs / builtin, ours / builtin))
    return [{"case": "ElementwiseKernel add %dx%d" % (size, size), "ours_ms": ours * 1e3,
             "peer": "built-in matrix_elementwise_add", "peer_ms": builtin * 1e3,
             "ratio": ours / builtin}]


def compile_times(ctx, repeat=5):
    """Cold: NVRTC into an empty cache; warm: a new process's path (memory caches cleared),
    reading the disk cache. With a GPU both include loading the module on it."""
    arch = None if ctx is not None else 90
    where = "for sm_90, not loaded (no GPU)" if ctx is None else "and loaded on %r" % (ctx,)
    cold, warm = [], []
    with tempfile.TemporaryDirectory() as cache:
        old = os.environ.get("DLARRAY_CACHE_DIR")
        os.environ["DLARRAY_CACHE_DIR"] = cache
        try:
            for i in range(repeat):
                source = KERNEL + "// run %d %d\n" % (os.getpid(), i)
                rtc.clear_memory_cache()
                t0 = time.perf_counter()
                rtc.RawKernel(source, "touch").compile(arch=arch, ctx=ctx)
                cold.append(time.perf_counter() - t0)
                for _ in range(3):
                    rtc.clear_memory_cache()
                    t0 = time.perf_counter()
                    rtc.RawKernel(source, "touch").compile(arch=arch, ctx=ctx)
                    warm.append(time.perf_counter() - t0)
        finally:
            if old is None:
                del os.environ["DLARRAY_CACHE_DIR"]
            else:
                os.environ["DLARRAY_CACHE_DIR"] = old
    cold_s, warm_s = statistics.median(cold), statistics.median(warm)
    print("compile %s: cold (NVRTC) %7.1f ms   warm (disk cache) %6.2f ms   target <= 5 ms"
          % (where, cold_s * 1e3, warm_s * 1e3))
    return [{"case": "compile " + where, "cold_ms": cold_s * 1e3, "warm_ms": warm_s * 1e3}]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8192, help="the add's side (default 8192)")
    parser.add_argument("--launches", type=int, default=20000,
                        help="launches per timed loop (default 20000)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    if args.json:
        report.check_output_path(parser, "--json", args.json)
    status = rtc.status()
    if status["compile"]:
        sys.exit("dlarray.rtc cannot compile here: %s" % status["compile"])
    print("NVRTC %d.%d (%s)" % (tuple(status["nvrtc_version"]) + (status["nvrtc_library"],)))
    gpus = [c for c in dlarray.devices() if c.device_type == 2] if rtc.is_available() else []
    rows = []
    if gpus:
        ctx = gpus[0]
        print("GPU:", dlarray._core.device_name(ctx))
        rows += launch_overhead(ctx, args.launches)
        rows += elementwise_add(ctx, args.size)
        rows += compile_times(ctx)
    else:
        print("no launches: %s" % status["launch"])
        rows += compile_times(None)
    if args.json:
        extra = {"nvrtc": "%d.%d" % tuple(status["nvrtc_version"])}
        try:
            import cupy
            extra["cupy"] = cupy.__version__
        except ImportError:
            pass
        data = {"benchmark": "rtc", "machine": report.machine_info(extra), "rows": rows}
        pathlib.Path(args.json).write_text(json.dumps(data, indent=2))


if __name__ == "__main__":
    main()
