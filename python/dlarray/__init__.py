"""dlarray: arrays on pluggable devices (cpu, gpu, opencl) with the dlsys DLArray API.

A first use::

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

from __future__ import annotations

import os
import pathlib
from typing import Any, Optional, Union

from . import _log  # first: a bad DLARRAY_LOG fails before the plugins load
from . import _core, _entry_points
from ._core import DLContext, NDArray, devices, synchronize
from ._core import __version__ as __version__  # re-exported for mypy --strict users
from ._config import get_num_threads, set_num_threads, show_config
from ._creation import array, asarray, empty, from_dlpack
from ._devices import (check_device, cpu, default_device, device, device_count, device_name,
                       gpu, mem_info, set_default_device, using_device)
from . import _operators

__all__ = [
    "DLContext", "NDArray", "array", "asarray", "check_device", "cpp_extension", "cpu",
    "default_device", "device", "device_count", "device_name", "devices", "empty", "empty_cache",
    "from_dlpack", "get_matmul_precision", "get_num_threads", "gpu", "gpu_op", "is_gpu_ctx",
    "load_plugin", "mem_info", "memory_stats", "ndarray", "opencl", "ops", "plugins", "rtc",
    "seed_lib_path", "set_default_device", "set_matmul_precision", "set_num_threads",
    "show_config", "synchronize", "using_device",
]

_operators.install(NDArray)


def opencl(dev_id: int = 0) -> DLContext:
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


def is_gpu_ctx(ctx: Optional[DLContext]) -> bool:
    """Whether a context is a CUDA GPU's (the seed's helper).

    Parameters
    ----------
    ctx : DLContext or None

    Returns
    -------
    bool
        False for None and for every other device type.

    Raises
    ------
    TypeError
        ``ctx`` is neither a DLContext nor None.

    Examples
    --------
    >>> import dlarray
    >>> dlarray.is_gpu_ctx(dlarray.gpu(0)), dlarray.is_gpu_ctx(dlarray.cpu(0))
    (True, False)
    """
    if ctx is not None and not isinstance(ctx, DLContext):
        raise TypeError("is_gpu_ctx: ctx must be a DLContext or None, got %s" % type(ctx).__name__)
    return ctx is not None and ctx.device_type == 2


def plugins() -> list[dict[str, Any]]:
    """Every plugin the runtime tried to load, and what became of it.

    Plugins come from the ``plugins`` folder next to the core library, then from
    ``DLARRAY_PLUGIN_PATH``, then from the ``dlarray.plugins`` entry points of installed
    distributions (see ``dlarray._entry_points``), then from :func:`load_plugin`. A plugin that is
    installed but broken is listed with the reason; ``python -m dlarray`` prints this list.

    Returns
    -------
    list of dict
        One dict per plugin, in the order tried, with ``name``; ``path`` (absolute);
        ``origin`` ("plugins folder", "DLARRAY_PLUGIN_PATH", "entry point <name> (<value>)" or
        "load_plugin"); ``status`` ("loaded", "disabled", "open failed", "missing entry
        symbol", "ABI mismatch", "init failed", "no devices", "duplicate", or "entry point
        failed" for an entry point that could not give a library, listed last); ``reason``
        (empty when loaded); ``device_type`` ("cpu", "gpu", ..., or "" for a plugin that only
        adds ops); ``device_count``; ``abi_version``; ``ops`` (the ops it has kernels for).

    Examples
    --------
    >>> import dlarray
    >>> [p["status"] for p in dlarray.plugins() if p["name"] == "cpu"]
    ['loaded']
    """
    return _entry_points.annotate(_core.plugins())


def load_plugin(path: Union[str, "os.PathLike[str]"]) -> dict[str, Any]:
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


def empty_cache(ctx: Optional[Union[DLContext, str]] = None) -> None:
    """Returns the memory a device's allocator keeps cached to the system.

    The CUDA plugin keeps freed blocks for reuse; arrays still alive are not touched.

    Parameters
    ----------
    ctx : DLContext, optional
        The device; by default every usable device.
    """
    _core.empty_cache(ctx)


_PRECISIONS = ("highest", "tf32")


def set_matmul_precision(precision: str) -> None:
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
        if ctx.device_type == 2 and ctx.device_id == 0:  # a CUDA option; others compute float32
            _core.set_option(ctx, "matmul_precision", precision)
    global _matmul_precision
    _matmul_precision = precision


_matmul_precision = "highest"

_entry_points.load_all()
_log.log_startup()


def get_matmul_precision() -> str:
    """The precision of GPU matrix products, as :func:`set_matmul_precision` set it.

    Returns
    -------
    str
        ``"highest"`` or ``"tf32"``.
    """
    return _matmul_precision


from . import ops, ndarray, gpu_op  # noqa: E402  (they use names above)
# Area "wheel" (issue 25): dlarray.cpp_extension and dlarray.rtc are imported at their first use
# (their compilers, hashing and subprocess machinery are not needed to import dlarray).
_LAZY_MODULES = ("cpp_extension", "rtc")


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError("module 'dlarray' has no attribute %r" % (name,))



# The array API standard's dtypes and inspection. Last: `bool` is the dtype from here on.
__array_api_version__ = "2024.12"
from ._dtypes import (bool, can_cast, complex64, complex128, finfo, float16,  # noqa: E402,A004
                      float32, float64, iinfo, int8, int16, int32, int64, isdtype, result_type,
                      uint8, uint16, uint32, uint64)
from ._info import __array_namespace_info__  # noqa: E402
from ._creation_api import (arange, empty_like, full, full_like, ones, ones_like,  # noqa: E402
                            zeros, zeros_like)
from . import _dtypes  # noqa: E402
__all__ += ["arange", "empty_like", "full", "full_like", "ones", "ones_like", "zeros", "zeros_like"]
# Area "manip" (issue 21): manipulation functions, views, view-composed creation, constants.
from ._manipulation_api import (broadcast_arrays, broadcast_shapes, broadcast_to,  # noqa: E402
                                concat, e, expand_dims, eye, flip, inf, linspace, matrix_transpose,
                                meshgrid, moveaxis, nan, newaxis, permute_dims, pi, repeat,
                                reshape, roll, squeeze, stack, tile, tril, triu, unstack)
__all__ += ["broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "e", "expand_dims",
            "eye", "flip", "inf", "linspace", "matrix_transpose", "meshgrid", "moveaxis", "nan",
            "newaxis", "permute_dims", "pi", "repeat", "reshape", "roll", "squeeze", "stack",
            "tile", "tril", "triu", "unstack"]
__all__ += ["__array_namespace_info__", "bool", "can_cast", "complex64", "complex128", "finfo",
            "float16", "float32", "float64", "iinfo", "int8", "int16", "int32", "int64",
            "isdtype", "result_type", "uint8", "uint16", "uint32", "uint64"]
if _dtypes.bfloat16 is not None:  # with ml_dtypes (the optional "bfloat16" extra)
    bfloat16 = _dtypes.bfloat16
    __all__.append("bfloat16")
# Area "index" (issue 21): gather/scatter, indexing, searching, sorting, sets.
from ._indexing_api import (argsort, nonzero, searchsorted, sort, take,  # noqa: E402
                            take_along_axis, unique_all, unique_counts, unique_inverse,
                            unique_values)
__all__ += ["argsort", "nonzero", "searchsorted", "sort", "take", "take_along_axis",
            "unique_all", "unique_counts", "unique_inverse", "unique_values"]
# x + y, x - y, x * y, x / y and x[i] straight to their C++ fast paths (fast_path.cc): after
# _operators and _indexing_api set the methods, as setting one gives Python's slot back.
_core._fast_slots()
# Area "reduce" (issue 21): reductions, statistics, cumulative functions and diff.
from ._statistics_api import (all, any, argmax, argmin, count_nonzero, cumulative_prod,  # noqa: E402,A004
                              cumulative_sum, diff, max, mean, min, prod, std, sum, var)
__all__ += ["all", "any", "argmax", "argmin", "count_nonzero", "cumulative_prod", "cumulative_sum",
            "diff", "max", "mean", "min", "prod", "std", "sum", "var"]
# Area ufunc (issue 21): the elementwise functions, from the elementwise definition table.
from ._elementwise_api import *  # noqa: E402,F401,F403
__all__ += _elementwise_api.__all__  # noqa: F405
# Linear algebra of the main namespace (issue 21): matmul, tensordot, vecdot; and astype.
from ._linear_algebra_api import astype, matmul, tensordot, vecdot  # noqa: E402
__all__ += ["astype", "matmul", "tensordot", "vecdot"]
# Area "linalg" (issue 22): the linear algebra extension, dlarray.linalg.
from . import linalg  # noqa: E402
__all__ += ["linalg"]
# Area "fft" (issue 22): the array API's FFT extension, as the module dlarray.fft.
from . import fft  # noqa: E402
__all__ += ["fft"]
# Area "fuse" (issue 23): dlarray.fuse, elementwise expressions as one generated kernel.
from ._fuse import fuse  # noqa: E402
__all__ += ["fuse"]

# Area "fusehost" (issue 23): the SGD update of every parameter as one generated kernel.
from ._fuse_multi import sgd_update  # noqa: E402
__all__ += ["sgd_update"]
# Area "cublaslt" (issue 23): a dense layer's fused products (cuBLASLt epilogues on CUDA).
from ._linear_api import linear, linear_weight_grad  # noqa: E402
__all__ += ["linear", "linear_weight_grad"]
