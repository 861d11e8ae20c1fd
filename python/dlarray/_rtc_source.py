"""What dlarray.rtc reads in CUDA source: kernel signatures (the type of each parameter, so that
Python numbers can be passed as CuPy does), the C type of each dtype, and NVRTC's log lines."""

import re

import numpy as np

from . import _core

# DLPack type codes, as dlarray._core's params tuples carry them.
INT, UINT, FLOAT = 0, 1, 2
# Parameter kinds (python/src/rtc.cc ParamKind).
UNKNOWN, POINTER, SCALAR = 0, 1, 2

_C_TYPES = {
    "float": (FLOAT, 32), "double": (FLOAT, 64), "__half": (FLOAT, 16), "half": (FLOAT, 16),
    "bool": (UINT, 8),
    "char": (INT, 8), "signed char": (INT, 8), "int8_t": (INT, 8),
    "unsigned char": (UINT, 8), "uint8_t": (UINT, 8),
    "short": (INT, 16), "short int": (INT, 16), "signed short": (INT, 16), "int16_t": (INT, 16),
    "unsigned short": (UINT, 16), "unsigned short int": (UINT, 16), "uint16_t": (UINT, 16),
    "int": (INT, 32), "signed": (INT, 32), "signed int": (INT, 32), "int32_t": (INT, 32),
    "unsigned": (UINT, 32), "unsigned int": (UINT, 32), "uint32_t": (UINT, 32),
    "long": (INT, 64), "long int": (INT, 64), "signed long": (INT, 64), "int64_t": (INT, 64),
    "long long": (INT, 64), "long long int": (INT, 64), "signed long long": (INT, 64),
    "ptrdiff_t": (INT, 64), "ssize_t": (INT, 64),
    "unsigned long": (UINT, 64), "unsigned long int": (UINT, 64), "uint64_t": (UINT, 64),
    "unsigned long long": (UINT, 64), "unsigned long long int": (UINT, 64), "size_t": (UINT, 64),
}
_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict",
               "__grid_constant__", "struct", "std"}

# NumPy dtype -> the C type dlarray.rtc writes for it.
C_TYPE_OF = {
    np.dtype(np.float32): "float", np.dtype(np.float64): "double",
    np.dtype(np.int8): "signed char", np.dtype(np.uint8): "unsigned char",
    np.dtype(np.int16): "short", np.dtype(np.uint16): "unsigned short",
    np.dtype(np.int32): "int", np.dtype(np.uint32): "unsigned int",
    np.dtype(np.int64): "long long", np.dtype(np.uint64): "unsigned long long",
}


def c_type(dtype, what):
    """The C type of a NumPy dtype; ``what`` names the array in the TypeError."""
    try:
        return C_TYPE_OF[_core.parse_dtype(dtype)]
    except (KeyError, TypeError, ValueError):
        raise TypeError("%s: dlarray.rtc has no C type for dtype %s (it knows %s)"
                        % (what, dtype, ", ".join(sorted(str(d) for d in C_TYPE_OF)))) from None


def strip_comments(code):
    """``code`` with its comments blanked (line numbers and offsets kept)."""
    def blank(m):
        text = m.group(0)
        if text.startswith(("'", '"')):
            return text  # a literal: kept (extern "C" must stay readable)
        return re.sub(r"[^\n]", " ", text)
    return re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', blank, code,
                  flags=re.S)


def _split_params(text):
    """Splits a parameter list on the commas outside <...>, (...) and [...]."""
    out, depth, current = [], 0, []
    for ch in text:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(current))
            current = []
        else:
            current.append(ch)
    if "".join(current).strip():
        out.append("".join(current))
    return [p.strip() for p in out]


def _const_data(tokens, is_array):
    """Whether a pointer parameter's data is const at every level (``const float*``, ``float
    const*``, ``const float* const*``): only such a parameter may take a read-only array. A const
    after the last ``*`` (``float* const x``) makes the pointer const, not the data."""
    levels = tokens + ["*"] if is_array else tokens
    segments, current = [], []
    for t in levels:
        if t == "*":
            segments.append(current)
            current = []
        else:
            current.append(t)
    return bool(segments) and all("const" in seg for seg in segments)


def parse_param(text):
    """``(kind, code, bits, label, const_data)`` of one parameter declaration (bits 0: any
    type; const_data: a pointer to const data, see _const_data)."""
    label = " ".join(text.split())
    decl = text.split("=")[0]
    is_array = "[" in decl
    decl = re.sub(r"\[[^\]]*\]", "", decl)
    pointer = "*" in decl or is_array
    tokens = re.findall(r"[A-Za-z_]\w*(?:::\w+)*|[*&]", decl)
    words = [t.split("::")[-1] for t in tokens if t not in ("*", "&") and t not in _QUALIFIERS]
    if "&" in tokens:
        return UNKNOWN, 0, 0, label, False
    # The last word is the parameter's name when there is a type before it.
    type_words = words[:-1] if len(words) > 1 else words
    key = " ".join(type_words)
    code_bits = _C_TYPES.get(key)
    if pointer:
        code, bits = code_bits if code_bits else (0, 0)  # void*, T*, structs: any array
        return POINTER, code, bits, label, _const_data(tokens, is_array)
    if code_bits is None:
        return UNKNOWN, 0, 0, label, False
    return SCALAR, code_bits[0], code_bits[1], label, False


_KERNEL = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+"
                     r"(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*)\s*\(([^)]*)\)")


def kernels_in(code):
    """``{name: (params, extern_c)}`` for each ``__global__`` function of ``code``.

    ``params`` is a list of parse_param tuples, or None for a template (its types are not
    known before instantiation); ``extern_c`` whether its symbol is its plain name.
    """
    clean = strip_comments(code)
    extern_blocks = [(m.end(), _block_end(clean, m.end() - 1))
                     for m in re.finditer(r'extern\s+"\s*C\s*"\s*\{', clean)]
    out = {}
    for m in _KERNEL.finditer(clean):
        name, params_text = m.group(1), m.group(2)
        before = clean[max(0, m.start() - 200):m.start()]
        template = re.search(r"template\s*<[^;{}]*>\s*$", before) is not None
        extern_c = (re.search(r'extern\s+"\s*C\s*"\s*$', before) is not None or
                    any(a <= m.start() < b for a, b in extern_blocks)) and not template
        params = None
        if not template:
            params = [parse_param(p) for p in _split_params(params_text)
                      if p.strip() and p.strip() != "void"]
        out[name] = (params, extern_c)
    return out


def _block_end(text, open_brace):
    depth = 0
    for i in range(open_brace, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return len(text)


_LOG_LINE = re.compile(r"^(?P<file>[^\n()]*)\((?P<line>\d+)\): (?P<message>.*)$", re.M)


def log_locations(log):
    """``[(line, message)]`` for each ``file(line): message`` line of an NVRTC log."""
    return [(int(m.group("line")), m.group("message").strip()) for m in _LOG_LINE.finditer(log)]
