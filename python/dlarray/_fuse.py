"""``dlarray.fuse``: an elementwise expression of dlarray arrays run as one generated kernel.

See :func:`fuse`. The parts: ``_fuse_trace`` (the proxies and the DAG, with the unfused path's
dtype rules), ``_fuse_codegen`` (the DAG as C++, CUDA or OpenCL C from the elementwise table's
expressions), ``_fuse_backends`` (building and launching per device type; CUDA's in
``_fuse_cuda``) and ``_fuse_interp`` (the portable path: the unfused kernels over cache-sized
chunks); ``_fuse_reduce`` (a trailing reduction in the same kernel); ``_fuse_memo`` (the
generated code and the CPU library of a plan key, on disk for later processes).
"""
from __future__ import annotations

import functools
import math
import numbers
import os
import threading
import warnings
from typing import Any, Callable

import numpy as np

from . import _core, _log
from ._core import NDArray
from ._operators import _compact

# The parts, imported when the first function is fused (not at `import dlarray`).
_backends: Any = None
_codegen: Any = None
_cuda: Any = None
_memo: Any = None
_interp: Any = None
_reduce: Any = None
_trace: Any = None


_traced: dict = {}  # name -> the tracer's function (_trace.namespace(), made once)
_dispatchers: dict = {}  # name -> (the real function, its dispatcher)


def _import_parts() -> None:
    global _backends, _codegen, _cuda, _interp, _memo, _reduce, _trace
    if _trace is None:
        from . import (_fuse_backends, _fuse_codegen, _fuse_cuda, _fuse_interp, _fuse_memo,
                       _fuse_reduce, _fuse_trace)
        # the tracer's functions and their dispatchers, and what every plan key holds, made
        # with the parts rather than in a first call (before _trace is set: another thread
        # takes a set _trace as all parts ready)
        _traced.update(_fuse_trace.namespace())
        import dlarray
        _dispatch_table(vars(dlarray))
        _fuse_memo.prepare()
        _backends, _codegen, _cuda, _interp = (_fuse_backends, _fuse_codegen, _fuse_cuda,
                                               _fuse_interp)
        _memo, _reduce, _trace = _fuse_memo, _fuse_reduce, _fuse_trace

__all__ = ["fuse", "Fused"]

_LANGUAGES = {1: "cpp", 2: "cuda", 4: "opencl"}  # device type -> generated language
_trace_lock = threading.RLock()
_kernels: dict = {}  # (expression, dtypes, layout, ndim, device) -> run function or None
_warned: set = set()
_MAX_PLANS = 1024  # traced signatures kept per fused function


def _dispatcher(name: str, real, traced):
    """The function put in place of dlarray's ``real`` while tracing: traced arguments go to
    ``traced``, everything else to ``real`` (other threads keep working). Made once per real
    function (a hundred closures made per trace were a third of a warm first call's trace)."""
    known = _dispatchers.get(name)
    if known is None or known[0] is not real:  # first use, or the function was replaced

        def dispatch(*args, _real=real, _traced=traced, **kwargs):
            if any(isinstance(a, (_trace.TracedArray, _trace.Reduced)) for a in args):
                return _traced(*args, **kwargs)
            return _real(*args, **kwargs)
        known = _dispatchers[name] = (real, dispatch)
    return known[1]


_patch: list = []  # [{name: real function}, {name: its dispatcher}] of the last trace


def _dispatch_table(namespace: dict) -> tuple:
    """({name: dlarray's function}, {name: its dispatcher}) of the traced names in
    ``namespace`` (dlarray's), made again only where a function was replaced."""
    saved = {name: namespace[name] for name in _traced if name in namespace}
    if not _patch or _patch[0] != saved:
        _patch[:] = [saved, {name: _dispatcher(name, real, _traced[name])
                             for name, real in saved.items()}]
    return saved, _patch[1]


def _patched_namespace():
    """dlarray's elementwise functions, astype and where replaced by their dispatchers; returns
    (the module, {name: the real function}) for the caller to put back (vars(module).update:
    two dict updates where a hundred setattr calls were a fifth of a first call's trace)."""
    import dlarray
    namespace = vars(dlarray)
    saved, dispatchers = _dispatch_table(namespace)
    namespace.update(dispatchers)
    return dlarray, saved


class _Plan:
    """What one signature of arguments runs: the trace, the arrays read and how, the output."""

    __slots__ = ("trace", "inputs", "layout", "ndim", "dims", "shape", "dtype", "run",
                 "backend", "source", "reduce", "reducer", "fast")


def _fast_for(plan: _Plan, args, arrays) -> Any:
    """The C++ cache hit (``_core._FuseLauncher``) of a signature whose generated kernel is C++
    running on one thread (fewer than ``_PARALLEL_MIN`` elements: an elementwise output, or a
    trailing reduction's elements read) or CUDA (any non-empty output: the launch is queued),
    where one call or launch gives the unfused result (_reduce.launcher), else None. Per call
    it checks the arguments against the signature, allocates the result and calls or launches
    the kernel: about a microsecond on the CPU, where the Python path below takes ten or
    more."""
    read, signature, k = set(plan.inputs), [], 0
    for a in args:
        if isinstance(a, NDArray):
            signature.append((a.dtype, tuple(a.shape), k in read))
            k += 1
        else:
            signature.append((None, a))
    if plan.reducer is not None:  # (a plan with one has no elementwise kernel, shape or run)
        return _reduce.launcher(plan.reducer, signature, arrays[0].ctx)
    run = getattr(plan, "run", None)
    address = getattr(run, "address", None)
    launch = getattr(run, "launch_config", None)  # CUDA: n -> (kernel, grid, block)
    if (address is None and launch is None) or plan.reduce is not None:
        return None
    n = math.prod(plan.shape)
    if n == 0 or (address is not None and n >= _backends._PARALLEL_MIN):
        return None
    if address is not None:
        return _core._FuseLauncher(address, signature, list(plan.shape), plan.dtype,
                                   list(plan.dims), arrays[0].ctx, _backends._PARALLEL_MIN - 1,
                                   scalars=[0, n])
    function, grid, block = launch(n)
    return _core._FuseLauncher(0, signature, list(plan.shape), plan.dtype, list(plan.dims),
                               arrays[0].ctx, n, function, grid, block, [n] + list(plan.dims))


def _collapse(shape: tuple, strided: list) -> tuple:
    """(sizes, strides per input) over the output's dimensions with size-1 ones dropped and
    neighbours merged where every input steps through both alike; strides are 0 where an input
    is broadcast."""
    _import_parts()
    nd = len(shape)
    rows = []
    for s in strided:
        s = (1,) * (nd - len(s)) + tuple(s)
        row, acc = [0] * nd, 1
        for j in reversed(range(nd)):
            row[j] = 0 if s[j] == 1 else acc
            acc *= s[j]
        rows.append(row)
    sizes, rows = _reduce.merge_axes(shape, rows, list(range(nd)))
    return sizes or [1], [r or [0] for r in rows]


def _compile(language: str, plan: _Plan, ctx, full_key, build) -> Any:
    """``build()`` once per ``full_key``: its result, or None (a missing compiler logged, a
    compile failure warned once) where the expression runs unfused."""
    if full_key in _kernels:
        return _kernels[full_key]
    run = None
    try:
        run = build()
    except _backends.NoCompiler as e:
        _log.log_fallback("dlarray.fuse on %r: %s; expressions run in the interpreter"
                          % (ctx, e), once_key=("fuse", ctx.device_type))
    except (_backends.BuildFailed, OSError, RuntimeError) as e:  # a library that will not
        # load, an unwritable cache, an OpenCL call failing: the unfused path still runs
        if (plan.trace.text, repr(ctx)) not in _warned:
            _warned.add((plan.trace.text, repr(ctx)))
            lines = str(e).splitlines() or [type(e).__name__]
            first = next((x for x in lines if "error" in x.lower()), lines[0])
            warnings.warn("dlarray.fuse: the kernel generated for %s does not compile on %r "
                          "(%s); it runs unfused" % (plan.trace.text, ctx, first[:300]),
                          RuntimeWarning, stacklevel=5)
    _kernels[full_key] = run
    return run


def _build_reducer(plan: _Plan, args, arrays, ctx) -> None:
    """The trailing reduction in the generated kernel where the generator writes it for ``ctx``
    (``plan.reducer``), else None: the elementwise kernel, then the unfused reduction."""
    plan.reducer = None
    language = _LANGUAGES.get(ctx.device_type)
    if language is None or os.environ.get("DLARRAY_FUSE", "").strip() == "interpret":
        return
    try:
        red = _reduce.plan(plan.trace, plan.reduce, arrays, plan.inputs, ctx, language)
    except (_codegen.Unsupported, OSError) as e:
        _log.logger.debug("dlarray.fuse: %s reduces unfused: %s", plan.trace.text, e)
        return
    if red is None:
        return
    full_key = ("reduce", red.source, ctx.device_type, ctx.device_id)
    red.launch = _compile(language, plan, ctx, full_key,
                          lambda: _reduce.build(red, ctx))
    if red.launch is not None:
        plan.reducer, plan.backend, plan.source = red, language, red.source


def _build(plan: _Plan, ctx, key) -> None:
    """Picks how ``plan`` runs on ``ctx``: a generated kernel (built once per key and device) or
    the interpreter."""
    plan.run, plan.backend, plan.source = None, "interpreter", None
    language = _LANGUAGES.get(ctx.device_type)
    if language is None or os.environ.get("DLARRAY_FUSE", "").strip() == "interpret":
        return
    trace = plan.trace
    parts = ("elementwise", trace.text, tuple(node.dtype.str for node in trace.nodes),
             tuple(plan.inputs), tuple(plan.layout[k] for k in plan.inputs), plan.ndim)
    try:
        memo = _memo.entry(language, parts, lambda: _codegen.generate(
            trace, plan.inputs, plan.layout, plan.ndim, language))
    except (_codegen.Unsupported, OSError) as e:
        _log.logger.debug("dlarray.fuse: %s runs in the interpreter: %s", trace.text, e)
        return
    plan.source = memo.source

    def build():
        if language == "cpp":
            return _backends.build_cpu(plan.source, memo)
        if language == "cuda":
            return _cuda.build_cuda(plan.source, ctx, memo)
        return _backends.build_opencl(plan.source, ctx)
    plan.run = _compile(language, plan, ctx, key + (ctx.device_type, ctx.device_id), build)
    if plan.run is not None:
        plan.backend = language


def _prepare(plan: _Plan, arrays, ctx) -> None:
    """The elementwise plan of ``plan.trace``: how each input is read (``arrays``: anything with
    the inputs' shape and dtype, by position), the sizes and strides, the kernel."""
    trace = plan.trace
    plan.shape, plan.dtype = trace.output.shape, trace.output.dtype
    plan.layout, strided = {}, []
    for k in plan.inputs:
        s = arrays[k].shape
        if s == plan.shape:
            plan.layout[k] = "f"
        elif math.prod(s) == 1:
            plan.layout[k] = "s"
        else:
            plan.layout[k] = "d"
            strided.append(s)
    if strided:
        sizes, rows = _collapse(plan.shape, strided)
        plan.ndim, plan.dims = len(sizes), sizes + [v for r in rows for v in r]
    else:  # (what _collapse gives without strided inputs: every axis merged into one)
        plan.ndim, plan.dims = 1, []
    key = (trace.text, tuple(arrays[k].dtype for k in plan.inputs),
           tuple(plan.layout[k] for k in plan.inputs), plan.ndim if strided else 0)
    _build(plan, ctx, key)


def compile_trace(trace, arrays: list, ctx) -> tuple:
    """For a caller that builds the DAG itself (the autodiff Executor): ``(run, backend)``, where
    ``run(inputs, out)`` computes ``trace`` into ``out`` (compact, of the trace's shape and
    dtype) from ``inputs`` (compact, by the trace's input positions, each of the output's shape,
    broadcast to it or of one element). ``arrays`` stand for the inputs (their shape and dtype)
    now: the kernel is built here, not at the first run (a CUDA graph being recorded must only
    see launches)."""
    _import_parts()
    plan = _Plan()
    plan.trace, plan.reduce, plan.reducer = trace, None, None
    plan.inputs = sorted({node.arg for node in trace.nodes if node.kind == "input"})
    _prepare(plan, arrays, ctx)
    n, used, dims, kernel = math.prod(plan.shape), plan.inputs, plan.dims, plan.run
    if kernel is None:
        def run(inputs, out):
            if n:
                _interp.run(trace, inputs, out, ctx)
    else:
        def run(inputs, out):
            if n:
                kernel([inputs[k] for k in used], out, n, dims)
    return run, plan.backend


class Fused:
    """A function traced once per signature of arguments and run as one kernel; made by
    :func:`fuse`. Calling it takes the function's positional arguments: the class's call slot
    (C++, ``_core._fuse_install_call``) runs it through ``self._fast``, the launcher of the
    last small CPU signature, when that takes the arguments, else through :meth:`_slow`."""

    _fast: Any = None

    def __init__(self, fn: Callable[..., Any]):
        if not callable(fn):
            raise TypeError("dlarray.fuse: expected a function, got %s" % type(fn).__name__)
        _import_parts()
        self.fn = fn
        self._plans: dict = {}
        self.__name__ = type(fn).__name__  # a callable without one (functools.partial)
        functools.update_wrapper(self, fn)

    def _slow(self, *args: Any, **kwargs: Any) -> NDArray:
        """A call that the launcher (``self._fast``) did not take: the whole Python path."""
        if kwargs:
            raise TypeError("dlarray.fuse: %s takes positional arguments only, got %s"
                            % (self.__name__, ", ".join(sorted(kwargs))))
        arrays, sig, ctx = [], [], None
        for i, a in enumerate(args):
            if isinstance(a, NDArray):
                arrays.append(a)
                sig.append(a.dtype)
                sig.append(a.shape)
                c = a.ctx
                if ctx is None:
                    ctx = c
                elif c != ctx:
                    raise ValueError("dlarray.fuse: %s's arrays are on %r and %r; move them to "
                                     "one device with to_device()" % (self.__name__, ctx, c))
            elif isinstance(a, _trace.TracedArray):
                return self.fn(*args)  # called inside another traced function: inlined
            elif isinstance(a, (numbers.Number, np.generic)):
                sig.append((type(a), a.dtype if isinstance(a, np.generic) else None, a))
            else:
                raise TypeError("dlarray.fuse: argument %d of %s must be a dlarray array or a "
                                "Python scalar, got %s" % (i, self.__name__, type(a).__name__))
        if ctx is None:
            raise TypeError("dlarray.fuse: %s needs at least one dlarray array argument"
                            % self.__name__)
        key = (tuple(sig), ctx.device_type, ctx.device_id)
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) >= _MAX_PLANS:  # many shapes or scalar values: start again
                self._plans.clear()
            plan = self._plans[key] = self._plan(args, arrays, ctx)
            plan.fast = _fast_for(plan, args, arrays)
        self._fast = plan.fast
        if plan.fast is not None:  # a first call too: no ctypes call, no Python launch
            out = plan.fast(*args)
            if out is not None:
                return out
        if plan.reducer is not None:
            return _reduce.run(plan.reducer, [a if a.is_contiguous else _compact(a)
                                              for a in arrays], ctx)
        out = _core.empty(plan.shape, ctx, plan.dtype)
        n = out.size
        if n == 0:
            pass
        elif plan.run is None:
            _interp.run(plan.trace, arrays, out, ctx)
        else:
            used = [arrays[k] for k in plan.inputs]
            plan.run([a if a.is_contiguous else _compact(a) for a in used], out, n, plan.dims)
        if plan.reduce is not None:
            function, kwargs = plan.reduce
            return function(out, **kwargs)
        return out

    __call__ = _slow  # replaced in the call slot by _core._fuse_install_call (below)

    def _trace(self, args, arrays):
        proxies, k = [], 0
        for a in args:
            if isinstance(a, NDArray):
                proxies.append(_trace.TracedArray(_trace.Node("input", k, a.dtype, a.shape)))
                k += 1
            else:
                proxies.append(a)
        with _trace_lock:
            module, saved = _patched_namespace()
            try:
                result = self.fn(*proxies)
            finally:
                vars(module).update(saved)
        if isinstance(result, _trace.Reduced):
            from . import _statistics_api
            return _trace.Trace(result.node), (getattr(_statistics_api, result.name),
                                               result.kwargs)
        if not isinstance(result, _trace.TracedArray):
            raise TypeError("dlarray.fuse: %s must return one array computed from its arguments, "
                            "got %s" % (self.__name__, type(result).__name__))
        return _trace.Trace(result.node), None

    def _plan(self, args, arrays, ctx) -> _Plan:
        plan = _Plan()
        plan.reducer = plan.fast = None
        plan.trace, plan.reduce = self._trace(args, arrays)
        trace = plan.trace
        plan.inputs = sorted({node.arg for node in trace.nodes if node.kind == "input"})
        if plan.reduce is not None:
            _build_reducer(plan, args, arrays, ctx)
            if plan.reducer is not None:
                plan.layout = dict(plan.reducer.layout)
                return plan
        _prepare(plan, arrays, ctx)
        return plan

    def explain(self, *args: Any) -> dict:
        """How a call with these arguments runs (tracing and building it, without running).

        Returns
        -------
        dict
            ``expression`` (the traced DAG as text; a trailing reduction is named in
            ``reduction``, and ``reduction_fused`` says whether it runs in the same kernel),
            ``backend`` ("cpp", "cuda", "opencl" or
            "interpreter"), ``source`` (the generated code, or None) and ``layout`` (per array
            read: "f" its elements in order, "s" one element, "d" broadcast through strides).
        """
        arrays = [a for a in args if isinstance(a, NDArray)]
        if not arrays:
            raise TypeError("dlarray.fuse: explain needs the call's arguments")
        plan = self._plan(args, arrays, arrays[0].ctx)
        return {"expression": plan.trace.text, "backend": plan.backend, "source": plan.source,
                "layout": dict(plan.layout),
                "reduction": plan.reduce[0].__name__ if plan.reduce else None,
                "reduction_fused": plan.reducer is not None}


_core._fuse_install_call(Fused)


def fuse(fn: Callable[..., Any] = None) -> Any:
    """Runs an elementwise function of dlarray arrays as one generated kernel (like
    ``cupy.fuse``), so ``a*b + c*d - e`` reads each input and writes the result once instead of
    making a temporary per operation.

    The function is traced at its first call for each signature of arguments (dtypes, shapes,
    device; Python scalars by value): called with proxies, it records the array API's elementwise
    functions (``dlarray.exp(x)``, ``dlarray.maximum(x, 0)`` ...), the operators, ``astype``,
    ``where``, broadcasting and Python scalars, with the dtype rules of the unfused functions, and
    at most one trailing reduction (``dlarray.sum``, ``max``, ``min`` or ``mean`` with their keyword
    arguments, as the function's last operation: it runs as the device's reduction kernel on the
    fused result, with the unfused function's rules). The
    traced expression becomes one kernel for the arrays' device: C++ built by the system
    compiler and kept in the disk cache on the CPU, OpenCL C built by the device's OpenCL
    compiler, CUDA through NVRTC. Expressions the generator does not write (float16, bfloat16 and
    complex dtypes, a few integer functions) and devices without a generator run in the
    interpreter: the unfused kernels over cache-sized chunks; a kernel that fails to compile
    warns once, naming the expression and the device, and runs there too. The results are the
    unfused function's (the same rows' expressions, no contraction into fused multiply-adds;
    transcendental functions within an ulp of the backend's own kernels).

    Parameters
    ----------
    fn : callable
        A function of dlarray arrays and Python scalars (positional) returning one array.

    Returns
    -------
    Fused
        Call it as ``fn``; ``.explain(*args)`` says how a call runs; the original is ``.fn``.

    Raises
    ------
    TypeError
        At the first call: the function uses something fusion cannot take (indexing, ``@``,
        a non-elementwise function, ``if`` on array values, an operation after the reduction),
        naming it; or the
        operands break the unfused function's dtype rules (its message).
    ValueError
        Shapes that do not broadcast, or arrays on different devices.

    Examples
    --------
    >>> import dlarray, numpy as np
    >>> @dlarray.fuse
    ... def axpy(a, x, y):
    ...     return a * x + y
    >>> x = dlarray.asarray(np.arange(4, dtype=np.float32))
    >>> axpy(2.0, x, x).asnumpy()
    array([0., 3., 6., 9.], dtype=float32)
    """
    if fn is None:
        return fuse
    return Fused(fn)
