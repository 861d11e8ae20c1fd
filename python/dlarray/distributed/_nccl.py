"""Where dlarray.distributed looks for NCCL beyond what the CUDA plugin searches itself.

The CUDA plugin opens ``libnccl.so.2`` from ``DLARRAY_NCCL_LIBRARY`` when it is set, else from
the candidates given here, then the dynamic loader's search path and the CUDA toolkit's folders.
The candidates: an NCCL this process has already loaded (PyTorch's, say: one NCCL per process),
then the ``nvidia-nccl-cu12`` / ``-cu13`` wheels' ``libnccl.so.2``.
"""

import glob
import importlib.util
import os

from .. import _core


def loaded_candidates():
    """NCCL libraries already mapped into this process (from /proc/self/maps)."""
    found = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split(None, 5)[-1].strip()
                if os.path.basename(path).startswith("libnccl.so") and path not in found:
                    found.append(path)
    except OSError:
        pass
    return found


def wheel_candidates():
    """Where NCCL may be: one already loaded here, then the ``libnccl.so.2`` files of installed
    nvidia-nccl wheels (``nvidia/nccl/lib``, ``nvidia/cu13/lib``, ...), in ``sys.path`` order.

    Returns
    -------
    list of str
        Absolute paths of files that exist (empty when there is none).
    """
    found = [p for p in loaded_candidates() if os.path.isfile(p)]
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        spec = None
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    for root in roots:
        paths = sorted(glob.glob(os.path.join(root, "*", "lib", "libnccl.so.2")),
                       key=lambda p: (os.path.basename(os.path.dirname(os.path.dirname(p)))
                                      != "nccl", p))
        for path in paths:
            if os.path.isfile(path) and path not in found:
                found.append(path)
    return found


def load():
    """Opens NCCL through the CUDA plugin (once per process).

    Returns
    -------
    tuple of (str, str)
        The library's path and its version, e.g. ``("/.../libnccl.so.2", "2.28.9")``.

    Raises
    ------
    RuntimeError
        When there is no GPU (NCCL runs through the CUDA plugin), or NCCL was not found (the
        message lists every place tried and why).
    """
    path, code = _core.nccl_load(wheel_candidates())
    return path, version_text(code)


def version_text(code):
    """``"2.28.9"`` for NCCL's version code 22809 (and ``"2.8.4"`` for the old 2804)."""
    if code >= 10000:
        return "%d.%d.%d" % (code // 10000, code % 10000 // 100, code % 100)
    return "%d.%d.%d" % (code // 1000, code % 1000 // 100, code % 100)
