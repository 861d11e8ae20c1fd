"""libc_runtime_api.so (the seed's layouts) and libdlarray_runtime.so (DLPack layouts) export
functions of the same names (DLArrayAlloc, DLGpuRelu, ...). The seed's client loads its library
with RTLD_GLOBAL; these tests check that, in either load order, every user still reaches its own
library, and that both libraries export what they should under their own symbol versions."""
import pathlib
import shutil
import subprocess
import sys

import pytest

import dlarray
import seed_client
from conftest import TEST_PLUGIN_DIR

try:
    dlarray.seed_lib_path()
except FileNotFoundError as e:
    pytest.skip(str(e), allow_module_level=True)

HERE = pathlib.Path(__file__).resolve().parent
PKG_DIR = pathlib.Path(dlarray.__file__).resolve().parent
SEED_NAMES = {
    "DLGetLastError", "DLArrayAlloc", "DLArrayFree", "DLArrayCopyFromTo", "DLGpuArraySet",
    "DLGpuBroadcastTo", "DLGpuReduceSumAxisZero", "DLGpuMatrixElementwiseAdd",
    "DLGpuMatrixElementwiseAddByConst", "DLGpuMatrixElementwiseMultiply",
    "DLGpuMatrixMultiplyByConst", "DLGpuMatrixMultiply", "DLGpuRelu", "DLGpuReluGradient",
    "DLGpuSoftmax", "DLGpuSoftmaxCrossEntropy",
}


def consumer_dir():
    """tests/seed_api's libraries (built with the doctest suite), or None."""
    d = TEST_PLUGIN_DIR.parent / "test_seed_api" if TEST_PLUGIN_DIR else None
    return d if d is not None and (d / "libc_api_selftest.so").is_file() else None


def defined_symbols(lib):
    """{name: version} of the functions lib defines in its dynamic symbol table."""
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf (binutils) is not installed")
    out = subprocess.run([readelf, "--dyn-syms", "--wide", str(lib)], check=True,
                         capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND":
            name, _, version = f[7].partition("@")
            syms[name] = version.lstrip("@")
    return syms


@pytest.fixture(scope="module")
def client_dir(tmp_path_factory):
    reason = seed_client.missing_reason()
    if reason:
        pytest.skip(reason)
    return seed_client.write(tmp_path_factory.mktemp("seed_abi"))


def test_seed_lib_exports_exactly_the_seed_api_under_its_own_version():
    syms = defined_symbols(dlarray.seed_lib_path())
    assert set(syms) == SEED_NAMES
    assert set(syms.values()) == {"DLARRAY_SEED_API_1"}


def test_core_c_api_names_carry_the_core_version():
    syms = defined_symbols(next(PKG_DIR.glob("libdlarray_runtime.so*")))
    c_api = {n: v for n, v in syms.items() if n.startswith(("DLArray", "DLGpu", "DLGetLastError"))}
    assert SEED_NAMES <= set(c_api)  # the clash the versions resolve
    assert set(c_api.values()) == {"DLARRAY_C_API_1"}


@pytest.mark.parametrize("order", ["seed-first", "core-first"])
def test_both_abis_in_one_process(client_dir, order):
    args = [sys.executable, str(HERE / "seed_abi_scenario.py"), order, str(client_dir)]
    if consumer_dir() is not None:
        args.append(str(consumer_dir()))
    proc = subprocess.run(args, capture_output=True, encoding="utf-8", errors="replace",
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all checks passed" in proc.stdout
    if consumer_dir() is not None:
        assert "libc_api_selftest.so, linked against one library only" in proc.stdout
        assert "libseed_api_selftest.so, linked against one library only" in proc.stdout


def test_consumer_libraries_are_built():
    """Without them the scenario above cannot show that linked C users bind to their library."""
    if TEST_PLUGIN_DIR is None or not TEST_PLUGIN_DIR.is_dir():
        pytest.skip("the test build is absent (build with -DDLARRAY_BUILD_TESTS=ON)")
    assert consumer_dir() is not None, "tests/seed_api was not built next to the test plugins"


def test_cli_prints_the_seed_lib_path():
    out = subprocess.run([sys.executable, "-m", "dlarray", "--seed-lib"], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == dlarray.seed_lib_path()
    path = pathlib.Path(out)
    assert path.is_absolute() and path.is_file() and path.name == "libc_runtime_api.so"
    assert any(path.parent.glob("libdlarray_runtime.so*"))
