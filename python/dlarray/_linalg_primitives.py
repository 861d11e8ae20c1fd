"""The factorization primitives of ``dlarray.linalg`` (docs/linalg.md) as Python calls: operand
checks, stacks brought to the ops' compact ``(batch, m, n)`` form (real or complex), the host
fallback for devices without kernels, and ``LinAlgError`` from the ops' ``info`` outputs."""
from __future__ import annotations

from typing import Any, List, Sequence, Tuple

import numpy as np

from . import _core, _devices, ops
from ._core import NDArray
from ._kernels import fallback_devices, has_kernel

#: The linalg ops (runtime/src/linalg_ops.cc); a backend has native kernels by registering these.
LINALG_OPS = ("linalg_lu", "linalg_solve", "linalg_cholesky", "linalg_eigh", "linalg_svd",
              "linalg_qr")


class LinAlgError(ValueError):
    """A matrix the operation has no result for: singular (``inv``, ``solve``), not positive
    definite (``cholesky``), or a decomposition that did not converge (``svd``, ``eigh``, also
    for NaN input). The message names the index of the matrix in the batch.

    It subclasses ``ValueError`` (NumPy's subclasses ``Exception``): the input has a bad value,
    which dlarray reports as ``ValueError`` everywhere, and consumers that catch ``ValueError``
    for bad input keep working.
    """


def host_fallback_devices() -> List[str]:
    """The device kinds of loaded plugins that run some linalg op through the host fallback."""
    return fallback_devices(LINALG_OPS)


def run(op: str, inputs: Sequence[NDArray], *attrs: int) -> Tuple[NDArray, ...]:
    """The op's outputs for compact inputs, on the inputs' device: natively when the device has
    a kernel, else on the CPU with the operands copied there and the results copied back."""
    ctx = inputs[0].ctx
    fn = getattr(ops, op)
    if has_kernel(op, ctx):
        return tuple(fn(*inputs, *attrs))
    cpu = _devices.device("cpu")
    if not has_kernel(op, cpu):
        raise RuntimeError("%s: no kernel on %s and none on cpu for the host fallback (is the cpu "
                           "plugin loaded? python -m dlarray)" % (op, ctx))
    outs = fn(*[x.to_device(cpu) for x in inputs], *attrs)
    return tuple(o.to_device(ctx) for o in outs)


def require_array(x: Any, name: str, where: str) -> NDArray:
    if not isinstance(x, NDArray):
        raise TypeError("%s: %s must be an NDArray, got %s" % (where, name, type(x).__name__))
    return x


def float_dtype(x: NDArray, name: str, where: str) -> np.dtype:
    """The dtype the factorization runs in: x's (float32, float64, complex64, complex128);
    integers run in float64 as NumPy's do."""
    dtype = np.dtype(x.dtype)
    if dtype in (np.float32, np.float64, np.complex64, np.complex128):
        return dtype
    if dtype.kind in "iu":
        return np.dtype(np.float64)
    raise TypeError("%s: %s has dtype %s; linalg supports float32, float64, complex64 and "
                    "complex128 (integers are computed in float64)" % (where, name, dtype))


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The real dtype of dtype's precision: eigenvalues of Hermitian and singular values of
    complex matrices (float32 for complex64, float64 for complex128)."""
    return np.dtype(np.finfo(dtype).dtype)


def matrices(x: Any, name: str, where: str,
             square: bool = False) -> Tuple[NDArray, Tuple[int, ...]]:
    """x as a compact (batch, m, n) stack in its float or complex dtype, and the batch shape."""
    x = require_array(x, name, where)
    if x.ndim < 2:
        raise ValueError("%s: %s must have at least 2 dimensions (a stack of matrices), got "
                         "shape %s" % (where, name, x.shape))
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError("%s: %s must be a stack of square matrices, got shape %s"
                         % (where, name, x.shape))
    dtype = float_dtype(x, name, where)
    if x.dtype != dtype:
        x = x.astype(dtype)
    batch = tuple(x.shape[:-2])
    count = int(np.prod(batch, dtype=np.int64))
    if not x.is_contiguous:
        x = x.copy()
    return x.reshape((count,) + tuple(x.shape[-2:])), batch


def check_info(info: NDArray, batch: Tuple[int, ...], where: str, problem: str) -> None:
    """Raises LinAlgError for the first matrix whose info code is not 0."""
    if info.size == 0:
        return
    codes = info.asnumpy()
    bad = np.flatnonzero(codes)
    if bad.size:
        index = np.unravel_index(int(bad[0]), batch) if batch else ()
        at = "" if not batch else " at batch index %s" % (tuple(int(i) for i in index),)
        raise LinAlgError("%s: the matrix%s %s (%d of %d matrices)"
                          % (where, at, problem, bad.size, codes.size))
