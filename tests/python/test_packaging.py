"""The wheel and the sdist carry the licence, the notices and the metadata, and the version of
VERSION; the wheel is the one installed. The wheel is the one `make install` built (see the
built_wheel fixture in conftest.py), so these checks cost no extra build."""
import email.parser
import hashlib
import importlib.metadata
import re
import shutil
import subprocess
import tarfile
import zipfile

import pytest

from conftest import ROOT, find_built_wheel

VERSION = (ROOT / "VERSION").read_text().strip()
LICENCE_FILES = ["LICENSE", "THIRD_PARTY_NOTICES.md"]


def pyproject():
    tomllib = pytest.importorskip("tomllib", reason="tomllib needs Python 3.11")
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def parse_metadata(text):
    return email.parser.Parser().parsestr(text)


@pytest.fixture(scope="module")
def wheel(built_wheel):
    with zipfile.ZipFile(built_wheel) as z:
        yield z


def dist_info(wheel):
    names = {n.split("/")[0] for n in wheel.namelist() if ".dist-info/" in n}
    assert names == {f"dlarray-{VERSION}.dist-info"}, names
    return names.pop()


def check_metadata(meta):
    """Core metadata (METADATA or PKG-INFO) against pyproject.toml and VERSION."""
    project = pyproject()["project"]
    assert meta["Name"] == "dlarray"
    assert meta["Version"] == VERSION
    assert meta["License-Expression"] == "Apache-2.0"
    assert sorted(meta.get_all("License-File")) == sorted(LICENCE_FILES)
    assert meta["Author"] == "The dlarray authors"
    assert meta.get_all("Classifier") == project["classifiers"]
    assert not [c for c in project["classifiers"] if c.startswith("License ::")], (
        "PEP 639: the licence is the License-Expression, not a classifier")
    assert "numpy>=1.21" in meta.get_all("Requires-Dist")
    for url in meta.get_all("Project-URL") or []:
        label, _, address = url.partition(", ")
        assert label and re.match(r"https://\S+$", address), url


def test_licence_is_apache_2():
    text = (ROOT / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_wheel_carries_licence_and_notices(wheel):
    info = dist_info(wheel)
    for name in LICENCE_FILES:
        assert wheel.read(f"{info}/licenses/{name}") == (ROOT / name).read_bytes(), name


def test_wheel_carries_the_sample_data(wheel):
    """The tutorials' digits ship in the wheel (dlarray.datasets), as data/ has them."""
    for name in ("mnist10k.npz", "README.md"):
        assert wheel.read(f"dlarray/data/{name}") == (ROOT / "data" / name).read_bytes(), name


def test_wheel_metadata(wheel):
    check_metadata(parse_metadata(wheel.read(f"{dist_info(wheel)}/METADATA").decode()))


def test_wheel_is_the_installed_package(wheel, built_wheel):
    """The checked wheel is what pip installed: the same _core, byte for byte."""
    if built_wheel != find_built_wheel():
        pytest.skip("this wheel was built by the tests, not installed by `make install`")
    core = [n for n in wheel.namelist() if re.fullmatch(r"dlarray/_core\..*\.so", n)]
    assert len(core) == 1, core
    installed = [f for f in importlib.metadata.files("dlarray") if str(f) == core[0]]
    assert installed, "the installed dlarray has no " + core[0]
    digest = hashlib.sha256(installed[0].locate().read_bytes()).hexdigest()
    assert digest == hashlib.sha256(wheel.read(core[0])).hexdigest(), (
        "the installed dlarray is not this wheel: run `make install`")


@pytest.fixture(scope="module")
def sdist(built_sdist):
    with tarfile.open(built_sdist) as t:
        yield t


def test_sdist_name_and_metadata(sdist, built_sdist):
    assert built_sdist.name == f"dlarray-{VERSION}.tar.gz"
    check_metadata(parse_metadata(sdist.extractfile(f"dlarray-{VERSION}/PKG-INFO").read().decode()))


def test_sdist_carries_every_tracked_file(sdist):
    """Everything the build needs, LICENSE, NOTICES, VERSION and CHANGELOG included."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True).stdout.decode().split("\0")
    tracked = {f for f in tracked if f and (ROOT / f).is_file()}
    names = {n.partition("/")[2] for n in sdist.getnames()}
    for name in LICENCE_FILES + ["VERSION", "CHANGELOG.md", "pyproject.toml", "CMakeLists.txt"]:
        assert name in names, name
    missing = sorted(tracked - names)
    assert not missing, f"tracked files missing from the sdist: {missing[:10]}"
    assert sdist.extractfile(f"dlarray-{VERSION}/VERSION").read().decode().strip() == VERSION


def installed_by_setup():
    """Every package the set-up installs: Debian (install_system_deps.sh) and PyPI (Makefile,
    docs/requirements.txt)."""
    script = (ROOT / "scripts" / "install_system_deps.sh").read_text()
    apt = set()
    for body in re.findall(r"^\w*packages=\(([^)]*)\)", script, re.M):
        apt.update(w for w in body.split() if not w.startswith("$"))
    makefile = (ROOT / "Makefile").read_text()
    pip = set()
    for line in re.findall(r"pip install -q (\"?[A-Za-z].*)$", makefile, re.M):
        pip.update(re.split(r"[<>=\[]", w.strip('"'))[0] for w in line.split()
                   if not w.startswith(("-", "$")))
    requirements = (ROOT / "docs" / "requirements.txt").read_text().splitlines()
    pip.update(re.split(r"[<>=\[ ]", r)[0] for r in requirements if r and not r.startswith("#"))
    return apt, pip


def test_notices_list_every_dependency():
    """A row in THIRD_PARTY_NOTICES.md for every package the set-up installs."""
    notices = (ROOT / "THIRD_PARTY_NOTICES.md").read_text()
    apt, pip = installed_by_setup()
    assert "libboost-dev" in apt and "numpy" in pip and "sphinx" in pip  # the parsing works
    missing = sorted(p for p in apt | pip if f"`{p}`" not in notices)
    assert not missing, ("THIRD_PARTY_NOTICES.md has no row for " + ", ".join(missing) +
                         ": add each with its licence")
