"""Plugin discovery as Python sees it: statuses, reasons, DLARRAY_PLUGIN_PATH,
DLARRAY_DISABLE_PLUGINS, load_plugin, and an op plugin that adds ops without a core change."""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import dlarray
from dlarray import _core

FIELDS = {"name", "path", "origin", "status", "reason", "device_type", "device_count",
          "abi_version", "ops"}


def run_python(code, **env):
    """Runs code in a fresh interpreter (discovery happens at import) and returns its JSON."""
    full_env = dict(os.environ, **env)
    out = subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


REPORT = """
import json, numpy as np, dlarray
a = dlarray.array(np.array([-1.0, 2.0]))
b = dlarray.empty((2,))
dlarray.ops.relu(a, b)
print(json.dumps({"plugins": dlarray.plugins(), "relu": b.asnumpy().tolist(),
                  "devices": [repr(c) for c in dlarray.devices()]}))
"""


def by_name(report):
    return {pathlib.Path(p["path"]).name: p for p in report["plugins"]}


def test_plugins_report_fields():
    ps = dlarray.plugins()
    assert ps, "no plugin was tried"
    for p in ps:
        assert FIELDS <= set(p)
    cpu = [p for p in ps if p["name"] == "cpu"][0]
    assert cpu["status"] == "loaded" and cpu["reason"] == ""
    assert cpu["device_type"] == "cpu" and cpu["device_count"] == 1
    assert cpu["abi_version"] == dlarray._core.PLUGIN_ABI_VERSION
    assert pathlib.Path(cpu["path"]).parent.name == "plugins"
    assert "relu" in cpu["ops"]


def test_plugins_folder_is_found_next_to_the_core_library(tmp_path):
    """Not from the current directory or the interpreter's location."""
    out = subprocess.run([sys.executable, "-c", "import dlarray, json; "
                          "print(json.dumps(dlarray._core.plugin_search_path()))"],
                         cwd=tmp_path, capture_output=True, text=True, check=True)
    first = pathlib.Path(json.loads(out.stdout)[0])
    assert first == pathlib.Path(dlarray.__file__).parent / "plugins"


def test_every_broken_plugin_is_recorded_and_nothing_else_breaks(test_plugin_dir):
    report = run_python(REPORT, DLARRAY_PLUGIN_PATH=str(test_plugin_dir))
    assert report["relu"] == [0.0, 2.0]  # the CPU backend still works
    p = by_name(report)
    assert p["not_a_library.so"]["status"] == "open failed"
    assert "ELF" in p["not_a_library.so"]["reason"] or "short" in p["not_a_library.so"]["reason"]
    assert p["missing_dep_plugin.so"]["status"] == "open failed"
    assert "libdlarray_test_missing_dep.so" in p["missing_dep_plugin.so"]["reason"]
    assert p["no_entry_plugin.so"]["status"] == "missing entry symbol"
    assert "dlarray_plugin_entry" in p["no_entry_plugin.so"]["reason"]
    assert p["wrong_abi_plugin.so"]["status"] == "ABI mismatch"
    major, minor = dlarray._core.PLUGIN_ABI_VERSION
    assert f"built for plugin ABI {major + 1}.0" in p["wrong_abi_plugin.so"]["reason"]
    assert f"this runtime has plugin ABI {major}.{minor}" in p["wrong_abi_plugin.so"]["reason"]
    assert p["wrong_abi_plugin.so"]["abi_version"][0] == major + 1
    assert p["init_throws_plugin.so"]["status"] == "init failed"
    assert "simulated failure while opening" in p["init_throws_plugin.so"]["reason"]
    assert p["register_throws_plugin.so"]["status"] == "init failed"
    assert p["conflict_plugin.so"]["status"] == "init failed"
    assert "already has a kernel" in p["conflict_plugin.so"]["reason"]
    assert p["fake_device_plugin.so"]["status"] == "loaded"
    assert "fake_device(1)" in report["devices"]
    assert p["zero_devices_plugin.so"]["status"] == "no devices"
    assert "simulated: no test hardware present" in p["zero_devices_plugin.so"]["reason"]
    for rec in report["plugins"]:
        assert rec["origin"] in ("plugins folder", "DLARRAY_PLUGIN_PATH")


def test_zero_devices_reason_is_raised_at_first_use(test_plugin_dir):
    code = """
import json, dlarray
try:
    dlarray.empty((2,), dlarray.DLContext(0, 23))
    err = None
except RuntimeError as e:
    err = str(e)
print(json.dumps({"err": err, "plugins": dlarray.plugins()}))
"""
    report = run_python(code, DLARRAY_PLUGIN_PATH=str(test_plugin_dir / "zero_devices_plugin.so"))
    rec = by_name(report)["zero_devices_plugin.so"]
    assert rec["status"] == "no devices"
    assert "simulated: no test hardware present" in rec["reason"]
    assert "simulated: no test hardware present" in report["err"]
    assert "zero_devices" in report["err"]


def test_disable_plugins(test_plugin_dir):
    code = ("import json, dlarray; print(json.dumps({'plugins': dlarray.plugins(), "
            "'devices': [repr(c) for c in dlarray.devices()]}))")
    report = run_python(code, DLARRAY_DISABLE_PLUGINS="cpu,fake_device",
                        DLARRAY_PLUGIN_PATH=str(test_plugin_dir))
    p = by_name(report)
    assert p["cpu_backend.so"]["status"] == "disabled"
    assert p["fake_device_plugin.so"]["status"] == "disabled"
    assert "DLARRAY_DISABLE_PLUGINS" in p["cpu_backend.so"]["reason"]
    assert "cpu(0)" not in report["devices"]


def test_disabled_cpu_raises_reason_at_first_use():
    code = """
import json, dlarray
try:
    dlarray.empty((2,))
    err = None
except RuntimeError as e:
    err = str(e)
print(json.dumps({"err": err}))
"""
    report = run_python(code, DLARRAY_DISABLE_PLUGINS="cpu")
    assert "disabled by DLARRAY_DISABLE_PLUGINS" in report["err"]


def test_load_plugin_explicitly(test_plugin_dir):
    with pytest.raises(RuntimeError, match="ABI mismatch: built for plugin ABI 4.0"):
        dlarray.load_plugin(test_plugin_dir / "wrong_abi_plugin.so")
    with pytest.raises(RuntimeError, match="no such file"):
        dlarray.load_plugin(test_plugin_dir / "nope.so")
    rec = [p for p in dlarray.plugins() if p["path"].endswith("wrong_abi_plugin.so")][0]
    assert rec["origin"] == "load_plugin"
    info = dlarray.load_plugin(test_plugin_dir / "fake_device_plugin.so")
    assert info["status"] == "loaded" and info["device_count"] == 2
    fake0, fake1 = dlarray.DLContext(0, 20), dlarray.DLContext(1, 20)
    x = np.array([-1.0, 2.0, -3.0], np.float32)
    a = dlarray.array(x, fake0)
    b = a.copyto(fake1)
    c = dlarray.empty((3,), fake1)
    dlarray.ops.relu(b, c)
    np.testing.assert_array_equal(c.asnumpy(), np.maximum(x, 0))
    with pytest.raises(ValueError, match=r"different devices.*cpu\(0\).*fake_device\(1\)"):
        dlarray.ops.relu(dlarray.array(x), c)
    with pytest.raises(RuntimeError, match="no kernel"):
        dlarray.ops.softmax(b, c)


def test_extensions_are_found_on_the_arrays_device_type(test_plugin_dir):
    # The fake device (type 20) offers the graph and mem_info extensions the CUDA plugin offers.
    assert dlarray.load_plugin(test_plugin_dir / "fake_device_plugin.so")["status"] == "loaded"
    dev = dlarray.DLContext(1, 20)
    assert dlarray.mem_info(dev) == (1001, 2000)
    assert _core._graph_unavailable_reason(dev) == ""
    assert "does not offer" in _core._graph_unavailable_reason(dlarray.cpu())
    x = np.array([-1.0, 2.0, -3.0, 4.0], np.float32)
    a, out = dlarray.array(x, dev), dlarray.array(np.zeros(4, np.float32), dev)
    _core._graph_begin_capture(dev)
    assert _core._graph_is_capturing(dev)
    assert not _core._graph_is_capturing(dlarray.DLContext(0, 20))  # the other fake device
    dlarray.ops.relu(a, out)  # recorded, not run
    graph = _core._graph_end_capture(dev)
    assert graph.num_nodes == 1 and not _core._graph_is_capturing(dev)
    np.testing.assert_array_equal(out.asnumpy(), np.zeros(4))
    graph.launch()
    np.testing.assert_array_equal(out.asnumpy(), np.maximum(x, 0))
    with pytest.raises(ValueError, match="fake graph: nothing is recording"):
        _core._graph_end_capture(dev)
    with pytest.raises(ValueError, match=r"cpu\(0\) does not offer a complete dlarray.graph.v1"):
        _core._graph_begin_capture(dlarray.cpu())


LAZY_CODE = """
import json, dlarray
def libs():
    return {line.split()[-1] for line in open("/proc/self/maps") if ".so" in line}
at_import = libs()
devices = [repr(c) for c in dlarray.devices()]
print(json.dumps({"devices": devices, "loaded_by_devices": sorted(libs() - at_import)}))
"""


@pytest.mark.parametrize("eager", ["0", "1"])
def test_devices_are_counted_at_first_use(eager):
    """Discovery leaves counting devices to the first question: the OpenCL ICD loads its vendors'
    libraries (PoCL's LLVM) only then, unless DLARRAY_EAGER_PLUGINS=1 counts them at import."""
    report = run_python(LAZY_CODE, DLARRAY_EAGER_PLUGINS=eager)
    if not any(d.startswith("opencl") for d in report["devices"]):
        pytest.skip("no OpenCL device here: nothing is loaded late")
    loaded = [lib for lib in report["loaded_by_devices"] if "pocl" in lib or "OpenCL" in lib
              or "LLVM" in lib or "nvidia" in lib.lower()]
    if eager == "1":
        assert loaded == []
    else:
        assert loaded, report["loaded_by_devices"]
