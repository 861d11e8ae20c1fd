"""Seed compatibility: the dlsys ``ndarray`` module (``from dlarray import ndarray``)."""

from . import DLContext, NDArray, cpu, gpu, is_gpu_ctx  # noqa: F401
from . import _creation

__all__ = ["DLContext", "NDArray", "array", "cpu", "empty", "gpu", "is_gpu_ctx"]


def empty(shape, ctx=None, dtype=None):
    """A new array whose elements are not initialised: :func:`dlarray.empty` with the seed's
    optional ``ctx``.

    Parameters
    ----------
    shape : int or sequence of int
    ctx : DLContext or str, optional
        ``dlarray.default_device()`` (``cpu(0)`` unless set) when None.
    dtype : numpy dtype or str, optional
        float32 by default.

    Returns
    -------
    NDArray

    Raises
    ------
    ValueError, TypeError, RuntimeError, MemoryError
        As :func:`dlarray.empty`.

    Examples
    --------
    >>> from dlarray import ndarray
    >>> ndarray.empty((2, 3)).ctx
    cpu(0)
    """
    return _creation.empty(shape, ctx, dtype)


def array(arr, ctx=None, dtype=None):
    """Copies array-like data to a device: :func:`dlarray.array` with the seed's optional
    ``ctx``.

    Parameters
    ----------
    arr : array_like or NDArray
    ctx : DLContext or str, optional
        ``dlarray.default_device()`` (``cpu(0)`` unless set) when None.
    dtype : numpy dtype or str, optional
        float32 by default, as in the seed.

    Returns
    -------
    NDArray

    Raises
    ------
    ValueError, TypeError, RuntimeError, MemoryError
        As :func:`dlarray.array`.

    Examples
    --------
    >>> import numpy as np
    >>> from dlarray import ndarray
    >>> ndarray.array(np.arange(3)).asnumpy()
    array([0., 1., 2.], dtype=float32)
    """
    return _creation.array(arr, ctx, dtype)
