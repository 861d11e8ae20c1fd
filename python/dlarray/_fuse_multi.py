"""``dlarray.sgd_update``: the SGD update of many parameters (``p -= lr * g`` for each pair) as
one generated kernel launch, instead of two op calls per parameter.

The kernel evaluates what the per-tensor ops evaluate, ``p + g * s`` with ``s = -lr`` rounded
to the dtype first (``matrix_elementwise_multiply_by_const(g, -lr)`` then
``matrix_elementwise_add(p, .)``), one rounding per operation (no contraction), so its results
are those ops' bit for bit; the gradients are only read. It is generated per device type as
``dlarray.fuse``'s kernels are (``_fuse_backends``):

- CPU: one C++ function over a table of pointers and sizes, for any number of pairs, run on the
  fuse thread pool (each thread a slice of every pair) when there are 64Ki elements or more;
- CUDA and OpenCL: one kernel per number of pairs (at most ``_PAIRS`` per launch: CUDA's 4 KiB
  of kernel parameters), each pair its own row of blocks (``blockIdx.y``, the second NDRange
  dimension) striding over its elements; a CUDA graph being recorded sees the launch only.

float32 and float64 are generated; other dtypes, devices without a generator and kernels that
will not build run the two ops per pair (out of place: the gradients are left as they are).
"""
from __future__ import annotations

import ctypes
import math
import threading
from typing import Any, Sequence

import numpy as np

from . import _core, _log
from ._core import NDArray

_PAIRS = 64  # pairs per launch: each takes 3 pointers/sizes and a scale in CUDA's 4 KiB
_THREADS = 256  # CUDA threads per block and OpenCL work-group size
_MAX_BLOCKS = 1024  # blocks per pair (each strides over the rest)
_CTYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
_LANGUAGES = {1: "cpp", 2: "cuda", 4: "opencl"}
_kernels: dict = {}  # (language, ctype, pairs, device) -> launcher, or None: runs unfused
_lock = threading.Lock()


def cpp_source(ctype: str) -> str:
    """C++ ``dl_fused(p, g, n, s, count, part, parts)`` (the name ``cpu_function`` loads):
    slice ``part`` of ``parts`` of each of ``count`` pairs."""
    return "\n".join([
        "typedef %s T;" % ctype,
        'extern "C" __attribute__((visibility("default"))) void dl_fused(void* const* p, '
        "void* const* g, const long long* n, const T* s, long long count, long long part, "
        "long long parts) {",
        "for (long long k = 0; k < count; ++k) {",
        "T* __restrict pk = (T*)p[k];",
        "const T* __restrict gk = (const T*)g[k];",
        "const T sk = s[k];",
        # slices on 64-element boundaries: threads never share a cache line of a pair
        "const long long step = ((n[k] + parts - 1) / parts + 63) / 64 * 64;",
        "const long long end = (part + 1) * step < n[k] ? (part + 1) * step : n[k];",
        "for (long long i = part * step; i < end; ++i) {",
        "const T d = gk[i] * sk;",
        "pk[i] = pk[i] + d;",
        "}", "}", "}", ""])


def device_source(language: str, ctype: str, pairs: int) -> str:
    """CUDA or OpenCL C kernel ``dl_fused`` over ``pairs`` pairs: the parameters, then the
    gradients (OpenCL: each with its offset in elements), then the sizes, then the scales
    (OpenCL: their bits in a long, as ``opencl_launcher`` passes scalars)."""
    cuda = language == "cuda"
    if cuda:
        # the C type by name in the parameters: dlarray.rtc checks the arguments against them
        params = ["%s* __restrict__ p%d" % (ctype, k) for k in range(pairs)]
        params += ["const %s* __restrict__ g%d" % (ctype, k) for k in range(pairs)]
        params += ["long long n%d" % k for k in range(pairs)]
        params += ["%s s%d" % (ctype, k) for k in range(pairs)]
        head = ['extern "C" __global__ void dl_fused(%s) {' % ", ".join(params),
                "T* p; const T* g; long long n; T s;", "switch (blockIdx.y) {"]
        pick = "case %d: p = p{0}; g = g{0}; n = n{0}; s = s{0}; break;"
        loop = ["for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;"
                " i += (long long)gridDim.x * blockDim.x) {"]
    else:
        bits = "as_float((int)s{0})" if ctype == "float" else "as_double(s{0})"
        params = ["__global T* p%d, long op%d" % (k, k) for k in range(pairs)]
        params += ["__global const T* g%d, long og%d" % (k, k) for k in range(pairs)]
        params += ["long n%d" % k for k in range(pairs)]
        params += ["long s%d" % k for k in range(pairs)]
        head = ["#pragma OPENCL FP_CONTRACT OFF"]
        if ctype == "double":
            head.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
        head += ["__kernel void dl_fused(%s) {" % ", ".join(params),
                 "__global T* p; __global const T* g; long n; T s;",
                 "switch (get_group_id(1)) {"]
        pick = "case %d: p = p{0} + op{0}; g = g{0} + og{0}; n = n{0}; s = " + bits + "; break;"
        loop = ["for (long i = get_global_id(0); i < n; i += get_global_size(0)) {"]
    lines = ["typedef %s T;" % ctype] + head
    lines += [(pick % k).format(k) for k in range(pairs)]
    lines += ["default: return;", "}"] + loop
    lines += ["const T d = g[i] * s;", "p[i] = p[i] + d;", "}", "}", ""]
    return "\n".join(lines)


# Parameters below which one thread runs the CPU update. The pool's hand-off (Python threads,
# each taking the GIL to start its ctypes call) costs about 60-90 us, and the update streams
# about 0.2 ns a parameter on one core: the MNIST MLP's 227K parameters took 45-61 us on one
# thread and 104-133 us on two, 4M took 715 us and 548 us (2-core EPYC VM).
_PARALLEL_UPDATE_MIN = 1 << 20


def _cpu_launcher(ctype: str):
    from . import _fuse_backends as backends
    vp, ll = ctypes.c_void_p, ctypes.c_longlong
    function = backends.cpu_function(cpp_source(ctype),
                                     ctypes.CFUNCTYPE(None, vp, vp, vp, vp, ll, ll, ll))
    scalar = ctypes.c_float if ctype == "float" else ctypes.c_double

    def launch(params, grads, sizes, scale):
        count = len(params)
        p, g = backends.pointers(params), backends.pointers(grads)
        n = (ctypes.c_longlong * count)(*sizes)
        s = (scalar * count)(*([scale] * count))
        total = sum(sizes)
        parts = 1 if total < _PARALLEL_UPDATE_MIN else backends._threads()
        backends.run_parallel(function, [(p, g, n, s, count, part, parts)
                                         for part in range(parts)])
    return launch


def _device_launcher(language: str, ctype: str, pairs: int, ctx):
    from . import _fuse_backends as backends
    source = device_source(language, ctype, pairs)
    if language == "cuda":
        from . import _fuse_cuda
        kernel = _fuse_cuda.cuda_kernel(source, ctx)
        dtype = np.float32 if ctype == "float" else np.float64

        def launch(params, grads, sizes, scale):
            blocks = max(1, min(_MAX_BLOCKS, -(-max(sizes) // _THREADS)))
            kernel((blocks, len(params)), (_THREADS,),
                   tuple(params) + tuple(grads) + tuple(sizes)
                   + (dtype(scale),) * len(params), ctx=ctx)
        return launch
    run = backends.opencl_launcher(source, ctx)
    bits = (np.array([0], np.float32 if ctype == "float" else np.float64)
            .view(np.int32 if ctype == "float" else np.int64))

    def launch(params, grads, sizes, scale):
        bits.view(np.float32 if ctype == "float" else np.float64)[0] = scale
        groups = max(1, min(_MAX_BLOCKS, -(-max(sizes) // _THREADS)))
        run(list(params) + list(grads), list(sizes) + [int(bits[0])] * len(params),
            (groups * _THREADS, len(params)), (_THREADS, 1))
    return launch


def _launcher(dtype: np.dtype, pairs: int, ctx) -> Any:
    """The launcher of ``pairs`` pairs of ``dtype`` on ``ctx`` (built once), or None."""
    from . import _fuse_backends as backends
    language, ctype = _LANGUAGES.get(ctx.device_type), _CTYPES.get(dtype)
    if language is None or ctype is None:
        return None
    key = (language, ctype, 0 if language == "cpp" else pairs, ctx.device_type, ctx.device_id)
    with _lock:
        if key in _kernels:
            return _kernels[key]
    launch = None
    try:
        launch = (_cpu_launcher(ctype) if language == "cpp"
                  else _device_launcher(language, ctype, pairs, ctx))
    except (backends.NoCompiler, backends.BuildFailed, OSError, RuntimeError) as e:
        _log.log_fallback("dlarray.sgd_update on %r (%s): %s; the update runs as two ops per "
                          "parameter" % (ctx, dtype, str(e).splitlines()[0] if str(e) else e),
                          once_key=("sgd_update",) + key)
    with _lock:
        return _kernels.setdefault(key, launch)


def _check(params: Sequence[NDArray], grads: Sequence[NDArray]) -> None:
    if len(params) != len(grads):
        raise ValueError("dlarray.sgd_update: %d parameters and %d gradients; give one gradient "
                         "per parameter" % (len(params), len(grads)))
    seen = set()
    for k, (p, g) in enumerate(zip(params, grads)):
        for what, a in (("parameter", p), ("gradient", g)):
            if not isinstance(a, NDArray):
                raise TypeError("dlarray.sgd_update: %s %d must be a dlarray array, got %s"
                                % (what, k, type(a).__name__))
        if p.shape != g.shape or p.dtype != g.dtype or p.ctx != g.ctx:
            raise ValueError("dlarray.sgd_update: parameter %d is %s %s on %r but its gradient "
                             "is %s %s on %r" % (k, p.dtype, p.shape, p.ctx, g.dtype, g.shape,
                                                 g.ctx))
        if (p.dtype, p.ctx) != (params[0].dtype, params[0].ctx):
            raise ValueError("dlarray.sgd_update: the parameters must share one dtype and device:"
                             " parameter 0 is %s on %r, parameter %d %s on %r"
                             % (params[0].dtype, params[0].ctx, k, p.dtype, p.ctx))
        if not p.is_contiguous:
            raise ValueError("dlarray.sgd_update: parameter %d is not contiguous (it is updated "
                             "in place)" % k)
        if id(p) in seen:
            raise ValueError("dlarray.sgd_update: parameter %d is given twice" % k)
        seen.add(id(p))
        if g is p:
            raise ValueError("dlarray.sgd_update: parameter %d is its own gradient" % k)


def sgd_update(params: Sequence[NDArray], grads: Sequence[NDArray], lr: float) -> None:
    """The SGD step ``p -= lr * g`` for every (parameter, gradient) pair, in place, as one
    generated kernel launch (up to 64 pairs per launch) instead of two ops per parameter.

    Each parameter becomes ``p + g * s``, ``s`` being ``-lr`` rounded to the dtype: the result
    of ``matrix_elementwise_multiply_by_const(g, -lr, t)`` then ``matrix_elementwise_add(p, t,
    p)`` bit for bit, with the gradients left unchanged. On a GPU it is a single launch, so a
    CUDA graph can record it (``dlarray.autodiff.record_cuda_graph``). float32 and float64 run
    generated code (CPU through the system compiler and the disk cache, CUDA through NVRTC,
    OpenCL); other dtypes, other devices, or a compiler failure (logged once) run the two ops
    per pair.

    Parameters
    ----------
    params : sequence of NDArray
        Contiguous arrays of one dtype on one device, updated in place.
    grads : sequence of NDArray
        One per parameter, of its shape, dtype and device.
    lr : float
        The learning rate.

    Raises
    ------
    TypeError
        An element is not a dlarray array, or ``lr`` is not a real number.
    ValueError
        The lists differ in length, a gradient does not match its parameter, the parameters
        are of several dtypes or devices, a parameter is not contiguous, given twice or is its
        own gradient.

    Examples
    --------
    >>> import dlarray, numpy as np
    >>> w = dlarray.asarray(np.ones(3, np.float32))
    >>> g = dlarray.asarray(np.full(3, 0.5, np.float32))
    >>> dlarray.sgd_update([w], [g], 0.1)
    >>> w.asnumpy()
    array([0.95, 0.95, 0.95], dtype=float32)
    """
    _check_lr(lr)
    params, grads = list(params), list(grads)
    _check(params, grads)
    if not params:
        return
    Update([p.shape for p in params], params[0].dtype, params[0].ctx, lr)(params, grads)


def _check_lr(lr) -> float:
    if isinstance(lr, (bool, np.bool_)) or not isinstance(lr, (int, float, np.integer,
                                                               np.floating)):
        raise TypeError("dlarray.sgd_update: lr must be a real number, got %s"
                        % type(lr).__name__)
    return float(lr)


class Update:
    """The update ``p -= lr * g`` of pairs of fixed shapes, one dtype, one device, prepared
    once (kernels built, scratch allocated) so that each call only launches: what
    ``sgd_update`` runs, and what the autodiff Executor's ``sgd_update_op`` runs in its plan
    (recorded in its CUDA graph, so a call may neither allocate nor wait).

    With ``fuse`` (and a generated kernel for the dtype and device), every ``_PAIRS`` non-empty
    pairs are one launch; otherwise each pair runs ``matrix_elementwise_multiply_by_const`` into
    a scratch array of its shape, then ``matrix_elementwise_add`` in place. ``kernels`` is the
    number of multi-tensor launches per call and ``fused_params`` the pairs they cover.
    """

    def __init__(self, shapes: Sequence[tuple], dtype, ctx, lr: float, fuse: bool = True):
        dtype = np.dtype(dtype)
        self.scale = -_check_lr(lr)
        if dtype in _CTYPES:
            with np.errstate(over="ignore"):
                rounded = np.asarray(self.scale, dtype)
            if np.isfinite(self.scale) and not np.isfinite(rounded):
                raise ValueError("dlarray.sgd_update: lr %r overflows %s" % (lr, dtype))
        self.count = len(shapes)
        self.sizes = [math.prod(s) for s in shapes]
        live = [k for k, n in enumerate(self.sizes) if n]  # empty pairs have nothing to do
        self.chunks = []  # (pair indices, launcher)
        self.steps = {}  # pair index -> its scratch array (the two-op path)
        for start in range(0, len(live), _PAIRS):
            chunk = live[start:start + _PAIRS]
            launch = _launcher(dtype, len(chunk), ctx) if fuse else None
            if launch is None:
                for k in chunk:
                    shape = tuple(shapes[k])
                    self.steps[k] = _core.empty(shape, ctx, dtype)
            self.chunks.append((chunk, launch))
        self.kernels = sum(1 for _, launch in self.chunks if launch is not None)
        self.fused_params = sum(len(c) for c, launch in self.chunks if launch is not None)

    def __call__(self, params: Sequence[NDArray], grads: Sequence[NDArray]) -> None:
        """Updates ``params`` in place (contiguous, of the prepared shapes and dtype)."""
        from . import ops
        from ._operators import _compact
        for chunk, launch in self.chunks:
            if launch is None:
                for k in chunk:
                    step = self.steps[k]
                    ops.matrix_elementwise_multiply_by_const(_compact(grads[k]), self.scale,
                                                             step)
                    ops.matrix_elementwise_add(params[k], step, params[k])
                continue
            launch([params[k] for k in chunk],
                   [grads[k] if grads[k].is_contiguous else _compact(grads[k]) for k in chunk],
                   [self.sizes[k] for k in chunk], self.scale)
