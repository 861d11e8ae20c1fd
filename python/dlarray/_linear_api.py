"""A dense layer's fused products: ``linear`` (``relu(x @ w + bias)``) and
``linear_weight_grad`` (``x^T @ dy`` and ``dy.sum(0)``).

Both are optional ops of the core (``runtime/src/linear_ops.cc``): a backend may register a
native kernel (the CUDA backend's is cuBLASLt's product with an epilogue, or its own unfused
kernels where those were timed faster or cuBLASLt has no algorithm); everywhere else, and
wherever the native kernel cannot run (no cuBLASLt), these functions compose them from
``matrix_multiply``, ``broadcast_to``, the elementwise add, ``relu`` and
``reduce_sum_axis_zero`` — the ops the autodiff graph of a dense layer runs unfused, so the
composite's results are those of the unfused graph, bit for bit.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from . import _core, ops
from ._core import NDArray
from ._kernels import device_kind, has_kernel

_FLOATS = ("float32", "float16", "bfloat16", "float64")
# (op, device kind, dtype, shapes) -> why the native kernel could not run (it is not tried again)
_NATIVE_FAILED: dict = {}


def _check(fn: str, arrays: dict, ranks: dict) -> tuple:
    """(ctx, dtype) of the named NDArrays, after checking types, ranks, dtype and device."""
    ctx = dtype = None
    for name, a in arrays.items():
        if not isinstance(a, NDArray):
            raise TypeError("%s: %s must be an NDArray, got %s" % (fn, name, type(a).__name__))
        if a.ndim != ranks[name]:
            raise ValueError("%s: %s must be %d-D, got shape %s" % (fn, name, ranks[name],
                                                                    a.shape))
        if dtype is None:
            ctx, dtype = a.ctx, a.dtype
        elif a.dtype != dtype:
            raise TypeError("%s: %s is %s, the other operands %s (one float dtype for all)"
                            % (fn, name, a.dtype, dtype))
        elif a.ctx != ctx:
            raise ValueError("%s: %s is on %s, the other operands on %s" % (fn, name, a.ctx, ctx))
    if np.dtype(dtype).name not in _FLOATS:
        raise TypeError("%s: operands must be float32, float16, bfloat16 or float64, got %s"
                        % (fn, dtype))
    return ctx, dtype


def _out(fn: str, name: str, given: Optional[NDArray], shape: tuple, dtype, ctx) -> NDArray:
    """The output array: ``given`` (checked) or a new one."""
    if given is None:
        return _core.empty(shape, ctx, dtype)
    if not isinstance(given, NDArray) or given.shape != shape or given.dtype != dtype \
            or given.ctx != ctx:
        raise ValueError("%s: %s must be an NDArray of shape %s, %s, on %s" % (
            fn, name, shape, np.dtype(dtype).name, ctx))
    return given


def _native(op: str, arrays: list, args: list) -> bool:
    """Runs ``op``'s native kernel with ``args`` where the device has one; False when it has none
    or the kernel cannot run this product (then remembered: the caller runs the composite)."""
    x = arrays[0]
    if not has_kernel(op, x.ctx) or any(0 in a.shape for a in arrays):
        return False
    key = (op, device_kind(x.ctx), np.dtype(x.dtype).name, tuple(a.shape for a in arrays))
    if key in _NATIVE_FAILED:
        return False
    try:
        getattr(ops, op)(*args)
    except RuntimeError as e:  # the kernel's BackendError, raised before it queued anything
        # (the operands were checked above): the composite runs it, or raises if the device
        # itself is failing
        _NATIVE_FAILED[key] = str(e)
        return False
    return True


def native_failures() -> list:
    """One line per product whose native kernel could not run (the composite ran)."""
    return ["%s %s %s: %s" % (k[0], k[2], k[3], why) for k, why in _NATIVE_FAILED.items()]


def native_choices(ctx) -> list:
    """How each product the CUDA plugin has seen on ``ctx`` runs, one line each: fused (which
    of cuBLASLt's heuristic results) or unfused, with the times that decided it
    (``backends/cuda/cublaslt_tune.cc``); [] on other devices."""
    if device_kind(ctx) != "cuda":
        return []
    return _core.get_option(ctx, "cublaslt_choices:%d" % ctx.device_id).splitlines()


def linear(x: NDArray, w: NDArray, bias: Optional[NDArray] = None, relu: bool = False, *,
           out: Optional[NDArray] = None) -> NDArray:
    """A dense layer's forward product: ``x @ w + bias``, then ``relu`` when asked.

    One kernel where the device's backend has ``linear`` (CUDA: cuBLASLt with a BIAS or
    RELU_BIAS epilogue); elsewhere ``matrix_multiply``, ``broadcast_to``, the elementwise add and
    ``relu``, the ops an autodiff graph of the layer runs.

    Parameters
    ----------
    x : NDArray
        (m, k), float32, float16, bfloat16 or float64.
    w : NDArray
        (k, n), x's dtype and device.
    bias : NDArray, optional
        (n,), added to every row; None: no bias.
    relu : bool, optional
        Apply ``max(., 0)`` to the result.
    out : NDArray, optional
        Where to write the (m, n) result.

    Returns
    -------
    NDArray
        (m, n).

    Raises
    ------
    TypeError
        An operand is not an NDArray, or the dtypes differ or are not float.
    ValueError
        Ranks or shapes that do not fit (the message names the argument), operands on two
        devices, or an ``out`` of another shape, dtype or device.
    """
    arrays = {"x": x, "w": w} if bias is None else {"x": x, "w": w, "bias": bias}
    ctx, dtype = _check("linear", arrays, {"x": 2, "w": 2, "bias": 1})
    if x.shape[1] != w.shape[0]:
        raise ValueError("linear: x has %d columns, w has %d rows (x %s, w %s)"
                         % (x.shape[1], w.shape[0], x.shape, w.shape))
    n = w.shape[1]
    if bias is not None and bias.shape != (n,):
        raise ValueError("linear: bias must have shape (%d,) (w's columns), got %s"
                         % (n, bias.shape))
    if not isinstance(relu, (bool, np.bool_)):
        raise TypeError("linear: relu must be True or False, got %s" % type(relu).__name__)
    out = _out("linear", "out", out, (x.shape[0], n), dtype, ctx)
    if bias is not None and _native("linear", [x, w, bias], [x, w, bias, bool(relu), out]):
        return out
    return linear_composite(x, w, bias, bool(relu), out)


def linear_composite(x: NDArray, w: NDArray, bias: Optional[NDArray], relu: bool,
                     out: NDArray) -> NDArray:
    """``linear`` from the unfused ops, into ``out`` (checked operands)."""
    ops.matrix_multiply(x, False, w, False, out)
    if bias is not None:
        spread = _core.empty(out.shape, out.ctx, out.dtype)
        ops.broadcast_to(bias, spread)
        ops.matrix_elementwise_add(out, spread, out)
    if relu:
        ops.relu(out, out)
    return out


def linear_weight_grad(x: NDArray, dy: NDArray, *, dw: Optional[NDArray] = None,
                       dbias: Optional[NDArray] = None) -> tuple:
    """A dense layer's parameter gradients: ``dw = x^T @ dy`` and ``dbias = dy.sum(axis=0)``.

    One kernel where the device's backend has ``linear_weight_grad`` (CUDA: cuBLASLt with the
    BGRADA epilogue, the bias gradient as a by-product of the product); elsewhere
    ``matrix_multiply`` and ``reduce_sum_axis_zero``.

    Parameters
    ----------
    x : NDArray
        The layer's input, (m, k).
    dy : NDArray
        The gradient of its output, (m, n), x's dtype and device.
    dw, dbias : NDArray, optional
        Where to write the (k, n) and (n,) results.

    Returns
    -------
    tuple of NDArray
        ``(dw, dbias)``.

    Raises
    ------
    TypeError
        An operand is not an NDArray, or the dtypes differ or are not float.
    ValueError
        Ranks or row counts that do not fit (the message names the argument), or an output of
        another shape, dtype or device.
    """
    ctx, dtype = _check("linear_weight_grad", {"x": x, "dy": dy}, {"x": 2, "dy": 2})
    if x.shape[0] != dy.shape[0]:
        raise ValueError("linear_weight_grad: x has %d rows, dy has %d (x %s, dy %s)"
                         % (x.shape[0], dy.shape[0], x.shape, dy.shape))
    dw = _out("linear_weight_grad", "dw", dw, (x.shape[1], dy.shape[1]), dtype, ctx)
    dbias = _out("linear_weight_grad", "dbias", dbias, (dy.shape[1],), dtype, ctx)
    if not _native("linear_weight_grad", [x, dy], [x, dy, dw, dbias]):
        linear_weight_grad_composite(x, dy, dw, dbias)
    return dw, dbias


def linear_weight_grad_composite(x: NDArray, dy: NDArray, dw: NDArray, dbias: NDArray) -> None:
    """``linear_weight_grad`` from the unfused ops, into ``dw`` and ``dbias``."""
    ops.matrix_multiply(x, True, dy, False, dw)
    if dy.shape[0] == 0:  # reduce_sum_axis_zero of no rows: zeros
        ops.array_set(dbias, 0.0)
    else:
        ops.reduce_sum_axis_zero(dy, dbias)
