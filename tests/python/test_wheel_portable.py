"""The portable wheel (`make wheel`, scripts/build_portable_wheel.sh, docs/install.md):

- auditwheel tags it manylinux_2_28_x86_64 and `auditwheel show` finds nothing that needs more,
  the OpenCL ICD loader (left to the driver) apart;
- read independently of auditwheel, no library in it asks for a glibc symbol version newer than
  2.28, none needs the system's libstdc++, and every C++ library shares the wheel's one libc++
  (scripts/zig/shared_libcxx.py), which exports the standard exception types;
- installed into a fresh virtualenv (with NumPy from PyPI or its cache), it runs the MNIST example
  and `python -m dlarray --check --quick` from outside the repository, and C++ exceptions thrown in
  one of its libraries still reach Python as the documented exceptions.

The wheel is a build of its own (minutes): without one in build/dist (or
DLARRAY_PORTABLE_WHEEL) these tests skip, saying how to make it.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT

TAG = "manylinux_2_28_x86_64"
GLIBC_MAX = (2, 28)


def find_portable_wheel():
    given = os.environ.get("DLARRAY_PORTABLE_WHEEL")
    if given:
        return pathlib.Path(given)
    wheels = sorted((ROOT / "build" / "dist").glob("dlarray-*%s*.whl" % TAG))
    return wheels[-1] if wheels else None


@pytest.fixture(scope="module")
def portable_wheel():
    wheel = find_portable_wheel()
    if wheel is None:
        pytest.skip("no portable wheel in build/dist: `make wheel` builds it "
                    "(a separate build, minutes), or set DLARRAY_PORTABLE_WHEEL")
    return wheel


def run(cmd, timeout=900, **kw):
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout,
                         **kw)
    assert out.returncode == 0, "%s\n%s\n%s" % (" ".join(map(str, cmd)), out.stdout[-4000:],
                                                out.stderr[-4000:])
    return out.stdout


def clean_env():
    """The environment without any dlarray variable (nor PYTHONPATH): what a user has."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("DLARRAY_") and k not in ("PYTHONPATH", "PYTHONHOME")}


def test_file_name_carries_the_tag(portable_wheel):
    platforms = portable_wheel.name[:-len(".whl")].split("-")[-1].split(".")
    assert TAG in platforms, portable_wheel.name


def test_auditwheel_show_agrees(portable_wheel, tmp_path):
    """`auditwheel show`, with no library folder to look in (``--ldpaths`` of an empty one): the
    symbol versions allow manylinux_2_28 or lower, and the libraries the wheel needs and does
    not carry are the OpenCL ICD loader, which comes with every OpenCL driver (docs/install.md),
    and the BLAS, which its dependency scipy-openblas32 brings.
    Looking in this machine's folders instead, auditwheel would read Debian 12's libOpenCL.so.1,
    which needs glibc 2.34, as if the wheel carried it."""
    pytest.importorskip("auditwheel")
    out = json.loads(run([sys.executable, "-m", "auditwheel", "show", "--json", "--ldpaths",
                          tmp_path, portable_wheel]))
    m = re.fullmatch(r"manylinux_(\d+)_(\d+)_x86_64", out["sym_tag"])
    assert m and (int(m[1]), int(m[2])) <= GLIBC_MAX, out["sym_tag"]
    assert set(out["external_libs"]) == {"libOpenCL.so.1", "libscipy_openblas.so"}, \
        out["external_libs"]


def test_blas_is_a_dependency_not_a_copy(portable_wheel):
    libraries = dict(shared_libraries(portable_wheel))
    assert not [n for n in libraries if "openblas" in n], sorted(libraries)
    with zipfile.ZipFile(portable_wheel) as z:
        metadata = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA")))
    assert re.search(rb"^Requires-Dist: scipy-openblas32\b", metadata, re.M), metadata[:2000]
    elffile = pytest.importorskip("elftools.elf.elffile")
    import io
    users = 0
    for name, data in libraries.items():
        if "libscipy_openblas.so" not in needs(data)[0]:
            continue
        users += 1
        dynamic = elffile.ELFFile(io.BytesIO(data)).get_section_by_name(".dynamic")
        # zig's linker writes DT_RPATH, GCC's DT_RUNPATH: either names the folder.
        runpath = [t.runpath if t.entry.d_tag == "DT_RUNPATH" else t.rpath
                   for t in dynamic.iter_tags() if t.entry.d_tag in ("DT_RUNPATH", "DT_RPATH")]
        # dlarray/plugins/x.so and dlarray/lib/x.so: two folders below site-packages.
        assert name.count("/") == 2 and runpath, (name, runpath)
        assert "$ORIGIN/../../scipy_openblas32/lib" in runpath[0].split(":"), (name, runpath)
    assert users >= 1, sorted(libraries)


def shared_libraries(wheel):
    """(name, bytes) of every ELF shared library in the wheel."""
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if re.search(r"\.so(\.[0-9.]+)?$", name):
                data = z.read(name)
                if data[:4] == b"\x7fELF":
                    yield name, data


def needs(data):
    """The DT_NEEDED libraries and the (library, version) pairs an ELF file asks for."""
    import io

    elffile = pytest.importorskip("elftools.elf.elffile")
    elf = elffile.ELFFile(io.BytesIO(data))
    needed = [t.needed for t in elf.get_section_by_name(".dynamic").iter_tags()
              if t.entry.d_tag == "DT_NEEDED"]
    versions = []
    section = elf.get_section_by_name(".gnu.version_r")
    if section is not None:
        for verneed, auxes in section.iter_versions():
            versions += [(verneed.name, aux.name) for aux in auxes]
    return needed, versions


def test_no_library_needs_a_newer_glibc_or_the_system_libstdcxx(portable_wheel):
    libraries = dict(shared_libraries(portable_wheel))
    assert any(n.startswith("dlarray/libdlarray_runtime") for n in libraries), sorted(libraries)
    assert any(n.startswith("dlarray/_core.") for n in libraries), sorted(libraries)
    assert "dlarray/plugins/cpu_backend.so" in libraries, sorted(libraries)
    too_new = {}
    for name, data in libraries.items():
        needed, versions = needs(data)
        assert not [n for n in needed if n.startswith(("libstdc++", "libgomp"))], (name, needed)
        for _, version in versions:
            m = re.fullmatch(r"GLIBC_(\d+)\.(\d+)(?:\.\d+)?", version)
            if m and (int(m[1]), int(m[2])) > GLIBC_MAX:
                too_new.setdefault(name, []).append(version)
            assert not version.startswith(("GLIBCXX_", "CXXABI_")), (name, version)
    assert not too_new, too_new


def test_one_shared_libcxx_serves_every_cxx_library(portable_wheel):
    # One libc++ (one type_info per standard exception type), not a copy in each library: a
    # std::exception thrown in the core and caught in the Python module or a plugin is one type.
    libraries = dict(shared_libraries(portable_wheel))
    libcxx = [n for n in libraries if re.search(r"/libdlarray_c\+\+[-.]", n)]
    assert len(libcxx) == 1, sorted(libraries)
    soname = libcxx[0].rsplit("/", 1)[1]
    users = [n for n, data in libraries.items() if soname in needs(data)[0]]
    for name in ("dlarray/libdlarray_runtime", "dlarray/_core.", "dlarray/plugins/cpu_backend.so",
                 "dlarray/lib/cpu_backend_baseline.so"):
        assert [u for u in users if u.startswith(name)], (name, users)
    # Its symbols are versioned (DLARRAY_LIBCXX_1) and asked for so: they never bind to GCC's
    # libstdc++ (__cxa_throw, std::exception, ...) nor its users to them.
    for user in users:
        assert (soname, "DLARRAY_LIBCXX_1") in needs(libraries[user])[1], user


# Run from outside the repository in the fresh virtualenv: arithmetic and a matmul (OpenBLAS from
# the scipy-openblas32 package pip installed) against NumPy on every device the wheel finds, and errors that start as C++
# exceptions in the core or a plugin (through the wheel's one shared libc++) reaching Python.
SMOKE = r"""
import json, numpy as np, dlarray
out = {"devices": [repr(c) for c in dlarray.devices()], "ok": [], "errors": []}
rng = np.random.default_rng(0)
for ctx in dlarray.devices():
    for n in (0, 1, 1025, 65537):
        x = rng.standard_normal(n).astype(np.float32)
        a = dlarray.array(x, ctx)
        y = dlarray.empty(x.shape, ctx)
        dlarray.ops.relu(a, y)
        out["ok"].append(bool((y.asnumpy() == np.maximum(x, 0)).all()))
    m = rng.standard_normal((37, 129)).astype(np.float32)
    k = rng.standard_normal((129, 5)).astype(np.float32)
    c = dlarray.empty((37, 5), ctx)
    dlarray.ops.matrix_multiply(dlarray.array(m, ctx), False, dlarray.array(k, ctx), False, c)
    out["ok"].append(bool(np.allclose(c.asnumpy(), m @ k, rtol=1e-4, atol=1e-4)))
    try:
        dlarray.ops.relu(dlarray.array(np.ones(3, np.float32), ctx), dlarray.empty((4,), ctx))
    except Exception as e:
        out["errors"].append(type(e).__name__ + ": " + str(e))
try:  # no CUDA plugin in this wheel: the error says which package brings it
    dlarray.array(np.ones(2, np.float32), dlarray.gpu(0))
except Exception as e:
    out["cuda_error"] = str(e)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory, portable_wheel):
    venv = tmp_path_factory.mktemp("portable_wheel") / "venv"
    run([sys.executable, "-m", "venv", venv])
    python = venv / "bin" / "python"
    # NumPy and scipy-openblas32 come from PyPI (or pip's cache): the wheel's dependencies.
    run([python, "-m", "pip", "install", "-q", portable_wheel], env=clean_env())
    return python


def test_fresh_venv_runs_the_smoke_test_on_every_device(fresh_venv, tmp_path):
    out = json.loads(run([fresh_venv, "-c", SMOKE], env=clean_env(), cwd=tmp_path)
                     .strip().splitlines()[-1])
    assert out["devices"] and out["devices"][0].startswith("cpu"), out
    assert out["ok"] and all(out["ok"]), out
    assert len(out["errors"]) == len(out["devices"]), out
    assert all("shape" in e.lower() for e in out["errors"]), out["errors"]
    assert "pip install dlarray[cuda]" in out["cuda_error"], out


def test_fresh_venv_runs_the_check_and_the_mnist_example(fresh_venv, tmp_path):
    run([fresh_venv, "-m", "dlarray", "--check", "--quick"], env=clean_env(), cwd=tmp_path)
    example = tmp_path / "mnist.py"
    shutil.copy(ROOT / "examples" / "mnist.py", example)  # outside the repository
    out = run([fresh_venv, example, "--device", "cpu", "--epochs", "1"], env=clean_env(),
              cwd=tmp_path)
    assert re.search(r"accuracy", out, re.I), out[-2000:]


# A dlarray.custom library built here by the system's g++ (libstdc++, libgcc_s's unwinder) that
# throws: its exception unwinds through the wheel's frames (libc++ built by zig). With zig's static
# libunwind in the wheel this crashed the process (two unwinders in one unwinding); the wheel now
# uses libgcc_s's (docs/install.md).
FOREIGN_THROW = r"""
import json, sys, dlarray
from dlarray.custom import Custom
x = dlarray.array([1.0, 2.0], dlarray.cpu())
try:
    Custom(sys.argv[1], [2], "float32")(x)
except RuntimeError as e:
    after = dlarray.array([3.0], dlarray.cpu()).asnumpy().tolist()
    print(json.dumps({"error": str(e), "after": after}))
"""


def test_fresh_venv_survives_a_cxx_exception_from_gcc_built_code(fresh_venv, tmp_path):
    if shutil.which(os.environ.get("CXX", "c++")) is None:
        pytest.skip("no C++ compiler to build the throwing library with")
    env = dict(clean_env(), DLARRAY_CACHE_DIR=str(tmp_path / "cache"))
    source = ROOT / "tests" / "python" / "aot_kernels" / "probe_ops.cc"
    out = run([fresh_venv, "-c", FOREIGN_THROW, "%s:Throw" % source], env=env, cwd=tmp_path)
    r = json.loads(out.strip().splitlines()[-1])
    # Caught, and the process goes on. The message (what()) of an exception from libstdc++ is
    # foreign to the wheel's libc++: the library's own guard (dlarray/aot_guard.h, compiled by
    # g++ into it) catches it and hands the message over the C ABI.
    assert "Throw threw a C++ exception: thrown by the probe" in r["error"], r
    assert r["after"] == [3.0]
