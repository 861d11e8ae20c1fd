"""What `import dlarray` costs on a machine with every plugin present (issue 25's targets: at most
150 ms and 80 MB resident on a CPU-only machine): the plugins are opened and listed, but the heavy
libraries (cuBLAS, cuFFT, cuSOLVER, NVRTC, NCCL, the OpenCL driver's compiler) are not mapped, and
neither are dlarray.cpp_extension and dlarray.rtc imported, until first used; the resident size
stays within its target.

Time is not asserted here (a loaded CI machine measures its other processes as much as ours):
bench/import_cost.py measures it against the target. The numbers are printed (pytest -s, or -rA)
for the record: CPU time of the importing process, the least of several fresh processes."""
import json
import os

import pytest

from proc_util import run

RESIDENT_MB = 80
RUNS = 5
HEAVY = ("libcublas", "libcufft", "libcusolver", "libnvrtc", "libnccl", "libLLVM", "libpocl",
         "libclang")

MEASURE = """
    import json, sys, time
    wall, cpu = time.perf_counter(), time.process_time()
    import numpy
    numpy_cpu = time.process_time() - cpu
    import dlarray
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    status = open("/proc/self/status").read().splitlines()
    rss_kb = [int(line.split()[1]) for line in status if line.startswith("VmRSS:")][0]
    maps = open("/proc/self/maps").read()
    print(json.dumps({"cpu_ms": cpu * 1e3, "numpy_cpu_ms": numpy_cpu * 1e3, "wall_ms": wall * 1e3,
                      "rss_mb": rss_kb / 1024, "mapped": sorted({line.split("/")[-1] for line in
                                                               maps.splitlines() if "/" in line}),
                      "modules": sorted(m for m in sys.modules if m.startswith("dlarray")),
                      "plugins": {p["name"]: p["status"] for p in dlarray.plugins()}}))
"""


@pytest.fixture(scope="module")
def imports():
    out = []
    for _ in range(RUNS):
        r = run(MEASURE)
        assert r.returncode == 0, r
        out.append(json.loads(r.stdout.strip().splitlines()[-1]))
    best = min(out, key=lambda m: m["cpu_ms"])
    print("\nimport dlarray (least of %d): %.0f ms CPU (NumPy %.0f ms of it), %.0f ms wall, "
          "%.1f MB resident; plugins %s" % (RUNS, best["cpu_ms"], best["numpy_cpu_ms"],
                                            best["wall_ms"], best["rss_mb"], best["plugins"]))
    return out


def test_every_plugin_is_listed_at_import(imports):
    plugins = imports[0]["plugins"]
    assert plugins.get("cpu") == "loaded", plugins
    # The CUDA and OpenCL plugins, where this build has them, are opened (listed with a status).
    for name in ("cuda", "opencl"):
        if name in plugins:
            assert plugins[name] in ("loaded", "no devices", "open failed"), plugins


def test_no_heavy_library_is_mapped_at_import(imports):
    mapped = [lib for lib in imports[0]["mapped"] if lib.startswith(HEAVY)]
    assert not mapped, mapped


def test_compiler_modules_wait_for_their_first_use(imports):
    modules = imports[0]["modules"]
    assert "dlarray.cpp_extension" not in modules and "dlarray.rtc" not in modules, modules


# ASan's shadow memory (scripts/sanitize.sh preloads its runtime into every process) more than
# doubles the resident size: the target is for the library as users run it.
@pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""),
                    reason="resident size under the preloaded ASan runtime (scripts/sanitize.sh)")
def test_import_is_within_the_memory_target(imports):
    best_rss = min(m["rss_mb"] for m in imports)
    assert best_rss <= RESIDENT_MB, imports
