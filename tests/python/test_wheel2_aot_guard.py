"""dlarray/aot_guard.h: a C++ exception escaping an AOT custom op library keeps its message when
the library and dlarray use different C++ runtimes (the portable wheel is built with LLVM's libc++,
libraries built here with g++ use libstdc++). The mismatch is made here the other way round: the
probe library is built with clang++ -stdlib=libc++ for a dlarray built with GCC."""
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

import dlarray
from aot_util import KERNELS, probe
from dlarray import _aot_build
from dlarray.custom import Custom

THROWS = r"Throw threw a C\+\+ exception: thrown by the probe"
# -O0: these tests are about where exceptions are caught, and CI's time is short.
FLAGS = ["-shared", "-fPIC", "-O0", "-std=c++17"]
THROWER = ('#include <cstdint>\n#include <stdexcept>\n'
           'extern "C" int Throw(int, void**, int*, int64_t**, const char**, void*, void*) '
           '{ throw std::runtime_error("thrown by the probe"); }\n')


def _needed(library):
    out = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True,
                         check=True).stdout
    return [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def _exports(library):
    out = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True,
                         text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DLARRAY_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


@pytest.fixture
def libcxx(own_cache, monkeypatch):
    """clang++ with LLVM's libc++ as the AOT compiler (skips when either is missing)."""
    if "asan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("under scripts/sanitize.sh's preloaded ASan runtime, whose __cxa_throw "
                    "interceptor forwards to the preloaded libstdc++, not to the library's "
                    "libc++abi: a libc++ library's throw ends the process there")
    clang = shutil.which("clang++")
    if clang is None:
        pytest.skip("clang++ is not installed (scripts/install_system_deps.sh installs it)")
    monkeypatch.setenv("CXX", clang)
    return FLAGS + ["-stdlib=libc++"]


def test_foreign_runtime_exception_keeps_its_message(libcxx):
    try:
        library = _aot_build.compile_source(KERNELS / "probe_ops.cc", libcxx)
    except _aot_build.CompileError as e:
        pytest.skip("clang++ cannot build with LLVM's libc++ (libc++-dev): %s" % str(e)[-300:])
    needed = _needed(library)
    # The mismatch is real: the library's C++ runtime is not the one dlarray's module uses.
    assert any(n.startswith("libc++") for n in needed), needed
    assert not any(n.startswith("libstdc++") for n in needed), needed
    assert "dlarray_aot_guard_v1" in _exports(library)
    cpu = dlarray.cpu()
    x = dlarray.array([1.0, 2.0], cpu)
    op = Custom(probe("Throw"), [2], "float32", compile_flags=libcxx)
    for _ in range(2):  # and again: the process and the op stay usable
        with pytest.raises(RuntimeError, match=THROWS):
            op(x)
    fail = Custom(probe("Fail"), [2], "float32", compile_flags=libcxx)
    with pytest.raises(RuntimeError, match="it returned 7: the probe failed on purpose"):
        fail(x)
    with pytest.raises(RuntimeError, match="BadInitInit failed .*returned 3: no workspace"):
        Custom(probe("BadInit"), [2], "float32", compile_flags=libcxx)(x)
    ok = Custom(probe("SumDiff"), out_shape=lambda a, b: [a, a], out_dtype=["float64"] * 2,
                compile_flags=libcxx)
    a = np.array([1.5, -2.0, 3.25])
    s, d = ok(dlarray.array(a, cpu, np.float64), dlarray.array(a * 2, cpu, np.float64))
    np.testing.assert_array_equal(s.asnumpy(), a * 3)
    np.testing.assert_array_equal(d.asnumpy(), -a)


def test_c_sources_do_not_get_the_guard(own_cache):
    # (C++ sources do: the other tests check the symbol in what they build.)
    c_source = own_cache / "plain.c"
    c_source.write_text("int Plain(void) { return 0; }\n")
    c_flags = ["-shared", "-fPIC", "-O0"]
    assert "dlarray_aot_guard_v1" not in _exports(_aot_build.compile_source(c_source, c_flags))


def test_a_library_built_without_the_guard_is_caught_here(own_cache):
    # A prebuilt library (g++) without aot_guard.h: the module's own catch still names the
    # exception when both share libstdc++ (a source build; the portable wheel uses libc++).
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not installed")
    if not any(n.startswith("libstdc++") for n in _needed(dlarray._core.__file__)):
        pytest.skip("dlarray's module does not use GCC's libstdc++ (the portable wheel)")
    library, source = own_cache / "unguarded.so", own_cache / "thrower.cc"
    source.write_text(THROWER)
    subprocess.run([gxx, *FLAGS, str(source), "-o", str(library)], check=True)
    assert "dlarray_aot_guard_v1" not in _exports(library)
    with pytest.raises(RuntimeError, match=THROWS):
        Custom("%s:Throw" % library, [2], "float32")(dlarray.array([1.0, 2.0], dlarray.cpu()))


def test_a_library_may_include_the_guard_itself_and_build_without_exceptions(own_cache):
    # dlarray.custom's -include, then the source's own #include (the header guard keeps one
    # definition); and a build with -fno-exceptions (nothing can escape: the guard only calls).
    source = own_cache / "twice.cc"
    source.write_text('#include "dlarray/aot_guard.h"\n#include <cstdint>\n'
                      'extern "C" int Ok(int, void**, int*, int64_t**, const char**, void*, '
                      "void*) { return 0; }\n")
    for extra in ([], ["-fno-exceptions"]):
        flags = FLAGS + extra + ["-Wall", "-Wextra", "-Werror"]
        library = _aot_build.compile_source(source, flags)
        assert "dlarray_aot_guard_v1" in _exports(library)


def test_the_guard_header_is_installed():
    header = pathlib.Path(_aot_build.include_dir()) / "dlarray" / "aot_guard.h"
    assert header.is_file()
    assert "dlarray_aot_guard_v1" in header.read_text()
