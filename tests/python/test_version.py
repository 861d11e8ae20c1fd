"""One version: the VERSION file, and every place it must reach, agree.

Each entry of VERSION_SOURCES names a place the version reaches and a function that reads it
there (or calls pytest.skip with the reason it cannot be read here). To check a new place (the
core's SONAME, dlarrayConfigVersion.cmake, ...), add one function and one entry.
"""
import importlib.metadata
import pathlib
import re
import subprocess
import sys

import pytest

import dlarray
from conftest import ROOT, TEST_PLUGIN_DIR

VERSION = (ROOT / "VERSION").read_text().strip()


def _build_dirs():
    """CMake build trees of this source tree (the Makefile's build/py, the GPU check's, ...)."""
    dirs = {p.parent for p in ROOT.glob("build/*/CMakeCache.txt")}
    if TEST_PLUGIN_DIR is not None:
        dirs.add(TEST_PLUGIN_DIR.parent)
    ours = []
    for d in sorted(dirs):
        cache = d / "CMakeCache.txt"
        if not cache.is_file():
            continue
        home = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", cache.read_text(), re.M)
        if home and pathlib.Path(home.group(1)).resolve() == ROOT:
            ours.append(d)
    return ours


def cmake_project_version():
    """DLARRAY_VERSION as CMake configured it (CMakeCache.txt of each build tree)."""
    found = set()
    for d in _build_dirs():
        m = re.search(r"^DLARRAY_VERSION:INTERNAL=(.*)$", (d / "CMakeCache.txt").read_text(), re.M)
        if m is None:
            pytest.fail(f"{d}/CMakeCache.txt has no DLARRAY_VERSION (configured before VERSION?)")
        found.add(m.group(1))
    if not found:
        pytest.skip("no CMake build tree of this source tree under build/")
    if len(found) > 1:
        pytest.fail(f"build trees disagree: {sorted(found)} (reconfigure the stale one)")
    return found.pop()


def core_module_version():
    """The DLARRAY_VERSION compile definition of dlarray._core."""
    return dlarray._core.__version__


def package_version():
    return dlarray.__version__


def distribution_metadata_version():
    """What pip installed (the wheel's METADATA)."""
    return importlib.metadata.version("dlarray")


def command_line_version():
    out = subprocess.run([sys.executable, "-m", "dlarray", "--version"], capture_output=True,
                         text=True, check=True).stdout
    m = re.fullmatch(r"dlarray (\S+)\n", out)
    assert m, f"python -m dlarray --version printed {out!r}"
    return m.group(1)


def package_config_version():
    """PACKAGE_VERSION of the installed package's dlarrayConfig-version.cmake."""
    out = subprocess.run([sys.executable, "-m", "dlarray", "--cmake-dir"], capture_output=True,
                         text=True, check=True).stdout.strip()
    text = (pathlib.Path(out) / "dlarrayConfig-version.cmake").read_text()
    return re.search(r'set\(PACKAGE_VERSION "([^"]+)"\)', text).group(1)


def core_soname_version():
    """The core library's file name carries the version's major.minor (its SONAME)."""
    name = pathlib.Path(dlarray._core.core_library_path()).name
    m = re.fullmatch(r"libdlarray_runtime\.so\.(\d+)\.(\d+)", name)
    assert m, f"the core library {name} is not named by its SONAME"
    major, minor = m.groups()
    if not VERSION.startswith(f"{major}.{minor}."):
        return name
    return VERSION


VERSION_SOURCES = {
    "dlarrayConfig-version.cmake (installed SDK)": package_config_version,
    "libdlarray_runtime.so SONAME (major.minor)": core_soname_version,
    "CMake project (CMakeCache.txt)": cmake_project_version,
    "dlarray._core.__version__": core_module_version,
    "dlarray.__version__": package_version,
    "importlib.metadata (installed wheel)": distribution_metadata_version,
    "python -m dlarray --version": command_line_version,
}


def test_version_file_is_one_pep440_version():
    packaging_version = pytest.importorskip("packaging.version")
    lines = (ROOT / "VERSION").read_text().splitlines()
    assert len(lines) == 1, "VERSION holds one line: the version"
    assert str(packaging_version.Version(VERSION)) == VERSION, "VERSION is not in PEP 440 form"


@pytest.mark.parametrize("source", list(VERSION_SOURCES))
def test_version_reaches(source):
    assert VERSION_SOURCES[source]() == VERSION, f"{source} disagrees with VERSION ({VERSION})"


def test_cmake_project_version_is_numeric_part():
    """project(VERSION) takes digits and dots only: the numeric release part of VERSION."""
    text = (ROOT / "CMakeLists.txt").read_text()
    assert re.search(r'file\(STRINGS "\$\{CMAKE_CURRENT_SOURCE_DIR\}/VERSION" DLARRAY_VERSION', text)
    assert "project(dlarray VERSION ${DLARRAY_VERSION_NUMERIC}" in text


def test_no_version_written_by_hand():
    """The version appears in no other file that configures or builds the package."""
    places = ["pyproject.toml", "CMakeLists.txt", "python/CMakeLists.txt",
              *map(str, (ROOT / "python" / "dlarray").rglob("*.py"))]
    literal = re.compile(r"""["']%s["']|VERSION\s+%s\b""" % ((re.escape(VERSION),) * 2))
    for place in places:
        path = ROOT / place
        assert not literal.search(path.read_text()), f"{path} writes the version by hand"


def test_changelog_has_the_version():
    """CHANGELOG.md has an Unreleased section and one for VERSION (unless it is a dev version)."""
    text = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(r"^## \[Unreleased\]", text, re.M)
    if ".dev" not in VERSION:
        assert re.search(r"^## \[%s\] - \d{4}-\d{2}-\d{2}$" % re.escape(VERSION), text, re.M), (
            f"CHANGELOG.md has no '## [{VERSION}] - YYYY-MM-DD' section")
