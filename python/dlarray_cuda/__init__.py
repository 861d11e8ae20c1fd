"""dlarray's CUDA plugin as a package of its own (``pip install dlarray[cuda]``).

The ``dlarray`` wheel carries the core, the CPU and the OpenCL plugins; this one carries the CUDA
plugin library and depends on NVIDIA's runtime wheels (cudart, cuBLAS, NVRTC, cuFFT, cuSOLVER),
which it finds in ``site-packages/nvidia/cu13/lib`` (its RUNPATH). ``import dlarray`` loads it
through the ``dlarray.plugins`` entry point this distribution declares; ``dlarray.plugins()``
lists it with that origin, and without a driver it reports zero devices with the reason.
"""
import os

__all__ = ["plugin_path"]


def plugin_path() -> str:
    """The path of the CUDA plugin library in this package (the entry point's target)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "cuda_backend.so")
