"""The array API standard's data types and data type functions (2024.12): ``dlarray.float32``
and the other dtype objects (NumPy's dtype objects, so they compare equal to ``x.dtype``),
``isdtype``, ``finfo``, ``iinfo``, ``result_type`` and ``can_cast``. Promotion is the
operators': NumPy 2's (NEP 50: a Python scalar takes the array's dtype), which is the standard's
table where the standard defines one. ``float16`` and ``bfloat16`` are dlarray's extensions: real
floating types (bfloat16 promotes as float16 does).
"""
from __future__ import annotations

import builtins
from typing import Any, Union

import numpy as np

from . import _core, _operators

bool = np.dtype(np.bool_)  # noqa: A001  (the standard's name)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float16 = np.dtype(np.float16)
try:
    bfloat16 = np.dtype(_core.parse_dtype("bfloat16"))
except TypeError:  # ml_dtypes (the optional "bfloat16" extra) is not installed
    bfloat16 = None
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)

SIGNED = (int8, int16, int32, int64)
UNSIGNED = (uint8, uint16, uint32, uint64)
REAL_FLOATING = tuple(t for t in (float16, bfloat16, float32, float64) if t is not None)
COMPLEX_FLOATING = (complex64, complex128)
KINDS = {
    "bool": (bool,),
    "signed integer": SIGNED,
    "unsigned integer": UNSIGNED,
    "integral": SIGNED + UNSIGNED,
    "real floating": REAL_FLOATING,
    "complex floating": COMPLEX_FLOATING,
    "numeric": SIGNED + UNSIGNED + REAL_FLOATING + COMPLEX_FLOATING,
}
ALL = (bool,) + KINDS["numeric"]

DType = np.dtype


def _as_dtype(value: Any, what: str) -> np.dtype:
    """A dtype object of this namespace (not a string or a Python type: the standard's functions
    take dtype objects)."""
    if isinstance(value, np.dtype) and value in ALL:
        return value
    raise TypeError("%s must be a dlarray dtype (e.g. dlarray.float32), got %r" % (what, value))


def _dtype_of(value: Any, what: str) -> np.dtype:
    if isinstance(value, _core.NDArray):
        return np.dtype(value.dtype)
    return _as_dtype(value, what)


def isdtype(dtype: np.dtype, kind: Union[str, np.dtype, tuple]) -> builtins.bool:
    """Whether ``dtype`` is of ``kind``.

    Parameters
    ----------
    dtype : dtype
        A dtype object of this namespace (``dlarray.int8``, ...).
    kind : dtype, str or tuple
        A dtype; one of the standard's kind names ("bool", "signed integer", "unsigned integer",
        "integral", "real floating", "complex floating", "numeric"); or a tuple of those (true
        when any matches). float16 and bfloat16 are "real floating".

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        ``dtype`` is not a dtype object (a string, a Python type).
    ValueError
        An unknown kind name.
    """
    dtype = _as_dtype(dtype, "isdtype: dtype")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in KINDS:
            raise ValueError("isdtype: unknown kind %r (one of %s)" % (kind, ", ".join(KINDS)))
        return dtype in KINDS[kind]
    return dtype == _as_dtype(kind, "isdtype: kind")


class finfo_object:  # noqa: N801  (the standard's name)
    """Machine limits of a floating dtype: ``bits``, ``eps``, ``max``, ``min``,
    ``smallest_normal`` (Python floats) and ``dtype`` (the real dtype described)."""

    def __init__(self, dtype: np.dtype) -> None:
        real = {complex64: float32, complex128: float64}.get(dtype, dtype)
        if real == bfloat16:  # NumPy's finfo knows only its own types
            import ml_dtypes
            info = ml_dtypes.finfo(real)
        else:
            info = np.finfo(real)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.smallest_normal = float(info.smallest_normal)
        self.dtype = real

    def __repr__(self) -> str:
        return "finfo(dtype=%s, bits=%d, eps=%r, max=%r, min=%r, smallest_normal=%r)" % (
            self.dtype, self.bits, self.eps, self.max, self.min, self.smallest_normal)


class iinfo_object:  # noqa: N801  (the standard's name)
    """Machine limits of an integer dtype: ``bits``, ``max``, ``min`` (Python ints), ``dtype``."""

    def __init__(self, dtype: np.dtype) -> None:
        info = np.iinfo(dtype)
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = dtype

    def __repr__(self) -> str:
        return "iinfo(dtype=%s, bits=%d, max=%d, min=%d)" % (self.dtype, self.bits, self.max,
                                                             self.min)


def finfo(type: Any) -> finfo_object:  # noqa: A002  (the standard's name)
    """Machine limits of a floating dtype.

    Parameters
    ----------
    type : dtype or NDArray
        A real or complex floating dtype, or an array of one (complex types describe their real
        part's type).

    Returns
    -------
    finfo_object
        ``bits``, ``eps``, ``max``, ``min``, ``smallest_normal`` (Python floats) and ``dtype``.
    """
    dtype = _dtype_of(type, "finfo: type")
    if dtype not in REAL_FLOATING + COMPLEX_FLOATING:
        raise TypeError("finfo: %s is not a floating dtype (use iinfo for integers)" % dtype)
    return finfo_object(dtype)


def iinfo(type: Any) -> iinfo_object:  # noqa: A002  (the standard's name)
    """Machine limits of an integer dtype.

    Parameters
    ----------
    type : dtype or NDArray
        An integer dtype, or an array of one.

    Returns
    -------
    iinfo_object
        ``bits``, ``max``, ``min`` (Python ints) and ``dtype``.
    """
    dtype = _dtype_of(type, "iinfo: type")
    if dtype not in KINDS["integral"]:
        raise TypeError("iinfo: %s is not an integer dtype (use finfo for floats)" % dtype)
    return iinfo_object(dtype)


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype of the result of an operation on these operands, as the operators promote them.

    Parameters
    ----------
    *arrays_and_dtypes : NDArray, dtype or Python scalar
        At least one array or dtype. A Python scalar takes the dtype of the arrays it meets
        (``result_type(int8, 1)`` is int8); bfloat16 promotes as float16 does.

    Returns
    -------
    dtype
    """
    operands = []
    for i, a in enumerate(arrays_and_dtypes):
        if isinstance(a, (builtins.bool, int, float, complex)):
            operands.append(a)
        else:
            operands.append(_dtype_of(a, "result_type: argument %d" % i))
    if not any(isinstance(a, np.dtype) for a in operands):
        raise TypeError("result_type: needs at least one array or dtype, got %r"
                        % (arrays_and_dtypes,))
    try:
        return np.dtype(_operators._promote(*operands))
    except (TypeError, OverflowError) as e:
        raise TypeError("result_type%r: %s" % (tuple(arrays_and_dtypes), e)) from None


def can_cast(from_: Any, to: np.dtype, /) -> builtins.bool:
    """Whether values convert from one dtype to another without loss, by the promotion rules.

    Parameters
    ----------
    from_ : dtype or NDArray
        The source dtype, or an array of it.
    to : dtype
        The target dtype.

    Returns
    -------
    bool
        int8 to int16: True; int16 to int8 and float64 to float32: False.
    """
    source = _dtype_of(from_, "can_cast: from_")
    return builtins.bool(np.can_cast(source, _as_dtype(to, "can_cast: to"), casting="safe"))
