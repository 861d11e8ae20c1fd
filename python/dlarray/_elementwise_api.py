"""The array API standard's elementwise functions, made from one table (``_UNARY``, ``_BINARY``)
over the ops of the elementwise definition table (``runtime/include/dlarray/elementwise_table.h``):
the argument checks, NEP 50 promotion and broadcasting happen here, the computing in the op's
kernel on the arrays' device. Results are new arrays on that device (0-d for 0-d operands).

Dtype rules: a function takes the dtype kinds its table row names and raises TypeError, naming
the argument, for others; functions of real floating values (``sqrt``, ``atan2`` ...) compute
integer and bool inputs in float64, as NumPy does; ``divide`` too. complex64 and complex128
are taken where the standard takes them (the arithmetic, ``exp``/``log``/``sqrt`` and the
trigonometric and hyperbolic functions, ``equal``, ``isnan`` ...; ``abs`` gives the real dtype
of the parts) and refused (TypeError) elsewhere. Python scalars may stand for either operand of
a binary function (NEP 50: they take the array's dtype, a complex scalar makes a real float
array complex of its size; an int the dtype cannot hold raises OverflowError, except in
comparisons, which are exact as in NumPy 2).
"""
from __future__ import annotations

import builtins

import numpy as np

from . import _core, _operators, ops
from ._core import NDArray
from ._operators import _compact

# The kinds a row accepts: "numeric" (integers and real floats), "float" (real floats; integers
# and bool are computed in float64), "integer" (no bool), "integral" (integers and bool), "real"
# (all but complex); "c numeric", "c float" and "any": those and complex.
_KINDS = {
    "numeric": "iuf",
    "float": "biuf",
    "integer": "iu",
    "integral": "biu",
    "real": "biuf",
    "c numeric": "iufc",
    "c float": "biufc",
    "any": "biufc",
}
_KIND_WORDS = {
    "numeric": "a real numeric (integer or real floating-point)",
    "float": "a real",
    "integer": "an integer",
    "integral": "an integer or bool",
    "real": "a real",
    "c numeric": "a numeric (integer, floating-point or complex)",
    "c float": "a numeric",
    "any": "a",
}


def _array(x, where: str, arg: str = "x") -> NDArray:
    """x itself when it is an NDArray, else a TypeError naming the function and argument."""
    if not isinstance(x, NDArray):
        raise TypeError("%s: %s must be a dlarray array, got %s" % (where, arg, type(x).__name__))
    return x


_KIND_OK: dict = {}  # (dtype, kind) -> bool: dtype.name costs a microsecond a call


def _kind_ok(dtype: np.dtype, kind: str) -> bool:
    """Whether dtype is of the table's ``kind`` (bfloat16 counts as a float)."""
    ok = _KIND_OK.get((dtype, kind))
    if ok is None:
        code = "f" if dtype.name == "bfloat16" else dtype.kind
        ok = _KIND_OK[(dtype, kind)] = code in _KINDS[kind]
    return ok


def _check_kind(dtype: np.dtype, kind: str, where: str, arg: str) -> None:
    if not _kind_ok(dtype, kind):
        raise TypeError("%s: %s must have %s dtype, got %s"
                        % (where, arg, _KIND_WORDS[kind], dtype))


def _float_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype a function of real floating values computes a dtype in."""
    return np.dtype(np.float64) if dtype.kind in "biu" else dtype


def _run(op: str, inputs, dtype: np.dtype, shape) -> NDArray:
    out = _core.empty(tuple(shape), inputs[0].ctx, dtype)
    getattr(ops, op)(*inputs, out)
    return out


# --- unary -----------------------------------------------------------------------------------

# name: (op, kind, what integer inputs give: "op" (the op computes them), "float" (computed in
# float64), "same" (the input itself: rounding an integer), "not" (bool's ~ is logical_not)).
_UNARY = {
    "abs": ("abs", "c numeric", "op"),
    "negative": ("negative", "c numeric", "op"),
    "positive": ("copy", "c numeric", "op"),
    "sign": ("sign", "c numeric", "op"),
    "square": ("square", "c numeric", "op"),
    "sqrt": ("sqrt", "c float", "float"),
    "reciprocal": ("reciprocal", "c float", "float"),
    "exp": ("exp", "c float", "float"),
    "expm1": ("expm1", "c float", "float"),
    "log": ("log", "c float", "float"),
    "log1p": ("log1p", "c float", "float"),
    "log2": ("log2", "c float", "float"),
    "log10": ("log10", "c float", "float"),
    "sin": ("sin", "c float", "float"),
    "cos": ("cos", "c float", "float"),
    "tan": ("tan", "c float", "float"),
    "asin": ("asin", "c float", "float"),
    "acos": ("acos", "c float", "float"),
    "atan": ("atan", "c float", "float"),
    "sinh": ("sinh", "c float", "float"),
    "cosh": ("cosh", "c float", "float"),
    "tanh": ("tanh", "c float", "float"),
    "asinh": ("asinh", "c float", "float"),
    "acosh": ("acosh", "c float", "float"),
    "atanh": ("atanh", "c float", "float"),
    "floor": ("floor", "numeric", "same"),
    "ceil": ("ceil", "numeric", "same"),
    "trunc": ("trunc", "numeric", "same"),
    "round": ("round", "c numeric", "same"),
    "bitwise_invert": ("bitwise_invert", "integral", "not"),
}
# Unary predicates (bool results): name: (op, kind).
_UNARY_PREDICATES = {
    "isnan": ("isnan", "any"),
    "isinf": ("isinf", "any"),
    "isfinite": ("isfinite", "any"),
    "signbit": ("signbit", "float"),
    "logical_not": ("logical_not", "real"),
}


def _unary(name: str, x) -> NDArray:
    op, kind, ints = _UNARY[name]
    x = _array(x, name)
    _check_kind(x.dtype, kind, name, "x")
    if x.dtype.kind in "biu":
        if ints == "same":
            return x.copy()
        if ints == "not" and x.dtype == np.bool_:
            return _predicate("logical_not", x)
        if ints == "float":
            x = x.astype(np.float64)
    src = _compact(x)
    if op == "abs" and src.dtype.kind == "c":  # |x| has the real dtype of the parts
        return _run("complex_abs", [src], _real_dtype(src.dtype), src.shape)
    return _run(op, [src], src.dtype, src.shape)


def _real_dtype(dtype: np.dtype) -> np.dtype:
    """float32 for complex64, float64 for complex128."""
    return np.dtype(np.float32) if dtype == np.complex64 else np.dtype(np.float64)


def _predicate(name: str, x) -> NDArray:
    op, kind = _UNARY_PREDICATES[name]
    x = _array(x, name)
    _check_kind(x.dtype, kind, name, "x")
    if kind == "float" and x.dtype.kind in "biu":
        x = x.astype(np.float64)
    src = _compact(x)
    return _run(op, [src], np.dtype(np.bool_), src.shape)


def real(x, /) -> NDArray:
    """The real part of x, elementwise: float32 for complex64, float64 for complex128 (a real
    array is returned as a copy).

    Parameters
    ----------
    x : NDArray
        A numeric dtype.

    Returns
    -------
    NDArray
    """
    return _part("real", x)


def imag(x, /) -> NDArray:
    """The imaginary part of x, elementwise: float32 for complex64, float64 for complex128 (zeros
    of x's dtype for a real array).

    Parameters
    ----------
    x : NDArray
        A numeric dtype.

    Returns
    -------
    NDArray
    """
    return _part("imag", x)


def conj(x, /) -> NDArray:
    """The complex conjugate of x, elementwise (the imaginary part's sign flipped; a real array is
    returned as a copy).

    Parameters
    ----------
    x : NDArray
        A numeric dtype.

    Returns
    -------
    NDArray
        x's dtype.
    """
    return _part("conj", x)


def _part(name: str, x) -> NDArray:
    x = _array(x, name)
    _check_kind(x.dtype, "c numeric", name, "x")
    if x.dtype.kind != "c":
        if name == "imag":
            out = _core.empty(x.shape, x.ctx, x.dtype)
            ops.array_set(out, 0.0)
            return out
        return x.copy()
    src = _compact(x)
    dtype = src.dtype if name == "conj" else _real_dtype(src.dtype)
    return _run(name, [src], dtype, src.shape)


# --- binary ----------------------------------------------------------------------------------

# name: (op, kind, result: "same" (the promoted dtype), "float" (floats; integers in float64),
# "bool" (a predicate)).
_BINARY = {
    "add": ("matrix_elementwise_add", "c numeric", "same"),
    "subtract": ("subtract", "c numeric", "same"),
    "multiply": ("matrix_elementwise_multiply", "c numeric", "same"),
    "divide": ("matrix_elementwise_divide", "c float", "float"),
    "pow": ("pow", "c numeric", "same"),
    "floor_divide": ("floor_divide", "numeric", "same"),
    "remainder": ("remainder", "numeric", "same"),
    "maximum": ("maximum", "numeric", "same"),
    "minimum": ("minimum", "numeric", "same"),
    "atan2": ("atan2", "float", "float"),
    "hypot": ("hypot", "float", "float"),
    "copysign": ("copysign", "float", "float"),
    "nextafter": ("nextafter", "float", "float"),
    "logaddexp": ("logaddexp", "float", "float"),
    "bitwise_and": ("bitwise_and", "integral", "same"),
    "bitwise_or": ("bitwise_or", "integral", "same"),
    "bitwise_xor": ("bitwise_xor", "integral", "same"),
    "bitwise_left_shift": ("bitwise_left_shift", "integer", "same"),
    "bitwise_right_shift": ("bitwise_right_shift", "integer", "same"),
    "equal": ("equal", "any", "bool"),
    "not_equal": ("not_equal", "any", "bool"),
    "less": ("less", "real", "bool"),
    "less_equal": ("less_equal", "real", "bool"),
    "greater": ("greater", "real", "bool"),
    "greater_equal": ("greater_equal", "real", "bool"),
    "logical_and": ("logical_and", "real", "bool"),
    "logical_or": ("logical_or", "real", "bool"),
    "logical_xor": ("logical_xor", "real", "bool"),
}
# The comparisons as their mirror images, for a scalar on the left (1 < x is x > 1).
_MIRROR = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
           "greater_equal": "less_equal", "equal": "equal", "not_equal": "not_equal"}


def _check_devices(a: NDArray, b: NDArray, where: str, names=("x1", "x2")) -> None:
    if a.ctx != b.ctx:
        raise ValueError("%s: %s is on %r and %s on %r; move one with to_device()"
                         % (where, names[0], a.ctx, names[1], b.ctx))


def _scalar_operand(value, like: NDArray, where: str, arg: str):
    """A Python or NumPy scalar as a 0-d array of the dtype NEP 50 gives it next to ``like``."""
    if not isinstance(value, (builtins.bool, int, float, complex, np.generic)):
        raise TypeError("%s: %s must be a dlarray array or a Python scalar, got %s"
                        % (where, arg, type(value).__name__))
    dtype = _operators._promote(like.dtype, value)
    _operators._check_integer_range(value, dtype)
    return _core.array(np.asarray(value, dtype=dtype), like.ctx, dtype)


def _out_of_range_truth(name: str, dtype: np.dtype, value) -> bool | None:
    """NumPy 2 compares an integer array with a Python int its dtype cannot hold exactly: the
    answer, the same for every element (None where the comparison is an ordinary one)."""
    if (_MIRROR.get(name) is None or dtype.kind not in "iu" or isinstance(value, bool)
            or not isinstance(value, int)):
        return None
    info = np.iinfo(dtype)
    if info.min <= value <= info.max:
        return None
    above = value > info.max
    return {"equal": False, "not_equal": True, "less": above, "less_equal": above,
            "greater": not above, "greater_equal": not above}[name]


def _out_of_range_comparison(name: str, array: NDArray, value) -> NDArray | None:
    """The out-of-range comparison's answer (_out_of_range_truth) as a bool array of array's
    shape, or None."""
    truth = _out_of_range_truth(name, array.dtype, value)
    if truth is None:
        return None
    out = _core.empty(array.shape, array.ctx, np.bool_)
    ops.array_set(out, 1.0 if truth else 0.0)
    return out


def _broadcast_shape(name: str, *arrays: NDArray) -> tuple:
    if all(a.shape == arrays[0].shape for a in arrays):
        return arrays[0].shape
    try:
        return tuple(np.broadcast_shapes(*(a.shape for a in arrays)))
    except ValueError:
        raise ValueError("%s: shapes %s do not broadcast together"
                         % (name, ", ".join(str(a.shape) for a in arrays))) from None


def _binary(name: str, x1, x2, out: NDArray | None = None):
    """x1 <name> x2 with promotion and broadcasting (into ``out``: the in-place operators)."""
    op, kind, result = _BINARY[name]
    if not isinstance(x1, NDArray):
        if not isinstance(x2, NDArray):
            _array(x1, name, "x1")
        if _MIRROR.get(name) is not None and out is None:
            return _binary(_MIRROR[name], x2, x1)
        fixed = _out_of_range_comparison(name, x2, x1)
        if fixed is not None:
            return fixed
        x1 = _scalar_operand(x1, x2, name, "x1")
    elif not isinstance(x2, NDArray):
        fixed = _out_of_range_comparison(name, x1, x2)
        if fixed is not None:
            return fixed
        x2 = _scalar_operand(x2, x1, name, "x2")
    _check_devices(x1, x2, name)
    _check_kind(x1.dtype, kind, name, "x1")
    _check_kind(x2.dtype, kind, name, "x2")
    dtype = _operators._promote(x1.dtype, x2.dtype)
    if result == "float":
        dtype = _float_dtype(dtype)
    if name == "nextafter" and dtype.itemsize == 2:
        raise TypeError("nextafter: %s is not supported (float32 and float64 are)" % dtype)
    shape = _broadcast_shape(name, x1, x2)
    a = _operators._broadcast(_operators._cast(x1, dtype), shape)
    b = _operators._broadcast(_operators._cast(x2, dtype), shape)
    out_dtype = np.dtype(np.bool_) if result == "bool" else dtype
    if out is None:
        return _run(op, [a, b], out_dtype, shape)
    if tuple(shape) != out.shape:
        raise ValueError("%s: the result shape %s differs from the output's %s"
                         % (name, tuple(shape), out.shape))
    if not _operators._writes_directly(out, out_dtype):
        ops.astype(_run(op, [a, b], out_dtype, shape), out)
    else:
        getattr(ops, op)(a, b, out)
    return out


# --- the public functions, generated from the tables ------------------------------------------

def _unary_plan(name: str, dtype: np.dtype):
    """The one op _unary or _predicate runs for a compact array of dtype: (op, result dtype), or
    None where it does more (a cast, a copy) or raises. The C++ fast path (_core._fast_function)
    asks once per dtype; test_speed_fast_path compares both paths for every dtype."""
    if name in _UNARY:
        op, kind, ints = _UNARY[name]
        result = dtype
    else:
        op, kind = _UNARY_PREDICATES[name]
        ints, result = ("float" if kind == "float" else "op"), np.dtype(np.bool_)
    if not _kind_ok(dtype, kind):
        return None
    if dtype.kind in "biu" and ints != "op":
        if ints != "not":
            return None
        return ("logical_not", dtype) if dtype.kind == "b" else (op, dtype)  # as _unary runs
    if op == "abs" and dtype.kind == "c":
        return "complex_abs", _real_dtype(dtype)
    return op, result


def _make_unary(name: str, run):
    def function(x: NDArray, /) -> NDArray:
        return run(name, x)
    function.__name__ = function.__qualname__ = name
    doc = ("The array API's ``%s``, elementwise (op ``%s`` of the elementwise "
           "table).\n\nParameters\n----------\nx : NDArray\n\nReturns\n-------\n"
           "NDArray\n    x's shape, on x's device." % (name, name))
    # A builtin with the C++ fast path; its first line gives inspect.signature "(x, /)".
    return _core._fast_function(name, function, _unary_plan, "%s(x, /)\n--\n\n%s" % (name, doc))


def _binary_plan(name: str, dtype: np.dtype):
    """The one op _binary runs for two compact arrays of dtype and one shape: (op, result
    dtype), or None where it does more (integers computed in float64: a cast) or raises. The C++
    fast path (_core._fast_function(binary=True)) asks once per dtype; test_speed_fast_path
    compares both paths for every dtype."""
    op, kind, result = _BINARY[name]
    if (not _kind_ok(dtype, kind) or (result == "float" and dtype.kind in "biu")
            or (name == "nextafter" and dtype.itemsize == 2)):
        return None
    return op, np.dtype(np.bool_) if result == "bool" else dtype


def _make_binary(name: str):
    def function(x1, x2, /) -> NDArray:
        return _binary(name, x1, x2)
    function.__name__ = function.__qualname__ = name
    doc = ("The array API's ``%s``, elementwise with broadcasting (NEP 50 promotion; either "
           "operand may be a Python scalar).\n\nParameters\n----------\nx1, x2 : NDArray or "
           "scalar\n\nReturns\n-------\nNDArray\n    The broadcast shape, on the operands' "
           "device." % name)
    # A builtin with the C++ fast path for two arrays of one dtype and shape (a 1-element
    # add took 7 us through _binary, NumPy 0.26); its first line gives the signature.
    return _core._fast_function(name, function, _binary_plan, "%s(x1, x2, /)\n--\n\n%s"
                                % (name, doc), binary=True)


__all__ = sorted(list(_UNARY) + list(_UNARY_PREDICATES) + list(_BINARY)
                 + ["clip", "conj", "imag", "real", "where"])
for _name in _UNARY:
    globals()[_name] = _make_unary(_name, _unary)
for _name in _UNARY_PREDICATES:
    globals()[_name] = _make_unary(_name, _predicate)
for _name in _BINARY:
    globals()[_name] = _make_binary(_name)
del _name


def where(condition, x1, x2, /) -> NDArray:
    """Elements of x1 where condition is true, of x2 elsewhere (broadcast together; x1 and x2
    promoted as a binary function's operands, either may be a Python scalar).

    Parameters
    ----------
    condition : NDArray
        bool (other dtypes are tested for != 0).
    x1, x2 : NDArray or scalar

    Returns
    -------
    NDArray
    """
    condition = _array(condition, "where", "condition")
    if not isinstance(x1, NDArray) and not isinstance(x2, NDArray):
        raise TypeError("where: x1 or x2 must be a dlarray array")
    if not isinstance(x1, NDArray):
        x1 = _scalar_operand(x1, x2, "where", "x1")
    if not isinstance(x2, NDArray):
        x2 = _scalar_operand(x2, x1, "where", "x2")
    _check_devices(x1, x2, "where")
    _check_devices(condition, x1, "where", ("condition", "x1"))
    dtype = _operators._promote(x1.dtype, x2.dtype)
    shape = _broadcast_shape("where", condition, x1, x2)
    cond = condition if condition.dtype == np.bool_ else _binary("not_equal", condition, 0)
    operands = [_operators._broadcast(cond, shape),
                _operators._broadcast(_operators._cast(x1, dtype), shape),
                _operators._broadcast(_operators._cast(x2, dtype), shape)]
    return _run("where", operands, dtype, shape)


def clip(x, /, min=None, max=None) -> NDArray:  # noqa: A002  (the standard's names)
    """x limited to [min, max] elementwise (NaN in x stays NaN); the result has x's dtype.

    Parameters
    ----------
    x : NDArray
        A real numeric dtype.
    min, max : NDArray, scalar or None
        Bounds (None: no bound), broadcast with x (the result has the broadcast shape).

    Returns
    -------
    NDArray
    """
    x = _array(x, "clip")
    _check_kind(x.dtype, "numeric", "clip", "x")
    result = x.copy()
    for bound, op, arg in ((min, "maximum", "min"), (max, "minimum", "max")):
        if bound is None:
            continue
        if isinstance(bound, NDArray):
            _check_devices(x, bound, "clip", ("x", arg))
            _check_kind(bound.dtype, "numeric", "clip", arg)
            bound = _operators._cast(bound, x.dtype)
        elif isinstance(bound, (int, float, np.generic)) and not isinstance(bound, bool):
            if x.dtype.kind in "iu" and isinstance(bound, float):
                raise TypeError("clip: %s is a float and x an integer array" % arg)
            if isinstance(bound, int) and x.dtype.kind in "iu":
                info = np.iinfo(x.dtype)
                bound = builtins.min(builtins.max(bound, info.min), info.max)
            bound = _core.array(np.asarray(bound, dtype=x.dtype), x.ctx, x.dtype)
        else:
            raise TypeError("clip: %s must be a dlarray array, a Python number or None, got %s"
                            % (arg, type(bound).__name__))
        shape = _broadcast_shape("clip", result, bound)
        result = _run(op, [_operators._broadcast(result, shape),
                           _operators._broadcast(bound, shape)], x.dtype, shape)
    return result
