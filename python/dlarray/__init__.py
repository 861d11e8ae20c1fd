"""dlarray: arrays on pluggable devices (cpu, gpu, opencl) with the dlsys DLArray API.

    import dlarray
    x = dlarray.array(numpy_array, dlarray.cpu())     # or dlarray.gpu(0), dlarray.opencl(0)
    y = dlarray.empty(x.shape, x.ctx)
    dlarray.ops.relu(x, y)
    y.asnumpy()

Devices come from plugins found when the package is imported, in this order: the ``plugins``
folder next to the core library, then each folder or file of ``DLARRAY_PLUGIN_PATH``, then the
library of every ``dlarray.plugins`` entry point of the installed distributions (see
``dlarray._entry_points``); later, ``dlarray.load_plugin(path)``. The first plugin to serve a
device type keeps it (a later one is a ``duplicate``). ``dlarray.plugins()`` says what was tried
and why a plugin is not usable. A device whose plugin is missing raises that reason when it is
first used.
"""

import pathlib

from . import _core, _entry_points
from ._core import DLContext, NDArray, array, devices, empty, synchronize

__version__ = "0.1.0"

__all__ = [
    "DLContext", "NDArray", "array", "cpp_extension", "cpu", "devices", "empty", "empty_cache",
    "get_matmul_precision",
    "gpu", "gpu_op", "is_gpu_ctx", "load_plugin", "memory_stats", "ndarray", "opencl", "ops",
    "plugins",
    "seed_lib_path", "set_matmul_precision", "synchronize",
]


def cpu(dev_id=0):
    """The context of CPU device ``dev_id`` (there is one, id 0)."""
    return DLContext(dev_id, 1)


def gpu(dev_id=0):
    """The context of CUDA device ``dev_id``."""
    return DLContext(dev_id, 2)


def opencl(dev_id=0):
    """The context of OpenCL device ``dev_id`` (DLPack's device type 4, ``kDLOpenCL``).

    Parameters
    ----------
    dev_id : int
        Index among the OpenCL devices the plugin serves (every device of every platform, or those
        ``DLARRAY_OPENCL_DEVICES`` selects, e.g. ``pocl:0`` or ``nvidia:*``).

    Returns
    -------
    DLContext
        ``DLContext(dev_id, 4)``.
    """
    return DLContext(dev_id, 4)


def is_gpu_ctx(ctx):
    """Whether ``ctx`` is a GPU context."""
    return bool(ctx) and ctx.device_type == 2


def plugins():
    """Every plugin tried, in the order tried.

    Returns
    -------
    list of dict
        One dict per plugin: name, path, origin (``plugins folder``, ``DLARRAY_PLUGIN_PATH``,
        ``entry point <name> (<value>)`` or ``load_plugin``), status, reason, device_type,
        device_count, abi_version and ops. Entry points that failed before a library could be
        loaded come last, with status ``entry point failed``.
    """
    return _entry_points.annotate(_core.plugins())


def load_plugin(path):
    """Loads one plugin library; raises RuntimeError with the reason when it is not usable."""
    return _core.load_plugin(str(path))


def seed_lib_path():
    """Absolute path of ``libc_runtime_api.so``: the dlsys seed's C API with the seed's struct
    layouts, for the seed's own ctypes client (``python -m dlarray --seed-lib`` prints it).

    It loads ``libdlarray_runtime.so`` from its own folder: point the seed's ``build/lib`` at this
    folder (a symlink to the folder, not to the file alone).

    Returns
    -------
    str
        The library's absolute path.

    Raises
    ------
    FileNotFoundError
        When the package was built without it (``-DDLARRAY_SEED_API=OFF``).
    """
    path = pathlib.Path(__file__).resolve().with_name("libc_runtime_api.so")
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: dlarray was built with DLARRAY_SEED_API=OFF")
    return str(path)


def memory_stats(ctx):
    """Allocator counters of ``ctx``: bytes_in_use, bytes_reserved, num_allocations (system or
    driver allocations made so far), num_frees, peak_bytes_in_use."""
    return _core.memory_stats(ctx)


def empty_cache(ctx=None):
    """Returns cached device memory of ``ctx`` (default: every device) to the system."""
    _core.empty_cache(ctx)


_PRECISIONS = ("highest", "tf32")


def set_matmul_precision(precision):
    """``"highest"`` (default): float32 matrix products in full float32. ``"tf32"``: GPU matrix
    products use TF32 tensor cores (about 10 mantissa bits; much faster on Ampere and newer).
    The CPU always computes in float32."""
    if precision not in _PRECISIONS:
        raise ValueError(f"matmul precision must be one of {_PRECISIONS}, got {precision!r}")
    for ctx in devices():
        if ctx.device_type == 2 and ctx.device_id == 0:  # a CUDA option; others compute float32
            _core.set_option(ctx, "matmul_precision", precision)
    global _matmul_precision
    _matmul_precision = precision


_matmul_precision = "highest"

_entry_points.load_all()


def get_matmul_precision():
    """The precision set by set_matmul_precision."""
    return _matmul_precision


from . import ops, ndarray, gpu_op, cpp_extension  # noqa: E402  (they import names defined above)
