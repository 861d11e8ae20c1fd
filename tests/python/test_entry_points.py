"""Plugins found through the ``dlarray.plugins`` entry-point group
(python/dlarray/_entry_points.py): a fake distribution on PYTHONPATH declares entry points that load, fail to import, name a missing
library, and give something that is not a path. ``import dlarray`` never raises for them; each
shows in ``dlarray.plugins()`` with its origin and reason."""
import json
import os
import subprocess
import sys

CHECK = """
import json, dlarray
print(json.dumps({"plugins": dlarray.plugins(), "devices": [repr(c) for c in dlarray.devices()]}))
"""


def fake_distribution(root, entry_points, module_source):
    info = root / "fakeplugins-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplugins\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[dlarray.plugins]\n" + entry_points)
    (root / "fake_ep_mod.py").write_text(module_source)


def run_with(path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(path), os.environ.get("PYTHONPATH")])))
    env.pop("DLARRAY_PLUGIN_PATH", None)
    out = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_entry_points_load_or_say_why(tmp_path, test_plugin_dir):
    good = test_plugin_dir / "fake_device_plugin.so"
    fake_distribution(tmp_path, (
        "good = fake_ep_mod:good\n"
        "broken = no_such_module_for_dlarray:plugin_path\n"
        "missing = fake_ep_mod:missing\n"
        "number = fake_ep_mod:number\n"
        "raises = fake_ep_mod:raises\n"), (
        "import pathlib\n"
        "def good():\n    return pathlib.Path(%r)\n"
        "def missing():\n    return '/nonexistent/dlarray_missing_plugin.so'\n"
        "number = 42\n"
        "def raises():\n    raise OSError('no library for this machine')\n") % str(good))
    report = run_with(tmp_path)
    by_origin = {p["origin"].split(" ")[2]: p for p in report["plugins"]
                 if p["origin"].startswith("entry point ")}
    assert set(by_origin) == {"good", "broken", "missing", "number", "raises"}
    assert by_origin["good"]["status"] == "loaded"
    assert by_origin["good"]["origin"] == "entry point good (fake_ep_mod:good)"
    assert by_origin["good"]["path"] == str(good.resolve())
    assert by_origin["broken"]["status"] == "entry point failed"
    assert "ModuleNotFoundError" in by_origin["broken"]["reason"]
    assert by_origin["missing"]["status"] == "open failed"
    assert by_origin["missing"]["reason"] == "no such file"
    assert by_origin["number"]["status"] == "entry point failed"
    assert "TypeError" in by_origin["number"]["reason"] and "42" in by_origin["number"]["reason"]
    assert by_origin["raises"]["status"] == "entry point failed"
    assert "no library for this machine" in by_origin["raises"]["reason"]
    # Entry points come after the plugins folder: the core's own plugins are listed first.
    origins = [p["origin"] for p in report["plugins"]]
    assert origins[0] == "plugins folder"
    assert "cpu(0)" in report["devices"]


def test_no_entry_points_changes_nothing(tmp_path):
    report = run_with(tmp_path)  # an empty folder on PYTHONPATH
    assert not [p for p in report["plugins"] if p["origin"].startswith("entry point")]
