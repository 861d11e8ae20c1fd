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

import re

import numpy as np

from . import _core
from . import _rtc_build as _build
from ._rtc_build import CompileError, clear_memory_cache
from ._rtc_elementwise import ElementwiseKernel
from ._rtc_source import c_type, kernels_in

__all__ = ["CompileError", "ElementwiseKernel", "RawKernel", "RawModule", "Rtc",
           "clear_memory_cache", "is_available", "status"]

_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
#: NVRTC options of Rtc kernels: no "declared but never referenced" warnings (#177) for the
#: x_ndim / x_dims declarations a body does not use.
RTC_OPTIONS = ("--diag-suppress=177",)


def status():
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


def is_available():
    """Whether kernels can be compiled and launched here (NVRTC, a CUDA driver and a GPU).

    Returns
    -------
    bool
        False on a machine without them; :func:`status` says why.
    """
    s = _build.status()
    return not s["compile"] and not s["launch"]


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

    def __init__(self, code=None, *, path=None, options=(), name_expressions=None):
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

    def compile(self, arch=None, ctx=None):
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

    def get_function(self, name):
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

    def __init__(self, code, name, options=(), *, name_expressions=None, _module=None):
        if _module is None:
            _module = RawModule(code=code, options=options, name_expressions=name_expressions)
            _module._program_name = name if _IDENTIFIER.match(str(name)) else "kernel"
        params = _module._params(name)
        super().__init__(name, params)
        self.name, self.module = name, _module
        self.code, self.options = _module.code, _module.options

    def _load(self, device_id):
        return self.module._function(self.name, device_id)

    def compile(self, arch=None, ctx=None):
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

    def attributes(self, ctx=None):
        """What the driver says about the kernel on a GPU (loading it there).

        Parameters
        ----------
        ctx : DLContext, optional
            The GPU (default ``gpu(0)``).

        Returns
        -------
        dict
            ``max_threads_per_block``, ``num_registers``, ``static_shared_bytes``,
            ``max_dynamic_shared_bytes``, ``num_params`` (-1 when the driver cannot say),
            ``device_id``.
        """
        return dict(self._load(_device_id(ctx)).attributes)


def _array_spec(pair, role, rtc_name):
    """(name, shape, dtype) of an (name, array) pair of Rtc's inputs or outputs."""
    try:
        name, array = pair
    except (TypeError, ValueError):
        raise TypeError("dlarray.rtc.Rtc '%s': %s must be (name, NDArray) pairs, got %r"
                        % (rtc_name, role, pair)) from None
    if not isinstance(name, str) or not _IDENTIFIER.match(name):
        raise ValueError("dlarray.rtc.Rtc '%s': %s name %r is not a C identifier"
                         % (rtc_name, role, name))
    if not hasattr(array, "shape") or not hasattr(array, "dtype"):
        raise TypeError("dlarray.rtc.Rtc '%s': %s '%s' must be an NDArray, got %s"
                        % (rtc_name, role, name, type(array).__name__))
    return name, tuple(int(d) for d in array.shape), np.dtype(array.dtype)


class Rtc:
    """A CUDA kernel from its body only, as MXNet's ``mx.rtc`` (seed 003's layers use it).

    dlarray.rtc decorates the body: for ``name = "mykernel"``, ``inputs = [("x", x)]`` and
    ``outputs = [("y", y)]`` with x and y of shape (10,) it compiles::

        extern "C" __global__ void mykernel(float *x, float *y) {
        const int x_ndim = 1;
        const int x_dims[] = {10};
        const int y_ndim = 1;
        const int y_dims[] = {10};
        <kernel>
        }

    (the pointer type follows each array's dtype: ``float`` for float32). The shapes are part
    of the code, so :meth:`push` compiles once more for arrays of other shapes (each version is
    cached). With arrays on a GPU, the kernel is compiled when the Rtc is made.

    Parameters
    ----------
    name : str
        The kernel's name (a C identifier).
    inputs : list of (str, NDArray)
        The input arrays and their names in the body.
    outputs : list of (str, NDArray)
        The output arrays and their names in the body.
    kernel : str
        The body: the code between the braces.

    Raises
    ------
    CompileError
        (arrays on a GPU) NVRTC reported errors; the message names the lines of ``kernel``.
    TypeError, ValueError
        Names that are not C identifiers or repeat, or arrays that are not arrays.

    Examples
    --------
    >>> import numpy as np, dlarray, dlarray.rtc
    >>> x = dlarray.array(np.ones((4, 3)), dlarray.cpu())   # for its shape and dtype
    >>> copy = dlarray.rtc.Rtc("copy", [("x", x)], [("y", x)],
    ...                        "y[threadIdx.x] = x[threadIdx.x];")
    >>> print(copy.source().splitlines()[0])
    extern "C" __global__ void copy(float *x, float *y) {
    >>> print(copy.source().splitlines()[2])
    const int x_dims[] = {4, 3};

    ``copy.compile(arch=90)`` compiles it for sm_90 (no GPU needed); ``copy.push([x], [y],
    (1, 1, 1), (12, 1, 1))`` runs it on arrays on a GPU.
    """

    def __init__(self, name, inputs, outputs, kernel):
        if not isinstance(name, str) or not _IDENTIFIER.match(name):
            raise ValueError("dlarray.rtc.Rtc: the kernel name %r is not a C identifier" % (name,))
        if not isinstance(kernel, str):
            raise TypeError("dlarray.rtc.Rtc '%s': kernel must be the body as a string, got %s"
                            % (name, type(kernel).__name__))
        self.name, self.kernel = name, kernel
        ins = [_array_spec(p, "inputs", name) for p in inputs]
        outs = [_array_spec(p, "outputs", name) for p in outputs]
        names = [s[0] for s in ins + outs]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError("dlarray.rtc.Rtc '%s': the names %s are used twice"
                             % (name, ", ".join(repeated)))
        self.input_names = [s[0] for s in ins]
        self.output_names = [s[0] for s in outs]
        self._spec = tuple((s[1], s[2]) for s in ins + outs)
        self._kernels = {}
        arrays = [p[1] for p in list(inputs) + list(outputs)]
        gpus = [a.ctx for a in arrays if isinstance(a, _core.NDArray) and a.ctx.device_type == 2]
        if gpus:
            self._kernel_for(self._spec).compile(ctx=gpus[0])  # MXNet compiles here too

    def source(self, spec=None):
        """The decorated source compiled for the construction arrays' shapes (or ``spec``).

        Parameters
        ----------
        spec : sequence of (shape, dtype), optional
            One per input then output.

        Returns
        -------
        str
        """
        spec = self._spec if spec is None else spec
        head, _ = self._header(spec)
        return head + self.kernel + "\n}\n"

    def _header(self, spec):
        params, decls = [], []
        for n, (shape, dtype) in zip(self.input_names + self.output_names, spec):
            params.append("%s *%s" % (c_type(dtype, "Rtc '%s' array '%s'" % (self.name, n)), n))
            if any(d > 2**31 - 1 for d in shape):
                raise ValueError("dlarray.rtc.Rtc '%s': array '%s' has a dimension too large "
                                 "for int: %s" % (self.name, n, shape))
            decls.append("const int %s_ndim = %d;" % (n, len(shape)))
            dims = ", ".join(str(d) for d in shape) if shape else "1"
            decls.append("const int %s_dims[] = {%s};" % (n, dims))
        head = 'extern "C" __global__ void %s(%s) {\n' % (self.name, ", ".join(params))
        head += "".join(d + "\n" for d in decls)
        return head, head.count("\n")

    def _locate(self, spec):
        _, offset = self._header(spec)
        body = self.kernel.split("\n")
        decorated = self.source(spec).split("\n")

        def locate(line):
            k = line - offset
            if 1 <= k <= len(body):
                return "kernel body line %d" % k, body[k - 1]
            if k == len(body) + 1:
                return "end of the kernel body (the closing brace dlarray.rtc adds)", \
                    body[-1] if body else ""
            if 0 < line <= len(decorated):
                return "decorated source line %d (dlarray.rtc's declarations)" % line, \
                    decorated[line - 1]
            return None
        return locate

    def _kernel_for(self, spec):
        kernel = self._kernels.get(spec)
        if kernel is None:
            kernel = _RtcKernel(self, spec)
            self._kernels[spec] = kernel
        return kernel

    def compile(self, arch=None, ctx=None):
        """Compiles the kernel for the construction arrays' shapes; returns the code.

        Parameters
        ----------
        arch : int or str, optional
            A compute capability (90, "sm_90"): compile for it, with no GPU needed.
        ctx : DLContext, optional
            Otherwise, the GPU to compile for and load on (default ``gpu(0)``).

        Returns
        -------
        bytes
            A cubin, or PTX when the GPU is newer than NVRTC.

        Raises
        ------
        CompileError
            NVRTC reported errors (the message names the lines of the body).
        """
        return self._kernel_for(self._spec).compile(arch=arch, ctx=ctx)

    def push(self, inputs, outputs, grid_dims, block_dims, shared_mem=0):
        """Launches the kernel on the arrays' GPU, on its stream (MXNet's ``push``).

        Parameters
        ----------
        inputs, outputs : list of NDArray
            As many as at construction, in the same order, all on one GPU.
        grid_dims, block_dims : tuple of int
            The grid (blocks) and block (threads) sizes, (x, y, z) or shorter.
        shared_mem : int, optional
            Bytes of dynamic shared memory per block.

        Raises
        ------
        TypeError
            Another number of inputs or outputs, or something else than NDArrays.
        ValueError
            Arrays on the CPU or on different GPUs, a grid or block out of range.
        CompileError
            Arrays of new shapes whose version of the kernel does not compile.
        """
        inputs, outputs = list(inputs), list(outputs)
        if len(inputs) != len(self.input_names) or len(outputs) != len(self.output_names):
            raise TypeError("dlarray.rtc.Rtc '%s' takes %d inputs (%s) and %d outputs (%s), got "
                            "%d and %d" % (self.name, len(self.input_names),
                                           ", ".join(self.input_names), len(self.output_names),
                                           ", ".join(self.output_names), len(inputs),
                                           len(outputs)))
        arrays = inputs + outputs
        for n, a in zip(self.input_names + self.output_names, arrays):
            if not isinstance(a, _core.NDArray):
                raise TypeError("dlarray.rtc.Rtc '%s': '%s' must be an NDArray, got %s"
                                % (self.name, n, type(a).__name__))
        spec = tuple((a.shape, a.dtype) for a in arrays)
        kernel = self._kernels.get(spec) or self._kernel_for(
            tuple((tuple(s), np.dtype(d)) for s, d in spec))
        self._kernels.setdefault(spec, kernel)
        kernel(grid_dims, block_dims, arrays, shared_mem=shared_mem)


class _RtcKernel(RawKernel):
    """The RawKernel of an Rtc for one set of shapes (errors name the body's lines)."""

    def __init__(self, rtc, spec):
        super().__init__(rtc.source(spec), rtc.name)
        self._rtc, self._spec = rtc, spec
        module = self.module
        locate = rtc._locate(spec)

        def program(arch, name=None):
            return _build.compile_program(module.code, rtc.name, RTC_OPTIONS, (), arch,
                                          what="kernel '%s'" % rtc.name, locate=locate)
        module._program = program
