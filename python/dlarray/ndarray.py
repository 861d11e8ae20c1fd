"""Seed compatibility: the dlsys ``ndarray`` module (``from dlarray import ndarray``)."""

from . import DLContext, NDArray, cpu, gpu, is_gpu_ctx  # noqa: F401
from . import _core

__all__ = ["DLContext", "NDArray", "array", "cpu", "empty", "gpu", "is_gpu_ctx"]


def empty(shape, ctx=None, dtype=None):
    """An uninitialised float32 array on ``ctx`` (default cpu(0))."""
    return _core.empty(shape, cpu(0) if ctx is None else ctx, dtype)


def array(arr, ctx=None, dtype=None):
    """Copies ``arr`` to ``ctx`` (default cpu(0)) as float32."""
    return _core.array(arr, cpu(0) if ctx is None else ctx, dtype)
