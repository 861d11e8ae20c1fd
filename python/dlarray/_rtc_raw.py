"""dlarray.rtc's CuPy side: RawModule and RawKernel (see dlarray.rtc)."""

from __future__ import annotations

import os
import re
from typing import Any, Optional, Sequence, Union

from . import _core
from ._core import DLContext
from . import _rtc_build as _build
from ._rtc_source import kernels_in

__all__ = ["RawKernel", "RawModule"]

_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")


def _arch_number(arch):
    """90 from 90, "90", "sm_90" or "compute_90"."""
    text = str(arch).strip().lower()
    m = re.match(r"^(?:sm_|compute_)?(\d+)$", text)
    if m is None or isinstance(arch, bool):
        raise ValueError("dlarray.rtc: arch must be a compute capability such as 90 or 'sm_90', "
                         "got %r" % (arch,))
    return int(m.group(1))


def _device_id(ctx):
    if ctx is None:
        return 0
    if not isinstance(ctx, _core.DLContext) or ctx.device_type != 2:
        raise ValueError("dlarray.rtc: kernels run on GPUs, got ctx=%r" % (ctx,))
    return ctx.device_id


def _options(options):
    if isinstance(options, str):
        raise TypeError("dlarray.rtc: options must be a sequence of strings, e.g. "
                        "('-use_fast_math',), got the string %r" % options)
    options = tuple(options)
    for o in options:
        if not isinstance(o, str):
            raise TypeError("dlarray.rtc: each option must be a string, got %r" % (o,))
    return options


class RawModule:
    """CUDA source with one or more ``__global__`` functions (CuPy's ``RawModule``).

    Compiled on first use for each GPU's architecture, or by :meth:`compile`.

    Parameters
    ----------
    code : str, optional
        CUDA C++ source. Kernels declared ``extern "C"`` are found by their names; other
        non-template kernels too (dlarray.rtc looks up their C++ symbols); template
        instantiations are named in ``name_expressions``.
    path : str, optional
        Instead of ``code``, a compiled ``.cubin`` or ``.ptx`` file.
    options : sequence of str, optional
        NVRTC options, e.g. ``("-use_fast_math",)``. The architecture is added per GPU.
    name_expressions : sequence of str, optional
        C++ names to make available to :meth:`get_function`, e.g. ``["scale<float>"]``.

    Raises
    ------
    TypeError
        Neither or both of ``code`` and ``path``, or options that are not strings.
    ValueError
        A ``path`` that is neither ``.cubin`` nor ``.ptx``.

    Examples
    --------
    >>> import dlarray.rtc
    >>> module = dlarray.rtc.RawModule(code='''
    ... extern "C" __global__ void fill(float* y, float v, int n) {
    ...   int i = blockIdx.x * blockDim.x + threadIdx.x;
    ...   if (i < n) y[i] = v;
    ... }''')
    >>> fill = module.get_function("fill")   # fill((blocks,), (threads,), (y, 2.5, y.size))
    """

    def __init__(self, code: Optional[str] = None, *,
                 path: Optional[Union[str, os.PathLike[str]]] = None,
                 options: Sequence[str] = (),
                 name_expressions: Optional[Sequence[str]] = None) -> None:
        if (code is None) == (path is None):
            raise TypeError("dlarray.rtc.RawModule: give code or path (one of them)")
        if code is not None and not isinstance(code, str):
            raise TypeError("dlarray.rtc.RawModule: code must be a string, got %s"
                            % type(code).__name__)
        self.code, self.path, self.options = code, path, _options(options)
        user_names = tuple(name_expressions or ())
        for n in user_names:
            if not isinstance(n, str) or not n.strip():
                raise TypeError("dlarray.rtc: name_expressions must be non-empty strings")
        self._kernels = kernels_in(code) if code is not None else {}
        auto = tuple(k for k, (params, extern_c) in sorted(self._kernels.items())
                     if not extern_c and params is not None and k not in user_names)
        self.name_expressions = user_names + auto
        self._program_name = "module"
        self._file_program = None
        if path is not None:
            self._file_program = self._load_file(path)

    @staticmethod
    def _load_file(path):
        path = str(path)
        kinds = {".cubin": _core._RTC_CUBIN, ".ptx": _core._RTC_PTX}
        ext = path[path.rfind("."):].lower() if "." in path else ""
        if ext not in kinds:
            raise ValueError("dlarray.rtc.RawModule: path must be a .cubin or .ptx file, got %s"
                             % path)
        with open(path, "rb") as f:
            code = f.read()
        return _build.Program("file:" + path, 0, code, kinds[ext], "", {})

    def _describe(self, name=None):
        if name is not None:
            return "kernel '%s'" % name
        return "module of kernels %s" % ", ".join(sorted(self._kernels)) if self._kernels \
            else "module"

    def _program(self, arch, name=None):
        if self._file_program is not None:
            return self._file_program
        return _build.compile_program(self.code, self._program_name, self.options,
                                      self.name_expressions, arch, what=self._describe(name))

    def compile(self, arch: Optional[Union[int, str]] = None,
                ctx: Optional[DLContext] = None) -> bytes:
        """Compiles now (or takes the result from the caches) and returns the code.

        Parameters
        ----------
        arch : int or str, optional
            A compute capability (90, "sm_90"): compile for it, with no GPU needed. By default
            the architecture of ``ctx``'s GPU, where the code is also loaded.
        ctx : DLContext, optional
            The GPU (default ``gpu(0)``), when ``arch`` is not given.

        Returns
        -------
        bytes
            A cubin (ELF), or PTX when the GPU is newer than NVRTC.

        Raises
        ------
        CompileError
            NVRTC reported errors (the message has its log and the lines).
        RuntimeError
            NVRTC, or (without ``arch``) the driver or GPU, is not available.
        """
        if arch is not None:
            return self._program(_arch_number(arch)).code
        device_id = _device_id(ctx)
        program = self._program(_build.device_arch(device_id))
        _build.load_module(program, device_id)
        return program.code

    def get_function(self, name: str) -> RawKernel:
        """The kernel ``name`` of this module, ready to launch.

        Parameters
        ----------
        name : str
            An ``extern "C"`` kernel's name, another kernel's C++ name, or one of
            ``name_expressions``.

        Returns
        -------
        RawKernel

        Raises
        ------
        ValueError
            The source declares no such kernel (the message lists the ones it declares).
        """
        return RawKernel(None, name, _module=self)

    def _params(self, name):
        if not isinstance(name, str) or not name:
            raise TypeError("dlarray.rtc: a kernel name must be a non-empty string")
        if name in self._kernels:
            return self._kernels[name][0]
        if name in self.name_expressions or self.code is None or "#define" in self.code:
            return None  # a template instance, a file or macros: the driver will tell
        templates = [k for k, (p, _) in self._kernels.items() if p is None]
        hint = ("; template kernels (%s) need name_expressions, e.g. name_expressions="
                "['%s<float>']" % (", ".join(sorted(templates)), sorted(templates)[0])
                if templates else "")
        raise ValueError("dlarray.rtc: no kernel named '%s' in the source (it declares: %s)%s"
                         % (name, ", ".join(sorted(self._kernels)) or "no __global__ function",
                            hint))

    def _function(self, name, device_id):
        program = self._program(_build.device_arch(device_id), name)
        return _build.load_function(program, device_id, program.symbol(name),
                                    "dlarray.rtc: kernel '%s'" % name)


class RawKernel(_core._RtcKernel):
    """One CUDA kernel from source (CuPy's ``RawKernel``), called as
    ``kernel(grid, block, args, shared_mem=0)``.

    Compiled at the first launch on each GPU (for its architecture; cached in memory and on
    disk). Launches go to the stream of the arguments' GPU, after the ops queued there; they
    do not wait for the kernel.

    Parameters
    ----------
    code : str
        CUDA C++ source declaring the ``__global__`` function ``name``.
    name : str
        The kernel's name.
    options : sequence of str, optional
        NVRTC options, e.g. ``("-use_fast_math",)``.
    name_expressions : sequence of str, optional
        As for :class:`RawModule` (for a template instance such as ``"scale<float>"``).

    Raises
    ------
    ValueError
        The source declares no kernel ``name``.

    Examples
    --------
    >>> import dlarray.rtc
    >>> add = dlarray.rtc.RawKernel(r'''
    ... extern "C" __global__ void add(const float* x, const float* y, float* z, int n) {
    ...   int i = blockIdx.x * blockDim.x + threadIdx.x;
    ...   if (i < n) z[i] = x[i] + y[i];
    ... }''', "add")
    >>> add.name
    'add'

    ``add.compile(arch=90)`` gives a cubin for sm_90, without a GPU; on a GPU,
    ``add(((n + 255) // 256,), (256,), (x, y, z, n))`` launches it.
    """

    def __init__(self, code: Optional[str], name: str, options: Sequence[str] = (), *,
                 name_expressions: Optional[Sequence[str]] = None,
                 _module: Optional[RawModule] = None) -> None:
        if _module is None:
            _module = RawModule(code=code, options=options, name_expressions=name_expressions)
            _module._program_name = name if _IDENTIFIER.match(str(name)) else "kernel"
        params = _module._params(name)
        super().__init__(name, params)
        self.name, self.module = name, _module
        self.code, self.options = _module.code, _module.options

    def _load(self, device_id):
        return self.module._function(self.name, device_id)

    def compile(self, arch: Optional[Union[int, str]] = None,
                ctx: Optional[DLContext] = None) -> bytes:
        """Compiles (and, without ``arch``, loads on ``ctx``'s GPU) now; returns the code.

        Parameters
        ----------
        arch : int or str, optional
            A compute capability (90, "sm_90"): compile for it, with no GPU needed.
        ctx : DLContext, optional
            The GPU to compile for and load on (default ``gpu(0)``) when ``arch`` is not given.

        Returns
        -------
        bytes
            A cubin, or PTX when the GPU is newer than NVRTC.

        Raises
        ------
        CompileError
            NVRTC reported errors.
        RuntimeError
            NVRTC, or the driver or GPU, is not available.
        """
        if arch is not None:
            return self.module._program(_arch_number(arch), self.name).code
        device_id = _device_id(ctx)
        self._set_function(device_id, self._load(device_id))
        return self.module._program(_build.device_arch(device_id), self.name).code

    def attributes(self, ctx: Optional[DLContext] = None) -> dict[str, Any]:
        """What the driver says about the kernel on a GPU (loading it there).

        Parameters
        ----------
        ctx : DLContext, optional
            The GPU (default ``gpu(0)``).

        Returns
        -------
        dict
            ``max_threads_per_block``, ``num_registers``, ``static_shared_bytes``,
            ``max_dynamic_shared_bytes``, ``num_params`` (-1 when neither the driver nor the
            compiled code says), ``device_id``.
        """
        return dict(self._load(_device_id(ctx)).attributes)
