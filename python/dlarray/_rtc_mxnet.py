"""dlarray.rtc's MXNet side: Rtc, a kernel from its body only (see dlarray.rtc)."""

from __future__ import annotations

import re
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _core
from ._core import DLContext, NDArray
from . import _rtc_build as _build
from ._rtc_raw import RawKernel
from ._rtc_source import c_type

__all__ = ["Rtc", "RTC_OPTIONS"]

_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
#: NVRTC options of Rtc kernels: no "declared but never referenced" warnings (#177) for the
#: x_ndim / x_dims declarations a body does not use.
RTC_OPTIONS = ("--diag-suppress=177",)


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

    def __init__(self, name: str, inputs: Sequence[tuple[str, NDArray]],
                 outputs: Sequence[tuple[str, NDArray]], kernel: str) -> None:
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
        rtc_type = _core._rtc_device_type()  # the device type offering dlarray.rtc.v1
        gpus = [a.ctx for a in arrays
                if isinstance(a, _core.NDArray) and a.ctx.device_type == rtc_type]
        if gpus:
            self._kernel_for(self._spec).compile(ctx=gpus[0])  # MXNet compiles here too

    def source(self, spec: Optional[Sequence[tuple[Sequence[int], Any]]] = None) -> str:
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

    def compile(self, arch: Optional[Union[int, str]] = None,
                ctx: Optional[DLContext] = None) -> bytes:
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

    def push(self, inputs: Sequence[NDArray], outputs: Sequence[NDArray],
             grid_dims: Sequence[int], block_dims: Sequence[int], shared_mem: int = 0) -> None:
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
            Arrays on the CPU or on different GPUs, a grid or block out of range, or a
            read-only array (inputs too: the body may write any array, whose pointers are not
            const).
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
            if a.readonly:
                raise ValueError("dlarray.rtc.Rtc '%s': '%s' is read-only, and the kernel body "
                                 "may write it (its pointer is not const): pass a writable copy "
                                 "(.copy())" % (self.name, n))
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
