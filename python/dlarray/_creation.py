"""Making arrays: empty, array (always a copy), asarray (shares memory when it can), from_dlpack."""

from __future__ import annotations

from typing import Any, Optional, Sequence, SupportsIndex, Union

import numpy as np
import numpy.typing as npt

from . import _core
from ._core import DLContext, NDArray
from . import _devices
from ._devices import device

DeviceLike = Union[DLContext, str]
ShapeLike = Union[SupportsIndex, Sequence[SupportsIndex]]


def _ctx_or_device(ctx: Optional[DeviceLike], device: Optional[DeviceLike],
                   where: str) -> Optional[DeviceLike]:
    """The device of a function taking the seed's ``ctx`` and the array API's ``device=``."""
    if ctx is not None and device is not None:
        raise TypeError("%s: pass the device once, as ctx or as device=" % where)
    return device if ctx is None else ctx


def empty(shape: ShapeLike, ctx: Optional[DeviceLike] = None,
          dtype: npt.DTypeLike = None, *, device: Optional[DeviceLike] = None) -> NDArray:
    """An uninitialised array.

    Parameters
    ----------
    shape : int or sequence of int
        Extents; 0 is allowed (a zero-size array holds no memory).
    ctx : DLContext or str, optional
        The device (default: ``dlarray.default_device()``).
    dtype : numpy dtype or name, optional
        Element type; bfloat16 is ``ml_dtypes.bfloat16`` or ``"bfloat16"``. Default: float32
        (the seed's rule) when called the seed's way, ``empty(shape)`` or ``empty(shape, ctx)``;
        float64 (the array API's default) when the device is given as ``device=``.
    device : DLContext or str, optional
        The array API's name of ``ctx`` (give one of them).

    Returns
    -------
    NDArray
        The array.

    Raises
    ------
    ValueError
        A negative extent or an unknown device.
    TypeError
        An unsupported dtype or a shape that is not integers.
    MemoryError
        The device cannot hold the array.
    RuntimeError
        No usable plugin serves the device.
    """
    if dtype is None and device is not None:
        dtype = np.float64
    return _core.empty(shape, _devices.device(_ctx_or_device(ctx, device, "empty")), dtype)


def array(obj: Any, ctx: Optional[DeviceLike] = None, dtype: npt.DTypeLike = None) -> NDArray:
    """A copy of array-like data on a device.

    Parameters
    ----------
    obj : array_like
        An NDArray (any device), a DLPack producer (PyTorch, CuPy, JAX, ...), a NumPy array (also
        read-only or non-contiguous ones; the source is never written) or anything NumPy converts.
    ctx : DLContext or str, optional
        The device (default: ``dlarray.default_device()``).
    dtype : numpy dtype or name, optional
        Element type. Default: float32 (the dlsys seed's rule) for data that is not an NDArray;
        an NDArray keeps its dtype.

    Returns
    -------
    NDArray
        A new compact array.

    Raises
    ------
    ValueError
        An unknown device, or data NumPy cannot convert.
    TypeError
        An unsupported dtype.
    RuntimeError
        No usable plugin serves the device.
    """
    return _core.array(obj, device(ctx), dtype)


def _dtype(dtype: npt.DTypeLike) -> Optional[np.dtype[Any]]:
    """The numpy dtype of a dtype argument, by the parser every entry point uses."""
    return None if dtype is None else _core.parse_dtype(dtype)


def asarray(obj: Any, ctx: Optional[DeviceLike] = None, dtype: npt.DTypeLike = None,
            copy: Optional[bool] = None, *, device: Optional[DeviceLike] = None) -> NDArray:
    """An NDArray with obj's data, sharing its memory when it is already on ``ctx`` in ``dtype``.

    Parameters
    ----------
    obj : array_like
        An NDArray; a DLPack producer (PyTorch, CuPy, JAX, NumPy, ...); an object with
        ``__cuda_array_interface__`` (its memory is taken to be on ``ctx``'s GPU, or gpu(0));
        a NumPy array (read-only ones give read-only NDArrays); or anything NumPy converts.
    ctx : DLContext or str, optional
        The device. Default: the data's own device for NDArrays, DLPack producers and NumPy
        arrays (the CPU), else (Python lists, scalars) ``dlarray.default_device()``.
    dtype : numpy dtype or name, optional
        Element type (default: the data's; Python data gets NumPy's).
    copy : bool, optional
        True: always copy. False: never copy (ValueError when the data must move or convert).
        None (default): copy only when needed.
    device : DLContext or str, optional
        The array API's name of ``ctx`` (give one of them).

    Returns
    -------
    NDArray
        The array (a view of obj's memory where possible).

    Raises
    ------
    ValueError
        ``copy=False`` but a copy is needed; an unknown device.
    TypeError
        An unsupported dtype.
    RuntimeError
        No usable plugin serves the device.
    """
    ctx = _ctx_or_device(ctx, device, "asarray")
    want = None if ctx is None else _devices.device(ctx)
    dtype = _dtype(dtype)
    src = None
    if isinstance(obj, NDArray):
        src = obj
    elif hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
        src = _core.from_dlpack(obj)
    elif hasattr(obj, "__cuda_array_interface__"):
        gpu = want if want is not None and want.device_type == 2 else _devices.device("cuda:0")
        src = _core.from_cuda_array_interface(obj, gpu)
    if src is None:
        host = np.asarray(obj, dtype=dtype)
        if copy is False and host is not obj and not (
                isinstance(obj, np.ndarray) and np.shares_memory(host, obj)):
            raise ValueError("asarray: converting %s needs a copy, which copy=False forbids"
                             % type(obj).__name__)
        src = _core.share_numpy(host)
        if src is None:  # byte-swapped or misaligned: NumPy copies it into a native layout
            if copy is False:
                raise ValueError("asarray: the data's layout cannot be shared (byte order or "
                                 "alignment); copy=False forbids a copy")
            # np.array(copy=True): np.asarray would hand back a misaligned array unchanged.
            native = host.dtype.newbyteorder("=")
            src = _core.share_numpy(np.array(host, dtype=native, order="C", copy=True))
        dtype = None
        if want is None:  # host data goes to the default device, as the docstring says
            want = _devices.device(None)
    target = src.ctx if want is None else want
    changes = (target != src.ctx) or (dtype is not None and np.dtype(dtype) != src.dtype)
    if changes and copy is False:
        raise ValueError("asarray: the data is %s on %s; %s on %s needs a copy, which copy=False "
                         "forbids" % (src.dtype, src.ctx, np.dtype(dtype) if dtype is not None
                                      else src.dtype, target))
    if dtype is not None and np.dtype(dtype) != src.dtype:
        src = src.astype(dtype)
        copy = False if copy else copy  # the conversion made a new array already
    if target != src.ctx:
        return src.copyto(target)
    return src.copy() if copy else src


# The import of every DLPack exchange: the C++ function itself (no Python frame in between).
from_dlpack = _core.from_dlpack
