"""dlarray-opencl: OpenCL devices for dlarray.

Installing this distribution is enough: ``import dlarray`` loads ``opencl_backend.so`` through the
``dlarray.plugins`` entry point, and the devices appear as ``dlarray.opencl(0)``, ...
"""
import pathlib

__all__ = ["plugin_path"]


def plugin_path():
    """The path of ``opencl_backend.so``, for dlarray's plugin loader.

    Returns
    -------
    str
        The library installed next to this module.
    """
    return str(pathlib.Path(__file__).resolve().with_name("opencl_backend.so"))
