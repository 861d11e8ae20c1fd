#!/usr/bin/env python3
"""What a fused kernel's first call on CUDA spends in NVRTC, without a GPU (NVRTC needs none).

1. ``nvrtcCompileProgram`` of the source ``dlarray.fuse`` generates for ``a*b + c*d - e``
   (float32), timed through libnvrtc itself (ctypes, one fresh program per sample), for sm_90
   with the options of ``dlarray._fuse_cuda.cuda_options()`` and with variants of them: the
   median per variant over --repeats, and the first compile of the process apart (NVRTC loads
   its builtins library then).
2. The same source through ``dlarray._rtc_build.compile_program`` (what a first call runs):
   cold (nothing cached: NVRTC, then the disk cache written) and warm (the disk cache read; the
   memory cache emptied), in a private cache folder.
3. The host side of a first call with a warm disk cache, without the GPU's part (module load,
   launch): in a fresh process, from after ``dlarray.fuse(fn)`` (which imports the fusion
   modules, as bench/fuse.py's first call does) through the trace, the code generation and
   the program read from the disk cache; the median over --repeats processes.

    python bench/nvrtc_compile.py [--repeats 15] [--arch 90] [--json]
"""

import argparse
import ctypes
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import dlarray
from dlarray import _fuse_codegen, _fuse_cuda, _rtc_build


def fused_source():
    """The CUDA source dlarray.fuse generates for a*b + c*d - e over five float32 arrays."""
    fn = dlarray.fuse(lambda a, b, c, d, e: a * b + c * d - e)
    xs = [dlarray.asarray(np.ones((300, 200), np.float32)) for _ in range(5)]
    plan = fn._plan(tuple(xs), xs, xs[0].ctx)
    return _fuse_codegen.generate(plan.trace, plan.inputs, plan.layout, plan.ndim, "cuda")


class Nvrtc:
    """The few libnvrtc entry points a timing needs."""

    def __init__(self, path):
        start = time.perf_counter()
        self.lib = ctypes.CDLL(path)
        self.load_s = time.perf_counter() - start
        vp, cp = ctypes.c_void_p, ctypes.c_char_p
        self.lib.nvrtcCreateProgram.argtypes = [ctypes.POINTER(vp), cp, cp, ctypes.c_int,
                                                ctypes.POINTER(cp), ctypes.POINTER(cp)]
        self.lib.nvrtcCompileProgram.argtypes = [vp, ctypes.c_int, ctypes.POINTER(cp)]
        self.lib.nvrtcDestroyProgram.argtypes = [ctypes.POINTER(vp)]
        self.lib.nvrtcGetCUBINSize.argtypes = [vp, ctypes.POINTER(ctypes.c_size_t)]
        self.lib.nvrtcGetCUBIN.argtypes = [vp, ctypes.c_char_p]

    def compile_seconds(self, source, options):
        """Seconds of nvrtcCompileProgram, and the cubin's hash (whether options change it)."""
        prog = ctypes.c_void_p()
        err = self.lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"fused.cu", 0,
                                          None, None)
        if err:
            raise RuntimeError("nvrtcCreateProgram: error %d" % err)
        opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
        try:
            start = time.perf_counter()
            err = self.lib.nvrtcCompileProgram(prog, len(options), opts)
            seconds = time.perf_counter() - start
            if err:
                raise RuntimeError("nvrtcCompileProgram %s: error %d" % (options, err))
            size = ctypes.c_size_t()
            self.lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
            cubin = ctypes.create_string_buffer(size.value)
            self.lib.nvrtcGetCUBIN(prog, cubin)
        finally:
            self.lib.nvrtcDestroyProgram(ctypes.byref(prog))
        return seconds, hashlib.sha256(cubin.raw).hexdigest()[:12]


# A first call's host side on CUDA, up to the module load: run in a fresh process.
WARM_HOST = r"""
import sys, time, numpy as np, dlarray
arch = int(sys.argv[1])
from dlarray import _fuse_codegen, _fuse_cuda, _rtc_build
xs = [dlarray.asarray(np.ones((64, 64), np.float32)) for _ in range(5)]
fn = dlarray.fuse(lambda a, b, c, d, e: a * b + c * d - e)
start = time.perf_counter()
plan = fn._plan(tuple(xs), xs, xs[0].ctx)  # the trace (DLARRAY_FUSE=interpret: no CPU build)
source = _fuse_codegen.generate(plan.trace, plan.inputs, plan.layout, plan.ndim, "cuda")
_rtc_build.compile_program(source, "dl_fused", _fuse_cuda.cuda_options(), arch=arch)
print(time.perf_counter() - start)
"""


def warm_host_seconds(arch, repeats):
    """Median seconds of WARM_HOST in fresh processes sharing one warm disk cache (the first
    process fills it)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, DLARRAY_CACHE_DIR=cache, DLARRAY_FUSE="interpret")

        def once():
            out = subprocess.run([sys.executable, "-c", WARM_HOST, str(arch)], env=env,
                                 capture_output=True, text=True, check=True)
            return float(out.stdout.split()[-1])
        once()
        return statistics.median(once() for _ in range(repeats))


def variants(arch):
    base = list(_fuse_cuda.cuda_options()) + ["--gpu-architecture=sm_%d" % arch]
    plain = [o for o in base if o != "-minimal"]
    return {
        "used (%s)" % " ".join(base): base,
        "without -minimal": plain,
        "+ -default-device": base + ["-default-device"],
        "+ -std=c++03": base + ["-std=c++03"],
        "+ --Ofast-compile=min": base + ["--Ofast-compile=min"],
        "+ --Ofast-compile=max": base + ["--Ofast-compile=max"],
        "+ -Xptxas -O1": base + ["-Xptxas", "-O1"],
        "+ --extra-device-vectorization": base + ["--extra-device-vectorization"],
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--arch", type=int, default=90)
    parser.add_argument("--json", action="store_true", help="print the results as JSON only")
    args = parser.parse_args(argv)
    reason = _rtc_build.status()["compile"]
    if reason:
        sys.exit("NVRTC is not usable: %s" % reason)
    source = fused_source()
    nv = Nvrtc(_rtc_build.status()["nvrtc_library"])
    result = {"benchmark": "nvrtc_compile", "nvrtc": list(_rtc_build.status()["nvrtc_version"]),
              "arch": args.arch, "source_bytes": len(source), "dlopen_ms": nv.load_s * 1e3,
              "variants": {}}
    table = variants(args.arch)
    used = next(iter(table.values()))
    result["first_compile_ms"] = nv.compile_seconds(source, used)[0] * 1e3
    samples = {}
    for _ in range(args.repeats):  # the variants interleaved: a loaded machine slows them alike
        for label, options in table.items():
            if isinstance(samples.get(label), str):
                continue
            try:
                samples.setdefault(label, []).append(nv.compile_seconds(source, options))
            except RuntimeError as e:
                samples[label] = str(e)
    for label, got in samples.items():
        result["variants"][label] = ({"error": got} if isinstance(got, str) else
                                     {"median_ms": statistics.median(s for s, _ in got) * 1e3,
                                      "cubin": got[0][1]})

    # The path of a first call: dlarray.rtc's compile_program, cold then warm (disk cache).
    with tempfile.TemporaryDirectory() as cache:
        os.environ["DLARRAY_CACHE_DIR"] = cache
        cold, warm = [], []
        for k in range(args.repeats):
            text = source + "// %d\n" % k  # a new key: nothing cached
            _rtc_build._programs.clear()
            start = time.perf_counter()
            _rtc_build.compile_program(text, "dl_fused", used[:-1], arch=args.arch)
            cold.append(time.perf_counter() - start)
            _rtc_build._programs.clear()
            start = time.perf_counter()
            _rtc_build.compile_program(text, "dl_fused", used[:-1], arch=args.arch)
            warm.append(time.perf_counter() - start)
    result.update(compile_program_cold_ms=statistics.median(cold) * 1e3,
                  compile_program_warm_ms=statistics.median(warm) * 1e3,
                  warm_host_ms=warm_host_seconds(args.arch, args.repeats) * 1e3)
    if args.json:
        print(json.dumps(result, indent=2))
        return result
    print("NVRTC %d.%d, sm_%d, the source of a*b + c*d - e (%d bytes); median of %d"
          % (*result["nvrtc"], args.arch, len(source), args.repeats))
    print("  dlopen libnvrtc: %.2f ms; first compile of the process: %.2f ms"
          % (result["dlopen_ms"], result["first_compile_ms"]))
    for label, row in result["variants"].items():
        if "error" in row:
            print("  %-48s %s" % (label, row["error"]))
        else:
            print("  %-48s %7.2f ms  cubin %s" % (label, row["median_ms"], row["cubin"]))
    print("  dlarray.rtc compile_program, cold: %.2f ms; warm (disk cache): %.3f ms"
          % (result["compile_program_cold_ms"], result["compile_program_warm_ms"]))
    print("  a warm first call's host side without the GPU (trace, code, disk cache; fresh "
          "processes): %.2f ms" % result["warm_host_ms"])
    return result


if __name__ == "__main__":
    main()
