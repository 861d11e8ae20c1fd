"""The JSON reports of the benchmarks (bench/*.py --json), which docs/benchmarks/ keeps and the docs
render: what a run ran on (CPU and GPU model, date, versions, load), and a check that the report
can be written, made before the run starts."""
import datetime
import os
import platform
import re
import statistics
import subprocess
import sys
import time

import numpy as np

import dlarray


def cpu_model():
    """The CPU model name, as lscpu prints it (or /proc/cpuinfo), else the platform's name."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        m = re.search(r"^Model name:\s*(.+)$", out, re.M)
        if m:
            return m.group(1).strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M)
            if m:
                return m.group(1).strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpu_models():
    """Name, memory and driver of each GPU that nvidia-smi sees (empty without one)."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in out.stdout.splitlines() if line.strip()] if \
        out.returncode == 0 else []


def git_commit():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                             capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=root, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() + (" (with local changes)" if dirty.strip() else "")


def machine_info(extra_versions=None):
    """A dict describing this machine and this run, for a benchmark's JSON output.

    Parameters
    ----------
    extra_versions : dict, optional
        More ``{package: version}`` entries (the peer's, e.g. PyTorch's).

    Returns
    -------
    dict
        ``date`` (UTC, ISO 8601), ``cpu`` (model name), ``cpu_count``, ``gpus`` (nvidia-smi's
        name, memory, driver per GPU), ``devices`` (dlarray's usable devices with their names),
        ``os``, ``versions`` (dlarray, Python, NumPy, ...), ``git_commit``, ``command`` and
        ``load_average`` (1, 5 and 15 minutes, when the run started).
    """
    versions = {"dlarray": dlarray.__version__, "python": platform.python_version(),
                "numpy": np.__version__}
    versions.update(extra_versions or {})
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "gpus": gpu_models(),
        "devices": ["%r: %s" % (ctx, dlarray._core.device_name(ctx)) for ctx in dlarray.devices()],
        "os": platform.platform(),
        "versions": versions,
        "git_commit": git_commit(),
        "command": " ".join(["python"] + [os.path.relpath(sys.argv[0])] + sys.argv[1:]),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def calls_per_round(fn, min_time, sync):
    """How many calls of fn make a round of at least min_time (after one warm-up call: kernels
    built, buffers cached); sync() waits for the device."""
    fn()
    sync()
    inner = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        if time.perf_counter() - t0 >= min_time or inner >= 1 << 16:
            return inner
        inner *= 2


def median_time(fn, repeat, min_time, sync):
    """Median seconds per call of fn over `repeat` rounds of calls_per_round calls each (so that
    short calls are not timed one by one)."""
    inner = calls_per_round(fn, min_time, sync)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times)


def check_output_path(parser, option, path):
    """Stops with a usage error (before any timing) when ``path`` cannot be written."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        parser.error("%s %s is a folder: give a file name" % (option, path))
    if not os.path.isdir(folder):
        parser.error("%s %s: the folder %s does not exist" % (option, path, folder))
    if not os.access(folder, os.W_OK):
        parser.error("%s %s: the folder %s is not writable" % (option, path, folder))
