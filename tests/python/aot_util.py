"""What the dlarray.custom tests share: where the kernels are, and the device each runs on."""
import pathlib
import shutil

import pytest

import dlarray

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "custom_ops"
KERNELS = pathlib.Path(__file__).resolve().parent / "aot_kernels"
SEEDS = ROOT.parent / "shared" / "seeds"

GPUS = [c for c in dlarray.devices() if c.device_type == 2]
HAVE_NVCC = bool(shutil.which("nvcc") or pathlib.Path("/usr/local/cuda/bin/nvcc").exists())

needs_gpu = pytest.mark.skipif(not GPUS, reason="no usable GPU on this machine")
needs_nvcc = pytest.mark.skipif(not HAVE_NVCC, reason="nvcc is not installed")


def example(name, func):
    """"path:Func" for a file of examples/custom_ops."""
    return "%s:%s" % (EXAMPLES / name, func)


def probe(func):
    """"path:Func" in tests/python/aot_kernels/probe_ops.cc."""
    return "%s:%s" % (KERNELS / "probe_ops.cc", func)


def add_impls():
    """The custom add for every device this machine can run it on."""
    funcs = {"cpu": example("custom_add.cc", "CustomAdd")}
    if GPUS:
        funcs["gpu"] = example("custom_add.cu", "CustomAdd")
    return funcs
