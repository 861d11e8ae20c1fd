"""DLARRAY_DEFAULT_DEVICE (issue 26, defect 10): the variable names the default device; one that
is not usable (``gpu`` on a machine without a GPU) raises where the default is first used,
naming the variable and the usable devices. Before, the variable was ignored and arrays went to
the CPU silently. Each case runs in a fresh interpreter (the variable is read by that process)."""
import json

import pytest

import dlarray
from proc_util import run

PROBE = """
import json, dlarray
out = {"import": "ok"}
try:
    out["device"] = repr(dlarray.empty((2,)).ctx)
except Exception as e:
    out["error"] = [type(e).__name__, str(e)]
try:  # Python data has no device of its own: asarray puts it on the default device too
    out["asarray"] = repr(dlarray.asarray([1.0, 2.0]).ctx)
except Exception as e:
    out["asarray_error"] = [type(e).__name__, str(e)]
import numpy as np  # host data too: asarray of a NumPy array goes to the default device
try:
    out["asarray_numpy"] = repr(dlarray.asarray(np.ones(2)).ctx)
except Exception as e:
    out["asarray_numpy_error"] = [type(e).__name__, str(e)]
with dlarray.using_device("cpu"):  # an explicit choice still works
    out["explicit"] = repr(dlarray.array([1.0]).ctx)
print(json.dumps(out))
"""


def _probe(value, **env):
    r = run(PROBE, env={"DLARRAY_DEFAULT_DEVICE": value, **env}, timeout=120)
    assert r.returncode == 0, r
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_gpu_without_a_gpu_raises_at_first_use():
    # the CUDA plugin disabled: a machine without a GPU, also where there is one
    out = _probe("gpu", DLARRAY_DISABLE_PLUGINS="cuda")
    assert out["import"] == "ok" and "device" not in out
    kind, message = out["error"]
    assert kind in ("RuntimeError", "ValueError")
    assert "DLARRAY_DEFAULT_DEVICE='gpu'" in message
    assert "cpu(0)" in message  # the usable devices
    assert out["explicit"] == "cpu(0)"
    assert "asarray" not in out, "asarray put Python data on the CPU silently"
    assert out["asarray_error"] == out["error"]
    assert out["asarray_numpy_error"] == out["error"]


@pytest.mark.parametrize("value", ["gpu", "cuda", "cuda:0"])
def test_every_spelling_of_the_gpu_raises_without_one(value):
    out = _probe(value, DLARRAY_DISABLE_PLUGINS="cuda")
    assert "device" not in out and "asarray" not in out
    assert "DLARRAY_DEFAULT_DEVICE=%r" % value in out["error"][1]
    assert "DLARRAY_DEFAULT_DEVICE=%r" % value in out["asarray_error"][1]


@pytest.mark.parametrize("value,kind", [("cpu:3", "ValueError"), ("tpu", "ValueError"),
                                        ("cuda:x", "ValueError")])
def test_unusable_values_raise_naming_the_variable(value, kind):
    out = _probe(value)
    assert out["error"][0] == kind
    assert "DLARRAY_DEFAULT_DEVICE=%r" % value in out["error"][1]


@pytest.mark.parametrize("value", ["cpu", " cpu:0 ", ""])
def test_usable_or_empty_values(value):
    out = _probe(value)
    assert out["device"] == out["asarray"] == out["asarray_numpy"] == "cpu(0)"


def test_a_gpu_when_there_is_one():
    if not any(c.device_type == 2 for c in dlarray.devices()):
        pytest.skip("no usable GPU")
    assert _probe("cuda:0")["device"] == "cuda(0)"
