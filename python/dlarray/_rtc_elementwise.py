"""dlarray.rtc.ElementwiseKernel: CuPy's elementwise kernels, one operation per element with the
grid chosen for you."""

from __future__ import annotations

import re
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _core
from ._core import DLContext
from ._rtc_elementwise_code import THREADS, blocks, generate
from ._rtc_source import C_TYPE_OF

__all__ = ["ElementwiseKernel"]

_DTYPES = {str(d): d for d in C_TYPE_OF}
_PARAM = re.compile(r"^(?:(raw)\s+)?([A-Za-z_]\w*)\s+([A-Za-z_]\w*)$")
_INT_INDEX_LIMIT = 2**31 - 2**16  # below it, i is an int (the last block may reach past n)


class _Param:
    def __init__(self, text, role, kernel):
        m = _PARAM.match(" ".join(text.split()))
        if m is None:
            raise ValueError("dlarray.rtc.ElementwiseKernel '%s': cannot read the %s parameter "
                             "%r (expected '[raw] <dtype or type name> <name>', e.g. "
                             "'float32 x' or 'T y')" % (kernel, role, text))
        self.raw, type_name, self.name = bool(m.group(1)), m.group(2), m.group(3)
        self.dtype = _DTYPES.get(type_name)
        self.placeholder = None if self.dtype is not None else type_name
        if self.placeholder is not None and self.placeholder in ("bool", "float16", "complex64"):
            raise ValueError("dlarray.rtc.ElementwiseKernel '%s': dtype %s is not supported (%s)"
                             % (kernel, type_name, ", ".join(sorted(_DTYPES))))


def _parse_params(text, role, kernel):
    if not isinstance(text, str):
        raise TypeError("dlarray.rtc.ElementwiseKernel '%s': %s_params must be a string such as "
                        "'float32 x, float32 y'" % (kernel, role))
    return [_Param(p, role, kernel) for p in text.split(",") if p.strip()]


class ElementwiseKernel:
    """A kernel that applies ``operation`` to each element (CuPy's ``ElementwiseKernel``).

    In ``operation`` each parameter's name stands for its element (an output's is a reference to
    it), ``i`` is the element's index and ``_ind.size()`` the number of elements; a ``raw``
    parameter is the whole array (a pointer, indexed by you). Type names that are not dtypes
    (``T``) take the dtype of the arrays given for them, and are usable in the operation.

    Parameters
    ----------
    in_params : str
        The inputs, e.g. ``"float32 x, float32 y"`` or ``"T x, raw T table"``; an input given a
        scalar at the call is passed by value.
    out_params : str
        The outputs, e.g. ``"float32 z"``.
    operation : str
        CUDA C++ for one element, e.g. ``"z = x + y"``.
    name : str, optional
        The kernel's name.
    options : sequence of str, optional
        NVRTC options.
    preamble : str, optional
        Code placed before the kernel (helper functions).

    Raises
    ------
    ValueError
        A parameter that cannot be read, or a name used twice.

    Examples
    --------
    >>> import dlarray.rtc
    >>> add = dlarray.rtc.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x + y",
    ...                                     "my_add")
    >>> "z = x + y;" in add.source(["float32"] * 3)          # the code it compiles
    True

    On a GPU: ``z = add(x, y)`` (allocates z) or ``add(x, y, z)``.
    """

    def __init__(self, in_params: str, out_params: str, operation: str, name: str = "kernel",
                 options: Sequence[str] = (), preamble: str = "") -> None:
        if not isinstance(name, str) or not re.match(r"^[A-Za-z_]\w*$", name):
            raise ValueError("dlarray.rtc.ElementwiseKernel: the name %r is not a C identifier"
                             % (name,))
        if not isinstance(operation, str) or not isinstance(preamble, str):
            raise TypeError("dlarray.rtc.ElementwiseKernel '%s': operation and preamble must be "
                            "strings" % name)
        self.name, self.operation, self.preamble = name, operation, preamble
        self.options = tuple(options)
        self.in_params = _parse_params(in_params, "in", name)
        self.out_params = _parse_params(out_params, "out", name)
        if not self.out_params:
            raise ValueError("dlarray.rtc.ElementwiseKernel '%s': needs an output" % name)
        names = [p.name for p in self.in_params + self.out_params]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated or any(n in ("i", "_ind", "_n") for n in names):
            raise ValueError("dlarray.rtc.ElementwiseKernel '%s': parameter names must be unique "
                             "and not i, _ind or _n: %s" % (name, ", ".join(repeated or names)))
        self._kernels = {}

    # ---- code -------------------------------------------------------------------------------

    def source(self, dtypes: Sequence[Any], scalars: Sequence[Any] = (), restrict: bool = True,
               index: str = "int", vector: bool = False) -> str:
        """The CUDA source compiled for parameters of these dtypes.

        Parameters
        ----------
        dtypes : sequence of dtype
            One per parameter (inputs then outputs).
        scalars : sequence of bool, optional
            Per input: passed by value.
        restrict : bool, optional
            Whether the arrays may be declared ``__restrict__`` (no input overlaps an output).
        index : str, optional
            The C type of ``i``: "int" or "long long".
        vector : bool, optional
            The kernel for arrays of 4-byte elements, all 16-byte aligned: 16-byte loads and
            stores (what calls use when they can).

        Returns
        -------
        str
        """
        mode = "vec4" if vector else "restrict" if restrict else "plain"
        return generate(self, [_core.parse_dtype(d) for d in dtypes], scalars, mode, index)[0]

    def compile(self, dtypes: Sequence[Any],
                arch: Optional[Union[int, str]] = None, ctx: Optional[DLContext] = None) -> bytes:
        """Compiles the kernel for parameters of these dtypes now; returns the code.

        Parameters
        ----------
        dtypes : sequence of dtype
            One per parameter (inputs then outputs), e.g. ``["float32"] * 3``.
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
            NVRTC reported errors (the message names the lines of the operation).
        """
        names = tuple(str(_core.parse_dtype(d)) for d in dtypes)
        arrays = [_core.parse_dtype(d) for p, d in zip(self.in_params + self.out_params, names)
                  if not p.raw]
        mode = "vec4" if arrays and all(d.itemsize == 4 for d in arrays) else "restrict"
        key = (names, (False,) * len(self.in_params), mode, "int")
        if len(names) != len(self.in_params) + len(self.out_params):
            raise TypeError("dlarray.rtc.ElementwiseKernel '%s': %d dtypes for %d parameters"
                            % (self.name, len(key[0]),
                               len(self.in_params) + len(self.out_params)))
        return self._kernel(key).compile(arch=arch, ctx=ctx)

    def _locate(self, operation_lines, source):
        op_lines = self.operation.split("\n")
        pre_lines = self.preamble.split("\n")
        all_lines = source.split("\n")

        def locate(line):
            if 1 <= line <= len(pre_lines) and self.preamble:
                return "preamble line %d" % line, pre_lines[line - 1]
            for first in operation_lines:
                k = line - first + 1
                if 1 <= k <= len(op_lines):
                    return "operation line %d" % k, op_lines[k - 1]
            if 0 < line <= len(all_lines):
                return "generated line %d" % line, all_lines[line - 1]
            return None
        return locate

    def _kernel(self, key):
        kernel = self._kernels.get(key)
        if kernel is None:
            from . import _rtc_build
            from ._rtc_raw import RawKernel
            dtypes, scalars, mode, index = key
            parsed = [_core.parse_dtype(d) for d in dtypes]
            source, operation_lines = generate(self, parsed, scalars, mode, index)
            kernel = RawKernel(source, self.name, self.options)
            module, locate = kernel.module, self._locate(operation_lines, source)
            name, options = self.name, self.options

            def program(arch, _name=None):
                return _rtc_build.compile_program(source, name, options, (), arch,
                                                  what="ElementwiseKernel '%s'" % name,
                                                  locate=locate)
            module._program = program
            self._kernels[key] = kernel
        return kernel

    # ---- call -------------------------------------------------------------------------------

    # The result is one NDArray or a tuple of them, by the number of outputs: Any.
    def __call__(self, *args: Any, size: Optional[int] = None,
                 ctx: Optional[DLContext] = None) -> Any:
        """Runs the operation on every element; returns the output(s).

        Parameters
        ----------
        *args : NDArray or scalar
            The inputs, then optionally the outputs (allocated when left out). Non-raw arrays
            must all have one shape; inputs given a Python or NumPy scalar are passed by value.
        size : int, optional
            The number of elements, when no non-raw array gives it.
        ctx : DLContext, optional
            The GPU, when no array gives it.

        Returns
        -------
        NDArray or tuple of NDArray
            The outputs.

        Raises
        ------
        TypeError
            A wrong number of arguments, a dtype that differs from the declared one, or a type
            name whose arrays disagree.
        ValueError
            Arrays of different shapes or devices, no way to tell the size, or a read-only
            output.
        """
        n_in, n_out = len(self.in_params), len(self.out_params)
        if len(args) not in (n_in, n_in + n_out):
            raise TypeError("dlarray.rtc.ElementwiseKernel '%s' takes %d inputs and optionally "
                            "%d outputs, got %d arguments" % (self.name, n_in, n_out, len(args)))
        params = self.in_params + self.out_params
        types = {}
        shape, device = None, ctx
        for p, a in zip(params, args):
            if isinstance(a, _core.NDArray):
                if p.placeholder is not None:
                    if types.setdefault(p.placeholder, np.dtype(a.dtype)) != np.dtype(a.dtype):
                        raise TypeError("dlarray.rtc.ElementwiseKernel '%s': %s is %s for one "
                                        "array and %s for '%s'" % (self.name, p.placeholder,
                                                                   types[p.placeholder],
                                                                   a.dtype, p.name))
                elif np.dtype(a.dtype) != p.dtype:
                    raise TypeError("dlarray.rtc.ElementwiseKernel '%s': '%s' is %s, got an "
                                    "array of %s" % (self.name, p.name, p.dtype, a.dtype))
                if not p.raw:
                    if shape is None:
                        shape = tuple(a.shape)
                    elif tuple(a.shape) != shape:
                        raise ValueError("dlarray.rtc.ElementwiseKernel '%s': '%s' has shape %s, "
                                         "another array %s" % (self.name, p.name, a.shape, shape))
                if device is None:
                    device = a.ctx
            elif p in self.out_params or p.raw:
                raise TypeError("dlarray.rtc.ElementwiseKernel '%s': '%s' must be an NDArray, "
                                "got %s" % (self.name, p.name, type(a).__name__))
            if p in self.out_params and a.readonly:
                raise ValueError("dlarray.rtc.ElementwiseKernel '%s': output '%s' is read-only: "
                                 "pass a writable array" % (self.name, p.name))
        dtypes = []
        for p in params:
            d = p.dtype if p.dtype is not None else types.get(p.placeholder)
            if d is None:
                raise TypeError("dlarray.rtc.ElementwiseKernel '%s': no array tells what %s is"
                                % (self.name, p.placeholder))
            dtypes.append(d)
        if shape is None:
            if size is None:
                raise ValueError("dlarray.rtc.ElementwiseKernel '%s': no array gives the size: "
                                 "pass size=" % self.name)
            shape = (int(size),)
        elif size is not None and int(size) != int(np.prod(shape)):
            raise ValueError("dlarray.rtc.ElementwiseKernel '%s': size=%d but the arrays have %d "
                             "elements" % (self.name, size, int(np.prod(shape))))
        if device is None:
            device = _core.DLContext(0, 2)
        args = list(args)
        if len(args) == n_in:
            args += [_core.empty(shape, device, d) for d in dtypes[n_in:]]
        outputs = args[n_in:]
        n = int(np.prod(shape))
        scalars = tuple(not isinstance(a, _core.NDArray) for a in args[:n_in])
        mode = _mode(params, args, dtypes)
        key = (tuple(str(d) for d in dtypes), scalars, mode,
               "int" if n < _INT_INDEX_LIMIT else "long long")
        if n > 0:
            self._kernel(key)((blocks(mode, n),), (THREADS[mode],), args + [n], ctx=device)
        return outputs[0] if n_out == 1 else tuple(outputs)


def _mode(params, args, dtypes):
    """"vec4" (4-byte elements, 16-byte aligned, no partial overlap), else "restrict" (no
    overlap at all), else "plain"."""
    spans, aligned = [], True
    for p, a, d in zip(params, args, dtypes):
        if isinstance(a, _core.NDArray):
            lo, hi = _core._rtc_span(a)
            spans.append((lo, hi, p.raw))
            if not p.raw:
                aligned = aligned and lo % 16 == 0 and np.dtype(d).itemsize == 4
    exact = partial = False
    for i in range(len(spans)):
        for j in range(i + 1, len(spans)):
            (lo1, hi1, raw1), (lo2, hi2, raw2) = spans[i], spans[j]
            if lo1 < hi2 and lo2 < hi1:
                if (lo1, hi1) == (lo2, hi2) and not raw1 and not raw2:
                    exact = True
                else:
                    partial = True
    if aligned and not partial:
        return "vec4"
    return "restrict" if not (exact or partial) else "plain"
