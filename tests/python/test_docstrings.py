"""The public Python API is documented (NumPy style) and its docstring examples are right: every
``>>>`` example of the documented modules runs as a doctest, and every public function or class
that takes arguments documents them under ``Parameters``."""
import doctest
import inspect
import re

import numpy as np
import pytest

import dlarray
import dlarray.autodiff
import dlarray.custom
import dlarray.datasets
import dlarray.distributed
import dlarray.distributed.rendezvous
import dlarray.gpu_op
import dlarray.ndarray
import dlarray.ops
import dlarray.rtc

MODULES = [dlarray, dlarray.ops, dlarray.autodiff, dlarray.ndarray, dlarray.gpu_op,
           dlarray.custom, dlarray.rtc, dlarray.distributed, dlarray.distributed.rendezvous,
           dlarray.datasets]


def public_objects():
    """(qualified name, object) of each public function, class, method and property, once."""
    seen, out = set(), []

    def add(name, obj):
        key = id(obj)
        if key not in seen and (callable(obj) or isinstance(obj, property) or
                                type(obj).__name__ == "property"):
            seen.add(key)
            out.append((name, obj))

    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.ismodule(obj):
                continue
            add(f"{module.__name__}.{name}", obj)
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if not attr.startswith("_") or attr in ("__setitem__", "__len__"):
                        add(f"{module.__name__}.{name}.{attr}", member)
    return out


OBJECTS = public_objects()


def takes_arguments(obj):
    """Whether a function (or a class's constructor, or a callable object) takes arguments
    besides self; pybind11 functions are read from their signature line."""
    if isinstance(obj, property) or type(obj).__name__ == "property":
        return False
    doc = inspect.getdoc(obj) or ""
    if inspect.isclass(obj) and "pybind11" in type(obj).__name__:
        doc = obj.__init__.__doc__ or ""  # "__init__(self: ..., device_id: int, ...) -> None"
    if type(obj).__name__ in ("builtin_function_or_method", "instancemethod") or (
            inspect.isclass(obj) and "pybind11" in type(obj).__name__):
        first = doc.strip().splitlines()[0] if doc.strip() else ""
        m = re.match(r"\w+\((.*)\)", first)
        params = [p for p in (m.group(1).split(", ") if m and m.group(1) else [])
                  if not p.startswith("self")]
        return bool(params)
    if inspect.isclass(obj) and obj.__init__ is object.__init__:
        return False
    try:
        target = obj.__init__ if inspect.isclass(obj) else obj
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return False
    return any(p.name != "self" for p in sig.parameters.values())


@pytest.mark.parametrize("name,obj", OBJECTS, ids=[n for n, _ in OBJECTS])
def test_documented(name, obj):
    doc = inspect.getdoc(obj)
    assert doc and doc.strip(), f"{name} has no docstring"
    if takes_arguments(obj) and not name.startswith("dlarray.autodiff.Op."):
        assert re.search(r"^Parameters\n-{10}$", doc, re.M), f"{name}: no Parameters section"


def examples():
    parser = doctest.DocTestParser()
    out = []
    for name, obj in OBJECTS:
        doc = inspect.getdoc(obj) or ""
        test = parser.get_doctest(doc, {"np": np}, name, None, None)
        if test.examples:
            out.append(test)
    return out


EXAMPLES = examples()


def test_there_are_examples():
    assert len(EXAMPLES) >= 25, [t.name for t in EXAMPLES]


@pytest.mark.parametrize("test", EXAMPLES, ids=[t.name for t in EXAMPLES])
def test_docstring_example(test):
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    out = []
    runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)
