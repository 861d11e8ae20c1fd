"""The dlarray-cuda wheel (scripts/build_cuda_wheel.py, `make cuda-wheel`): the CUDA plugin of
`make install`'s build as a package of its own. CUDA cannot run here: these tests check what it
holds, what it says (metadata: dlarray of the same version, NVIDIA's runtime wheels, the `nccl`
extra; the `dlarray.plugins` entry point), its RUNPATH (NVIDIA's wheels) and that `import dlarray`
finds the plugin through the entry point. The GPU machine runs the rest (docs/install.md)."""
import email
import importlib.util
import json
import re
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT
from proc_util import run

sys.path.insert(0, str(ROOT / "scripts"))
import build_cuda_wheel  # noqa: E402

VERSION = (ROOT / "VERSION").read_text().strip()


@pytest.fixture(scope="module")
def cuda_wheel(built_wheel, tmp_path_factory):
    if importlib.util.find_spec("auditwheel") is None:
        pytest.skip("auditwheel is not installed (the Makefile's venv step installs it)")
    with zipfile.ZipFile(built_wheel) as z:
        if build_cuda_wheel.PLUGIN not in z.namelist():
            pytest.skip("this build has no CUDA plugin (no nvcc)")
    return build_cuda_wheel.build(built_wheel, tmp_path_factory.mktemp("cuda_wheel"))


def test_name_and_tag(cuda_wheel):
    # One wheel for every Python (a C library behind the plugin ABI), tagged by auditwheel.
    assert re.fullmatch(r"dlarray_cuda-%s-py3-none-manylinux_\d+_\d+_x86_64\.whl"
                        % re.escape(VERSION), cuda_wheel.name), cuda_wheel.name


def test_contents_metadata_and_entry_point(cuda_wheel):
    with zipfile.ZipFile(cuda_wheel) as z:
        names = z.namelist()
        info = "dlarray_cuda-%s.dist-info/" % VERSION
        meta = email.message_from_bytes(z.read(info + "METADATA"))
        entry_points = z.read(info + "entry_points.txt").decode()
    assert "dlarray_cuda/__init__.py" in names and "dlarray_cuda/lib/cuda_backend.so" in names
    # NVIDIA's libraries come from their wheels, never from ours; nothing else is grafted.
    assert not [n for n in names if n.endswith(".so") or ".so." in n
                if n != "dlarray_cuda/lib/cuda_backend.so"], names
    assert meta["Name"] == "dlarray-cuda" and meta["Version"] == VERSION
    requires = meta.get_all("Requires-Dist")
    assert "dlarray==" + VERSION in requires
    for package in ("nvidia-cuda-runtime", "nvidia-cublas", "nvidia-cuda-nvrtc"):
        assert [r for r in requires if r.startswith(package) and "extra" not in r], requires
    assert meta.get_all("Provides-Extra") == ["nccl"]
    assert [r for r in requires if r.startswith("nvidia-nccl") and 'extra == "nccl"' in r]
    assert entry_points.split() == ["[dlarray.plugins]", "cuda", "=", "dlarray_cuda:plugin_path"]


def test_plugin_finds_nvidia_wheels_by_runpath(cuda_wheel, tmp_path):
    with zipfile.ZipFile(cuda_wheel) as z:
        z.extract("dlarray_cuda/lib/cuda_backend.so", tmp_path)
    dynamic = subprocess.run(["readelf", "-dW", str(tmp_path / "dlarray_cuda/lib/cuda_backend.so")],
                             capture_output=True, text=True, check=True).stdout
    runpath = re.search(r"R(?:UN)?PATH\).*\[(.*)\]", dynamic)
    assert runpath and "$ORIGIN/../../nvidia/cu" in runpath.group(1), dynamic
    assert "libcudart.so" in dynamic  # linked; cuBLAS, NVRTC, ... are opened at first use


def test_main_package_offers_the_cuda_extra():
    import tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["optional-dependencies"]["cuda"] == ["dlarray-cuda"]


FIND = """
    import json, dlarray
    print(json.dumps([p for p in dlarray.plugins() if p["origin"].startswith("entry point cuda")]))
"""


def test_import_dlarray_finds_it_through_the_entry_point(cuda_wheel, tmp_path):
    # Unpacked on PYTHONPATH beside this environment's dlarray, whose own CUDA plugin (plugins
    # folder) serves CUDA first: the entry point's library is found, opened and a duplicate.
    with zipfile.ZipFile(cuda_wheel) as z:
        z.extractall(tmp_path)
    r = run(FIND, env={"PYTHONPATH": str(tmp_path)})
    assert r.returncode == 0, r
    records = json.loads(r.stdout.strip().splitlines()[-1])
    assert len(records) == 1, records
    assert records[0]["origin"] == "entry point cuda (dlarray_cuda:plugin_path)", records
    assert records[0]["path"].endswith("dlarray_cuda/lib/cuda_backend.so"), records
    assert records[0]["status"] in ("duplicate", "loaded", "no devices", "open failed"), records
