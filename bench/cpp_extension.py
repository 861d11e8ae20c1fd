"""dlarray.cpp_extension: cold build time (empty cache) and warm load time (a fresh process that
finds the library in the cache), for a CPU-only extension and, where nvcc is found, one with a
CUDA source. Usage: python bench/cpp_extension.py [--json FILE]"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))
from test_cpp_extension import CUDA_PART, source  # noqa: E402  (the extension the tests build)

MEASURE = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
t0 = time.perf_counter()
import dlarray.cpp_extension as c
t1 = time.perf_counter()
cuda = sys.argv[2] or None
e = c.load_inline(sys.argv[1], open(sys.argv[3]).read(), cuda_sources=cuda and open(cuda).read())
t2 = time.perf_counter()
print(json.dumps({"built": e.built, "import_s": t1 - t0, "load_s": t2 - t1}))
"""


def measure(name, cache, cuda):
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "src.cc"
        src.write_text(source(name, cuda=cuda))
        cu = pathlib.Path(tmp) / "src.cu"
        cu.write_text(CUDA_PART.replace("NAME", name))
        args = [sys.executable, "-c", MEASURE, name, str(cu) if cuda else "", str(src)]
        env = dict(os.environ, DLARRAY_CACHE_DIR=cache)
        runs = []
        for _ in range(4):
            out = subprocess.run(args, env=env, capture_output=True, text=True)
            if out.returncode != 0:
                raise SystemExit("the measuring process failed:\n" + out.stderr)
            runs.append(json.loads(out.stdout))
    cold, warm = runs[0], runs[1:]
    assert cold["built"] and not any(w["built"] for w in warm)
    return cold["load_s"], sorted(w["load_s"] for w in warm)[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    import dlarray.cpp_extension as c
    kinds = [("cpu", False)] + ([("cpu+cuda", True)] if c._nvcc() else [])
    results = []
    with tempfile.TemporaryDirectory() as cache:
        for label, cuda in kinds:
            cold, warm = measure("bench_ext_%s" % label.replace("+", "_"), cache, cuda)
            results.append({"extension": label, "cold_build_s": cold, "warm_load_ms": warm * 1e3})
            print("cpp_extension %-9s cold build %6.2f s   warm load (cached) %7.2f ms"
                  % (label, cold, warm * 1e3))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
