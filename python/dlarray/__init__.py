"""dlarray: arrays on pluggable devices (cpu, gpu) with the dlsys DLArray API.

A first use::

    import dlarray
    x = dlarray.array(numpy_array, dlarray.cpu())     # or dlarray.gpu(0)
    y = dlarray.empty(x.shape, x.ctx)
    dlarray.ops.relu(x, y)
    y.asnumpy()

Devices come from plugins found when the package is imported (the ``plugins`` folder next to the
core library, then ``DLARRAY_PLUGIN_PATH``); ``dlarray.plugins()`` says what was tried and why a
plugin is not usable. A device whose plugin is missing raises that reason when it is first used.
"""

import os
import pathlib

from . import _core
from ._core import DLContext, NDArray, __version__, array, devices, empty, synchronize

__all__ = [
    "DLContext", "NDArray", "array", "cpp_extension", "cpu", "devices", "empty", "empty_cache",
    "get_matmul_precision",
    "gpu", "gpu_op", "is_gpu_ctx", "load_plugin", "memory_stats", "ndarray", "ops", "plugins",
    "rtc", "seed_lib_path", "set_matmul_precision", "synchronize",
]


def cpu(dev_id=0):
    """The context of a CPU device.

    Parameters
    ----------
    dev_id : int, optional
        The device id; the CPU plugin serves one device, 0.

    Returns
    -------
    DLContext

    Examples
    --------
    >>> import dlarray
    >>> dlarray.cpu()
    cpu(0)
    """
    return DLContext(dev_id, 1)


def gpu(dev_id=0):
    """The context of a CUDA GPU.

    Making a context needs no GPU: using it does. On a machine without a usable GPU, the first
    allocation on ``gpu(n)`` raises RuntimeError with the CUDA plugin's reason.

    Parameters
    ----------
    dev_id : int, optional
        The GPU's index among the visible CUDA devices (``CUDA_VISIBLE_DEVICES``), 0 by
        default.

    Returns
    -------
    DLContext

    Examples
    --------
    >>> import dlarray
    >>> ctx = dlarray.gpu(0) if dlarray.gpu(0) in dlarray.devices() else dlarray.cpu(0)
    """
    return DLContext(dev_id, 2)


def is_gpu_ctx(ctx):
    """Whether a context is a CUDA GPU's (the seed's helper).

    Parameters
    ----------
    ctx : DLContext or None

    Returns
    -------
    bool
        False for None and for every other device type.

    Examples
    --------
    >>> import dlarray
    >>> dlarray.is_gpu_ctx(dlarray.gpu(0)), dlarray.is_gpu_ctx(dlarray.cpu(0))
    (True, False)
    """
    return bool(ctx) and ctx.device_type == 2


def plugins():
    """Every plugin the runtime tried to load, and what became of it.

    Plugins come from the ``plugins`` folder next to the core library, then from
    ``DLARRAY_PLUGIN_PATH``, then from :func:`load_plugin`. A plugin that is installed but
    broken is listed with the reason; ``python -m dlarray`` prints this list.

    Returns
    -------
    list of dict
        One dict per plugin, in the order tried, with ``name``; ``path`` (absolute);
        ``origin`` ("plugins folder", "DLARRAY_PLUGIN_PATH" or "load_plugin"); ``status``
        ("loaded", "disabled", "open failed", "missing entry symbol", "ABI mismatch", "init
        failed", "no devices" or "duplicate"); ``reason`` (empty when loaded);
        ``device_type`` ("cpu", "gpu", ..., or "" for a plugin that only adds ops);
        ``device_count``; ``abi_version``; ``ops`` (the ops it has kernels for).

    Examples
    --------
    >>> import dlarray
    >>> [p["status"] for p in dlarray.plugins() if p["name"] == "cpu"]
    ['loaded']
    """
    return _core.plugins()


def load_plugin(path):
    """Loads one plugin library. Loading a plugin runs its code: load only libraries you trust.

    Parameters
    ----------
    path : str, bytes or os.PathLike
        The shared library (an absolute path, or relative to the working directory).

    Returns
    -------
    dict
        The plugin's record, as in :func:`plugins`; its devices and ops are usable at once.

    Raises
    ------
    TypeError
        ``path`` is not a path.
    ValueError
        ``path`` is empty or contains a NUL byte.
    RuntimeError
        When the plugin is not usable: the file cannot be opened (the loader's message, e.g. a
        missing dependency), has no entry symbol, was built for another plugin ABI (both
        versions), failed to initialise (its message), has no devices (its reason), or
        duplicates a loaded plugin.
    """
    return _core.load_plugin(os.fsdecode(os.fspath(path)))


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
    """The allocator counters of a device.

    Parameters
    ----------
    ctx : DLContext

    Returns
    -------
    dict
        ``bytes_in_use`` (held by live arrays), ``bytes_reserved`` (held from the system,
        cached blocks included), ``num_allocations`` (system or driver allocations made so
        far: it stays put while a cache serves requests), ``num_frees`` and
        ``peak_bytes_in_use``.

    Raises
    ------
    RuntimeError
        When no usable plugin serves ``ctx``.

    Examples
    --------
    >>> import dlarray
    >>> stats = dlarray.memory_stats(dlarray.cpu(0))
    >>> sorted(stats)
    ['bytes_in_use', 'bytes_reserved', 'num_allocations', 'num_frees', 'peak_bytes_in_use']
    """
    return _core.memory_stats(ctx)


def empty_cache(ctx=None):
    """Returns the memory a device's allocator keeps cached to the system.

    The CUDA plugin keeps freed blocks for reuse; arrays still alive are not touched.

    Parameters
    ----------
    ctx : DLContext, optional
        The device; by default every usable device.
    """
    _core.empty_cache(ctx)


_PRECISIONS = ("highest", "tf32")


def set_matmul_precision(precision):
    """Chooses the precision of float32 matrix products on GPUs.

    Parameters
    ----------
    precision : {"highest", "tf32"}
        ``"highest"`` (the default): full float32. ``"tf32"``: TF32 tensor cores (about 10
        mantissa bits; much faster on Ampere and newer GPUs). The CPU always computes in
        float32.

    Raises
    ------
    ValueError
        For any other value.

    Examples
    --------
    >>> import dlarray
    >>> dlarray.set_matmul_precision("tf32")
    >>> dlarray.get_matmul_precision()
    'tf32'
    >>> dlarray.set_matmul_precision("highest")
    """
    if precision not in _PRECISIONS:
        raise ValueError(f"matmul precision must be one of {_PRECISIONS}, got {precision!r}")
    for ctx in devices():
        if ctx.device_type != 1 and ctx.device_id == 0:
            _core.set_option(ctx, "matmul_precision", precision)
    global _matmul_precision
    _matmul_precision = precision


_matmul_precision = "highest"


def get_matmul_precision():
    """The precision of GPU matrix products, as :func:`set_matmul_precision` set it.

    Returns
    -------
    str
        ``"highest"`` or ``"tf32"``.
    """
    return _matmul_precision


from . import ops, ndarray, gpu_op, cpp_extension, rtc  # noqa: E402  (they use names above)
