"""The CUDA source of a dlarray.rtc.ElementwiseKernel for one set of parameter types.

Three shapes of kernel, picked at each call:

- "vec4": every array element is 4 bytes and every array 16-byte aligned: each thread loads two
  16-byte vectors per input (one instruction each, like the built-in ops' float4 path), applies
  the operation to each lane and stores whole vectors; the last n % 4 elements are done one by
  one. Inputs may be the outputs themselves (in place): every load comes before every store.
- "restrict": one element at a time, four per thread, pointers ``__restrict__`` (no array
  overlaps another);
- "plain": the same without ``__restrict__``, for arrays that overlap.
"""

import re

from ._rtc_source import C_TYPE_OF, strip_comments

THREADS = {"vec4": 128, "restrict": 256, "plain": 256}   # threads per block
PER_THREAD = {"vec4": 8, "restrict": 4, "plain": 4}      # elements per thread
VEC = 2  # 16-byte vectors per thread and array in "vec4"


def write_only(operation, name):
    """Whether ``operation`` surely assigns output ``name`` before reading it, with no branch
    (so that "vec4" need not load it): its first statement naming it is ``name = <no name>``."""
    clean = strip_comments(operation)
    if re.search(r"\b(if|for|while|do|switch|goto|return)\b|[{}?]", clean):
        return False
    for statement in clean.split(";"):
        if not re.search(r"\b%s\b" % re.escape(name), statement):
            continue
        m = re.match(r"^\s*%s\s*=(?!=)(.*)$" % re.escape(name), statement, re.S)
        return bool(m) and not re.search(r"\b%s\b" % re.escape(name), m.group(1))
    return False  # never written: its memory must be stored back as it was


def generate(kernel, dtypes, scalars, mode, index):
    """``(source, operation lines)`` of ``kernel`` (an ElementwiseKernel) for parameters of
    ``dtypes`` (NumPy dtypes, inputs then outputs); ``scalars[k]``: input k passed by value;
    ``index``: the C type of ``i``. The operation lines are where each copy of the operation
    starts in the source (1-based)."""
    n_in = len(kernel.in_params)
    params = kernel.in_params + kernel.out_params
    scalars = list(scalars) + [False] * (len(params) - len(scalars))
    ctype = [C_TYPE_OF[d] for d in dtypes]
    restrict = " __restrict__" if mode == "restrict" else ""
    args, elements = [], []  # elements: (param, C type, is output) of the non-raw arrays
    for k, p in enumerate(params):
        const = "const " if k < n_in else ""
        if scalars[k]:
            args.append("const %s %s" % (ctype[k], p.name))
        elif p.raw:
            args.append("%s%s*%s %s" % (const, ctype[k], restrict, p.name))
        else:
            args.append("%s%s*%s _raw_%s" % (const, ctype[k], restrict, p.name))
            elements.append((p, ctype[k], k >= n_in))
    lines = [kernel.preamble,
             'extern "C" __global__ void %s(%s, const %s _n) {' % (kernel.name, ", ".join(args),
                                                                   index)]
    typedefs = {p.placeholder: ctype[k] for k, p in enumerate(params) if p.placeholder}
    lines += ["typedef %s %s;" % (c, n) for n, c in sorted(typedefs.items())]
    if "_ind" in kernel.operation:
        lines.append("struct { %s n; __device__ %s size() const { return n; } } _ind{_n};"
                     % (index, index))
    op_lines = []

    def operation(element_lines):
        lines.extend(element_lines)
        op_lines.append(len("\n".join(lines).split("\n")) + 1)
        lines.append(kernel.operation + ";")

    def one_element():  # the element declarations of index i, read from memory
        return [("%s& %s = _raw_%s[i];" if out else "const %s %s = _raw_%s[i];")
                % (t, p.name, p.name) for p, t, out in elements]

    if mode == "vec4":
        for t in sorted({t for _, t, _ in elements}):
            lines.append("struct alignas(16) _V4_%s { %s v[4]; };" % (t.replace(" ", "_"), t))
        vec = {p.name: "_V4_%s" % t.replace(" ", "_") for p, t, _ in elements}
        loaded = [(p, t, out) for p, t, out in elements
                  if not out or not write_only(kernel.operation, p.name)]
        lines += ["const %s _n4 = _n / 4;" % index,
                  "const %s _base = (%s)blockIdx.x * (%s)(blockDim.x * %d) + (%s)threadIdx.x;"
                  % (index, index, index, VEC, index)]
        lines += ["%s _v_%s[%d];" % (vec[p.name], p.name, VEC) for p, _, _ in elements]
        lines += ["#pragma unroll", "for (int _u = 0; _u < %d; ++_u) {" % VEC,
                  "const %s _j = _base + (%s)_u * (%s)blockDim.x;" % (index, index, index),
                  "if (_j < _n4) {"]
        lines += ["_v_%s[_u] = reinterpret_cast<const %s*>(_raw_%s)[_j];"
                  % (p.name, vec[p.name], p.name) for p, _, _ in loaded]
        lines += ["}", "}", "#pragma unroll", "for (int _u = 0; _u < %d; ++_u) {" % VEC,
                  "const %s _j = _base + (%s)_u * (%s)blockDim.x;" % (index, index, index),
                  "if (_j < _n4) {", "#pragma unroll", "for (int _c = 0; _c < 4; ++_c) {",
                  "const %s i = _j * 4 + _c;" % index]
        operation([("%s& %s = _v_%s[_u].v[_c];" if out else "const %s %s = _v_%s[_u].v[_c];")
                   % (t, p.name, p.name) for p, t, out in elements])
        lines.append("}")
        lines += ["reinterpret_cast<%s*>(_raw_%s)[_j] = _v_%s[_u];" % (vec[p.name], p.name,
                                                                       p.name)
                  for p, _, out in elements if out]
        lines += ["}", "}", "{",  # the last n % 4 elements, one per thread of the first block
                  "const %s i = _n4 * 4 + (%s)blockIdx.x * (%s)blockDim.x + (%s)threadIdx.x;"
                  % (index, index, index, index),
                  "if (i < _n) {"]
        operation(one_element())
        lines += ["}", "}", "}", ""]
    else:
        lines += ["const %s _base = (%s)blockIdx.x * (%s)(blockDim.x * %d) + (%s)threadIdx.x;"
                  % (index, index, index, PER_THREAD[mode], index),
                  "#pragma unroll", "for (int _k = 0; _k < %d; ++_k) {" % PER_THREAD[mode],
                  "const %s i = _base + (%s)_k * (%s)blockDim.x;" % (index, index, index),
                  "if (i < _n) {"]
        operation(one_element())
        lines += ["}", "}", "}", ""]
    return "\n".join(lines), op_lines


def blocks(mode, n):
    """The grid for n elements."""
    per_block = THREADS[mode] * PER_THREAD[mode]
    return max(1, -(-n // per_block))
