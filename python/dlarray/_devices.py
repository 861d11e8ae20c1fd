"""Devices: contexts from ids or strings, counts, names, memory, and the default device."""

from __future__ import annotations

import contextlib
import contextvars
import os
from typing import Iterator, Optional, Union

from . import _core
from ._core import DLContext

DeviceLike = Union[DLContext, str]

_default: contextvars.ContextVar[Optional[DLContext]] = contextvars.ContextVar(
    "dlarray_default_device", default=None)

_CPU = 1
_GPU = 2

_ENV_DEFAULT = "DLARRAY_DEFAULT_DEVICE"
_env_checked: tuple[str, DLContext] | None = None  # the variable's last value and its device


def _context(kind: int, dev_id: int) -> DLContext:
    if isinstance(dev_id, bool) or not isinstance(dev_id, int):
        try:
            dev_id = int(dev_id.__index__())
        except AttributeError:
            raise TypeError("device id must be an int, got %s" % type(dev_id).__name__) from None
    if dev_id < 0:
        count = _core.device_count(kind)
        valid = ("ids 0..%d" % (count - 1)) if count else "none is usable on this machine"
        name = repr(DLContext(0, kind)).rsplit("(", 1)[0]  # as the device prints: cpu, cuda, ...
        raise ValueError("%s(%d): device ids start at 0 (%s devices: %s)"
                         % (name, dev_id, name, valid))
    return DLContext(dev_id, kind)


def cpu(dev_id: int = 0) -> DLContext:
    """The context of CPU device ``dev_id`` (there is one, id 0).

    Parameters
    ----------
    dev_id : int, optional
        The device id (0).

    Returns
    -------
    DLContext
        The context.

    Raises
    ------
    ValueError
        ``dev_id`` is negative.
    TypeError
        ``dev_id`` is not an integer.
    """
    return _context(_CPU, dev_id)


def gpu(dev_id: int = 0) -> DLContext:
    """The context of CUDA device ``dev_id`` (also written ``"cuda:ID"`` or ``"gpu:ID"``).

    The context can be made on a machine without GPUs; using it there raises the reason.

    Parameters
    ----------
    dev_id : int, optional
        The device id (default 0).

    Returns
    -------
    DLContext
        The context.

    Raises
    ------
    ValueError
        ``dev_id`` is negative.
    TypeError
        ``dev_id`` is not an integer.
    """
    return _context(_GPU, dev_id)


def device(spec: Optional[DeviceLike] = None) -> DLContext:
    """The context a device specification names.

    Parameters
    ----------
    spec : DLContext, str or None
        A context, a device string (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"gpu:0"`` or the
        device type name of a loaded plugin, with an optional ``:id``), or None for the default
        device.

    Returns
    -------
    DLContext
        The context (ids are checked when the device is used).

    Raises
    ------
    ValueError
        An unknown device name or a malformed id.
    TypeError
        ``spec`` is neither a context, a string nor None.
    """
    if spec is None:
        return default_device()
    if isinstance(spec, DLContext):
        return spec
    if isinstance(spec, str):
        return _core.parse_device(spec)
    raise TypeError("a device is a DLContext, a string such as 'cuda:0', or None; got %s"
                    % type(spec).__name__)


def check_device(ctx: DeviceLike) -> None:
    """Raises unless ``ctx`` names a usable device.

    Parameters
    ----------
    ctx : DLContext or str
        The device.

    Raises
    ------
    ValueError
        The id is out of range (the message names the valid ids) or the name is unknown.
    RuntimeError
        No usable plugin serves the device type (the message holds the plugin's reason).
    """
    _core.check_device(device(ctx))


def _environment_default() -> Optional[DLContext]:
    """The device DLARRAY_DEFAULT_DEVICE names, checked to be usable (None when unset).

    Checked at each use rather than at import, so that a bad value fails where the default
    device is first needed, with the variable named, never falling back to the CPU silently."""
    global _env_checked
    spec = os.environ.get(_ENV_DEFAULT, "").strip()
    if not spec:
        return None
    if _env_checked is not None and _env_checked[0] == spec:
        return _env_checked[1]
    try:
        ctx = _core.parse_device(spec)
        _core.check_device(ctx)
    except (ValueError, RuntimeError) as e:
        usable = ", ".join(repr(c) for c in _core.devices())
        raise type(e)("%s=%r does not name a usable device (usable here: %s): %s"
                      % (_ENV_DEFAULT, spec, usable, e)) from None
    _env_checked = (spec, ctx)
    return ctx


def default_device() -> DLContext:
    """The device arrays are made on when no context is given.

    That is the device :func:`set_default_device` or :func:`using_device` chose for the current
    thread / async context, else the one the environment variable ``DLARRAY_DEFAULT_DEVICE``
    names (a device string such as ``"cuda:0"``), else ``cpu(0)``.

    Returns
    -------
    DLContext
        The default device of the current thread / async context.

    Raises
    ------
    ValueError, RuntimeError
        ``DLARRAY_DEFAULT_DEVICE`` names no usable device (an unknown name, an id out of range,
        or a device type no usable plugin serves, e.g. ``gpu`` on a machine without one); the
        message names the variable and the usable devices.
    """
    ctx = _default.get()
    if ctx is not None:
        return ctx
    env = _environment_default()
    return cpu(0) if env is None else env


def set_default_device(ctx: Optional[DeviceLike]) -> None:
    """Sets the default device (for the current thread / async context).

    Parameters
    ----------
    ctx : DLContext, str or None
        The new default; None restores the default of :func:`default_device`
        (``DLARRAY_DEFAULT_DEVICE``, else ``cpu(0)``).

    Raises
    ------
    ValueError
        An unknown device, or an id out of range.
    RuntimeError
        No usable plugin serves the device.
    """
    if ctx is None:
        _default.set(None)
        return
    target = device(ctx)
    check_device(target)
    _default.set(target)


@contextlib.contextmanager
def using_device(ctx: DeviceLike) -> Iterator[DLContext]:
    """A context manager that makes ``ctx`` the default device inside its block.

    Parameters
    ----------
    ctx : DLContext or str
        The device, e.g. ``"cuda:0"``.

    Yields
    ------
    DLContext
        The device.

    Raises
    ------
    ValueError
        An unknown device, or an id out of range.
    RuntimeError
        No usable plugin serves the device.

    Examples
    --------
    >>> import dlarray
    >>> with dlarray.using_device("cpu"):
    ...     x = dlarray.empty((2, 3))
    """
    target = device(ctx)
    check_device(target)
    token = _default.set(target)
    try:
        yield target
    finally:
        _default.reset(token)


def device_count(kind: Union[str, int, DLContext]) -> int:
    """How many devices of a kind exist.

    Parameters
    ----------
    kind : str, int or DLContext
        ``"cpu"``, ``"cuda"`` / ``"gpu"``, a plugin's device type name, a device type number, or
        a context (its type).

    Returns
    -------
    int
        The count (0 when no usable plugin serves the kind).

    Raises
    ------
    ValueError
        An unknown device type name.
    """
    return _core.device_count(kind)


def device_name(ctx: DeviceLike) -> str:
    """The name of a device (e.g. the CPU or GPU model).

    Parameters
    ----------
    ctx : DLContext or str
        The device.

    Returns
    -------
    str
        Its name.

    Raises
    ------
    ValueError
        An id out of range, or an unknown device name.
    RuntimeError
        No usable plugin serves the device.
    """
    return _core.device_name(device(ctx))


def mem_info(ctx: DeviceLike) -> tuple[int, int]:
    """Free and total memory of a device, in bytes.

    Parameters
    ----------
    ctx : DLContext or str
        The device.

    Returns
    -------
    tuple of int
        ``(free, total)``.

    Raises
    ------
    ValueError
        An id out of range, or an unknown device name.
    RuntimeError
        No usable plugin serves the device, or its plugin does not report memory.
    """
    return _core.mem_info(device(ctx))
