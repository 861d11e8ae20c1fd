#!/usr/bin/env python3
"""What `import dlarray` costs, against issue 25's targets (150 ms, 80 MB resident on a CPU-only
machine with every plugin present), next to `import numpy` (which dlarray imports) in the same
fresh processes: the median and least of --runs, wall time (the target's measure) and CPU time
of the process (time.process_time: every thread's, so it includes OpenBLAS's threads starting
and can exceed the wall time), and the resident size after the import.

    python bench/import_cost.py [--runs 15] [--json FILE]
"""
import argparse
import json
import platform
import statistics
import subprocess
import sys

MEASURE = """
import json, time
wall, cpu = time.perf_counter(), time.process_time()
import numpy
numpy_cpu, numpy_wall = time.process_time() - cpu, time.perf_counter() - wall
import dlarray
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
rss = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmRSS:")][0]
print(json.dumps({"cpu_ms": cpu * 1e3, "wall_ms": wall * 1e3, "numpy_cpu_ms": numpy_cpu * 1e3,
                  "numpy_wall_ms": numpy_wall * 1e3, "rss_mb": rss / 1024}))
"""
TARGETS = {"wall_ms": 150.0, "rss_mb": 80.0}


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", metavar="FILE", help="save the results")
    args = parser.parse_args(argv)
    samples = []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, "-c", MEASURE], capture_output=True, text=True,
                             check=True)
        samples.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print("import dlarray, %d fresh processes, %s" % (args.runs, cpu_model()))
    print("%-14s %10s %10s %10s" % ("", "median", "least", "target"))
    rows = {}
    for key in ("cpu_ms", "wall_ms", "numpy_cpu_ms", "numpy_wall_ms", "rss_mb"):
        values = [s[key] for s in samples]
        rows[key] = {"median": statistics.median(values), "least": min(values)}
        target = TARGETS.get(key)
        print("%-14s %10.1f %10.1f %10s" % (key, rows[key]["median"], rows[key]["least"],
                                            "%.0f" % target if target else "-"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_model(), "rows": rows, "targets": TARGETS}, f, indent=1)


if __name__ == "__main__":
    main()
