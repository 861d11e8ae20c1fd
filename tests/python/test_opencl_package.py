"""backends/opencl built the way a third party builds and ships it:

- out of tree, against the installed SDK, with the command a third party types
  (``cmake -S backends/opencl -B build/opencl-oot -Ddlarray_DIR=$(python -m dlarray --cmake-dir)``);
- as the ``dlarray-opencl`` distribution, ``pip install ./backends/opencl``, into a fresh virtualenv
  that has dlarray (installed from the wheel ``make install`` built), where ``import dlarray``
  finds the device through the ``dlarray.plugins`` entry point with no environment variable.

The fresh virtualenv's dlarray has its bundled opencl_backend.so removed: it is then the dlarray of
a machine where the build found no OpenCL headers, and the device can only come from the
separately installed package. Slow (two builds of the plugin: a couple of minutes);
skipped where there is no OpenCL device to use.
"""
import json
import os
import pathlib
import subprocess
import sys

import pytest

import dlarray

ROOT = pathlib.Path(__file__).resolve().parents[2]
OOT_BUILD = ROOT / "build" / "opencl-oot"

pytestmark = pytest.mark.skipif(
    not any(c.device_type == 4 for c in dlarray.devices()),
    reason="no OpenCL device here (OpenCL headers, ICD loader and an implementation such as PoCL "
           "are needed)")

USE_DEVICE = """
import json, numpy as np, dlarray
ctx = dlarray.opencl(0)
x = np.linspace(-2, 2, 4099).astype(np.float32).reshape(1, -1)
a = dlarray.array(x, ctx)
y = dlarray.empty(x.shape, ctx)
dlarray.ops.relu(a, y)
back = dlarray.empty(x.shape, dlarray.cpu())
y.copyto(back)
print(json.dumps({"devices": [repr(c) for c in dlarray.devices()],
                  "ok": bool((back.asnumpy() == np.maximum(x, 0)).all()),
                  "plugins": [p for p in dlarray.plugins() if p["name"] == "opencl"]}))
"""


def clean_env(**extra):
    """The environment without any dlarray variable (nor PYTHONPATH), plus extra."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("DLARRAY_") and k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(extra)
    return env


def check(cmd, timeout=900, **kw):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    assert out.returncode == 0, "%s\n%s\n%s" % (" ".join(map(str, cmd)), out.stdout[-4000:],
                                                out.stderr[-4000:])
    return out.stdout


def run_json(python, code, **extra):
    out = check([str(python), "-c", code], env=clean_env(**extra), cwd="/")
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory, built_wheel):
    """A new virtualenv with dlarray installed from the wheel `make install` built (conftest's
    built_wheel), without its OpenCL plugin."""
    tmp = tmp_path_factory.mktemp("opencl_package")
    wheel = built_wheel
    venv = tmp / "venv"
    check([sys.executable, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    check([str(python), "-m", "pip", "install", "-q", str(wheel)], env=clean_env())
    package = pathlib.Path(check([str(python), "-c", "import dlarray, os; "
                                  "print(os.path.dirname(dlarray.__file__))"],
                                 env=clean_env()).strip())
    (package / "plugins" / "opencl_backend.so").unlink()
    before = run_json(python, "import json, dlarray; print(json.dumps("
                              "[repr(c) for c in dlarray.devices()]))")
    assert not [d for d in before if d.startswith("opencl")]
    return python


def test_out_of_tree_build_against_the_installed_sdk(fresh_venv):
    cmake_dir = check([sys.executable, "-m", "dlarray", "--cmake-dir"]).strip()
    check(["cmake", "-S", "backends/opencl", "-B", str(OOT_BUILD), "-Ddlarray_DIR=" + cmake_dir],
          cwd=ROOT)
    check(["cmake", "--build", str(OOT_BUILD), "-j2"], cwd=ROOT)
    plugin = OOT_BUILD / "opencl_backend.so"
    code = "import dlarray; dlarray.load_plugin(%r)\n" % str(plugin) + USE_DEVICE
    r = run_json(fresh_venv, code)
    assert r["ok"] and len(r["devices"]) >= 2
    assert r["plugins"][0]["status"] == "loaded" and r["plugins"][0]["origin"] == "load_plugin"
    assert r["plugins"][0]["path"] == str(plugin.resolve())


def test_pip_install_of_the_package_is_found_through_its_entry_point(fresh_venv):
    check([str(fresh_venv), "-m", "pip", "install", "-q", "./backends/opencl"], cwd=ROOT,
          env=clean_env())
    r = run_json(fresh_venv, USE_DEVICE)  # no DLARRAY_* variable at all
    assert r["ok"]
    [record] = r["plugins"]
    assert record["status"] == "loaded" and record["device_count"] >= 1
    assert record["origin"] == "entry point opencl (dlarray_opencl:plugin_path)"
    assert "site-packages/dlarray_opencl/opencl_backend.so" in record["path"]
    # DLARRAY_PLUGIN_PATH comes before entry points: its plugin serves, the package's is a
    # duplicate, and both say so.
    if (OOT_BUILD / "opencl_backend.so").is_file():
        r = run_json(fresh_venv, USE_DEVICE, DLARRAY_PLUGIN_PATH=str(OOT_BUILD))
        assert r["ok"]
        first, second = r["plugins"]
        assert first["origin"] == "DLARRAY_PLUGIN_PATH" and first["status"] == "loaded"
        assert second["origin"].startswith("entry point opencl") and second["status"] == "duplicate"
    check([str(fresh_venv), "-m", "pip", "uninstall", "-q", "-y", "dlarray-opencl"],
          env=clean_env())
    assert not [p for p in run_json(fresh_venv, USE_DEVICE.replace(
        "ctx = dlarray.opencl(0)", "ctx = dlarray.cpu(0)"))["plugins"]]
