"""dlarray.fuse's tracer: calling the decorated function on ``TracedArray`` proxies records a DAG of
elementwise table rows, casts, ``where`` and constants.

The dtype rules are the unfused path's own (``_elementwise_api``'s tables ``_UNARY``,
``_UNARY_PREDICATES``, ``_BINARY`` and its checks, ``_operators._promote``): a node is made where
the unfused code would run a kernel, with the dtype that kernel would produce, so the fused result
is the unfused one. Anything else (indexing, ``@``, reshapes, Python control flow on values,
anything after a reduction) raises TypeError naming the operation, at trace time. One trailing
reduction (``sum``, ``max``, ``min``, ``mean``) becomes a ``Reduced``.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import _elementwise_api as _ew
from . import _operators

_BOOL = np.dtype(np.bool_)
_F64 = np.dtype(np.float64)


class Node:
    """One value of the DAG: ``kind`` is "input" (``arg``: the argument's position), "const"
    (``arg``: the value, already of ``dtype``), "row" (``arg``: the elementwise op's name),
    "cast" or "where"; ``inputs`` are Nodes."""

    __slots__ = ("kind", "arg", "dtype", "shape", "inputs", "index")

    def __init__(self, kind, arg, dtype, shape, inputs=()):
        self.kind, self.arg, self.dtype = kind, arg, np.dtype(dtype)
        self.shape, self.inputs, self.index = tuple(shape), tuple(inputs), -1


class Trace:
    """Nodes in evaluation order (inputs first), the output node, and the expression's text (a
    value used more than once is written once, as ``tN = ...``)."""

    def __init__(self, output: Node):
        self.nodes: list = []
        seen: set = set()
        stack = [(output, False)]
        while stack:  # post-order, without recursion: a long chain of ops is a deep DAG
            node, expanded = stack.pop()
            if id(node) in seen:
                continue
            if expanded:
                seen.add(id(node))
                node.index = len(self.nodes)
                self.nodes.append(node)
                continue
            stack.append((node, True))
            stack.extend((i, False) for i in reversed(node.inputs) if id(i) not in seen)
        self.output = output
        self.text = _text(self.nodes, output)


def _text(nodes: list, output: Node) -> str:
    uses = [0] * len(nodes)
    for node in nodes:
        for i in node.inputs:
            uses[i.index] += 1
    text, lets = {}, []
    for node in nodes:
        if node.kind == "input":
            t = "x%d" % node.arg
        elif node.kind == "const":
            t = "%r:%s" % (node.arg.item(), node.dtype)
        else:
            args = ", ".join(text[i.index] for i in node.inputs)
            if node.kind == "cast":
                t = "astype(%s, %s)" % (args, node.dtype)
            else:
                t = "%s(%s)" % (node.arg if node.kind == "row" else node.kind, args)
            if uses[node.index] > 1:
                lets.append("t%d = %s" % (node.index, t))
                t = "t%d" % node.index
        text[node.index] = t
    return "; ".join(lets + [text[output.index]])


def _fail(operation: str) -> TypeError:
    return TypeError("dlarray.fuse: %s cannot be fused (fusion takes elementwise functions, "
                     "casts, where and Python scalars); call the function unfused" % operation)


def _shape(name: str, *shapes) -> tuple:
    distinct = set(shapes)
    distinct.discard(())
    if len(distinct) <= 1:  # nothing to broadcast but scalars: NumPy not asked (its first
        return distinct.pop() if distinct else ()  # broadcast_shapes costs a first call 30 us)
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError("%s: shapes %s do not broadcast together"
                         % (name, ", ".join(str(s) for s in shapes))) from None


def _cast(node: Node, dtype) -> Node:
    dtype = np.dtype(dtype)
    return node if node.dtype == dtype else Node("cast", None, dtype, node.shape, (node,))


def _row(op: str, inputs, dtype) -> Node:
    return Node("row", op, dtype, _shape(op, *(i.shape for i in inputs)), inputs)


def _const(value, dtype) -> Node:
    return Node("const", np.asarray(value, dtype=dtype), dtype, ())


def _fill(value, dtype, shape) -> Node:
    """value everywhere in shape: a where node over constants alone."""
    c = _const(value, dtype)
    return Node("where", None, dtype, shape, (_const(True, _BOOL), c, c))


def _promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """_operators._promote of two dtypes: a dtype with itself is itself without asking (the
    first promotion in a process asks NumPy for a dtype's name: 50 us of a first call)."""
    return a if a == b else _operators._promote(a, b)


def _is_number(x) -> bool:
    return isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, TracedArray)


class TracedArray:
    """A traced value: the dlarray array the function will see, with ``dtype``, ``shape``,
    ``ndim``, the operators and ``astype``."""

    __slots__ = ("node",)
    __array_priority__ = 200.0  # NumPy scalars defer to our reflected operators

    def __init__(self, node: Node):
        self.node = node

    dtype = property(lambda self: self.node.dtype)
    shape = property(lambda self: self.node.shape)
    ndim = property(lambda self: len(self.node.shape))

    def astype(self, dtype, copy=True):
        """NDArray.astype's rules: any dtype spelling NumPy takes (the function takes dtypes)."""
        from . import _core
        return _cast_checked(self, np.dtype(_core.parse_dtype(dtype)))

    def __array_namespace__(self, api_version=None):
        import dlarray
        return dlarray

    def __getattr__(self, name):
        raise _fail("the array attribute or method %r" % name)

    def __getitem__(self, key):
        raise _fail("indexing")

    def __setitem__(self, key, value):
        raise _fail("assigning to elements")

    def __bool__(self):
        raise _fail("bool() of a traced array (Python control flow on array values)")

    def __matmul__(self, other):
        raise _fail("@ (matmul)")

    __rmatmul__ = __matmul__
    __float__ = __int__ = __index__ = __complex__ = __bool__
    __hash__ = object.__hash__

    def __iter__(self):
        raise _fail("iterating over an array")

    def __neg__(self):
        if self.dtype == _BOOL:
            raise TypeError("the unary - of a bool array is not supported (use ~ on the host)")
        return unary("negative", self)

    def __pos__(self):
        return self

    def __abs__(self):
        return unary("abs", self)

    def __invert__(self):
        return unary("bitwise_invert", self)


# Operators: name -> array API function ("sub" is subtract: the unfused a + (-b) is exactly it).
_OPERATORS = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
              "pow": "pow", "floordiv": "floor_divide", "mod": "remainder", "and": "bitwise_and",
              "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "bitwise_left_shift",
              "rshift": "bitwise_right_shift", "eq": "equal", "ne": "not_equal", "lt": "less",
              "le": "less_equal", "gt": "greater", "ge": "greater_equal"}
_ORDERED = ("less", "less_equal", "greater", "greater_equal")


def _operator(function, reflected):
    def method(self, other):
        if isinstance(other, Reduced):
            raise _reduced_again()
        if not isinstance(other, TracedArray) and not _is_number(other):
            raise _fail("an operand of type %s" % type(other).__name__)
        complex_other = _operators._is_complex(other) or (isinstance(other, TracedArray)
                                                          and other.dtype.kind == "c")
        if function in _ORDERED and (self.dtype.kind == "c" or complex_other):
            raise TypeError("comparison: complex numbers have no order (< <= > >= take real "
                            "arrays)")
        compute = arithmetic if function in _ARITHMETIC else binary
        return compute(function, other, self) if reflected else compute(function, self, other)
    return method


for _op, _function in _OPERATORS.items():
    setattr(TracedArray, "__%s__" % _op, _operator(_function, False))
    if _op not in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(TracedArray, "__r%s__" % _op, _operator(_function, True))
del _op, _function


def _var(x, where: str, arg: str) -> TracedArray:
    if isinstance(x, Reduced):
        raise _reduced_again()
    if not isinstance(x, TracedArray):
        raise TypeError("%s: %s must be a traced dlarray array, got %s"
                        % (where, arg, type(x).__name__))
    return x


def unary(name: str, x) -> TracedArray:
    """The unfused ``_elementwise_api._unary`` / ``_predicate`` / ``_part``, as nodes."""
    x = _var(x, name, "x")
    node = x.node
    if name in ("real", "imag", "conj"):
        _ew._check_kind(node.dtype, "c numeric", name, "x")
        if node.dtype.kind != "c":
            return x if name != "imag" else TracedArray(_fill(0, node.dtype, node.shape))
        dtype = node.dtype if name == "conj" else _ew._real_dtype(node.dtype)
        return TracedArray(_row(name, (node,), dtype))
    if name in _ew._UNARY_PREDICATES:
        op, kind = _ew._UNARY_PREDICATES[name]
        _ew._check_kind(node.dtype, kind, name, "x")
        if kind == "float" and node.dtype.kind in "biu":
            node = _cast(node, _F64)
        return TracedArray(_row(op, (node,), _BOOL))
    op, kind, ints = _ew._UNARY[name]
    _ew._check_kind(node.dtype, kind, name, "x")
    if node.dtype.kind in "biu":
        if ints == "same":
            return x
        if ints == "not" and node.dtype == _BOOL:
            return TracedArray(_row("logical_not", (node,), _BOOL))
        if ints == "float":
            node = _cast(node, _F64)
    if op == "copy":
        return TracedArray(node)
    if op == "abs" and node.dtype.kind == "c":
        return TracedArray(_row("complex_abs", (node,), _ew._real_dtype(node.dtype)))
    return TracedArray(_row(op, (node,), node.dtype))


def _scalar_node(value, like: Node, where: str, arg: str) -> Node:
    """The unfused ``_scalar_operand``: a constant of the dtype NEP 50 gives it next to like."""
    if not _is_number(value):
        raise TypeError("%s: %s must be a dlarray array or a Python scalar, got %s"
                        % (where, arg, type(value).__name__))
    dtype = _operators._promote(like.dtype, value)
    _operators._check_integer_range(value, dtype)
    return _const(value, dtype)


def _out_of_range(name: str, node: Node, value):
    """The unfused ``_out_of_range_comparison``: one truth for every element, as a constant."""
    truth = _ew._out_of_range_truth(name, node.dtype, value)
    return None if truth is None else TracedArray(_fill(truth, _BOOL, node.shape))


def binary(name: str, x1, x2) -> TracedArray:
    """The unfused ``_elementwise_api._binary``, as nodes."""
    op, kind, result = _ew._BINARY[name]
    if not isinstance(x1, TracedArray):
        if not isinstance(x2, TracedArray):
            raise TypeError("%s: x1 or x2 must be a traced dlarray array" % name)
        if _ew._MIRROR.get(name) is not None:
            return binary(_ew._MIRROR[name], x2, x1)
        a, b = _scalar_node(x1, x2.node, name, "x1"), x2.node
    elif not isinstance(x2, TracedArray):
        fixed = _out_of_range(name, x1.node, x2)
        if fixed is not None:
            return fixed
        a, b = x1.node, _scalar_node(x2, x1.node, name, "x2")
    else:
        a, b = x1.node, x2.node
    _ew._check_kind(a.dtype, kind, name, "x1")
    _ew._check_kind(b.dtype, kind, name, "x2")
    dtype = _promote(a.dtype, b.dtype)
    if result == "float":
        dtype = _ew._float_dtype(dtype)
    if name == "nextafter" and dtype.itemsize == 2:
        raise TypeError("nextafter: %s is not supported (float32 and float64 are)" % dtype)
    out = _BOOL if result == "bool" else dtype
    return TracedArray(_row(op, (_cast(a, dtype), _cast(b, dtype)), out))


# The operators that NDArray computes itself (_operators._add ...): NumPy's promotion of any two
# dtypes (no kind check: float32 + bool is float32), integers divided in float64.
_ARITHMETIC = {"add": "matrix_elementwise_add", "subtract": "subtract",
               "multiply": "matrix_elementwise_multiply", "divide": "matrix_elementwise_divide"}


def arithmetic(name: str, x1, x2) -> TracedArray:
    """The unfused ``_operators._binary`` of ``+ - * /``, as nodes."""
    if isinstance(x1, TracedArray) and isinstance(x2, TracedArray):
        a, b = x1.node, x2.node
        dtype = _promote(a.dtype, b.dtype)
    else:
        array, value = (x1, x2) if isinstance(x1, TracedArray) else (x2, x1)
        dtype = _operators._promote(array.dtype, value)
        if name == "divide" and dtype.kind in "biu":
            dtype = _F64
        _operators._check_integer_range(value, dtype)
        a = x1.node if isinstance(x1, TracedArray) else _const(x1, dtype)
        b = x2.node if isinstance(x2, TracedArray) else _const(x2, dtype)
    if name == "divide" and dtype.kind in "biu":
        dtype = _F64
    if dtype == _BOOL:
        raise TypeError("%s: input 0 has dtype bool, which the op does not take"
                        % _ARITHMETIC[name])
    return TracedArray(_row(_ARITHMETIC[name], (_cast(a, dtype), _cast(b, dtype)), dtype))


def where(condition, x1, x2, /) -> TracedArray:
    """The unfused ``_elementwise_api.where``, as nodes."""
    condition = _var(condition, "where", "condition")
    if not isinstance(x1, TracedArray) and not isinstance(x2, TracedArray):
        raise TypeError("where: x1 or x2 must be a dlarray array")
    a = x1.node if isinstance(x1, TracedArray) else _scalar_node(x1, x2.node, "where", "x1")
    b = x2.node if isinstance(x2, TracedArray) else _scalar_node(x2, a, "where", "x2")
    dtype = _promote(a.dtype, b.dtype)
    shape = _shape("where", condition.shape, a.shape, b.shape)
    cond = condition.node
    if cond.dtype != _BOOL:
        cond = binary("not_equal", condition, 0).node
    return TracedArray(Node("where", None, dtype, shape, (cond, _cast(a, dtype), _cast(b, dtype))))


def astype(x, dtype, /, *, copy=True, device=None) -> TracedArray:
    """A cast node (the unfused ``astype``'s dtype parsing)."""
    from ._dtypes import _as_dtype
    x = _var(x, "astype", "x")
    if device is not None:
        raise _fail("astype(..., device=) (a move between devices)")
    return _cast_checked(x, np.dtype(_as_dtype(dtype, "astype: dtype")))


def _cast_checked(x: TracedArray, target: np.dtype) -> TracedArray:
    if x.dtype.kind == "c" and target.kind != "c":
        raise TypeError("astype: complex %s to real %s is not allowed (take real() or abs())"
                        % (x.dtype, target))
    return TracedArray(_cast(x.node, target))


def clip(x, /, min=None, max=None):  # noqa: A002
    raise _fail("clip")


REDUCTIONS = ("sum", "max", "min", "mean")


class Reduced:
    """The result of the one trailing reduction: ``name`` over the elementwise ``node``, with
    the call's keyword arguments. It can only be returned."""

    __slots__ = ("name", "node", "kwargs")

    def __init__(self, name, node, kwargs):
        self.name, self.node, self.kwargs = name, node, kwargs

    def __getattr__(self, name):
        raise _reduced_again()


def _reduced_again() -> TypeError:
    return TypeError("dlarray.fuse: a reduction must be the function's last operation (its result "
                     "returned as it is): fusion takes at most one trailing reduction")


def _no_more(self, *args, **kwargs):
    raise _reduced_again()


for _op in list(_OPERATORS) + ["neg", "pos", "abs", "invert", "bool", "getitem", "matmul"]:
    setattr(Reduced, "__%s__" % _op, _no_more)
    setattr(Reduced, "__r%s__" % _op, _no_more)
del _op


def reduction(name: str):
    """``dlarray.<name>`` of a traced array: a Reduced (its rules are checked when it runs, by
    the unfused function itself)."""
    def reduce(x, /, **kwargs):
        if isinstance(x, Reduced):
            raise _reduced_again()
        return Reduced(name, _var(x, name, "x").node, kwargs)
    reduce.__name__ = name
    return reduce


def namespace() -> dict:
    """The functions dlarray.fuse puts in place of dlarray's while it traces."""
    table = {name: (lambda n: lambda x, /: unary(n, x))(name)
             for name in list(_ew._UNARY) + list(_ew._UNARY_PREDICATES) + ["real", "imag", "conj"]}
    table.update({name: (lambda n: lambda x1, x2, /: binary(n, x1, x2))(name)
                  for name in _ew._BINARY})
    table.update(where=where, astype=astype)
    table.update({name: reduction(name) for name in REDUCTIONS})
    return table
