"""The wheel that says what it is: `make install`'s wheel, repaired by auditwheel (as `make wheel`
does), is a manylinux wheel that carries its OpenMP, finds its BLAS in the scipy-openblas32
package it depends on, holds only $ORIGIN-relative RUNPATHs, and works when installed into a fresh virtualenv outside the source tree: the op tests
pass against it there."""
import importlib.util
import os
import pathlib
import platform
import re
import subprocess
import sys
import venv
import zipfile

import pytest

import dlarray
from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import repair_wheel  # noqa: E402


def _elf_runpaths(path):
    """RUNPATH/RPATH entries of an ELF file (pyelftools, which auditwheel brings)."""
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile
    with open(path, "rb") as f:
        elf = ELFFile(f)
        out = []
        for section in elf.iter_sections():
            if isinstance(section, DynamicSection):
                for tag in section.iter_tags():
                    if tag.entry.d_tag in ("DT_RUNPATH", "DT_RPATH"):
                        out += [p for p in getattr(tag, tag.entry.d_tag[3:].lower()).split(":")
                                if p]
        return out


def _is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


@pytest.fixture(scope="module")
def repaired(built_wheel, tmp_path_factory):
    if importlib.util.find_spec("auditwheel") is None:
        pytest.skip("auditwheel is not installed (the Makefile's venv step installs it)")
    out = tmp_path_factory.mktemp("repaired")
    return repair_wheel.repair(built_wheel, out)


@pytest.fixture(scope="module")
def unpacked(repaired, tmp_path_factory):
    root = tmp_path_factory.mktemp("unpacked")
    with zipfile.ZipFile(repaired) as z:
        z.extractall(root)
    return root


def test_tag_is_manylinux_and_no_newer_than_this_glibc(repaired):
    m = re.search(r"-manylinux_(\d+)_(\d+)_x86_64\.whl$", repaired.name)
    assert m, repaired.name
    glibc = tuple(int(x) for x in platform.libc_ver()[1].split(".")[:2])
    assert (int(m.group(1)), int(m.group(2))) <= glibc, (repaired.name, glibc)


def test_carries_its_openmp_and_depends_on_its_blas(unpacked):
    libs = [p.relative_to(unpacked).as_posix() for p in unpacked.rglob("*.so*")]
    # scipy-openblas32 is a dependency, not a copy: no OpenBLAS inside, the metadata requires
    # the package, and every library that links it finds site-packages/scipy_openblas32/lib.
    assert not [p for p in libs if "openblas" in p], libs
    metadata = next(unpacked.glob("*.dist-info/METADATA")).read_text()
    assert re.search(r"^Requires-Dist: scipy-openblas32\b", metadata, re.M), metadata[:2000]
    users = [p for p in unpacked.rglob("*.so*")
             if _is_elf(p) and repair_wheel.BLAS_SONAME in _needed(p)]
    if dlarray.show_config(mode="dicts")["cpu"]["blas"]["name"].startswith("scipy-openblas32"):
        assert users, libs  # else a build without it (a system BLAS, or none)
    for path in users:
        wanted = "$ORIGIN/" + os.path.relpath(unpacked / repair_wheel.BLAS_DIR, path.parent)
        assert wanted in _elf_runpaths(path), (path.relative_to(unpacked), _elf_runpaths(path))
    plugin_deps = _needed(unpacked / "dlarray" / "plugins" / "sigmoid_ops.so")
    gomp = [d for d in plugin_deps if d.startswith("libgomp")]
    if gomp:  # the OpenMP runtime the op plugin needs is inside the wheel
        assert any(p.startswith("dlarray.libs/libgomp") for p in libs), libs
    # CUDA's libraries come from NVIDIA's wheels or the system, never from ours.
    assert not [p for p in libs if re.search(r"lib(cudart|cublas|cublasLt|nccl|cuda)\b", p)], libs


def _needed(path):
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile
    with open(path, "rb") as f:
        return [t.needed for s in ELFFile(f).iter_sections() if isinstance(s, DynamicSection)
                for t in s.iter_tags() if t.entry.d_tag == "DT_NEEDED"]


def test_runpaths_are_origin_relative(unpacked, built_wheel):
    # Both the wheel `make install` built and the repaired one: no build-machine path anywhere.
    with zipfile.ZipFile(built_wheel) as z:
        plain = unpacked.parent / "plain"
        z.extractall(plain)
    for tree in (unpacked, plain):
        elves = [p for p in tree.rglob("*") if p.is_file() and ".so" in p.name and _is_elf(p)]
        assert elves
        for path in elves:
            for entry in _elf_runpaths(path):
                assert entry.startswith("$ORIGIN"), (path.relative_to(tree), entry)
    cuda = unpacked / "dlarray" / "plugins" / "cuda_backend.so"
    if cuda.exists():  # NVIDIA's CUDA wheels: site-packages/nvidia/cu13/lib (or per library)
        assert [e for e in _elf_runpaths(cuda) if "/../../nvidia/" in e], _elf_runpaths(cuda)


FRESH_CHECK = r"""
import json, os, sys
import dlarray
cfg = dlarray.show_config(mode="dicts")
print(json.dumps({"file": dlarray.__file__, "blas": cfg["cpu"]["blas"],
                  "plugins": cfg["plugins"], "devices": [repr(d) for d in dlarray.devices()]}))
"""


def test_installs_into_a_fresh_venv_and_passes_the_op_tests(repaired, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    py = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.pop("DLARRAY_PLUGIN_PATH", None)
    install = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                              str(repaired), "pytest"], env=env, capture_output=True, text=True,
                             timeout=600)
    if install.returncode != 0 and "numpy" in install.stderr.lower() and (
            "could not find" in install.stderr.lower() or "network" in install.stderr.lower()):
        pytest.skip("no package index reachable for numpy/pytest: " + install.stderr[-300:])
    assert install.returncode == 0, install.stderr
    # The installed package, not the source tree: run from a folder outside it.
    r = subprocess.run([str(py), "-c", FRESH_CHECK], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    import json
    info = json.loads(r.stdout.splitlines()[-1])
    site = pathlib.Path(info["file"]).resolve().parent
    assert str(site).startswith(str(env_dir.resolve())), info["file"]
    assert info["plugins"]["cpu"]["status"] == "loaded", info
    assert "cpu(0)" in info["devices"]
    if info["blas"]["name"].startswith("scipy-openblas32"):  # pip installed the dependency
        blas = pathlib.Path(info["blas"]["library"]).resolve()
        assert blas.parent == site.parent / "scipy_openblas32" / "lib", info
    # A CUDA plugin that cannot find its libraries says which one and where it looked.
    cuda = info["plugins"].get("cuda")
    if cuda and cuda["status"] == "open failed":
        assert "libcu" in cuda["reason"] and "nvidia" in cuda["reason"], cuda
    # The op tests, against the installed wheel.
    tests = ROOT / "tests" / "python"
    r = subprocess.run([str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        str(tests / "test_ops.py")], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert re.search(r"\d+ passed", r.stdout), r.stdout[-500:]
