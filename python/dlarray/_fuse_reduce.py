"""dlarray.fuse's trailing reduction in the same kernel: ``sum``, ``max``, ``min`` or ``mean`` of
a traced elementwise expression, each element computed in registers and folded into its
output's accumulator, never written to memory.

The iteration space is the elementwise result's shape with the kept axes first and the reduced
axes last (each group collapsed where every input steps through it alike): output ``o`` folds
its ``R`` elements ``r``. An input of the result's shape, with the reduced axes trailing, is read
at ``o * R + r``; a broadcast one through strides of both groups; a one-element one at 0.

- CPU (C++): a call folds outputs ``[ob, oe)`` over ``r`` in ``[rb, re)`` with 8 accumulators
  per block of 2048 elements and the block totals cascaded (float sums stay accurate over
  millions of elements). Where the last axis is kept (``axis=0`` of a matrix), neighbouring
  outputs are neighbours in memory: blocks of 1024 outputs (a 4 KiB page of float32 per row)
  are folded row by row instead, so the reads go in memory order. Threads split the outputs
  where there are many, else the reduced range, each into its own row of partial results that
  a second, unfused reduction folds.
- CUDA and OpenCL (one template, ``_fuse_reduce_gpu``): groups of threads fold one output over
  a segment of ``r`` and combine in shared memory; on CUDA the last block of a split range
  folds the segments' totals in the same launch, elsewhere a second reduction does.

The dtype rules are the unfused functions' (``_reduction.sum_dtype``, ``compute_dtype``,
``_statistics_api._float_result``): the element is cast to the accumulator's dtype as the unfused
``astype`` would, the sum of nothing is 0, ``mean`` divides as the unfused one does. Only the
association of float sums differs. Anything the generator does not write (complex, 16-bit
floats, a reduction of nothing, an axis-free one) keeps the two-kernel path.
"""
from __future__ import annotations

import ctypes
import math
import types

import numpy as np

from . import _core
from . import _fuse_backends as _backends
from . import _fuse_codegen as _codegen
from . import _fuse_cuda
from . import _fuse_memo as _memo
from . import _fuse_reduce_gpu as _gpu
from ._reduction import compute_dtype, normalize_axes, reduce, sum_dtype

_CPU_BLOCK = 2048  # elements per block of the CPU's 8 accumulators
_CPU_CASCADE = 1024  # block totals added before they join the output's total
_COLUMNS = 1024  # outputs folded together where the reduced axes are not the last
_PARALLEL_MIN = 1 << 16  # elements below which one CPU thread runs
_KEYWORDS = {"sum": {"axis", "dtype", "keepdims"}, "max": {"axis", "keepdims"},
             "min": {"axis", "keepdims"}, "mean": {"axis", "keepdims"}}
_HELPER = {"sum": "AddOf", "max": "Maximum", "min": "Minimum"}
# On an OpenCL CPU device (PoCL) the work-group form measured slower than the elementwise kernel
# and the device's own reduction (sum(a*b + c*d - e), 2048^2: 76 ms against 19), so such devices
# keep the two-kernel path; the tests turn this on to check the OpenCL code there.
OPENCL_CPUS = False


class Reducer:
    """One planned fused reduction: ``run(arrays)`` gives the result."""

    __slots__ = ("kind", "acc", "result", "final", "m", "r", "count", "inputs", "layout",
                 "dims", "groups", "source", "language", "launch", "mean", "columns", "unit",
                 "memo")


_CPU_DEVICES: dict = {}  # (device type, id) -> whether an OpenCL device is a CPU


def _opencl_cpu(ctx) -> bool:
    key = (ctx.device_type, ctx.device_id)
    if key not in _CPU_DEVICES:
        try:
            _CPU_DEVICES[key] = _backends.opencl_is_cpu(ctx)
        except (_backends.NoCompiler, RuntimeError):
            _CPU_DEVICES[key] = False  # the build says why, as for the elementwise kernel
    return _CPU_DEVICES[key]


def _dtypes(name: str, x: np.dtype, kwargs: dict) -> tuple:
    """(accumulator dtype, result dtype) by the unfused function's rules."""
    like = types.SimpleNamespace(dtype=x)  # the rules read the argument's dtype alone
    if name == "sum":
        result = sum_dtype(like, kwargs.get("dtype"), "sum")
        return compute_dtype(result), result
    if name == "mean":
        from ._statistics_api import _float_result
        result, compute = _float_result(like, None, "mean")
        return compute, result
    return x, x


def merge_axes(shape: tuple, strides: list, axes: list) -> tuple:
    """(sizes, per-input strides) of ``axes`` with size-1 axes dropped and neighbours merged
    where every input steps through both alike (also the elementwise kernel's layout:
    _fuse._collapse)."""
    keep = [j for j in axes if shape[j] != 1]
    sizes = [shape[j] for j in keep]
    rows = [[s[j] for j in keep] for s in strides]
    j = len(sizes) - 1
    while j > 0:
        if all(r[j - 1] == r[j] * sizes[j] for r in rows):
            sizes[j - 1] *= sizes[j]
            del sizes[j]
            for r in rows:
                del r[j - 1]
        j -= 1
    return sizes, rows


def plan(trace, reduction, arrays: list, inputs: list, ctx, language: str):
    """A Reducer for ``reduction`` = (function, kwargs) of ``trace`` on ``ctx``, or None where
    the two-kernel path runs it (raises the unfused function's errors for a bad axis)."""
    function, kwargs = reduction
    name = function.__name__
    x = trace.output
    if set(kwargs) - _KEYWORDS[name] or type(kwargs.get("keepdims", False)) is not bool:
        return None  # the unfused function says what is wrong
    axes = normalize_axes(kwargs.get("axis"), len(x.shape), name)
    if x.dtype.kind == "c":
        return None
    if language == "opencl" and not OPENCL_CPUS and _opencl_cpu(ctx):
        return None
    acc, result = _dtypes(name, x.dtype, kwargs)
    shape = x.shape
    count = math.prod(shape[a] for a in axes)
    if not axes or count == 0 or math.prod(shape) == 0 or acc not in _codegen._TYPES:
        return None
    if acc.kind == "b" and name in ("sum", "mean"):
        return None
    red = Reducer()
    red.kind = "sum" if name == "mean" else name
    red.acc, red.result, red.mean, red.language = acc, result, name == "mean", language
    red.count = count
    red.r, red.m = count, math.prod(shape) // count
    kept = [j for j in range(len(shape)) if j not in axes]
    red.final = tuple(1 if j in axes else s for j, s in enumerate(shape)) if kwargs.get(
        "keepdims") else tuple(shape[j] for j in kept)
    red.inputs, red.layout, strided, strides = inputs, {}, [], []
    trailing = list(axes) == list(range(len(shape) - len(axes), len(shape)))
    # The last axis kept: neighbouring outputs are neighbours in memory, so the CPU folds a
    # block of outputs row by row and a GPU gives each thread one output.
    red.columns = axes[-1] != len(shape) - 1
    for k in inputs:
        s = arrays[k].shape
        if math.prod(s) == 1:
            red.layout[k] = "s"
        elif s == shape and trailing:
            red.layout[k] = "f"
        else:
            red.layout[k] = "d"
            s = (1,) * (len(shape) - len(s)) + tuple(s)
            row, step = [0] * len(shape), 1
            for j in reversed(range(len(shape))):
                row[j] = 0 if s[j] == 1 else step
                step *= s[j]
            strided.append(k)
            strides.append(row)
    kept_sizes, kept_rows = merge_axes(shape, strides, kept)
    red_sizes, red_rows = merge_axes(shape, strides, list(axes))
    red.groups = (len(kept_sizes), len(red_sizes))
    # One kept axis read with stride 1 or 0 by every strided input (axis=0 of a matrix): the
    # strides are written into the code, so the CPU's loop over outputs reads contiguously.
    red.unit = ({k: row[0] for k, row in zip(strided, kept_rows)}
                if len(kept_sizes) == 1 and all(row[0] in (0, 1) for row in kept_rows)
                else None)
    red.dims = [red.r] + kept_sizes + red_sizes + [v for a, b in zip(kept_rows, red_rows)
                                                   for v in a + b]
    # What _source reads besides the expression: the sizes are parameters, but a GPU's group
    # size follows the reduced range's length.
    parts = ("reduce", trace.text, tuple(node.dtype.str for node in trace.nodes), red.kind,
             acc.str, tuple(inputs), tuple(red.layout[k] for k in inputs), red.groups,
             tuple(sorted(red.unit.items())) if red.unit is not None else None, red.columns,
             _gpu.group_size(red) if language != "cpp" else 0)
    red.memo = _memo.entry(language, parts, lambda: _source(trace, red, strided))
    red.source = red.memo.source
    return red


# --- code -----------------------------------------------------------------------------------


def _identity(kind: str, dtype: np.dtype):
    if kind == "sum":
        return 0
    if dtype.kind == "b":
        return kind == "min"
    if dtype.kind == "f":
        return -math.inf if kind == "max" else math.inf
    info = np.iinfo(dtype)
    return info.min if kind == "max" else info.max


def _combine(kind: str, dtype: np.dtype, used: set):
    _, suffix, k, _ = _codegen._TYPES[dtype]
    if k == "b":  # max / min of truth values
        op = "|" if kind == "max" else "&"
        return lambda a, b: "((b_t)((%s) %s (%s)))" % (a, op, b)
    used.add((_HELPER[kind], suffix, k))
    return lambda a, b: "%s_%s(%s, %s)" % (_HELPER[kind], suffix, a, b)


def _offsets(prefix: str, index: str, sizes: str, strided: list, n: int, d: dict) -> list:
    """Statements adding to ``<prefix><k>`` each strided input k's offset at position
    ``index`` of a group of n collapsed axes (sizes named ``<sizes>j``, strides
    ``st<k>_<sizes>j``)."""
    if n == 0 or not strided:
        return []
    lines = ["{ %s q = %s;" % (d["index"], index)]
    for j in reversed(range(n)):
        if j > 0:
            lines.append("{ const %s c = q %% %s%d; q /= %s%d;" % (d["index"], sizes, j, sizes, j))
        else:
            lines.append("{ const %s c = q;" % d["index"])
        lines += ["%s%d += c * st%d_%s%d;" % (prefix, k, k, sizes, j) for k in strided]
        lines.append("}")
    return lines + ["}"]


def _element(trace, red, strided: list, d: dict, used: set, fold: str,
             columns: bool = False) -> list:
    """The statements computing element ``rr`` of output ``o`` as ``v`` (the accumulator's
    dtype), then ``fold`` (which uses v). The strided inputs' offsets add those of ``o``
    (``base<k>``) and of ``rr``; ``columns``: ``inner<k>``, those of ``rr``, are known and those
    of ``o`` are computed here."""
    idx = d["index"]
    lines = ["const %s i = io + rr;" % idx] if "f" in red.layout.values() else []
    if columns and red.unit is not None:
        lines += ["const %s off%d = inner%d%s;" % (idx, k, k, " + o" if red.unit[k] else "")
                  for k in strided]
    elif columns:
        lines += ["%s off%d = inner%d;" % (idx, k, k) for k in strided]
        lines += _offsets("off", "o", "so", strided, red.groups[0], d)
    else:
        lines += ["%s off%d = base%d;" % (idx, k, k) for k in strided]
        lines += _offsets("off", "rr", "sr", strided, red.groups[1], d)
    body, out = _codegen._body(trace, red.layout, red.language, d, used)
    lines += body
    x = trace.output.dtype
    value = out if x == red.acc else _codegen._cast(out, x, red.acc, red.language, d)
    return lines + ["const %s v = %s;" % (_codegen._TYPES[red.acc][0], value), fold]


def _source(trace, red, strided: list) -> str:
    for node in trace.nodes:
        if node.dtype not in _codegen._TYPES:  # float16, bfloat16, complex
            raise _codegen.Unsupported("dtype %s" % node.dtype)
    language = red.language
    d = _codegen._DIALECTS[language]
    used: set = set()
    comb = _combine(red.kind, red.acc, used)
    ident = _codegen._literal(np.asarray(_identity(red.kind, red.acc), dtype=red.acc),
                              language, d)
    acc = _codegen._TYPES[red.acc][0]
    nk, nr = red.groups
    dims = ["R"] + ["so%d" % j for j in range(nk)] + ["sr%d" % j for j in range(nr)]
    dims += ["st%d_%s%d" % (k, g, j) for k in strided
             for g, n in (("so", nk), ("sr", nr)) for j in range(n)]
    idx = d["index"]
    outer = ["const %s io = o * R;" % idx] + ["%s base%d = 0;" % (idx, k) for k in strided]
    outer += _offsets("base", "o", "so", strided, nk, d)
    if language == "cpp":
        code = _cpp(trace, red, strided, d, used, comb, ident, acc, dims, outer)
    else:
        code = _gpu.source(trace, red, strided, d, used, comb, ident, acc, dims, outer)
    lines = _codegen._prelude(trace, language, d, (red.acc,))
    lines += [_codegen._helper_code(d, *item, _codegen._TYPES[_codegen._dtype_of(item)][3])
              for item in _codegen._dependencies(used)]
    return "\n".join(lines + code) + "\n"


def _ctype(trace, red, k, d) -> str:
    return d["types"][_codegen._TYPES[_codegen.trace_input_dtype(trace, k)][1]]


def _cpp(trace, red, strided, d, used, comb, ident, acc, dims, outer) -> list:
    """``dl_fused(p, d, ob, oe, rb, re)``: p the inputs then the output, d ``dims``."""
    lanes = ["lane[%d]" % k for k in range(8)]
    tree = comb(comb(comb(lanes[0], lanes[1]), comb(lanes[2], lanes[3])),
                comb(comb(lanes[4], lanes[5]), comb(lanes[6], lanes[7])))
    # GCC 12.2's loop vectorizer miscompiles a sum of values widened to the accumulator (20
    # uint8 ones summed into int64 gave 13 at -O3): where the element is cast, that pass is off.
    widened = trace.output.dtype != red.acc
    lines = ["#if defined(__GNUC__) && !defined(__clang__)",
             '#define DL_REDUCE_ATTR __attribute__((optimize("no-tree-loop-vectorize")))'
             if widened else
             "#define DL_REDUCE_ATTR", "#else", "#define DL_REDUCE_ATTR", "#endif"]
    lines += ['extern "C" __attribute__((visibility("default"))) DL_REDUCE_ATTR void dl_fused('
              "void* const* p, const long long* d, long long ob, long long oe, long long rb, "
              "long long re) {"]
    lines += ["const %s* __restrict in%d = (const %s*)p[%d];"
              % (_ctype(trace, red, k, d), k, _ctype(trace, red, k, d), n)
              for n, k in enumerate(red.inputs)]
    lines.append("%s* __restrict out = (%s*)p[%d];" % (acc, acc, len(red.inputs)))
    lines += ["const long long %s = d[%d];" % (name, n) for n, name in enumerate(dims)]
    if red.columns:
        return lines + _cpp_columns(trace, red, strided, d, used, comb, ident, acc) + ["}"]
    lines += ["for (long long o = ob; o < oe; ++o) {"] + outer
    lines += ["%s total = %s, mid = %s;" % (acc, ident, ident), "int blocks = 0;",
              "for (long long r0 = rb; r0 < re;) {",
              "const long long stop = re - r0 > %d ? r0 + %d : re;" % (_CPU_BLOCK, _CPU_BLOCK),
              "%s lane[8];" % acc, "for (int l = 0; l < 8; ++l) lane[l] = %s;" % ident,
              "long long r = r0;",
              "for (; r + 8 <= stop; r += 8) {",
              "for (int l = 0; l < 8; ++l) {", "const long long rr = r + l;"]
    lines += _element(trace, red, strided, d, used, "lane[l] = %s;" % comb("lane[l]", "v"))
    lines += ["}", "}", "for (; r < stop; ++r) {", "const long long rr = r;"]
    lines += _element(trace, red, strided, d, used, "lane[0] = %s;" % comb("lane[0]", "v"))
    lines += ["}", "mid = %s;" % comb("mid", tree), "r0 = stop;",
              "if (++blocks == %d) { total = %s; mid = %s; blocks = 0; }"
              % (_CPU_CASCADE, comb("total", "mid"), ident),
              "}", "out[o] = %s;" % comb("total", "mid"), "}", "}"]
    return lines


def _cpp_columns(trace, red, strided, d, used, comb, ident, acc) -> list:
    """Outputs in blocks of _COLUMNS, each block folded row by row (``rr`` outer, ``o`` inner:
    reads in memory order), the rows cascaded as the other form's blocks."""
    block = "%s part[%d], total[%d];" % (acc, _COLUMNS, _COLUMNS)
    lines = ["for (long long b0 = ob; b0 < oe; b0 += %d) {" % _COLUMNS,
             "const long long b1 = oe - b0 > %d ? b0 + %d : oe;" % (_COLUMNS, _COLUMNS), block,
             "for (long long j = 0; j < b1 - b0; ++j) { part[j] = %s; total[j] = %s; }"
             % (ident, ident),
             "int rows = 0;",
             "for (long long rr = rb; rr < re; ++rr) {"]
    lines += ["long long inner%d = 0;" % k for k in strided]
    lines += _offsets("inner", "rr", "sr", strided, red.groups[1], d)
    lines += ["for (long long o = b0; o < b1; ++o) {"]
    lines += _element(trace, red, strided, d, used,
                      "part[o - b0] = %s;" % comb("part[o - b0]", "v"), columns=True)
    lines += ["}", "if (++rows == %d) {" % _CPU_BLOCK,
              "for (long long j = 0; j < b1 - b0; ++j) { total[j] = %s; part[j] = %s; }"
              % (comb("total[j]", "part[j]"), ident), "rows = 0;", "}", "}",
              "for (long long o = b0; o < b1; ++o) out[o] = %s;"
              % comb("total[o - b0]", "part[o - b0]"), "}"]
    return lines


# --- running --------------------------------------------------------------------------------


def build(red, ctx):
    """``red``'s kernel compiled for ``ctx`` (raises the builders' errors), as ``run`` calls
    it."""
    if red.language == "cpp":
        return _backends.cpu_function(red.source, _backends.REDUCTION, red.memo)
    if red.language == "cuda":
        return _fuse_cuda.cuda_kernel(red.source, ctx, red.memo)
    return _backends.opencl_launcher(red.source, ctx)


def run(red, arrays: list, ctx) -> _core.NDArray:
    """The reduction of ``arrays`` (compact) by the planned kernel, with the unfused result's
    dtype and shape."""
    used = [arrays[k] for k in red.inputs]
    m, r = red.m, red.r
    if red.language == "cpp":
        workers = _backends._threads() if m * r >= _PARALLEL_MIN else 1
        if m >= 4 * workers or workers == 1:  # threads over outputs
            out = _core.empty((m,), ctx, red.acc)
            p = _backends.pointers(used + [out])
            sizes = (ctypes.c_longlong * len(red.dims))(*red.dims)
            step = -(-m // workers)
            if red.columns:  # each thread's outputs on cache lines of their own
                step = (step + 63) // 64 * 64
            _backends.run_parallel(red.launch, [(p, sizes, b, min(m, b + step), 0, r)
                                                for b in range(0, m, step)])
        else:  # threads over the reduced range, a row of partial results each
            partial = _core.empty((workers, m), ctx, red.acc)
            step = (-(-r // workers) + 63) // 64 * 64
            sizes = (ctypes.c_longlong * len(red.dims))(*red.dims)
            calls = [(_backends.pointers(used + [partial[t]]), sizes, 0, m, b, min(r, b + step))
                     for t, b in enumerate(range(0, r, step))]
            _backends.run_parallel(red.launch, calls)
            out = _fold(partial[:len(calls)], red)
    else:
        blocks, segments, length, fold = _gpu.segments(red)
        partial = _core.empty((segments, m), ctx, red.acc) if segments > 1 else None
        out = _core.empty((m,), ctx, red.acc) if partial is None or fold else partial
        partial = out if partial is None else partial
        if red.language == "cuda":
            red.launch((blocks, segments), (_gpu.THREADS,),
                       tuple(used) + (out, partial, m, length, int(fold)) + tuple(red.dims),
                       ctx=ctx)
        else:
            red.launch(used + [out, partial], [m, length, 0] + list(red.dims),
                       (blocks * _gpu.THREADS, segments), (_gpu.THREADS, 1))
        if segments > 1 and not fold:
            out = _fold(partial, red)
    return finish(red, out.reshape(red.final))


def launcher(red, signature: list, ctx):
    """The ``_core._FuseLauncher`` of ``red`` for calls of ``signature`` (see _fuse._fast_for)
    where one call or launch of run's kernel alone gives the unfused result, else None: on the
    CPU the C++ kernel over all outputs and the whole reduced range where run uses one thread
    (fewer than _PARALLEL_MIN elements read), on CUDA launch_config's launch."""
    if red.language == "cpp":
        if red.mean or red.result != red.acc or red.m * red.r >= _PARALLEL_MIN:
            return None
        address = red.launch.address  # (_fuse_backends.cpu_function's)
        return _core._FuseLauncher(address, signature, list(red.final), red.acc, list(red.dims),
                                   ctx, _PARALLEL_MIN - 1, scalars=[0, red.m, 0, red.r])
    config = launch_config(red, ctx)
    if config is None:
        return None
    function, grid, block, scalars, part = config
    return _core._FuseLauncher(0, signature, list(red.final), red.acc, [], ctx, red.m, function,
                               grid, block, scalars, part)


def launch_config(red, ctx):
    """For launcher: (the CUDA kernel loaded on ctx's GPU, grid, block, scalar parameters,
    second array: 0 the output, else the partial totals' element count) of run's launch, where
    that launch alone gives the unfused result (no division, no cast, no second reduction),
    else None."""
    if red.language != "cuda" or red.mean or red.result != red.acc:
        return None
    blocks, segments, length, fold = _gpu.segments(red)
    if segments > 1 and not fold:
        return None
    return (red.launch._load(ctx.device_id), [blocks, segments, 1], [_gpu.THREADS, 1, 1],
            [red.m, length, int(fold)] + list(red.dims), segments * red.m if segments > 1 else 0)


def _fold(partial, red):
    """The rows of partial results folded (the unfused reduce op over axis 0)."""
    if partial.shape[0] == 1:
        return partial.reshape(-1)
    return reduce(partial, red.kind, 0, False, red.acc, red.kind)


def finish(red, out):
    """The unfused function's last steps: mean's division, the cast to the result dtype."""
    if red.mean:
        from ._statistics_api import _divide
        out = _divide(out, red.count)
    return out if out.dtype == red.result else out.astype(red.result)
