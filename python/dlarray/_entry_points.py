"""Plugins installed as Python distributions: the ``dlarray.plugins`` entry-point group.

A distribution that ships a plugin library (for example ``dlarray-opencl``) declares, in its
``pyproject.toml``::

    [project.entry-points."dlarray.plugins"]
    opencl = "dlarray_opencl:plugin_path"

The object an entry point names is a callable returning the library's path (or a list of paths),
or a path itself. ``import dlarray`` loads every such library with ``load_plugin``, after the
plugins folder and ``DLARRAY_PLUGIN_PATH`` (which the core searched when it loaded). A failure
never stops the import: an entry point that cannot be imported or called is listed by
``dlarray.plugins()`` with status ``entry point failed`` and the exception as its reason; a library
that loads but is not usable keeps the core's status and reason (``open failed``, ``ABI
mismatch``, ``duplicate``, ...). The ``origin`` of either is ``entry point <name> (<value>)``.
"""

import importlib
import os
import re
import sys

from . import _core

GROUP = "dlarray.plugins"

# path of a library loaded through an entry point -> its origin text
_origins = {}
# records of entry points that failed before a library could be loaded
_failures = []


class _EntryPoint:
    """One ``name = module:attr`` line of a distribution's entry_points.txt."""

    __slots__ = ("name", "value")

    def __init__(self, name, value):
        self.name, self.value = name, value

    def load(self):
        module, _, attrs = self.value.partition(":")
        obj = importlib.import_module(module.strip())
        attrs = attrs.split("[", 1)[0].strip()  # "mod:attr [extra]": the extra changes nothing
        for attr in attrs.split(".") if attrs else ():
            obj = getattr(obj, attr)
        return obj


def _group(text):
    """The entries of GROUP in the text of an entry_points.txt (INI: [group], name = value)."""
    section = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == GROUP and "=" in line:
            name, value = line.split("=", 1)
            yield _EntryPoint(name.strip(), value.strip())


def _entry_points():
    """The GROUP entry points of the distributions on sys.path, the first of each name winning
    (as importlib.metadata orders them). Read here, not with importlib.metadata: importing it
    (email, zipfile, csv, ...) was the largest part of ``import dlarray``'s own time."""
    seen = set()
    found = []
    for folder in sys.path:
        try:
            names = sorted(os.listdir(folder or "."))
        except OSError:  # a zip file or a missing folder on the path
            continue
        for entry in names:
            if not entry.endswith((".dist-info", ".egg-info")):
                continue
            dist = re.sub(r"[-_.]+", "_", entry.rsplit(".", 1)[0].split("-", 1)[0]).lower()
            if dist in seen:
                continue
            seen.add(dist)
            try:
                with open(os.path.join(folder or ".", entry, "entry_points.txt"),
                          encoding="utf-8") as f:
                    text = f.read()
            except OSError:  # no entry points (or not a folder)
                continue
            found += _group(text)
    return found


def _failure(origin, name, reason):
    return {"name": name, "path": "", "origin": origin, "status": "entry point failed",
            "reason": reason, "device_type": "", "device_count": 0, "abi_version": (0, 0),
            "version": "", "declared_ops": [], "ops": []}


def _paths(target):
    value = target() if callable(target) else target
    items = value if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError("a dlarray.plugins entry point must give a library path (str or "
                            "os.PathLike) or a list of them, not %r" % (item,))
    return [os.fspath(p) for p in items]


def load_all():
    """Loads the library of every ``dlarray.plugins`` entry point; records failures."""
    try:
        eps = _entry_points()
    except Exception as e:  # broken metadata of some distribution: say so, import anyway
        _failures.append(_failure("entry points", GROUP, "%s: %s" % (type(e).__name__, e)))
        return
    for ep in sorted(eps, key=lambda e: e.name):
        origin = "entry point %s (%s)" % (ep.name, ep.value)
        try:
            paths = _paths(ep.load())
        except Exception as e:
            _failures.append(_failure(origin, ep.name, "%s: %s" % (type(e).__name__, e)))
            continue
        for path in paths:
            record = _load(path)
            if record is not None:
                _origins[record["path"]] = origin


def _load(path):
    try:
        return _core.load_plugin(path)
    except RuntimeError:
        # Not usable: the core keeps the record (path, status, reason); find it by path.
        real = os.path.realpath(path)
        for p in _core.plugins():
            if p["path"] in (path, real):
                return p
        return None


def annotate(records):
    """The core's records with the origin of entry-point plugins, then the failed entry points."""
    for r in records:
        origin = _origins.get(r["path"])
        if origin is not None and r["origin"] == "load_plugin":
            r["origin"] = origin
    return records + [dict(f) for f in _failures]
