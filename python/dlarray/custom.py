"""Ahead-of-time (AOT) custom ops with MindSpore's calling convention (``ops.Custom(...,
func_type="aot")``): CUDA or C/C++ kernels compiled into a shared library that exports::

    extern "C" int Func(int nparam, void **params, int *ndims, int64_t **shapes,
                        const char **dtypes, void *stream, void *extra);

::

    from dlarray.custom import Custom
    add = Custom("./custom_add.so:CustomAdd", out_shape=[3], out_dtype="float32")
    c = add(a, b)                  # NDArrays on one device; c is allocated there
    add(a, b, out=c)               # or written into c

``func`` is ``"path/lib.so:Func"``, a source (``"path/op.cu:Func"``, ``.cc``, ``.cpp``, ``.cxx``,
``.c``; compiled on first use and cached, see :func:`compile_source`), or a dict of them per
device (``{"cpu": "add.cc:Add", "gpu": "add.cu:Add"}``) so that one op runs on either. A library
is loaded once per process. The function gets device pointers, the shapes, MindSpore's dtype names,
the device's stream (the CUDA stream dlarray's ops run on; NULL on the CPU) and ``extra``, a
``DLArrayAotExtra`` (``dlarray/aot.h``: attributes, workspace, error message). The GIL is released
while it runs on large arrays.

Which device a library serves: a dict key says it; else a ``.cu`` source or a library holding CUDA
code serves GPUs, anything else the CPU. Arrays on another device are refused (a GPU kernel given
host pointers would poison the CUDA context).

``DLARRAY_AOT_ALLOWED_DIRS`` (colon-separated folders), when set and not empty, refuses libraries
and sources outside those folders (symlinks resolved), like MindSpore's
``MS_CUSTOM_AOT_WHITE_LIST``: loading a library runs its code.

``Custom`` ops are also graph nodes: called on ``dlarray.autodiff`` nodes they make a node, and
``bprop`` makes them differentiable (see :class:`Custom`).
"""

from __future__ import annotations

import inspect
import mmap
import numbers
import os
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import numpy as np

import dlarray
from . import _cache, _core
from ._aot_build import SOURCE_DEVICES, CompileError, compile_source, default_flags, include_dir

__all__ = ["Custom", "CompileError", "compile_source", "default_flags", "include_dir",
           "load_library"]

_ALLOWED_DIRS = "DLARRAY_AOT_ALLOWED_DIRS"
_DEVICE_TYPES = {"cpu": 1, "gpu": 2, "cuda": 2}
_DEVICE_NAMES = {1: "cpu", 2: "cuda"}  # as devices print ("gpu" still parses)
# MindSpore's dtype names that NumPy spells otherwise.
_MS_DTYPES = {"float": np.float32, "int": np.int32, "uint": np.uint32, "bool": np.bool_}
_libraries = {}


def _check_allowed(path):
    """Raises PermissionError when DLARRAY_AOT_ALLOWED_DIRS is set and ``path`` is outside it."""
    allowed = [d for d in os.environ.get(_ALLOWED_DIRS, "").split(":") if d.strip()]
    if not allowed:
        return
    real = os.path.realpath(path)
    for folder in allowed:
        folder = os.path.realpath(os.path.expanduser(folder))
        if os.path.commonpath([folder, real]) == folder:
            return
    raise PermissionError("dlarray.custom: %s (%s) is outside %s=%s: its code may not be loaded"
                          % (path, real, _ALLOWED_DIRS, os.environ[_ALLOWED_DIRS]))


def _holds_cuda_code(path):
    """Whether a library holds CUDA device code or links the CUDA runtime or driver."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return any(data.find(s) >= 0 for s in (b".nv_fatbin", b"libcudart.so", b"libcuda.so"))


def load_library(path):
    """The library at ``path``, loaded once per process (``dlarray._core.AotLibrary``).

    A library whose file changed since it was loaded is loaded again from a copy (the dynamic
    loader would otherwise return the old code).

    Parameters
    ----------
    path : str or os.PathLike
        The shared library.

    Returns
    -------
    dlarray._core.AotLibrary
        The loaded library (the same object for every call with the same file).

    Raises
    ------
    PermissionError
        Outside ``DLARRAY_AOT_ALLOWED_DIRS``.
    FileNotFoundError
        No such file.
    RuntimeError
        The dynamic loader refuses it (its message names the missing dependency, ...).
    """
    _check_allowed(path)
    return _load(path)


def _load(path):
    real = os.path.realpath(path)
    if not os.path.isfile(real):
        raise FileNotFoundError("dlarray.custom: no library %s" % path)
    st = os.stat(real)
    identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    known = _libraries.get(real)
    if known is not None and known[0] == identity:
        return known[1]
    load_path = real
    if known is not None:  # changed on disk: load the new content from a copy of its own
        data = open(real, "rb").read()
        entry = _cache.entry_dir("aot-reload", _cache.make_key(data))
        load_path = entry / os.path.basename(real)
        if _cache.verified_file(load_path) is None:
            _cache.store_bytes(load_path, data)
        load_path = str(load_path)
    library = _core.AotLibrary(load_path)
    _libraries[real] = (identity, library)
    return library


def _dtype(value):
    if isinstance(value, str) and value in _MS_DTYPES:
        value = _MS_DTYPES[value]
    try:
        return _core.parse_dtype(value)  # the one dtype parser ('bfloat16' included)
    except (TypeError, ValueError) as e:
        raise TypeError("dlarray.custom: %r is not a dtype (%s)" % (value, e)) from None


def _is_shape(value):
    return isinstance(value, (list, tuple)) and all(isinstance(d, numbers.Integral) for d in value)


def _shapes(value, num_outputs, what):
    """A list of ``num_outputs`` shape tuples from a shape or a list of shapes."""
    if num_outputs == 1 and _is_shape(value):
        return [tuple(int(d) for d in value)]
    if (isinstance(value, (list, tuple)) and len(value) == num_outputs
            and all(map(_is_shape, value))):
        return [tuple(int(d) for d in s) for s in value]
    raise ValueError("dlarray.custom: %s must be a shape (a list of ints) or, for %d outputs, a "
                     "list of %d shapes; got %r" % (what, num_outputs, num_outputs, value))


def _dtypes(value, num_outputs, what):
    values = list(value) if isinstance(value, (list, tuple)) else [value] * num_outputs
    if len(values) != num_outputs:
        raise ValueError("dlarray.custom: %s gives %d dtypes for %d outputs"
                         % (what, len(values), num_outputs))
    return [_dtype(v) for v in values]


def _is_function(value):
    """A callable that is not a dtype-like class (``np.float32`` is callable too)."""
    return callable(value) and not isinstance(value, type)


def _arity(fn, minus=0):
    """The number of positional parameters of ``fn`` (less ``minus``), or None with ``*args``."""
    if not _is_function(fn):
        return None
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    kinds = [p.kind for p in params]
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        return None
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(k in positional for k in kinds) - minus


_INT64 = (-2**63, 2**63 - 1)


def _attr_value(name, value):
    # Checked here so that messages name the attribute; the C++ side checks again (NUL bytes,
    # int64 and double ranges) for callers of _core.AotOp.
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        if not _INT64[0] <= int(value) <= _INT64[1]:
            raise OverflowError("dlarray.custom: attribute %r: %d does not fit a 64-bit signed "
                                "integer (int64)" % (name, value))
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, str):
        if "\0" in value:
            raise ValueError("dlarray.custom: attribute %r: the string holds a NUL byte (C would "
                             "read it cut short): %r" % (name, value))
        return value
    if isinstance(value, (list, tuple, np.ndarray)):
        items = [_attr_value(name, v) for v in value]
        if all(isinstance(v, (bool, int)) for v in items):
            return [int(v) for v in items]
        if all(isinstance(v, (bool, int, float)) for v in items):
            return [float(v) for v in items]
    raise TypeError("dlarray.custom: attribute %r must be a bool, int, float, str or a list of "
                    "numbers, got %s (%r)" % (name, type(value).__name__, value))


def _device_type(key):
    if isinstance(key, _core.DLContext):
        return key.device_type
    if isinstance(key, numbers.Integral):
        return int(key)
    if isinstance(key, str) and key.lower() in _DEVICE_TYPES:
        return _DEVICE_TYPES[key.lower()]
    raise ValueError("dlarray.custom: %r names no device type (use 'cpu' or 'gpu')" % (key,))


def _implementation(device_key, spec, compile_flags):
    """(device type, AotLibrary, function name) for one ``"path:Func"``."""
    if not isinstance(spec, (str, os.PathLike)) or ":" not in str(spec):
        raise ValueError("dlarray.custom: func must be 'path/lib.so:Func' (or a .cu/.cc/.cpp/.c "
                         "source), got %r" % (spec,))
    path, symbol = str(spec).rsplit(":", 1)
    if not symbol.isidentifier():
        raise ValueError("dlarray.custom: %r names no function after ':'" % (spec,))
    path = os.path.abspath(os.path.expanduser(path))
    suffix = os.path.splitext(path)[1]
    _check_allowed(path)
    if suffix in SOURCE_DEVICES:
        device = _DEVICE_TYPES[SOURCE_DEVICES[suffix]]
        library = _load(str(compile_source(path, compile_flags)))
    else:
        library = _load(path)
        device = 2 if _holds_cuda_code(os.path.realpath(path)) else 1
    if device_key is not None and _device_type(device_key) != device:
        raise ValueError("dlarray.custom: %s runs on %s, not on %s"
                         % (spec, _DEVICE_NAMES.get(device, device), device_key))
    return device, library, symbol


class Custom(_core.AotOp):
    """An AOT custom op (MindSpore's ``ops.Custom(func, out_shape, out_dtype, "aot", bprop)``).

    Parameters
    ----------
    func : str or dict
        ``"path/lib.so:Func"``, ``"path/op.cu:Func"`` (or ``.cc``/``.cpp``/``.cxx``/``.c``:
        compiled), or ``{"cpu": ..., "gpu": ...}``.
    out_shape : list, callable or None
        The output's shape (``[3]``), a list of shapes for several outputs, or a function of the
        input shapes (``lambda x, y: x``). None: from the library's ``FuncInferShape``, or out=.
    out_dtype : dtype, list or callable, optional
        NumPy dtypes or MindSpore's names (``"float32"``, ``"float"``), one per output, or a
        function of the input dtypes. None: ``FuncInferType``, else input 0's dtype.
    bprop : callable, optional
        ``bprop(*inputs, out, dout)`` returning the inputs' gradients (a tuple; fewer entries
        or None entries are zero gradients) as NDArrays or NumPy arrays: dlarray ops, other
        Custom ops, NumPy (``np.asarray(x)`` reads an NDArray). Makes graph nodes of this op
        differentiable; it runs on the executor's device, with its arrays.
    attrs : dict, optional
        Named attributes (bool, int, float, str, lists of numbers), seen by the library through
        ``extra`` (``DLArrayAotAttrInt(extra, "axis", 0)``, ...).
    func_type : str
        ``"aot"`` (MindSpore's other kinds are not supported).
    in_dtypes : dtype or list, optional
        The input dtypes the op takes (one for all, or one per input): others raise TypeError.
    num_inputs : int, optional
        The number of inputs; by default it comes from ``in_dtypes``, from the signature of
        ``out_shape``, ``out_dtype`` or ``bprop`` when callable, else any number is passed on.
    compile_flags : list of str, optional
        Replaces the compiler flags of a source (``dlarray.custom.default_flags(".cu")``).
    name : str, optional
        The op's name in messages and graph nodes (default: ``Func``).

    Raises
    ------
    ValueError, TypeError
        Malformed arguments.
    PermissionError
        A library or source outside ``DLARRAY_AOT_ALLOWED_DIRS``.
    CompileError
        A source that does not compile.
    RuntimeError
        A library that does not load, or that lacks ``Func``.

    Calling ``op(*inputs, out=None)`` with NDArrays returns the output (or a tuple); TypeError
    for inputs of the wrong count or dtype, ValueError for devices or out= shapes that do not
    fit, RuntimeError when Func returns non-zero (the op, the code and Func's message). A GPU
    kernel's fault surfaces at the next synchronizing call, with the CUDA error's name. With
    NumPy arrays the op runs on the CPU (or the GPU) and returns NumPy arrays; with graph nodes
    it makes a node.
    """

    # Shapes and dtypes may be given in many spellings (see above): Any, as NumPy's dtype-likes.
    def __init__(self, func: Union[str, Mapping[str, str]], out_shape: Any = None,
                 out_dtype: Any = None, bprop: Optional[Callable[..., Any]] = None,
                 attrs: Optional[Mapping[str, Any]] = None, *, func_type: str = "aot",
                 in_dtypes: Any = None, num_inputs: Optional[int] = None,
                 compile_flags: Optional[Sequence[str]] = None, name: Optional[str] = None) -> None:
        if func_type != "aot":
            raise ValueError("dlarray.custom: func_type %r is not supported (only 'aot')"
                             % (func_type,))
        specs = func if isinstance(func, dict) else {None: func}
        if not specs:
            raise ValueError("dlarray.custom: func names no library")
        impls = [_implementation(k, v, compile_flags) for k, v in specs.items()]
        if len({d for d, _, _ in impls}) != len(impls):
            raise ValueError("dlarray.custom: two implementations for one device type in %r"
                             % (func,))
        if bprop is not None and not callable(bprop):
            raise TypeError("dlarray.custom: bprop must be callable, got %r" % (bprop,))
        if isinstance(out_dtype, (list, tuple)):
            num_outputs = len(out_dtype)
        elif (isinstance(out_shape, (list, tuple)) and out_shape
              and all(_is_shape(s) for s in out_shape)):
            num_outputs = len(out_shape)
        else:
            num_outputs = 1
        fixed_shapes = None if out_shape is None or callable(out_shape) else \
            _shapes(out_shape, num_outputs, "out_shape")
        fixed_dtypes = None if out_dtype is None or _is_function(out_dtype) else \
            _dtypes(out_dtype, num_outputs, "out_dtype")
        if isinstance(in_dtypes, (list, tuple)):
            in_dtypes = [_dtype(d) for d in in_dtypes]
        else:
            in_dtypes = [] if in_dtypes is None else [_dtype(in_dtypes)]
        counts = {"num_inputs": num_inputs,
                  "in_dtypes": len(in_dtypes) if len(in_dtypes) > 1 else None,
                  "out_shape": _arity(out_shape), "out_dtype": _arity(out_dtype),
                  "bprop": _arity(bprop, 2)}
        known = {k: v for k, v in counts.items() if v is not None}
        if len(set(known.values())) > 1:
            raise ValueError("dlarray.custom: the number of inputs is not clear: %s"
                             % ", ".join("%s says %d" % kv for kv in known.items()))
        fixed = None
        if fixed_shapes is not None and fixed_dtypes is not None:
            fixed = list(zip(fixed_shapes, fixed_dtypes))
        attrs = dict(attrs or {})
        for key in attrs:
            if not isinstance(key, str):
                raise TypeError("dlarray.custom: attribute names must be strings, got %r" % (key,))
            if "\0" in key:
                raise ValueError("dlarray.custom: attribute name %r holds a NUL byte (C would "
                                 "read it cut short)" % (key,))
        label = name or "/".join(sorted({symbol for _, _, symbol in impls}))
        super().__init__(label, impls, next(iter(known.values()), -1), in_dtypes, num_outputs,
                         fixed, [(k, _attr_value(k, v)) for k, v in attrs.items()])
        self.func, self.bprop, self.attrs = func, bprop, attrs
        self._out_shape, self._out_dtype = out_shape, out_dtype
        self._fixed_shapes, self._fixed_dtypes = fixed_shapes, fixed_dtypes

    def __repr__(self):
        devices = ",".join(_DEVICE_NAMES.get(d, str(d)) for d in self.device_types)
        return "Custom(%r, outputs=%d, devices=%s%s)" % (
            self.name, self.num_outputs, devices, ", bprop" if self.bprop else "")

    @property
    def devices(self) -> list[str]:
        """The device types ("cpu", "cuda") the op has an implementation for."""
        return [_DEVICE_NAMES.get(d, str(d)) for d in self.device_types]

    def infer_outputs(self, shapes, dtypes=None, device=None):
        """``[(shape, dtype), ...]`` of the outputs for inputs of these shapes and dtypes.

        Parameters
        ----------
        shapes : list of tuple
            The input shapes.
        dtypes : list of dtype, optional
            The input dtypes (default: float32).
        device : str, optional
            Whose library answers when they come from ``FuncInferShape`` (default: any).

        Raises
        ------
        ValueError
            When the op cannot say (no out_shape and no ``FuncInferShape``).
        """
        shapes = [tuple(s) for s in shapes]
        dtypes = [np.dtype(np.float32)] * len(shapes) if dtypes is None else \
            [_dtype(d) for d in dtypes]
        return self._infer_outputs(shapes, dtypes, 0 if device is None else _device_type(device),
                                   False)

    def _infer_outputs(self, shapes, dtypes, device_type, have_outs):
        # Called by the C++ call path for each new set of input shapes and dtypes.
        n = self.num_outputs
        out_shapes, out_dtypes = self._fixed_shapes, self._fixed_dtypes
        lib_shapes = lib_types = None
        if out_shapes is None and self._out_shape is None or \
                out_dtypes is None and self._out_dtype is None:
            lib_shapes, lib_types = self._library_infer(device_type, [list(s) for s in shapes],
                                                        [d.name for d in dtypes])
        if out_shapes is None:
            if callable(self._out_shape):
                out_shapes = _shapes(self._out_shape(*[list(s) for s in shapes]), n,
                                     "out_shape(%s)" % ", ".join(map(str, shapes)))
            elif lib_shapes is not None:
                out_shapes = [tuple(s) for s in lib_shapes]
            elif have_outs:
                return None
            else:
                raise ValueError("dlarray.custom: %s: out_shape is None and its library exports "
                                 "no InferShape function: give out_shape, or out=" % self.name)
        if out_dtypes is None:
            if _is_function(self._out_dtype):
                out_dtypes = _dtypes(self._out_dtype(*dtypes), n, "out_dtype(...)")
            elif lib_types is not None:
                out_dtypes = [_dtype(t) for t in lib_types]
            else:
                out_dtypes = [dtypes[0] if dtypes else np.dtype(np.float32)] * n
        return list(zip(out_shapes, out_dtypes))

    def _call_other(self, *args, out=None, **kwargs):
        # Calls the C++ path does not take: graph nodes, NumPy arrays, unknown keywords.
        if kwargs:
            raise TypeError("%s() got unexpected keyword argument(s) %s (only out=)"
                            % (self.name, ", ".join(sorted(kwargs))))
        from .autodiff import Node
        if args and any(isinstance(a, Node) for a in args):
            if out is not None:
                raise TypeError("%s: out= cannot be given with graph nodes" % self.name)
            from ._custom_node import aot_node
            return aot_node(self, args)
        if any(isinstance(a, dlarray.NDArray) for a in args) or out is not None:
            bad = [type(a).__name__ for a in args if not isinstance(a, dlarray.NDArray)]
            raise TypeError("%s: inputs must all be NDArrays (or all NumPy arrays, or all graph "
                            "nodes), got %s" % (self.name, ", ".join(bad)))
        arrays = [np.asarray(a) for a in args]
        ctx = dlarray.cpu(0) if 1 in self.device_types else dlarray.gpu(0)
        result = self(*[dlarray.array(a, ctx, dtype=a.dtype) for a in arrays])
        if isinstance(result, tuple):
            return tuple(r.asnumpy() for r in result)
        return result.asnumpy()
