"""dlarray.fuse's portable path: the traced DAG run by the unfused ops themselves (each node the
kernel of its table row, ``astype`` or ``where``), over cache-sized chunks on the CPU (numexpr's
idea: the temporaries of one chunk stay in cache, so memory sees the inputs and the output once)
and over whole arrays on other devices. It needs no compiler, runs every dtype the rows take
(float16, bfloat16 and complex included) and every device with the rows' kernels, and gives the
unfused results exactly (it runs the same kernels).
"""
from __future__ import annotations

import numpy as np

from . import _core, _dtypes, ops
from ._operators import _broadcast, _compact

CHUNK = 1 << 18  # elements per chunk on the CPU: 1 MiB of float32 per temporary (L2-sized)
_HALF = {np.dtype(np.float16)} | ({np.dtype(_dtypes.bfloat16)} if _dtypes.bfloat16 else set())


def _leaf(node, arrays, shape, size, chunked, ctx):
    """An input or constant as a flat array of the output's size (a broadcast input is expanded
    once), or of ``size`` elements when it is one value repeated (read through [:m])."""
    if node.kind == "const":
        return _core.array(np.full(size, node.arg, dtype=node.dtype), ctx, node.dtype), True
    a = arrays[node.arg]
    if a.shape == tuple(shape):
        return _compact(a).reshape(-1), False
    if chunked and a.size == 1:
        buf = _core.empty((size,), a.ctx, a.dtype)
        ops.broadcast_to(_compact(a).reshape((1,)), buf)
        return buf, True
    return _broadcast(a, shape).reshape(-1), False


def run(trace, arrays, out, ctx) -> None:
    """Computes ``trace`` on ``arrays`` into ``out`` (compact, the output's shape and dtype)."""
    shape, n = out.shape, out.size
    if n == 0:
        return
    chunked = ctx.device_type == 1
    size = min(n, CHUNK) if chunked else n
    flat_out = out.reshape(-1)
    values: dict = {}  # node index -> (flat array, repeated: read [:m] rather than [b:e])
    last_use = {i.index: node.index for node in trace.nodes for i in node.inputs}
    free: dict = {}  # dtype -> temporaries no later node reads: a long chain needs few
    consts: dict = {}  # (dtype, value) -> the filled array: a loop's constants are few
    for node in trace.nodes:
        if node.kind == "const":
            key = (node.dtype, node.arg.tobytes())
            if key not in consts:
                consts[key] = _leaf(node, arrays, shape, size, chunked, ctx)
            values[node.index] = consts[key]
        elif node.kind == "input":
            values[node.index] = _leaf(node, arrays, shape, size, chunked, ctx)
        elif node is not trace.output:
            spare = free.get(node.dtype)
            values[node.index] = (spare.pop() if spare else
                                  _core.empty((size,), ctx, node.dtype), True)
        for i in {i.index: i for i in node.inputs}.values():  # once each, after the node is
            # placed: its output never aliases an input
            if last_use[i.index] == node.index and i.kind not in ("input", "const"):
                free.setdefault(i.dtype, []).append(values[i.index][0])
    for begin in range(0, n, size):
        end = min(n, begin + size)
        m = end - begin

        def view(index):
            array, repeated = values[index]
            if repeated:
                return array if m == array.size else array[:m]
            return array if m == array.size else array[begin:end]
        for node in trace.nodes:
            if node.kind in ("input", "const") and node is not trace.output:
                continue
            dst = flat_out[begin:end] if m != n else flat_out
            if node is not trace.output:
                dst = view(node.index)
            src = [view(i.index) for i in node.inputs]
            if node.kind in ("input", "const"):
                ops.astype(view(node.index), dst)
            elif node.kind == "cast":
                ops.astype(src[0], dst)
            elif node.kind == "where":
                ops.where(*src, dst)
            elif node.arg == "subtract" and node.dtype in _HALF:
                # NDArray's a - b: a + b * -1, the same values; the CPU computes the subtract row
                # one element at a time in 16-bit floats, and these two rows in vectors
                ops.matrix_elementwise_multiply_by_const(src[1], -1.0, dst)
                ops.matrix_elementwise_add(src[0], dst, dst)
            else:
                getattr(ops, node.arg)(*src, dst)

