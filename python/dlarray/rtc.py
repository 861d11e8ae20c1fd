"""CUDA kernels written in Python strings, compiled at run time with NVRTC (MXNet's ``mx.rtc``,
CuPy's ``RawKernel``, ``RawModule`` and ``ElementwiseKernel``).

Three ways to bring a kernel:

- :class:`Rtc` (MXNet): the kernel's body only; dlarray.rtc declares the arrays' pointers and
  their shapes (``float *x``, ``const int x_ndim``, ``const int x_dims[]``) and compiles it for
  the arrays' shapes. ``push(inputs, outputs, grid_dims, block_dims)`` launches it.
- :class:`RawKernel` / :class:`RawModule` (CuPy): whole ``__global__`` functions, launched as
  ``kernel(grid, block, args, shared_mem=0)`` with NDArrays (device pointers), Python numbers
  (converted to the parameter types of the kernel's signature) and NumPy scalars.
- :class:`ElementwiseKernel` (CuPy): one operation per element, the grid chosen for you.

Kernels are compiled by the CUDA plugin (which loads NVRTC and the CUDA driver only when asked)
into machine code for each GPU's architecture (cubin for sm_90 on an H100), and launched on the
arrays' GPU and on its stream, after the ops queued there. Compiled code is cached in memory
and on disk (``$DLARRAY_CACHE_DIR/rtc``, default ``~/.cache/dlarray``; ``DLARRAY_RTC_CACHE=0``
turns the disk cache off), keyed by the source, the options, the architecture and NVRTC's
version. Where NVRTC or a GPU is missing, compiling or launching raises RuntimeError saying why
(:func:`status`); ``compile(arch=90)`` still works without a GPU when NVRTC is there.
"""

from typing import Any

from . import _rtc_build as _build
from ._rtc_build import CompileError, clear_memory_cache
from ._rtc_elementwise import ElementwiseKernel
from ._rtc_mxnet import Rtc
from ._rtc_raw import RawKernel, RawModule

__all__ = ["CompileError", "ElementwiseKernel", "RawKernel", "RawModule", "Rtc",
           "clear_memory_cache", "is_available", "status"]

for _public in (CompileError, ElementwiseKernel, RawKernel, RawModule, Rtc):
    _public.__module__ = __name__  # documented and shown as dlarray.rtc.<name>


def status() -> dict[str, Any]:
    """What dlarray.rtc can do in this process, and why not.

    Returns
    -------
    dict
        ``compile``: why NVRTC cannot compile ("" when it can); ``launch``: why kernels cannot
        be loaded and launched (no driver, no GPU; "" when they can); ``nvrtc_version``
        ((major, minor) or None), ``nvrtc_library`` (the file loaded) and ``archs`` (the
        architectures NVRTC compiles for, e.g. [75, 80, ..., 120]).

    Examples
    --------
    >>> import dlarray.rtc
    >>> sorted(dlarray.rtc.status())
    ['archs', 'compile', 'launch', 'nvrtc_library', 'nvrtc_version']
    """
    return dict(_build.status())


def is_available() -> bool:
    """Whether kernels can be compiled and launched here (NVRTC, a CUDA driver and a GPU).

    Returns
    -------
    bool
        False on a machine without them; :func:`status` says why.
    """
    s = _build.status()
    return not s["compile"] and not s["launch"]
