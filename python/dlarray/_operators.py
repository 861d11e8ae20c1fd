"""NDArray's arithmetic, bitwise and comparison operators, built on the ops.

``+ - * / ** // % & | ^ << >>``, unary ``- + ~`` and ``abs``, ``@`` and the comparisons take
NDArrays, Python or NumPy scalars and NumPy-convertible data (reflected and in-place forms too);
the operators beyond ``+ - * / @`` are the array API functions of ``_elementwise_api`` (so
``x ** y`` is ``dlarray.pow(x, y)``); they follow NumPy's type promotion (NEP 50: Python scalars
are weak) and broadcasting, and return new arrays on the operands' device. bfloat16 promotes as
float16 does, and bfloat16 with float16 gives float32 (see ``_promote``). As in NumPy 2, a Python
int the result's integer dtype cannot hold raises OverflowError (``int8_array + 1000``) rather
than wrapping; comparisons with such ints are exact (``int8_array == 1000`` is all False). The
in-place forms (``+=`` ...) write into the left operand, casting as NumPy's ``same_kind`` rule
allows. Operands on different devices raise the ops' error. Complex scalars and arrays take the
array path (the ops with a scalar attribute are real-only): ``float32_array * 1j`` is complex64;
``< <= > >=`` refuse complex operands (TypeError: complex numbers have no order).
"""

import builtins
import numbers

import numpy as np

from . import _core, ops
from ._core import NDArray

_EQ, _NE, _LT, _LE, _GT, _GE = range(6)


def _is_scalar(x):
    return isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, NDArray)


def _compact(a):
    return a if a.is_contiguous else a.copy()


def _as_array(x, like):
    """x as an NDArray on like's device (NDArrays are returned as they are)."""
    if isinstance(x, NDArray):
        return x
    return _core.array(np.asarray(x), like.ctx, np.asarray(x).dtype)


def _dtype_of(x):
    if isinstance(x, np.generic):
        return x.dtype
    return x if isinstance(x, np.dtype) else None


def _promote(*dtypes_or_scalars):
    """NumPy's result_type, with bfloat16 in float16's place: NumPy (with ml_dtypes) has no
    common type for bfloat16 and float16 or int16..int64, and makes bfloat16 with a Python float
    float64. Here bfloat16 promotes as float16 does (with int8/uint8/bool and Python scalars it
    stays bfloat16, with int16 it becomes float32, ...) and bfloat16 with float16 gives float32,
    the smallest type holding both, as in PyTorch."""
    if all(isinstance(x, np.dtype) for x in dtypes_or_scalars):  # arrays only: remembered
        found = _PROMOTED.get(dtypes_or_scalars)
        if found is None:
            found = _PROMOTED[dtypes_or_scalars] = _promote_values(*dtypes_or_scalars)
        return found
    return _promote_values(*dtypes_or_scalars)


_PROMOTED: dict = {}


def _promote_values(*dtypes_or_scalars):
    dtypes = [_dtype_of(x) for x in dtypes_or_scalars]
    bf16 = next((d for d in dtypes if d is not None and d.name == "bfloat16"), None)
    if bf16 is None:
        return np.result_type(*dtypes_or_scalars)
    f16 = np.dtype(np.float16)
    mixed = any(d is not None and d == f16 for d in dtypes)
    result = np.result_type(*[f16 if d is not None and d == bf16 else x
                              for d, x in zip(dtypes, dtypes_or_scalars)])
    if result == f16:
        return np.dtype(np.float32) if mixed else bf16
    return result


def _cast(a, dtype):
    return a if a.dtype == dtype else a.astype(dtype)


def _broadcast(a, shape):
    if a.shape == tuple(shape):
        return _compact(a)
    out = _core.empty(shape, a.ctx, a.dtype)
    ops.broadcast_to(_compact(a), out)
    return out


def _is_complex(value):
    return isinstance(value, (complex, np.complexfloating))


def _integer_value(value):
    """The value of an integer scalar (Python or NumPy, bool excluded) as an int, else None."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return None
    return int(value)


def _check_integer_range(value, dtype):
    """NumPy 2's rule for a Python int meeting an integer array (NEP 50): it takes the array's
    dtype, so a value outside that dtype is an OverflowError rather than a wrapped constant."""
    if dtype.kind not in "iu" or not isinstance(value, int) or isinstance(value, bool):
        return
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise OverflowError("Python integer %d out of bounds for %s" % (value, dtype))


def _beyond_double(value, dtype):
    """Whether an integer scalar would lose digits as the ops' double attribute (|v| > 2**53)."""
    v = _integer_value(value)
    return v is not None and dtype.kind in "iu" and abs(v) > 2**53


def _exact_operand(value, dtype, like):
    """value as a 0-d array of dtype on like's device: integers the double attribute of a scalar
    op would round take the array path instead."""
    return _core.array(np.asarray(value, dtype=dtype), like.ctx, dtype)


def _writes_directly(out, dtype):
    """Whether a result of dtype can be computed straight into out (the in-place forms): yes for
    out's own dtype; no where NumPy's in-place rule (casting='same_kind': int64 into int8,
    float64 into float32) casts it afterwards; TypeError where that rule refuses it."""
    if out is None or out.dtype == dtype:
        return True
    try:
        castable = np.can_cast(dtype, out.dtype, casting="same_kind")
    except TypeError:
        castable = False
    if not castable:
        raise TypeError("in-place operation: the result dtype %s cannot be cast to %s"
                        % (dtype, out.dtype))
    return False


def _binary(a, b, array_op, scalar_op, out=None, int_to_float=False, reverse_scalar=None):
    """a <op> b with promotion and broadcasting; out: write there (in-place forms).

    reverse_scalar(x, value, out) computes ``value <op> x``; array_op then takes its operands
    in that order too (the path of integers beyond a double's 53 bits)."""
    if (out is None and type(b) is NDArray and a.dtype == b.dtype and a.shape == b.shape
            and not (int_to_float and a.dtype.kind in "biu") and a.is_contiguous
            and b.is_contiguous):
        # What the general path below comes to for two compact arrays of one dtype and shape,
        # without its promotion and broadcasting steps (the common case, and per-call time).
        result = _core.empty(a.shape, a.ctx, a.dtype)
        array_op(a, b, result)
        return result
    if _is_scalar(b):
        return _binary_scalar(a, b, array_op, scalar_op, out, int_to_float, reverse_scalar)
    if not isinstance(b, NDArray):
        try:
            b = _as_array(b, a)
        except (TypeError, ValueError):
            return NotImplemented
    dtype = _promote(a.dtype, b.dtype)
    if int_to_float and dtype.kind in "biu":
        dtype = np.dtype(np.float64)
    shape = np.broadcast_shapes(a.shape, b.shape)
    if out is not None:
        if tuple(shape) != out.shape:
            raise ValueError("in-place operation: the result shape %s differs from %s"
                             % (tuple(shape), out.shape))
        if not _writes_directly(out, dtype):
            ops.astype(_binary(a, b, array_op, scalar_op, None, int_to_float), out)
            return out
    x = _broadcast(_cast(a, dtype), shape)
    y = _broadcast(_cast(b, dtype), shape)
    if out is None:
        out = _core.empty(shape, x.ctx, dtype)
    array_op(x, y, out)
    return out


def _binary_scalar(a, value, array_op, scalar_op, out, int_to_float, reverse_scalar):
    dtype = _promote(a.dtype, value)
    if int_to_float and dtype.kind in "biu":
        dtype = np.dtype(np.float64)
    _check_integer_range(value, dtype)
    if _beyond_double(value, dtype) or dtype.kind == "c":
        b = _exact_operand(value, dtype, a)
        if reverse_scalar is not None:
            return _binary(b, a, array_op, None, out)
        return _binary(a, b, array_op, None, out)
    number = float(value)  # OverflowError for ints past a double's range, as in NumPy
    if not _writes_directly(out, dtype):
        result = _binary_scalar(a, value, array_op, scalar_op, None, int_to_float, reverse_scalar)
        ops.astype(result, out)
        return out
    x = _compact(_cast(a, dtype))
    if out is None:
        out = _core.empty(x.shape, x.ctx, dtype)
    if reverse_scalar is not None:
        reverse_scalar(x, number, out)
    else:
        scalar_op(x, number, out)
    return out


def _negate_into(x, out):
    if x.dtype.kind == "c":
        ops.negative(x, out)
    else:
        ops.matrix_elementwise_multiply_by_const(x, -1.0, out)


def _add(a, b, out=None):
    return _binary(a, b, ops.matrix_elementwise_add, ops.matrix_elementwise_add_by_const, out)


def _sub_arrays(x, y, out):
    from ._kernels import has_kernel
    if x.dtype != np.bool_ and has_kernel("subtract", x.ctx):
        ops.subtract(x, y, out)
        return
    neg = _core.empty(y.shape, y.ctx, y.dtype)
    _negate_into(y, neg)  # a - b == a + (-b) exactly (IEEE), and with wrap-around for integers
    ops.matrix_elementwise_add(x, neg, out)


def _sub(a, b, out=None):
    return _binary(a, b, _sub_arrays,
                   lambda x, v, o: ops.matrix_elementwise_add_by_const(x, -v, o), out)


def _rsub_scalar(x, v, out):
    _negate_into(x, out)
    ops.matrix_elementwise_add_by_const(out, v, out)


def _mul(a, b, out=None):
    return _binary(a, b, ops.matrix_elementwise_multiply,
                   ops.matrix_elementwise_multiply_by_const, out)


def _div(a, b, out=None):
    return _binary(a, b, ops.matrix_elementwise_divide,
                   ops.matrix_elementwise_divide_by_const, out, int_to_float=True)


def _rdiv_scalar(x, v, out):
    numerator = _core.empty(x.shape, x.ctx, x.dtype)
    ops.array_set(numerator, v)
    ops.matrix_elementwise_divide(numerator, x, out)


def _constant_comparison(a, value, cmp):
    """The result of comparing an integer array with an integer its dtype cannot hold: NumPy 2
    compares such Python ints exactly (every element is below or above them) instead of
    raising, so the answer is the same for every element."""
    info = np.iinfo(a.dtype)
    above = value > info.max
    truth = {_EQ: False, _NE: True, _LT: above, _LE: above, _GT: not above, _GE: not above}[cmp]
    out = _core.empty(a.shape, a.ctx, np.bool_)
    ops.array_set(out, 1.0 if truth else 0.0)
    return out


def _compare(a, b, cmp):
    if cmp not in (_EQ, _NE) and (a.dtype.kind == "c" or _is_complex(b)
                                  or (isinstance(b, NDArray) and b.dtype.kind == "c")):
        raise TypeError("comparison: complex numbers have no order (< <= > >= take real arrays)")
    if _is_scalar(b) and (a.dtype.kind == "c" or _is_complex(b)):
        b = _exact_operand(b, _promote(a.dtype, b), a)
    if _is_scalar(b):
        value = _integer_value(b)
        if value is not None and a.dtype.kind in "iu":
            info = np.iinfo(a.dtype)
            if isinstance(b, int) and not info.min <= value <= info.max:
                return _constant_comparison(a, value, cmp)
            if _beyond_double(b, a.dtype):
                b = _exact_operand(b, _promote(a.dtype, b), a)
        if _is_scalar(b):
            x = _compact(a)
            out = _core.empty(x.shape, x.ctx, np.bool_)
            ops.compare_by_const(x, float(b), out, cmp)
            return out
    if not isinstance(b, NDArray):
        try:
            b = _as_array(b, a)
        except (TypeError, ValueError):
            return NotImplemented
    dtype = _promote(a.dtype, b.dtype)
    shape = np.broadcast_shapes(a.shape, b.shape)
    x = _broadcast(_cast(a, dtype), shape)
    y = _broadcast(_cast(b, dtype), shape)
    out = _core.empty(shape, x.ctx, np.bool_)
    ops.compare(x, y, out, cmp)
    return out


def _comparison(cmp):
    # Python reflects ``scalar < x`` to ``x > scalar`` itself.
    def method(self, other):
        return _compare(self, other, cmp)
    return method


def _matmul(a, b):
    from ._linear_algebra_api import matmul  # stacks, every dtype and the errors are there
    if not isinstance(b, NDArray):
        if _is_scalar(b):
            raise ValueError("matmul: a scalar operand is not allowed, use *")
        b = _as_array(b, a)
    return matmul(a, b)


def _inplace(fn):
    def method(self, other):
        if not self.is_contiguous:
            result = fn(self, other)
            if result is NotImplemented:
                return result
            if not _writes_directly(self, result.dtype):
                result = result.astype(self.dtype)
            self[...] = result
            return self
        result = fn(self, other, out=self)
        return self if result is not NotImplemented else result
    return method


def _neg(self):
    if self.dtype == np.bool_:
        raise TypeError("the unary - of a bool array is not supported (use ~ on the host)")
    x = _compact(self)
    out = _core.empty(x.shape, x.ctx, x.dtype)
    _negate_into(x, out)
    return out


def _api():
    from . import _elementwise_api  # imported late: it builds on this module
    return _elementwise_api


def _function_operator(name, reflected=False):
    """The operator of array API function ``name`` (x <op> other, or other <op> x)."""
    compute = _function_compute(name, reflected)

    def method(self, other):
        return compute(self, other)
    return method


def _function_compute(name, reflected=False):
    """x <op> other (into out: the in-place forms)."""
    def compute(self, other, out=None):
        if not isinstance(other, NDArray) and not _is_scalar(other):
            try:
                other = _as_array(other, self)
            except (TypeError, ValueError):
                return NotImplemented
        if reflected:
            return _api()._binary(name, other, self)
        return _api()._binary(name, self, other, out)
    return compute


# Operator -> array API function, for those computed by _elementwise_api.
_FUNCTION_OPERATORS = {"pow": "pow", "floordiv": "floor_divide", "mod": "remainder",
                       "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
                       "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift"}


# The operators with a C++ fast path (python/src/fast_path.cc): name -> (the op for two arrays
# of one dtype, the op for an array and a scalar, the scalar's sign there, int_to_float), as
# _add, _sub, _mul and _div call _binary.
_FAST = {"add": ("matrix_elementwise_add", "matrix_elementwise_add_by_const", 1.0, False),
         "sub": ("subtract", "matrix_elementwise_add_by_const", -1.0, False),
         "mul": ("matrix_elementwise_multiply", "matrix_elementwise_multiply_by_const", 1.0,
                 False),
         "truediv": ("matrix_elementwise_divide", "matrix_elementwise_divide_by_const", 1.0,
                     True)}
# The comparisons (as _compare calls them): name -> the comparison's code.
_FAST_COMPARE = {"eq": _EQ, "ne": _NE, "lt": _LT, "le": _LE, "gt": _GT, "ge": _GE}


def _fast_compare_plan(name, dtype, other):
    """_fast_plan for a comparison: ("compare", bool, 1, code) for two arrays of one dtype and
    ("compare_by_const", bool, 1, code) for an array and a scalar where _compare makes exactly
    that call: not for complex numbers (their own path, or an error), nor for an integer array
    and a float (_compare looks at the value: an integral float past 2**53 goes exactly). An
    int's range against an integer array the fast path checks itself (IntFits)."""
    cmp = _FAST_COMPARE[name]
    if dtype.kind == "c":
        return None
    if isinstance(other, np.dtype):
        return ("compare", np.dtype(np.bool_), 1.0, float(cmp)) if other == dtype else None
    if other is float and dtype.kind in "iu":
        return None
    return "compare_by_const", np.dtype(np.bool_), 1.0, float(cmp)


def _fast_plan(name, dtype, other):
    """The one op _binary runs for ``x <name> other`` with x a compact array of dtype and other
    a compact array of dtype and x's shape (``other`` is then dtype) or a Python float or int
    (``other`` is the type; the fast path checks an int's range itself: _check_integer_range
    and _beyond_double): (op, result dtype, scalar sign), or None where _binary would do more
    (cast, the exact path of integers, several ops) or raise. The fast path asks once per
    combination, and takes the general path on a device without a kernel for the op; the
    tests compare both paths for every dtype."""
    if name in _FAST_COMPARE:
        return _fast_compare_plan(name, dtype, other)
    array_op, scalar_op, sign, int_to_float = _FAST[name]
    if isinstance(other, np.dtype):
        if other != dtype or (int_to_float and dtype.kind in "biu"):
            return None
        if name == "sub" and dtype == np.bool_:
            return None  # _sub_arrays: two ops
        return array_op, dtype, 1.0
    result = _promote(dtype, other(0))
    if result != dtype or result.kind == "c" or (int_to_float and result.kind in "biu"):
        return None
    return scalar_op, result, sign


# The methods with the fast path: dunder -> (the name _fast_plan takes, the general path).
_FAST_METHODS = {"__add__": ("add", _add), "__radd__": ("add", _add), "__sub__": ("sub", _sub),
                 "__mul__": ("mul", _mul), "__rmul__": ("mul", _mul),
                 "__truediv__": ("truediv", _div),
                 **{"__%s__" % name: (name, _comparison(cmp))
                    for name, cmp in _FAST_COMPARE.items()}}


def install(cls):
    """Adds the operators to ``cls`` (NDArray)."""
    cls.__array_priority__ = 100.0  # NumPy defers to our reflected operators
    for dunder, (name, general) in _FAST_METHODS.items():
        setattr(cls, dunder, _core._fast_operator(dunder, name, general, _fast_plan))
    cls.__rsub__ = lambda self, other: (
        _binary(self, other, _sub_arrays, None, reverse_scalar=_rsub_scalar) if _is_scalar(other)
        else _sub(_as_array(other, self), self))
    cls.__rtruediv__ = lambda self, other: (
        _binary(self, other, ops.matrix_elementwise_divide, None, int_to_float=True,
                reverse_scalar=_rdiv_scalar)
        if _is_scalar(other) else _div(_as_array(other, self), self))
    cls.__matmul__ = _matmul
    cls.__rmatmul__ = lambda self, other: _matmul(_as_array(other, self), self)
    cls.__neg__ = _neg
    cls.__complex__ = lambda self: builtins.complex(self.item())
    cls.__pos__ = lambda self: self.copy()
    cls.__abs__ = lambda self: _api().abs(self)
    cls.__invert__ = lambda self: _api().bitwise_invert(self)
    for op, function in _FUNCTION_OPERATORS.items():
        setattr(cls, "__%s__" % op, _function_operator(function))
        setattr(cls, "__r%s__" % op, _function_operator(function, reflected=True))
        setattr(cls, "__i%s__" % op, _inplace(_function_compute(function)))
    cls.__iadd__ = _inplace(_add)
    cls.__isub__ = _inplace(_sub)
    cls.__imul__ = _inplace(_mul)
    cls.__itruediv__ = _inplace(_div)
    cls.__hash__ = object.__hash__  # identity, as before (NDArrays key executor tables)
