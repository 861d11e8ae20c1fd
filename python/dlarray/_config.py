"""Threads of the CPU backend and the build's configuration (``dlarray.show_config``)."""

import os
import platform

import numpy as np

from . import _core

_CPU = _core.DLContext(0, 1)


def _cpu_loaded():
    return any(p["name"] == "cpu" and p["status"] == "loaded" for p in _core.plugins())


def _cpu_option(key, default=""):
    try:
        return _core.get_option(_CPU, key)
    except (RuntimeError, ValueError):  # no CPU plugin, or one without this option
        return default


def set_num_threads(n):
    """Sets how many threads the CPU backend's ops use (the calling thread counts as one).

    The default is ``OMP_NUM_THREADS`` when it is set, else the number of CPUs this process may
    run on. Matrix products split over these threads too (the BLAS runs single-threaded inside
    each of them), so one setting covers every CPU op.

    Parameters
    ----------
    n : int
        From 1 to 4095.

    Raises
    ------
    TypeError
        When ``n`` is not an integer.
    ValueError
        When ``n`` is out of range.
    RuntimeError
        When the CPU plugin is not loaded.

    Examples
    --------
    >>> import dlarray
    >>> old = dlarray.get_num_threads()
    >>> dlarray.set_num_threads(1)
    >>> dlarray.get_num_threads()
    1
    >>> dlarray.set_num_threads(old)
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError("set_num_threads takes an int, got %s" % type(n).__name__)
    if not 1 <= int(n) <= 4095:
        raise ValueError("set_num_threads: n must be from 1 to 4095, got %d" % n)
    _core.set_option(_CPU, "num_threads", str(int(n)))


def get_num_threads():
    """The number of threads the CPU backend's ops use.

    Returns
    -------
    int

    Raises
    ------
    RuntimeError
        When the CPU plugin is not loaded.
    """
    return int(_core.get_option(_CPU, "num_threads"))


_CUDA_LIBRARY_HINT = (
    "; the CUDA plugin looks for the CUDA runtime and cuBLAS where NVIDIA's CUDA wheels put them "
    "(site-packages/nvidia/cu13/lib: pip install nvidia-cuda-runtime nvidia-cublas; CUDA 12: "
    "nvidia/cuda_runtime/lib and nvidia/cublas/lib), then where the system's loader looks "
    "(ldconfig, LD_LIBRARY_PATH)")


def plugin_reason(plugin):
    """A plugin's reason, with where to get the CUDA libraries when the CUDA plugin lacks them."""
    reason = plugin["reason"]
    if (plugin["name"] == "cuda" and plugin["status"] == "open failed"
            and "libcu" in reason and "nvidia" not in reason):
        reason += _CUDA_LIBRARY_HINT
    return reason


def _config():
    major, minor = _core.PLUGIN_ABI_VERSION
    cfg = {
        "dlarray": {"version": _core.__version__, "plugin_abi": "%d.%d" % (major, minor),
                    "core_library": _core.core_library_path()},
        "python": {"version": platform.python_version(), "numpy": np.__version__},
    }
    if _cpu_loaded():
        cfg["cpu"] = {
            "device": _core.device_name(_CPU),
            "num_threads": int(_cpu_option("num_threads", "0")),
            "num_threads_from": ("OMP_NUM_THREADS=%s" % os.environ["OMP_NUM_THREADS"]
                                 if "OMP_NUM_THREADS" in os.environ else "CPUs available"),
            "wait_policy": _cpu_option("wait_policy"),
            "isa": _cpu_option("isa", "native build"),
            "gemm": _cpu_option("gemm"),
            "vector_math": _cpu_option("vector_math"),
            "cache_limit": int(_cpu_option("cache_limit", "0") or 0),
            "blas": {
                "name": _cpu_option("blas"),
                "library": os.path.realpath(_cpu_option("blas_path")) if _cpu_option("blas_path")
                else "",
                "config": _cpu_option("blas_config"),
                "core": _cpu_option("blas_core"),
                "threads": int(_cpu_option("blas_threads", "0") or 0),
            },
        }
    else:
        cfg["cpu"] = None
    cfg["plugins"] = {p["name"]: {"status": p["status"], "reason": plugin_reason(p),
                                  "devices": p["device_count"]} for p in _core.plugins()}
    return cfg


def _format(cfg):
    d = cfg["dlarray"]
    lines = ["dlarray %s (plugin ABI %s), Python %s, NumPy %s"
             % (d["version"], d["plugin_abi"], cfg["python"]["version"], cfg["python"]["numpy"]),
             "core library: %s" % d["core_library"]]
    cpu = cfg["cpu"]
    if cpu is None:
        lines.append("cpu: the CPU plugin is not loaded (see plugins below)")
    else:
        blas = cpu["blas"]
        lines += [
            "cpu: %s" % cpu["device"],
            "  threads: %d (%s); idle threads: %s"
            % (cpu["num_threads"], cpu["num_threads_from"], cpu["wait_policy"]),
            "  instruction set path: %s" % cpu["isa"],
            "  matrix products: %s" % (blas["name"] if cpu["gemm"] == "cblas"
                                       else "the built-in blocked SGEMM (no BLAS)"),
        ]
        if blas["library"]:
            lines.append("    library: %s" % blas["library"])
        if blas["config"]:
            lines.append("    build: %s" % blas["config"])
        if blas["core"]:
            lines.append("    kernel for this CPU: %s" % blas["core"])
        if cpu["gemm"] == "cblas":
            lines.append("    threads: %d of its own; products are split over dlarray's %d"
                         % (blas["threads"], cpu["num_threads"]))
        lines.append("  vector math functions (sin, acos, pow, ...): %s"
                     % (cpu["vector_math"] or "scalar (not reported)"))
        lines.append("  freed blocks of 1 MiB and more kept for reuse: up to %.0f MiB%s"
                     % (cpu["cache_limit"] / 2**20,
                        " (DLARRAY_CPU_CACHE_MB)" if os.environ.get("DLARRAY_CPU_CACHE_MB")
                        else ""))
    lines.append("plugins:")
    for name, p in cfg["plugins"].items():
        lines.append("  %-14s %s, %d device(s)%s" % (name, p["status"], p["devices"],
                                                     "; " + p["reason"] if p["reason"] else ""))
    return "\n".join(lines)


def show_config(mode="stdout"):
    """Prints (or returns) how this dlarray is built and runs here: versions, the CPU backend's
    threads and wait policy, its instruction set path, its BLAS (library file, build line, the
    kernel it picked for this CPU, threads), and every plugin's status.

    Parameters
    ----------
    mode : {"stdout", "dicts"}, optional
        ``"stdout"`` prints a report; ``"dicts"`` returns it as a dict (as NumPy's does).

    Returns
    -------
    dict or None
        The configuration with ``mode="dicts"``, else None.

    Raises
    ------
    ValueError
        For another mode.

    Examples
    --------
    >>> import dlarray
    >>> cfg = dlarray.show_config(mode="dicts")
    >>> cfg["cpu"]["num_threads"] == dlarray.get_num_threads()
    True
    """
    if mode not in ("stdout", "dicts"):
        raise ValueError("show_config: mode must be 'stdout' or 'dicts', got %r" % (mode,))
    cfg = _config()
    if mode == "dicts":
        return cfg
    print(_format(cfg))
    return None
