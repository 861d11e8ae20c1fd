"""Which devices run which ops: a plugin registers kernels per op, and an op it lacks is either
optional (``sort``: the composite runs instead) or runs on the CPU with the operands copied there
and back (the host fallback of ``dlarray.linalg`` and ``dlarray.fft``, reported by
``__array_namespace_info__().capabilities()``)."""
from __future__ import annotations

from typing import Dict, Iterable, List, Tuple

from . import _core


def device_kind(ctx: _core.DLContext) -> str:
    """"cpu", "cuda", "opencl", ... (the names ``op_info(op)['devices']`` lists)."""
    return repr(ctx).rsplit("(", 1)[0]


_HAS: Dict[Tuple[str, str], bool] = {}


def has_kernel(op: str, ctx: _core.DLContext) -> bool:
    """Whether ctx's plugin has a kernel for op (remembered: a device's plugin is loaded once its
    device exists, and plugins do not unload)."""
    key = (op, device_kind(ctx))
    if key not in _HAS:
        _HAS[key] = key[1] in _core.op_info(op)["devices"]
    return _HAS[key]


def fallback_devices(ops: Iterable[str]) -> List[str]:
    """The kinds of the devices now usable, other than cpu, whose plugin lacks a kernel for one
    of ops (so those ops run through the host fallback there)."""
    ops = list(ops)
    kinds = sorted({device_kind(c) for c in _core.devices()} - {"cpu"})
    return [k for k in kinds if any(k not in _core.op_info(op)["devices"] for op in ops)]
