"""Seed compatibility: the dlsys ``ndarray`` module (``from dlarray import ndarray``)."""

from . import DLContext, NDArray, cpu, gpu, is_gpu_ctx  # noqa: F401
from . import _creation

__all__ = ["DLContext", "NDArray", "array", "cpu", "empty", "gpu", "is_gpu_ctx"]


def empty(shape, ctx=None, dtype=None):
    """An uninitialised array (float32 unless ``dtype`` is given) on ``ctx``.

    Parameters
    ----------
    shape : int or sequence of int
        Extents.
    ctx : DLContext or str, optional
        The device (default: ``dlarray.default_device()``, cpu(0) unless set).
    dtype : numpy dtype, optional
        Element type (float32).

    Returns
    -------
    NDArray
        The array.

    Raises
    ------
    ValueError
        A negative extent or an unknown device.
    TypeError
        An unsupported dtype.
    """
    return _creation.empty(shape, ctx, dtype)


def array(arr, ctx=None, dtype=None):
    """Copies ``arr`` to ``ctx`` (float32 unless ``dtype`` is given, as in the seed).

    Parameters
    ----------
    arr : array_like
        The data (never written).
    ctx : DLContext or str, optional
        The device (default: ``dlarray.default_device()``, cpu(0) unless set).
    dtype : numpy dtype, optional
        Element type (float32).

    Returns
    -------
    NDArray
        A new array.

    Raises
    ------
    ValueError
        An unknown device or unconvertible data.
    TypeError
        An unsupported dtype.
    """
    return _creation.array(arr, ctx, dtype)
