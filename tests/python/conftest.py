"""Shared fixtures: every test that takes ``ctx`` runs once per usable device; the built wheel and
sdist for the packaging checks."""
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import dlarray

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _test_plugin_dir():
    """The test-only plugins built by the C++ test build (see tests/plugins)."""
    env = os.environ.get("DLARRAY_TEST_PLUGIN_DIR")
    if env:
        return pathlib.Path(env)
    # build/py first: `make install`'s build, whose plugins this interpreter can load (those of
    # build/asan, which sorts before it, need the preloaded ASan runtime).
    found = sorted((ROOT / "build").glob("*/test_plugins"), key=lambda d: d.parent.name != "py")
    return found[0] if found else None


TEST_PLUGIN_DIR = _test_plugin_dir()


def pytest_generate_tests(metafunc):
    if "ctx" in metafunc.fixturenames:
        ctxs = dlarray.devices()
        metafunc.parametrize("ctx", ctxs, ids=[repr(c) for c in ctxs])


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def test_plugin_dir():
    if TEST_PLUGIN_DIR is None or not TEST_PLUGIN_DIR.is_dir():
        pytest.skip("test plugins are not built (build with -DDLARRAY_BUILD_TESTS=ON)")
    return TEST_PLUGIN_DIR


# Under compute-sanitizer (scripts/gpu_check.sh sets DLARRAY_UNDER_SANITIZER=1) a fault or a
# failed allocation made on purpose is a report; the tests that make one skip themselves there.
UNDER_SANITIZER = (os.environ.get("DLARRAY_UNDER_SANITIZER") == "1" or
                   "CUDA_INJECTION64_PATH" in os.environ or
                   "sanitizer" in os.environ.get("LD_PRELOAD", ""))
not_under_sanitizer = pytest.mark.skipif(
    UNDER_SANITIZER, reason="faults or fails an allocation on purpose: compute-sanitizer would "
    "report it")


def has_gpu():
    return any(c.device_type == 2 for c in dlarray.devices())


def find_built_wheel():
    """The wheel `make install` built and installed (in DLARRAY_WHEEL_DIR, else build/wheel)."""
    folder = pathlib.Path(os.environ.get("DLARRAY_WHEEL_DIR", ROOT / "build" / "wheel"))
    wheels = sorted(folder.glob("dlarray-*.whl"))
    return wheels[-1] if len(wheels) == 1 else None


def _missing_build_tools():
    missing = [m for m in ("scikit_build_core", "pybind11") if importlib.util.find_spec(m) is None]
    return missing + [t for t in ("cmake",) if shutil.which(t) is None]


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory):
    """One wheel of this tree for every packaging check: the one `make install` built and
    installed. Without it the checks skip, unless DLARRAY_TEST_BUILD_WHEEL=1 asks to build one
    now (minutes; skipped when the build tools are missing)."""
    wheel = find_built_wheel()
    if wheel is not None:
        return wheel
    if os.environ.get("DLARRAY_TEST_BUILD_WHEEL") != "1":
        pytest.skip("no wheel in build/wheel: `make install` builds the one these tests check "
                    "(or set DLARRAY_WHEEL_DIR, or DLARRAY_TEST_BUILD_WHEEL=1 to build one here)")
    missing = _missing_build_tools()
    if missing:
        pytest.skip("cannot build a wheel: missing " + ", ".join(missing))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation",
                    "--no-deps", "-w", str(out), str(ROOT)], check=True)
    return next(out.glob("dlarray-*.whl"))


@pytest.fixture(scope="session")
def built_sdist(tmp_path_factory):
    """An sdist of this tree, made by the build backend's PEP 517 hook (no compiling)."""
    if importlib.util.find_spec("scikit_build_core") is None:
        pytest.skip("scikit-build-core is not installed: cannot build the sdist")
    out = tmp_path_factory.mktemp("sdist")
    hook = "import sys; from scikit_build_core.build import build_sdist; print(build_sdist(sys.argv[1]))"
    name = subprocess.run([sys.executable, "-c", hook, str(out)], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.strip().splitlines()[-1]
    return out / name
def pytest_configure(config):
    config.addinivalue_line("markers", "large: allocates arrays of 1e8 elements (400 MB each); "
                            "deselect with -m 'not large'")


@pytest.fixture(scope="session")
def aot_cache(tmp_path_factory):
    """A DLARRAY_CACHE_DIR for the sources dlarray.custom compiles, shared by the session."""
    return tmp_path_factory.mktemp("dlarray-cache")
