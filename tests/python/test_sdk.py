"""The installed SDK as a third party uses it: `cmake --install --prefix` lays out headers, the core
(with its SONAME) and the CMake package under the prefix; examples/custom_op builds against the
pip-installed package and against such a prefix; a plugin built with clang++ and libc++ runs next
to a core built with g++ and libstdc++; a program embeds the core through dlarray::runtime."""
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dlarray
from dlarray import autodiff as ad

ROOT = pathlib.Path(__file__).resolve().parents[2]
CMAKE = shutil.which("cmake")
pytestmark = pytest.mark.skipif(CMAKE is None, reason="cmake is not installed")


def run(cmd, **kw):
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert out.returncode == 0, "%s\n%s%s" % (" ".join(map(str, cmd)), out.stdout, out.stderr)
    return out.stdout


def build(src, build_dir, *defines, env=None):
    run([CMAKE, "-S", src, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", *defines],
        env=env)
    run([CMAKE, "--build", build_dir, "-j2"], env=env)


def package_cmake_dir():
    return run([sys.executable, "-m", "dlarray", "--cmake-dir"]).strip()


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    """A plain CMake build of the SDK (no Python module, no CUDA), installed with --prefix. One
    CPU instruction set path (DLARRAY_NATIVE): the install's layout is what is tested, and the
    three paths tripled the longest build of the suite (about 15 minutes on a loaded 2-core CI
    machine). Unoptimised (-O0), the kernels and the rest: they compile about ten times faster
    than -O3's, and the tests here run a handful of elements through them."""
    root = tmp_path_factory.mktemp("sdk")
    build(ROOT, root / "build", "-DDLARRAY_BUILD_PYTHON=OFF", "-DDLARRAY_CUDA=OFF",
          "-DDLARRAY_SEED_API=OFF", "-DDLARRAY_NATIVE=ON", "-DDLARRAY_KERNEL_OPTIMIZE=-O0",
          "-DCMAKE_CXX_FLAGS_RELEASE=-O0 -DNDEBUG", "-DCMAKE_C_FLAGS_RELEASE=-O0 -DNDEBUG")
    run([CMAKE, "--install", root / "build", "--prefix", root / "prefix"])
    return root / "prefix"


def test_install_honours_the_prefix(prefix):
    lib = prefix / "lib"
    assert (prefix / "include" / "dlarray" / "plugin_api.h").is_file()
    assert (prefix / "include" / "dlarray" / "plugin.h").is_file()
    cmake_dir = lib / "cmake" / "dlarray"
    for f in ("dlarrayConfig.cmake", "dlarrayConfig-version.cmake", "dlarrayTargets.cmake",
              "dlarrayPlugin.cmake"):
        assert (cmake_dir / f).is_file(), f
    major, minor = dlarray.__version__.split(".")[:2]
    real = lib / ("libdlarray_runtime.so." + dlarray.__version__)
    assert real.is_file() and (lib / "libdlarray_runtime.so").is_symlink()
    soname = run(["readelf", "-d", real]) if shutil.which("readelf") else ""
    assert not soname or "libdlarray_runtime.so.%s.%s" % (major, minor) in soname
    assert (lib / "dlarray" / "plugins" / "cpu_backend.so").is_file()
    assert not (prefix / "dlarray").exists()  # the GNU layout, not the wheel's


def check_leaky_relu(path, rng):
    rec = dlarray.load_plugin(path)
    assert rec["status"] == "loaded" and rec["declared_ops"] == ["leaky_relu",
                                                                 "leaky_relu_gradient"]
    kernels = dlarray.ops.op_info("leaky_relu")["devices"]
    for ctx in dlarray.devices():
        if repr(ctx).rsplit("(", 1)[0] not in kernels:  # the device type as op_info names it
            continue
        x = rng.standard_normal((129, 33)).astype(np.float32)
        y = dlarray.ops.leaky_relu(dlarray.array(x, ctx), slope=0.1)
        np.testing.assert_allclose(y.asnumpy(), np.where(x > 0, x, 0.1 * x), rtol=1e-6)
    with pytest.raises(ValueError, match=r"slope must be in \[0, 1\), got 2"):
        dlarray.ops.leaky_relu(dlarray.array(np.ones(3)), 2.0)
    with pytest.raises(ValueError, match="differs from x"):
        dlarray.ops.leaky_relu(dlarray.array(np.ones(3)), 0.1, dlarray.empty((4,)))
    # The gradient's attribute is taken by name from the forward op's.
    v = ad.Variable("v")
    g, = ad.gradients(ad.reducesumaxiszero_op(ad.ops.leaky_relu(v, slope=0.25)), [v])
    xv = np.array([-2.0, -0.5, 0.5, 3.0], np.float32)
    got = ad.Executor([g], ctx=dlarray.cpu()).run({v: xv}, convert_to_numpy_ret_vals=True)[0]
    np.testing.assert_allclose(got, [0.25, 0.25, 1.0, 1.0])


def test_custom_op_example_builds_against_the_pip_package(tmp_path, rng):
    build(ROOT / "examples" / "custom_op", tmp_path, "-Ddlarray_DIR=" + package_cmake_dir())
    check_leaky_relu(tmp_path / "leaky_relu_ops.so", rng)


def test_custom_op_example_builds_against_an_installed_prefix(prefix, tmp_path):
    build(ROOT / "examples" / "custom_op", tmp_path, "-DCMAKE_PREFIX_PATH=" + str(prefix),
          "-DWITH_CUDA=OFF")
    assert (tmp_path / "leaky_relu_ops.so").is_file()
    # Only the entry symbol is exported, and nothing of dlarray is linked.
    if shutil.which("nm") and shutil.which("ldd"):
        syms = run(["nm", "-D", "--defined-only", tmp_path / "leaky_relu_ops.so"]).split()
        assert "dlarray_plugin_entry" in syms and len(syms) == 3
        assert "dlarray" not in run(["ldd", tmp_path / "leaky_relu_ops.so"])


def test_a_program_embeds_the_core_through_dlarray_runtime(prefix, tmp_path):
    (tmp_path / "CMakeLists.txt").write_text(textwrap.dedent("""
        cmake_minimum_required(VERSION 3.18)
        project(embed LANGUAGES C CXX)
        find_package(dlarray 0.1 REQUIRED)
        add_executable(embed main.c)
        target_link_libraries(embed PRIVATE dlarray::runtime)
        """))
    (tmp_path / "main.c").write_text(textwrap.dedent("""
        #include <stdio.h>
        #include "dlarray/c_runtime_api.h"
        int main(void) {
          int64_t shape[1] = {3};
          DLContext cpu = {kDLArrayCPU, 0};
          DLArrayHandle a, b;
          if (DLArrayAlloc(shape, 1, cpu, &a) || DLArrayAlloc(shape, 1, cpu, &b)) goto fail;
          ((float*)a->data)[0] = -1; ((float*)a->data)[1] = 2; ((float*)a->data)[2] = -3;
          if (DLArrayRelu(a, b)) goto fail;
          printf("%g %g %g\\n", ((float*)b->data)[0], ((float*)b->data)[1], ((float*)b->data)[2]);
          return 0;
        fail:
          printf("error: %s\\n", DLGetLastError());
          return 1;
        }
        """))
    build(tmp_path, tmp_path / "build", "-DCMAKE_PREFIX_PATH=" + str(prefix))
    env = dict(os.environ, LD_LIBRARY_PATH=str(prefix / "lib"))
    assert run([tmp_path / "build" / "embed"], env=env).split() == ["0", "2", "0"]


@pytest.mark.skipif(not shutil.which("clang++"), reason="clang++ is not installed")
def test_a_plugin_built_with_clang_and_libcxx_runs(tmp_path, rng):
    if not list(pathlib.Path("/usr/lib").glob("llvm-*/lib/libc++.a")):
        pytest.skip("libc++ (Debian libc++-dev) is not installed")
    env = dict(os.environ, CXX="clang++")
    build(ROOT / "tests" / "plugins" / "libcxx", tmp_path, "-Ddlarray_DIR=" + package_cmake_dir(),
          env=env)
    lib = tmp_path / "libcxx_plugin.so"
    if shutil.which("ldd"):
        deps = run(["ldd", lib])
        assert "libc++" not in deps and "libstdc++" not in deps  # its own C++ library, linked in
    assert dlarray.load_plugin(lib)["status"] == "loaded"
    x = rng.standard_normal((50, 17)).astype(np.float32)
    got = dlarray.ops.libcxx_row_sum(dlarray.array(x), scale=2.0).asnumpy()
    np.testing.assert_allclose(got, 2 * x.astype(np.float64).sum(1), rtol=1e-5)
    with pytest.raises(RuntimeError, match=r"scale is NaN \(libc\+\+\)"):
        dlarray.ops.libcxx_row_sum(dlarray.array(x), float("nan"))
    with pytest.raises(RuntimeError, match="libcxx_row_sum: plugin 'libcxx_plugin' threw an "
                                           "exception that is not a std::exception"):
        dlarray.ops.libcxx_row_sum(dlarray.array(x), -1.0)
    with pytest.raises(ValueError, match=r"out its rows, got x \(50, 17\) and out \(3,\)"):
        dlarray.ops.libcxx_row_sum(dlarray.array(x), 1.0, dlarray.empty((3,)))
