"""Where dlarray.distributed looks for NCCL beyond what the CUDA plugin searches itself.

The CUDA plugin opens ``libnccl.so.2`` from ``DLARRAY_NCCL_LIBRARY`` when it is set, else from
the candidates given here (the ``nvidia-nccl-cu12`` / ``-cu13`` wheels' lib folders, the ones
PyTorch uses), then the dynamic loader's search path and the CUDA toolkit's folders.
"""

import importlib.util
import os

from .. import _core

# Where the nvidia-nccl wheels put the library, below a folder of the `nvidia` namespace package.
_WHEEL_FOLDERS = ("nccl/lib", "cu13/lib", "cu12/lib")


def wheel_candidates():
    """The ``libnccl.so.2`` files of installed nvidia-nccl wheels, in ``sys.path`` order.

    Returns
    -------
    list of str
        Absolute paths of the files that exist (empty when no wheel is installed).
    """
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    found = []
    for root in roots:
        for sub in _WHEEL_FOLDERS:
            path = os.path.join(root, sub, "libnccl.so.2")
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
