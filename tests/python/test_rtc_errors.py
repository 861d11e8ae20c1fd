"""dlarray.rtc's errors that need no GPU: arguments checked against the kernel's signature before
anything is loaded, and clear reasons where NVRTC, the CUDA plugin or a GPU is missing (the CUDA
plugin itself keeps loading and serving its ops)."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import dlarray
import dlarray.rtc as rtc
from rtc_util import ADD, GPUS, STATUS, needs_nvrtc, rtc_cache  # noqa: F401

X = dlarray.array(np.zeros(4, np.float32), dlarray.cpu())


@pytest.fixture(scope="module")
def add():
    return rtc.RawKernel(ADD, "add")


CUDA_PLUGIN = {p["name"]: p["status"] for p in dlarray.plugins()}.get("cuda")
# The argument checks run where a plugin offers dlarray.rtc.v1 (a build with CUDA off has none).
needs_rtc_plugin = pytest.mark.skipif(CUDA_PLUGIN not in ("loaded", "no devices"),
                                      reason="no plugin offers dlarray.rtc.v1 here (cuda: %s)"
                                      % CUDA_PLUGIN)


@needs_rtc_plugin
@pytest.mark.parametrize("args,error,message", [
    ((None, None, None), TypeError, r"kernel 'add' takes 4 arguments \(const float\* x, const "
                                    r"float\* y, float\* z, int n\), got 3"),
    ((None, None, None, "4"), TypeError, r"argument 3 \(int n\): cannot pass str"),
    ((None, None, None, 4.5), TypeError, r"argument 3 \(int n\) is int32, got float 4.5"),
    ((None, None, None, np.int64(4)), TypeError, r"is int32, got numpy.int64: pass numpy.int32"),
    ((None, None, None, 2**40), ValueError, r"argument 3 \(int n\): 1099511627776 does not fit "
                                            r"int32"),
    ((None, None, None, -2**31 - 1), ValueError, "does not fit int32"),
    ((X, None, None, 4), ValueError, r"argument 0 \(const float\* x\) is on cpu\(0\): rtc kernels "
                                     r"take arrays on cuda devices"),
    ((None, None, None, X), TypeError, r"argument 3 \(int n\) is a scalar, got an NDArray"),
    ((1, None, None, 4), TypeError, r"argument 0 \(const float\* x\) takes an NDArray on a GPU "
                                    r"\(or None\), got int"),
])
def test_arguments_are_checked_against_the_signature(add, args, error, message):
    with pytest.raises(error, match=message):
        add((1,), (32,), args)


@needs_rtc_plugin
def test_pointer_dtypes_are_checked():
    k = rtc.RawKernel('extern "C" __global__ void k(double* x, void* any) {}', "k")
    with pytest.raises(TypeError, match=r"argument 0 \(double\* x\) points to float64, got an "
                                        r"array of float32"):
        k(1, 1, (X, None))
    doubles = dlarray.array(np.zeros(3, np.float64), dlarray.cpu())
    with pytest.raises(ValueError, match=r"argument 1 \(void\* any\) is on cpu\(0\)"):
        k(1, 1, (None, doubles))  # void*: any dtype


@pytest.mark.parametrize("grid,block,error,message", [
    (0, 32, ValueError, "grid sizes must be at least 1, got 0"),
    ((1, -2), 32, ValueError, "grid sizes must be at least 1, got -2"),
    ((1, 1, 1, 1), 32, ValueError, "grid must have 1 to 3 sizes"),
    ((), 32, ValueError, "grid must have 1 to 3 sizes"),
    (1.5, 32, TypeError, "grid sizes must be ints, got float"),
    (1, (32, True), TypeError, "block sizes must be ints, got bool"),
    (1, 2**33, ValueError, "block sizes must be at least 1"),
])
def test_grids_and_blocks_are_checked(add, grid, block, error, message):
    with pytest.raises(error, match="kernel 'add': " + message):
        add(grid, block, (None, None, None, 1))


@needs_rtc_plugin
def test_args_and_shared_memory_are_checked(add):
    with pytest.raises(TypeError, match="args must be a tuple or list"):
        add(1, 1, "xyz")
    with pytest.raises(ValueError, match="shared_mem must be 0 or more bytes, got -1"):
        add(1, 1, (None, None, None, 1), shared_mem=-1)
    with pytest.raises(ValueError, match=r"ctx must be a cuda device \(the device type offering"):
        add(1, 1, (None, None, None, 1), ctx=dlarray.cpu())
    # The device type is the one whose plugin offers the extension by name, not a constant.
    assert dlarray._core._rtc_device_type() == dlarray.gpu(0).device_type


def test_rtc_push_checks_its_arrays():
    k = rtc.Rtc("copy", [("x", X)], [("y", X)], "y[threadIdx.x] = x[threadIdx.x];")
    with pytest.raises(TypeError, match=r"takes 1 inputs \(x\) and 1 outputs \(y\), got 2 and 1"):
        k.push([X, X], [X], (1, 1, 1), (4, 1, 1))
    with pytest.raises(TypeError, match="'x' must be an NDArray, got ndarray"):
        k.push([np.zeros(4)], [X], (1, 1, 1), (4, 1, 1))
    if not STATUS["compile"]:
        with pytest.raises(ValueError,
                           match=r"is on cpu\(0\): rtc kernels take arrays on cuda devices"):
            k.push([X], [X], (1, 1, 1), (4, 1, 1))
    with pytest.raises(ValueError, match="not a C identifier"):
        rtc.Rtc("my kernel", [("x", X)], [], "")
    with pytest.raises(ValueError, match="used twice"):
        rtc.Rtc("k", [("x", X)], [("x", X)], "")
    with pytest.raises(TypeError, match=r"\(name, NDArray\) pairs"):
        rtc.Rtc("k", [X], [], "")


@pytest.mark.skipif(bool(GPUS), reason="this machine has a GPU: launching works")
def test_without_a_gpu_launching_says_why(add):
    reason = STATUS["launch"]
    assert reason and not rtc.is_available()
    plugin = {p["name"]: p for p in dlarray.plugins()}.get("cuda")
    if plugin is not None and plugin["status"] == "no devices":
        assert plugin["reason"].endswith(reason)  # the CUDA plugin's own reason
    else:  # no CUDA plugin at all
        assert reason.startswith("dlarray.rtc needs a device plugin offering dlarray.rtc.v1")
    with pytest.raises(RuntimeError, match=re.escape(reason[:60])):
        add(1, 1, (None, None, None, 1), ctx=dlarray.gpu(0))
    with pytest.raises(RuntimeError, match=re.escape(reason[:60])):
        add.compile()


PROBE = r"""
import json, numpy as np, dlarray, dlarray.rtc as rtc
out = {"status": rtc.status(), "plugins": {p["name"]: p["status"] for p in dlarray.plugins()}}
try:
    rtc.RawKernel('extern "C" __global__ void k(float* x) {}', "k").compile(arch=90)
    out["compile"] = "compiled"
except RuntimeError as e:
    out["compile"] = str(e)
gpus = [c for c in dlarray.devices() if c.device_type == 2]
if gpus:
    a = dlarray.array(np.arange(5, dtype=np.float32), gpus[0])
    dlarray.ops.matrix_elementwise_add(a, a, a)
    out["op"] = a.asnumpy().tolist()
print(json.dumps(out))
"""


def probe(**env):
    result = subprocess.run([sys.executable, "-c", PROBE], env=dict(os.environ, **env),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])



@pytest.mark.skipif(CUDA_PLUGIN not in ("loaded", "no devices"),
                    reason="the CUDA plugin is not loaded here (%s)" % CUDA_PLUGIN)
def test_without_nvrtc_the_cuda_plugin_still_serves_and_rtc_says_why():
    missing = "/nonexistent/libnvrtc.so.99"
    out = probe(DLARRAY_NVRTC=missing)
    reason = out["status"]["compile"]
    assert reason.startswith("NVRTC is not available: ") and missing in reason
    assert "DLARRAY_NVRTC" in reason
    assert out["compile"] == "dlarray.rtc cannot compile: " + reason
    assert out["plugins"].get("cuda") == CUDA_PLUGIN  # loaded, or "no devices" without a GPU
    if GPUS:
        assert out["op"] == [0, 2, 4, 6, 8]


def test_without_the_cuda_plugin_rtc_says_why():
    out = probe(DLARRAY_DISABLE_PLUGINS="cuda")
    prefix = "dlarray.rtc needs a device plugin offering dlarray.rtc.v1"
    assert out["compile"].startswith(prefix), out["compile"]
    # A build with the CUDA plugin names it disabled; one without it (DLARRAY_CUDA=OFF, as the
    # sanitizer build) finds no plugin that offers the extension.
    if CUDA_PLUGIN is not None:
        assert "cuda (" in out["compile"] and "disabled" in out["compile"]
    assert out["status"]["launch"] == out["status"]["compile"]


@needs_nvrtc
def test_nvrtc_found_through_dlarray_nvrtc():
    out = probe(DLARRAY_NVRTC=STATUS["nvrtc_library"])
    assert out["compile"] == "compiled"
    assert out["status"]["nvrtc_library"] == STATUS["nvrtc_library"]
