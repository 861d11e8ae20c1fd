"""dlarray: arrays on pluggable devices (cpu, gpu) with the dlsys DLArray API.

    import dlarray
    x = dlarray.array(numpy_array, dlarray.cpu())     # or dlarray.gpu(0)
    y = dlarray.empty(x.shape, x.ctx)
    dlarray.ops.relu(x, y)
    y.asnumpy()

Devices come from plugins found when the package is imported (the ``plugins`` folder next to the
core library, then ``DLARRAY_PLUGIN_PATH``); ``dlarray.plugins()`` says what was tried and why a
plugin is not usable. A device whose plugin is missing raises that reason when it is first used.
"""

from __future__ import annotations

import pathlib
from typing import Any, Optional, Union

from . import _core
from ._core import DLContext, NDArray, devices, synchronize
from ._creation import array, asarray, empty, from_dlpack
from ._devices import (check_device, cpu, default_device, device, device_count, device_name,
                       gpu, mem_info, set_default_device, using_device)
from . import _operators

__version__ = "0.1.0"

__all__ = [
    "DLContext", "NDArray", "array", "asarray", "check_device", "cpp_extension", "cpu",
    "default_device", "device", "device_count", "device_name", "devices", "empty", "empty_cache",
    "from_dlpack", "get_matmul_precision", "gpu", "gpu_op", "is_gpu_ctx", "load_plugin",
    "mem_info", "memory_stats", "ndarray", "ops", "plugins", "seed_lib_path",
    "set_default_device", "set_matmul_precision", "synchronize", "using_device",
]

_operators.install(NDArray)


def is_gpu_ctx(ctx: Optional[DLContext]) -> bool:
    """Whether ``ctx`` is a GPU (CUDA) context.

    Parameters
    ----------
    ctx : DLContext or None
        The context.

    Returns
    -------
    bool
        True for CUDA contexts.
    """
    return ctx is not None and ctx.device_type == 2


def plugins() -> list[dict[str, Any]]:
    """Every plugin tried.

    Returns
    -------
    list of dict
        One dict per plugin: name, path, origin, status, reason, device_type, device_count,
        abi_version, version, declared_ops and ops.
    """
    return _core.plugins()


def load_plugin(path: Union[str, pathlib.Path]) -> dict[str, Any]:
    """Loads one plugin library; raises RuntimeError with the reason when it is not usable."""
    return _core.load_plugin(str(path))


def seed_lib_path() -> str:
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


def memory_stats(ctx: Union[DLContext, str]) -> dict[str, int]:
    """Allocator counters of a device.

    Parameters
    ----------
    ctx : DLContext or str
        The device.

    Returns
    -------
    dict
        bytes_in_use, bytes_reserved, num_allocations (system or driver allocations made so far),
        num_frees, peak_bytes_in_use.

    Raises
    ------
    ValueError
        An id out of range or an unknown device name.
    RuntimeError
        No usable plugin serves the device.
    """
    return _core.memory_stats(ctx)


def empty_cache(ctx: Optional[Union[DLContext, str]] = None) -> None:
    """Returns cached device memory to the system.

    Parameters
    ----------
    ctx : DLContext or str, optional
        The device (default: every device).

    Raises
    ------
    ValueError
        An id out of range or an unknown device name.
    """
    _core.empty_cache(ctx)


_PRECISIONS = ("highest", "tf32")


def set_matmul_precision(precision: str) -> None:
    """``"highest"`` (default): float32 matrix products in full float32. ``"tf32"``: GPU matrix
    products use TF32 tensor cores (about 10 mantissa bits; much faster on Ampere and newer).
    The CPU always computes in float32."""
    if precision not in _PRECISIONS:
        raise ValueError(f"matmul precision must be one of {_PRECISIONS}, got {precision!r}")
    for ctx in devices():
        if ctx.device_type != 1 and ctx.device_id == 0:
            _core.set_option(ctx, "matmul_precision", precision)
    global _matmul_precision
    _matmul_precision = precision


_matmul_precision = "highest"


def get_matmul_precision() -> str:
    """The precision set by set_matmul_precision."""
    return _matmul_precision


from . import ops, ndarray, gpu_op, cpp_extension  # noqa: E402  (they import names defined above)
