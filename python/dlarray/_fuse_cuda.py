"""dlarray.fuse's CUDA builder: the generated CUDA C++ (``_fuse_codegen``) compiled by NVRTC
through ``dlarray.rtc.RawKernel`` (its memory and disk caches), launched as
``run(arrays, out, n, dims)``.

The compiled code and the kernel's parameters are also recorded next to the plan memo
(``$DLARRAY_CACHE_DIR/fuse_cuda/<plan key>-sm<arch>``, one file with its checksum inside), so that
a later process loads the kernel without NVRTC, the program cache's key and manifest, or parsing
the source (``_memo_cuda_kernel``: 3-4 ms of a warm first call on an H200's host).

Raises ``_fuse_backends.BuildFailed`` (NVRTC's message) or ``NoCompiler`` (no NVRTC here), as the
other builders do; the caller then runs the expression unfused.
"""
from __future__ import annotations

import json
from typing import Optional

# (_rtc_build: CUDA's compiler and loader, imported with the other parts at dlarray.fuse(...)
# rather than in a CUDA plan's first call)
from . import _cache, _core, _rtc_build
from . import _fuse_codegen as _codegen
from ._fuse_backends import BuildFailed, NoCompiler

_CUDA_THREADS = 256
# No contraction: each op rounds as the unfused kernel does.
CUDA_OPTIONS = ("--fmad=false",)


def cuda_options() -> tuple:
    """CUDA_OPTIONS, and -minimal where NVRTC has it (12.4 on): it leaves out the texture,
    surface and other runtime declarations the generated code never uses (the same cubin for
    each of the 349 sources of the generator's tests, about 10% less compile time)."""
    version = _rtc_build.nvrtc()[0] or (0, 0)  # without loading NVRTC when it is recorded
    return CUDA_OPTIONS + (("-minimal",) if tuple(version) >= (12, 4) else ())


def cuda_kernel(source: str, ctx, memo=None):
    """Kernel ``dl_fused`` of CUDA ``source``, compiled (NVRTC through dlarray.rtc) and loaded on
    GPU ``ctx`` now: a CUDA graph being recorded sees launches only. With ``memo`` (the
    _fuse_memo.Entry of ``source``) the code recorded for it is loaded when intact, and the code
    compiled otherwise is recorded."""
    if memo is not None:
        kernel = _memo_cuda_kernel(memo, ctx)
        if kernel is not None:
            return kernel
    from ._rtc_raw import RawKernel
    try:
        _rtc_build.require("compile")
    except RuntimeError as e:
        raise NoCompiler(str(e)) from None
    kernel = RawKernel(source, "dl_fused", options=cuda_options())
    try:
        kernel.compile(ctx=ctx)
    except _rtc_build.CompileError as e:
        raise BuildFailed(str(e)) from None
    if memo is not None:
        arch = _rtc_build.device_arch(ctx.device_id)
        program = kernel.module._program(arch, "dl_fused")  # (from the memory cache)
        head = {"nvrtc": _rtc_build.nvrtc_identity(), "kind": program.kind,
                "params": kernel.module._kernels["dl_fused"][0]}
        try:
            _cache.store_record(_CUDA_NAMESPACE, _cuda_record_name(memo, arch),
                                json.dumps(head).encode() + b"\n" + program.code)
        except (OSError, ValueError):  # an unwritable cache: the next process compiles
            pass
    return kernel


_CUDA_NAMESPACE = "fuse_cuda"


def _cuda_record_name(memo, arch: int) -> str:
    return "%s-sm%d" % (memo.key, arch)


class _MemoKernel(_core._RtcKernel):
    """A fused kernel loaded from its plan's record: launched like the RawKernel it was (the
    same parameters, so the same argument checks), on the one GPU it was loaded on."""

    def __init__(self, params, function, device_id: int):
        super().__init__("dl_fused", [tuple(p) for p in params])
        self.name, self._function, self._device_id = "dl_fused", function, device_id
        self._set_function(device_id, function)

    def _load(self, device_id):
        if device_id != self._device_id:  # (_fuse keys its kernels by device: not reached)
            raise RuntimeError("dlarray.fuse: a kernel loaded on gpu(%d) launched on gpu(%d)"
                               % (self._device_id, device_id))
        return self._function


def _memo_cuda_kernel(memo, ctx) -> Optional[_MemoKernel]:
    """The kernel recorded for ``memo`` on ``ctx``'s architecture, loaded; None where there is
    no intact record of this NVRTC's code (the caller compiles)."""
    try:
        arch = _rtc_build.device_arch(ctx.device_id)
        name = _cuda_record_name(memo, arch)
        data = _cache.load_record(_CUDA_NAMESPACE, name)
    except (OSError, ValueError, RuntimeError):
        return None
    if data is None:
        return None
    try:
        head, code = data.split(b"\n", 1)
        head = json.loads(head)
        kind, params = head["kind"], head["params"]
        if (head["nvrtc"] != _rtc_build.nvrtc_identity() or not code or
                kind not in (_core._RTC_CUBIN, _core._RTC_PTX) or not isinstance(params, list)):
            return None
    except (ValueError, KeyError, TypeError):
        return None
    program = _rtc_build.Program("fuse:" + name, arch, code, kind, "", {})
    try:
        function = _rtc_build.load_function(program, ctx.device_id, "dl_fused", "dlarray.fuse")
        return _MemoKernel(params, function, ctx.device_id)
    except (RuntimeError, ValueError, TypeError):  # code the driver refuses, params of
        return None  # another shape: compiled again and rewritten


def build_cuda(source: str, ctx, memo=None):
    """The run function of CUDA ``source`` on GPU ``ctx`` (``memo``: as for cuda_kernel)."""
    kernel = cuda_kernel(source, ctx, memo)

    def blocks(n):
        return max(1, -(-n // (_CUDA_THREADS * _codegen.CUDA_PER_THREAD)))

    def run(arrays, out, n, dims):
        kernel((blocks(n),), (_CUDA_THREADS,), tuple(arrays) + (out, n) + tuple(dims), ctx=ctx)

    def launch_config(n):
        """For _core._FuseLauncher: the kernel loaded on ctx's GPU, the grid and the block of a
        call of n elements (run's)."""
        return kernel._load(ctx.device_id), [blocks(n), 1, 1], [_CUDA_THREADS, 1, 1]
    run.launch_config = launch_config
    return run
