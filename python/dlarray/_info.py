"""``dlarray.__array_namespace_info__()``: what this namespace offers, per device, as the array
API standard (2024.12) asks: its capabilities, the default device, the default dtypes, the
devices of every loaded plugin and the dtypes each device supports."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from . import _core, _devices, _dtypes

# The capabilities this build has. Both are False until boolean-mask indexing and functions of
# data-dependent output shape (nonzero, unique_*) exist; consumers read them to choose a path.
_CAPABILITIES = {"boolean indexing": False, "data-dependent shapes": False, "max dimensions": 64}


def _device(device: Any) -> Optional[_core.DLContext]:
    if device is None:
        return None
    if isinstance(device, _core.DLContext):
        return device
    return _devices.device(device)


def _supported(device: Optional[_core.DLContext]) -> Tuple[np.dtype, ...]:
    """The standard's dtypes whose arrays the device can hold and convert (astype has a kernel
    there for it)."""
    kinds = (_dtypes.KINDS["bool"] + _dtypes.KINDS["integral"]
             + (_dtypes.float32, _dtypes.float64) + _dtypes.COMPLEX_FLOATING)
    astype = _core.op_info("astype")
    if device is not None and repr(device).rsplit("(", 1)[0] not in astype["devices"]:
        return ()
    allowed = set(astype["dtypes"])
    return tuple(t for t in kinds if str(t) in allowed)


class Info:
    """The inspection namespace returned by ``dlarray.__array_namespace_info__()``."""

    def capabilities(self) -> Dict[str, Union[bool, int, List[str]]]:
        """{"boolean indexing": bool, "data-dependent shapes": bool, "max dimensions": int}, and
        dlarray's "linalg host fallback" and "fft host fallback": the device kinds whose linalg
        factorizations and FFTs copy to the CPU and back (docs/linalg.md, docs/fft.md)."""
        from . import fft  # imported here: the package imports this module first
        from ._linalg_primitives import host_fallback_devices
        return dict(_CAPABILITIES, **{"linalg host fallback": host_fallback_devices(),
                                      "fft host fallback": fft._host_fallback_devices()})

    def default_device(self) -> _core.DLContext:
        """Where arrays go when no device is given (``dlarray.set_default_device``,
        ``DLARRAY_DEFAULT_DEVICE``)."""
        return _devices.default_device()

    def devices(self) -> List[_core.DLContext]:
        """Every usable device of every loaded plugin."""
        return list(_core.devices())

    def default_dtypes(self, *, device: Any = None) -> Dict[str, np.dtype]:
        """The dtypes of Python floats, complex numbers, ints and indices made into arrays."""
        _device(device)  # a bad device is an error, as for every function that takes one
        return {"real floating": _dtypes.float64, "complex floating": _dtypes.complex128,
                "integral": _dtypes.int64, "indexing": _dtypes.int64}

    def dtypes(self, *, device: Any = None,
               kind: Union[None, str, Tuple[str, ...]] = None) -> Dict[str, np.dtype]:
        """The standard's dtypes the device supports (every device when None), by name;
        ``kind`` keeps those of a kind (as ``isdtype`` reads it)."""
        supported = _supported(_device(device))
        if kind is not None:
            supported = tuple(t for t in supported if _dtypes.isdtype(t, kind))
        return {str(t): t for t in supported}


def __array_namespace_info__() -> Info:
    """The array API's inspection namespace for dlarray."""
    return Info()
