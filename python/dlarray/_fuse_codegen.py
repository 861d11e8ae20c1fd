"""dlarray.fuse's code generator: a traced DAG (``_fuse_trace.Trace``) as one kernel in C++ (the
CPU, built by the system compiler), CUDA C++ (NVRTC) or OpenCL C.

Each node's code is its row's scalar expression, read from the elementwise definition table
(``dlarray/elementwise_table.h`` of the installed SDK, the file every backend's kernels are made
from), with the table's functions (``AddOf``, ``Exp``, ``Maximum`` ...) spelled once here for the
three languages per kind of compute type (``_HELPERS``). A row whose function has no spelling for
its dtype, and the dtypes computed in another type (float16, bfloat16) or as pairs (complex), are
not generated: ``generate`` raises ``Unsupported`` and the expression runs in the interpreter.

Contraction of a * b + c into one rounding is off in every language (``-ffp-contract=off``,
``--fmad=false``, ``FP_CONTRACT OFF``): each op rounds as the unfused kernel does.
"""
from __future__ import annotations

import pathlib
import re

import numpy as np


CUDA_PER_THREAD = 4  # elements per CUDA thread (the grid covers n / (threads * this) blocks)


class Unsupported(Exception):
    """The expression has a node this generator does not write (the reason is the message)."""


# dtype -> (type name used in the code, suffix of the helpers, kind, width in bits)
_TYPES = {
    np.dtype(np.float32): ("f32_t", "f32", "f", 32),
    np.dtype(np.float64): ("f64_t", "f64", "f", 64),
    np.dtype(np.int8): ("i8_t", "i8", "i", 8),
    np.dtype(np.int16): ("i16_t", "i16", "i", 16),
    np.dtype(np.int32): ("i32_t", "i32", "i", 32),
    np.dtype(np.int64): ("i64_t", "i64", "i", 64),
    np.dtype(np.uint8): ("u8_t", "u8", "u", 8),
    np.dtype(np.uint16): ("u16_t", "u16", "u", 16),
    np.dtype(np.uint32): ("u32_t", "u32", "u", 32),
    np.dtype(np.uint64): ("u64_t", "u64", "u", 64),
    np.dtype(np.bool_): ("b_t", "b", "b", 8),
}
_C_TYPES = {"f32": "float", "f64": "double", "i8": "signed char", "i16": "short", "i32": "int",
            "i64": "long long", "u8": "unsigned char", "u16": "unsigned short",
            "u32": "unsigned int", "u64": "unsigned long long", "b": "unsigned char"}
_CL_TYPES = {"f32": "float", "f64": "double", "i8": "char", "i16": "short", "i32": "int",
             "i64": "long", "u8": "uchar", "u16": "ushort", "u32": "uint", "u64": "ulong",
             "b": "uchar"}

# The languages: function qualifier, math prefix, the 64-bit unsigned type and its literal suffix,
# the index type, the C type names.
_DIALECTS = {
    "cpp": dict(fn="static inline", m="std::", U="unsigned long long", ull="ULL",
                index="long long", types=_C_TYPES),
    "cuda": dict(fn="static __device__ __forceinline__", m="", U="unsigned long long", ull="ULL",
                 index="long long", types=_C_TYPES),
    "opencl": dict(fn="static inline", m="", U="ulong", ull="UL", index="long", types=_CL_TYPES),
}

_MATH_1 = {"Exp": "exp", "Log": "log", "Tanh": "tanh", "Sqrt": "sqrt", "Expm1": "expm1",
           "Log1p": "log1p", "Log2": "log2", "Log10": "log10", "Sin": "sin", "Cos": "cos",
           "Tan": "tan", "Asin": "asin", "Acos": "acos", "Atan": "atan", "Sinh": "sinh",
           "Cosh": "cosh", "Asinh": "asinh", "Acosh": "acosh", "Atanh": "atanh",
           "Floor": "floor", "Ceil": "ceil", "Trunc": "trunc", "Rint": "rint", "Abs": "fabs"}
_MATH_2 = {"Atan2": "atan2", "Hypot": "hypot", "CopySign": "copysign",
           "NextAfter": "nextafter", "Pow": "pow"}

# The table's functions: name -> {kind: (parameters, body)}; in a body T is the compute type, U
# the 64-bit unsigned type, W T's width, {m} the math prefix, _S the helpers' suffix for T.
_ARITH_INT = {
    "AddOf": ("a, b", "return (T)((U)a + (U)b);"),
    "SubOf": ("a, b", "return (T)((U)a - (U)b);"),
    "MulOf": ("a, b", "return (T)((U)a * (U)b);"),  # wraps, as NumPy: no signed overflow
    "Neg": ("x", "return (T)((U)0 - (U)x);"),
    "Maximum": ("a, b", "return a >= b ? a : b;"),
    "Minimum": ("a, b", "return a <= b ? a : b;"),
    "Equal": ("a, b", "return a == b;"),
    "IsNan": ("x", "return 0;"),
    "IsInf": ("x", "return 0;"),
    "IsFinite": ("x", "return 1;"),
}
_HELPERS: dict = {name: {"i": v, "u": v} for name, v in _ARITH_INT.items()}
_HELPERS["Abs"] = {"i": ("x", "return x < 0 ? Neg_S(x) : x;"), "u": ("x", "return x;")}
_HELPERS["Sign"] = {"i": ("x", "return (T)(x > 0 ? 1 : x < 0 ? -1 : 0);"),
                    "u": ("x", "return (T)(x > 0 ? 1 : 0);")}
_HELPERS["FloorDivide"] = {
    "i": ("a, b", "if (b == 0) return 0; if (b == (T)-1) return Neg_S(a); T q = (T)(a / b); "
          "if (a % b != 0 && ((a < 0) != (b < 0))) q = (T)(q - 1); return q;"),
    "u": ("a, b", "return b == 0 ? (T)0 : (T)(a / b);")}
_HELPERS["Remainder"] = {
    "i": ("a, b", "if (b == 0 || b == (T)-1) return 0; T r = (T)(a % b); "
          "if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b); return r;"),
    "u": ("a, b", "return b == 0 ? (T)0 : (T)(a % b);")}
_POW_LOOP = ("T result = 1; T base = a; for (U e = (U)b; e != 0; e >>= 1) { if (e & 1) "
             "result = MulOf_S(result, base); base = MulOf_S(base, base); } return result;")
_HELPERS["Pow"] = {
    "i": ("a, b", "if (b < 0) { if (a == 1) return 1; if (a == -1) return (b & 1) ? (T)-1 : "
          "(T)1; return 0; } " + _POW_LOOP),
    "u": ("a, b", _POW_LOOP)}
_HELPERS["ShiftLeft"] = {
    "i": ("a, b", "if (b < 0 || (U)b >= W) return 0; return (T)((U)a << b);"),
    "u": ("a, b", "if ((U)b >= W) return 0; return (T)((U)a << b);")}
_HELPERS["ShiftRight"] = {
    "i": ("a, b", "if (b < 0 || (U)b >= W) return a < 0 ? (T)-1 : (T)0; return (T)(a >> b);"),
    "u": ("a, b", "if ((U)b >= W) return 0; return (T)(a >> b);")}
_FLOAT = {
    "AddOf": ("a, b", "return a + b;"), "SubOf": ("a, b", "return a - b;"),
    "MulOf": ("a, b", "return a * b;"), "Div": ("a, b", "return a / b;"),
    "Neg": ("x", "return -x;"), "Reciprocal": ("x", "return (T)1 / x;"),
    "Equal": ("a, b", "return a == b;"),
    "Maximum": ("a, b", "if (a != a) return a; return a >= b ? a : b;"),
    "Minimum": ("a, b", "if (a != a) return a; return a <= b ? a : b;"),
    "IsNan": ("x", "return {m}isnan(x);"), "IsInf": ("x", "return {m}isinf(x);"),
    "IsFinite": ("x", "return {m}isfinite(x);"), "SignBit": ("x", "return {m}signbit(x);"),
    "Sign": ("x", "return x > 0 ? (T)1 : x < 0 ? (T)-1 : x == 0 ? (T)0 : x;"),
    "Remainder": ("a, b", "T r = {m}fmod(a, b); if (r != 0) { if ((r < 0) != (b < 0)) r += b; } "
                  "else { r = {m}copysign((T)0, b); } return r;"),
    "FloorDivide": ("a, b", "const T q = a / b; if (b == 0) return q; if (!{m}isfinite(a)) "
                    "return a - a; const T mod = {m}fmod(a, b); T div = (a - mod) / b; "
                    "if (mod != 0 && ((mod < 0) != (b < 0))) div -= 1; T whole = {m}floor(div); "
                    "if (div - whole > (T)0.5) whole += 1; "
                    "return whole == 0 ? {m}copysign((T)0, q) : whole;"),
    "LogAddExp": ("a, b", "if (a == b) return a + (T)0.693147180559945309417232121458176568; "
                  "const T d = a - b; if (d > 0) return a + {m}log1p({m}exp(-d)); "
                  "if (d <= 0) return b + {m}log1p({m}exp(d)); return d;"),
}
_FLOAT.update({k: ("x", "return {m}%s(x);" % v) for k, v in _MATH_1.items()})
_FLOAT.update({k: ("a, b", "return {m}%s(a, b);" % v) for k, v in _MATH_2.items()})
for _name, _v in _FLOAT.items():
    _HELPERS.setdefault(_name, {})["f"] = _v
for _name in ("Equal", "IsNan", "IsInf", "IsFinite"):
    _HELPERS[_name]["b"] = _ARITH_INT[_name]
del _name, _v
# Helpers whose result is a truth value (int), not T.
_PREDICATE_HELPERS = {"Equal", "IsNan", "IsInf", "IsFinite", "SignBit"}

_TABLE: dict = {}


# The characters that matter to the table's parser: a scan visits these only, not every
# character (the parse is part of a warm first call).
_PUNCT = re.compile(r'[(),"]')


def _split_args(text: str) -> list:
    """The top-level comma-separated arguments of a macro call's inside."""
    args, depth, start, quote = [], 0, 0, False
    for m in _PUNCT.finditer(text):
        ch, i = m.group(), m.start()
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            quote = not quote
        elif not quote and ch == "(":
            depth += 1
        elif not quote and ch == ")":
            depth -= 1
        elif not quote and ch == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
    args.append(text[start:].strip())
    return args


def _call_end(body: str, start: int) -> int:
    """The index after the ``)`` that closes the call whose ``(`` ends before ``start``."""
    depth = 1
    for m in _PUNCT.finditer(body, start):
        depth += {"(": 1, ")": -1}.get(m.group(), 0)
        if not depth:
            return m.end()
    return len(body)


def table() -> dict:
    """The rows of the definition table: name -> (parameter names, expression, is predicate),
    read from the installed ``dlarray/elementwise_table.h`` once."""
    if _TABLE:
        return _TABLE
    path = pathlib.Path(__file__).parent / "include" / "dlarray" / "elementwise_table.h"
    text = path.read_text()  # OSError: no SDK headers, so no code generation (the caller says)
    text = re.sub(r"\\\n", " ", text)
    arity = {"X1": (1, False), "X2": (2, False), "P1": (1, True), "P2": (2, True)}
    for line in text.splitlines():
        if not line.startswith("#define DLARRAY_") or "_OPS(" not in line.split(")")[0]:
            continue
        body = line.split(")", 1)[1]
        for m in re.finditer(r"\b(X1|X2|P1|P2)\(", body):
            i = _call_end(body, m.end())
            args = _split_args(body[m.end():i - 1])
            n, predicate = arity[m.group(1)]
            _TABLE[args[0]] = (tuple(args[1:1 + n]), args[2 + n], predicate)
    return _TABLE


_IDENT = re.compile(r"[A-Za-z_]\w*")


def _expression(row: str, args: list, suffix: str, kind: str, used: set) -> tuple:
    """(code, is truth value) of table row ``row`` on the variables ``args``."""
    rows = table()
    if row not in rows:
        raise Unsupported("op %s is not a row of the elementwise table" % row)
    params, expr, predicate = rows[row]
    names = dict(zip(params, args))
    out, pos = [], 0
    for m in _IDENT.finditer(expr):
        word = m.group(0)
        out.append(expr[pos:m.start()])
        pos = m.end()
        if word in names:
            out.append("(%s)" % names[word])
        elif expr[pos:].lstrip().startswith("(") and word[0].isupper():
            if kind not in _HELPERS.get(word, {}):
                raise Unsupported("%s has no generated form for %s (row %s)" % (word, kind, row))
            used.add((word, suffix, kind))
            out.append("%s_%s" % (word, suffix))
        else:
            out.append(word)
    out.append(expr[pos:])
    return "".join(out), predicate


def _helper_code(dialect: dict, name: str, suffix: str, kind: str, width: int) -> str:
    params, body = _HELPERS[name][kind]
    tname = "%s_t" % suffix
    ret = "int" if name in _PREDICATE_HELPERS else tname
    decl = ", ".join("%s %s" % (tname, p.strip()) for p in params.split(","))
    body = body.replace("{m}", dialect["m"])
    body = re.sub(r"\bT\b", tname, body)
    body = re.sub(r"\bU\b", dialect["U"], body)
    body = re.sub(r"\bW\b", str(width), body)
    body = body.replace("_S(", "_%s(" % suffix)
    return "%s %s %s_%s(%s) { %s }" % (dialect["fn"], ret, name, suffix, decl, body)


def _dependencies(used: set) -> list:
    """The helpers in ``used`` and those their bodies call, callees first."""
    order, seen = [], set()

    def add(item):
        if item in seen:
            return
        seen.add(item)
        name, suffix, kind = item
        for callee in re.findall(r"\b([A-Z]\w*)_S\(", _HELPERS[name][kind][1]):
            add((callee, suffix, kind))
        order.append(item)
    for item in sorted(used):
        add(item)
    return order


def _literal(value: np.ndarray, language: str, d: dict) -> str:
    tname, _, kind, _ = _TYPES[value.dtype]
    if kind == "b":
        return "((b_t)%d)" % int(bool(value))
    if kind in "iu":
        return "((%s)(%s)0x%x%s)" % (tname, d["U"], int(value) & (2**64 - 1), d["ull"])
    v = float(value)
    if v == v and v not in (float("inf"), float("-inf")):
        return "((%s)%s)" % (tname, v.hex())
    sign = "-" if v < 0 else ""
    special = {"cpp": ("__builtin_inf()", '__builtin_nan("")'),
               "cuda": ("__longlong_as_double(0x7ff0000000000000LL)",
                        "__longlong_as_double(0x7ff8000000000000LL)"),
               "opencl": ("INFINITY", "NAN")}[language]
    return "((%s)(%s%s))" % (tname, sign, special[0] if v == v else special[1])


def _cast(src: str, source: np.dtype, target: np.dtype, language: str, d: dict) -> str:
    """The unfused astype's conversion: != 0 to bool, floats to integers truncated and saturated
    (NaN gives 0), the rest C's conversion."""
    tname, _, kind, _ = _TYPES[target]
    if kind == "b":
        return "((b_t)((%s) != 0))" % src
    if source.kind == "f" and kind in "iu":
        info = np.iinfo(target)
        lo, hi = (_literal(np.asarray(x, dtype=target), language, d) for x in (info.min, info.max))
        return ("((%s) != (%s) ? (%s)0 : (%s) <= (%s) ? %s : (%s) >= (%s) ? %s : (%s)(%s))"
                % (src, src, tname, src, lo, lo, src, hi, hi, tname, src))
    return "((%s)(%s))" % (tname, src)


def generate(trace, inputs: list, layout: dict, ndim: int, language: str) -> str:
    """The source of kernel ``dl_fused`` computing ``trace`` in ``language`` ("cpp", "cuda",
    "opencl").

    ``inputs``: the argument positions of the arrays the kernel reads, in parameter order;
    ``layout[k]``: how input k is read at output element i: "f" (element i: its shape is the
    output's), "s" (element 0: one element) or "d" (through ``ndim`` strides: broadcast).

    Parameters, "cpp": ``(void* const* p, const long long* d, long long begin, long long end)``,
    p the inputs then the output, d the output's ``ndim`` sizes then each "d" input's ``ndim``
    strides (elements; 0 where it is broadcast). "cuda": the arrays, then ``n``, then the sizes and
    strides. "opencl": each array followed by its offset in elements, then the same.
    """
    d = _DIALECTS[language]
    used: set = set()
    body, out = _body(trace, layout, language, d, used)
    store = "out[%si] = %s;" % ("oo + " if language == "opencl" else "", out)
    strided = [k for k in inputs if layout[k] == "d"]
    dims = ["sh%d" % j for j in range(ndim)] if strided else []
    dims += ["st%d_%d" % (k, j) for k in strided for j in range(ndim)]
    lines = _prelude(trace, language, d)
    lines += [_helper_code(d, *item, _TYPES[_dtype_of(item)][3])
              for item in _dependencies(used)]
    inner = _offsets(strided, ndim, d) + body + [store]
    types = d["types"]
    ctype = {k: types[_TYPES[trace_input_dtype(trace, k)][1]] for k in inputs}
    out_ctype = types[_TYPES[trace.output.dtype][1]]
    if language == "cpp":
        lines.append('extern "C" __attribute__((visibility("default"))) void dl_fused('
                     "void* const* p, const long long* d, long long begin, long long end) {")
        lines += ["const %s* __restrict in%d = (const %s*)p[%d];" % (ctype[k], k, ctype[k], n)
                  for n, k in enumerate(inputs)]
        lines.append("%s* __restrict out = (%s*)p[%d];" % (out_ctype, out_ctype, len(inputs)))
        lines += ["const long long %s = d[%d];" % (name, n) for n, name in enumerate(dims)]
        if strided:  # the offsets once per run along the last axis, not per element
            lines += _cpp_rows(strided, ndim, d, body, store)
        else:
            lines += ["for (long long i = begin; i < end; ++i) {"] + inner + ["}"]
        lines.append("}")
    elif language == "cuda":
        # bool arrays as b_t*: a type dlarray.rtc does not check (it takes unsigned char* for
        # uint8 arrays only, and bool* too).
        ctype = {k: "b_t" if v == "unsigned char" and trace_input_dtype(trace, k) == np.bool_
                 else v for k, v in ctype.items()}
        if trace.output.dtype == np.bool_:
            out_ctype = "b_t"
        params = ["const %s* __restrict__ in%d" % (ctype[k], k) for k in inputs]
        params += ["%s* __restrict__ out" % out_ctype, "long long n"]
        params += ["long long %s" % name for name in dims]
        lines.append('extern "C" __global__ void dl_fused(%s) {' % ", ".join(params))
        # CUDA_PER_THREAD elements per thread, a block's apart (coalesced), as dlarray.rtc's
        # ElementwiseKernel: the loads of the unrolled iterations can be in flight together.
        lines += ["const long long base = (long long)blockIdx.x * (blockDim.x * %d) + "
                  "threadIdx.x;" % CUDA_PER_THREAD, "#pragma unroll",
                  "for (int k = 0; k < %d; ++k) {" % CUDA_PER_THREAD,
                  "const long long i = base + (long long)k * blockDim.x;",
                  "if (i < n) {"] + inner + ["}", "}", "}"]
    else:
        params = []
        for k in inputs:
            params += ["__global const %s* in%d" % (ctype[k], k), "long o%d" % k]
        params += ["__global %s* out" % out_ctype, "long oo", "long n"]
        params += ["long %s" % name for name in dims]
        lines.append("__kernel void dl_fused(%s) {" % ", ".join(params))
        lines += ["const long i = get_global_id(0);", "if (i >= n) return;"] + inner + ["}"]
    return "\n".join(lines) + "\n"


def _body(trace, layout: dict, language: str, d: dict, used: set) -> tuple:
    """(one declaration per node, the output's variable); ``used`` gathers the helpers."""
    var: dict = {}
    body = []
    for node in trace.nodes:
        if node.dtype not in _TYPES:
            raise Unsupported("dtype %s" % node.dtype)
        tname = _TYPES[node.dtype][0]
        var[node.index] = name = "t%d" % node.index
        if node.kind == "input":
            k = node.arg
            index = {"f": "i", "s": "0", "d": "off%d" % k}[layout[k]]
            if language == "opencl":
                index = "o%d + %s" % (k, index)
            code = "in%d[%s]" % (k, index)
        elif node.kind == "const":
            code = _literal(node.arg, language, d)
        elif node.kind == "cast":
            code = _cast(var[node.inputs[0].index], node.inputs[0].dtype, node.dtype, language, d)
        elif node.kind == "where":
            c, a, b = (var[i.index] for i in node.inputs)
            code = "(%s ? %s : %s)" % (c, a, b)
        else:
            compute = node.inputs[0].dtype
            if compute not in _TYPES:
                raise Unsupported("dtype %s" % compute)
            _, suffix, kind, _ = _TYPES[compute]
            expr, predicate = _expression(node.arg, [var[i.index] for i in node.inputs], suffix,
                                          kind, used)
            code = ("((b_t)((%s) ? 1 : 0))" if predicate else "((%s)(%%s))" % tname) % expr
        body.append("const %s %s = %s;" % (tname, name, code))
    return body, var[trace.output.index]


def _cpp_rows(strided: list, ndim: int, d: dict, body: list, store: str) -> list:
    """The C++ loop where inputs are read broadcast: the offsets (divisions by the sizes) at
    the start of each run along the last axis, then a step of the last axis' stride per
    element (the loop the compiler vectorizes)."""
    last = ndim - 1
    lines = ["for (long long i0 = begin; i0 < end;) {"]
    lines += ["long long b%d;" % k for k in strided]
    lines += ["{ const long long i = i0;"] + _offsets(strided, ndim, d)
    lines += ["b%d = off%d;" % (k, k) for k in strided] + ["}"]
    lines += ["const long long left = sh%d - i0 %% sh%d;" % (last, last),
              "const long long stop = end - i0 < left ? end : i0 + left;",
              "for (long long i = i0; i < stop; ++i) {"]
    lines += ["const long long off%d = b%d + (i - i0) * st%d_%d;" % (k, k, k, last)
              for k in strided]
    return lines + body + [store, "}", "i0 = stop;", "}"]


def _offsets(strided: list, ndim: int, d: dict) -> list:
    """Statements giving off<k>, the element of each broadcast input k at output element i."""
    if not strided:
        return []
    lines = ["%s r = i;" % d["index"]] + ["%s off%d = 0;" % (d["index"], k) for k in strided]
    for j in reversed(range(ndim)):
        if j > 0:
            lines.append("{ const %s c = r %% sh%d; r /= sh%d;" % (d["index"], j, j))
        else:
            lines.append("{ const %s c = r;" % d["index"])
        lines += ["off%d += c * st%d_%d;" % (k, k, j) for k in strided]
        lines.append("}")
    return lines


def trace_input_dtype(trace, k: int) -> np.dtype:
    return next(n.dtype for n in trace.nodes if n.kind == "input" and n.arg == k)


def _dtype_of(item) -> np.dtype:
    suffix = item[1]
    return next(dt for dt, v in _TYPES.items() if v[1] == suffix)


def _prelude(trace, language: str, d: dict, extra: tuple = ()) -> list:
    """Includes, pragmas and the type names; ``extra``: dtypes the kernel uses besides the
    trace's nodes' (a reduction's accumulator)."""
    lines = []
    f64 = any(n.dtype == np.float64 for n in trace.nodes) or np.dtype(np.float64) in extra
    if language == "cpp":
        lines.append("#include <cmath>")
    if language == "opencl":
        lines.append("#pragma OPENCL FP_CONTRACT OFF")
        if f64:
            lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    lines += ["typedef %s %s;" % (d["types"][v[1]], v[0]) for v in _TYPES.values()
              if language != "opencl" or v[1] != "f64" or f64]
    return lines
