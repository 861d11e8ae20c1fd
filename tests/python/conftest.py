"""Shared fixtures: every test that takes ``ctx`` runs once per usable device."""
import os
import pathlib

import numpy as np
import pytest

import dlarray

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _test_plugin_dir():
    """The test-only plugins built by the C++ test build (see tests/plugins)."""
    env = os.environ.get("DLARRAY_TEST_PLUGIN_DIR")
    if env:
        return pathlib.Path(env)
    for d in sorted((ROOT / "build").glob("*/test_plugins")):
        return d
    return None


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


def has_gpu():
    return any(c.device_type == 2 for c in dlarray.devices())


@pytest.fixture(scope="session")
def aot_cache(tmp_path_factory):
    """A DLARRAY_CACHE_DIR for the sources dlarray.custom compiles, shared by the session."""
    return tmp_path_factory.mktemp("dlarray-cache")
