"""The portable CPU backend: cpu_backend.so picks an instruction set path at load (baseline,
avx2, avx512; DLARRAY_CPU_ISA forces a lower one), and AVX-512 instructions appear only in the
avx512 path's library: any x86-64 CPU can load every other library of the package. The op tests
run once per path in CI (scripts/isa_paths.sh)."""
import pathlib
import platform
import re
import shutil
import subprocess

import pytest

import dlarray

import proc_util

PACKAGE = pathlib.Path(dlarray.__file__).resolve().parent
LIB = PACKAGE / "lib"
PATHS = ["baseline", "avx2", "avx512"]
portable = pytest.mark.skipif(not (LIB / "cpu_backend_baseline.so").exists(),
                              reason="built with DLARRAY_NATIVE=ON: one path, for this machine")
x86 = pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 instruction set paths")

# Instructions only AVX-512 has: its registers (zmm, k masks, xmm/ymm 16-31) and EVEX-only
# operations.
AVX512 = re.compile(r"%zmm|%k[0-7]\b|%[xy]mm(1[6-9]|2[0-9]|3[01])\b|\b(vpternlog|vscalef|"
                    r"vrndscale|vpermt2|vpermi2|vcompress|vexpand|vfixupimm|vprol|vpror|vreduce|"
                    r"vgetexp|vgetmant|vrcp14|vrsqrt14|vpconflict|vplzcnt|vpopcnt)")
AVX = re.compile(r"%ymm|\bv(fmadd|fnmadd|fmsub|broadcast|perm2|insertf128|extractf128)")


def best_path():
    out = subprocess.run(["grep", "-m1", "^flags", "/proc/cpuinfo"], capture_output=True,
                         text=True).stdout.split()
    if {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"} <= set(out):
        return "avx512"
    if {"avx2", "fma", "bmi2"} <= set(out):
        return "avx2"
    return "baseline"


def disassembly(path):
    if shutil.which("objdump") is None:
        pytest.skip("objdump (binutils) is not installed")
    return subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(path)], check=True,
                          capture_output=True, text=True).stdout


def lines_matching(text, pattern):
    return [line for line in text.splitlines() if pattern.search(line)]


def avx512_outside_clones(text):
    """AVX-512 lines of functions that are not AVX-512 clones (GCC's target_clones and
    function multi-versioning name them ``<function>.avx512f...``, dispatched by an ifunc)."""
    found, function = [], ""
    for line in text.splitlines():
        header = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if header:
            function = header.group(1)
        elif AVX512.search(line) and "avx512" not in function:
            found.append(f"{function}: {line.strip()}")
    return found


@portable
@x86
def test_avx512_only_in_the_avx512_path():
    libraries = sorted(p for p in PACKAGE.rglob("*.so*") if p.is_file())
    checked = []
    for lib in libraries:
        if lib.name.startswith("libscipy_openblas"):
            continue  # OpenBLAS picks its own kernels at run time (DYNAMIC_ARCH)
        text = disassembly(lib)
        if lib.name == "cpu_backend_avx512.so":
            found = lines_matching(text, AVX512)
            assert len(found) > 100, "the avx512 path has no AVX-512 code: the check is blind"
        else:
            found = avx512_outside_clones(text)
            assert not found, f"{lib.relative_to(PACKAGE)} has AVX-512 instructions: {found[:5]}"
        checked.append(lib.name)
    assert {"cpu_backend.so", "cpu_backend_baseline.so", "cpu_backend_avx2.so"} <= set(checked)


@portable
@x86
def test_baseline_path_and_entry_plugin_have_no_avx():
    for lib in (PACKAGE / "plugins" / "cpu_backend.so", LIB / "cpu_backend_baseline.so"):
        found = lines_matching(disassembly(lib), AVX)
        assert not found, f"{lib.name} has AVX instructions: {found[:5]}"
    assert lines_matching(disassembly(LIB / "cpu_backend_avx2.so"), AVX)  # the check can see


def isa_of_a_fresh_process(env):
    r = proc_util.run("import dlarray\n"
                      "p = [p for p in dlarray.plugins() if p['name'] == 'cpu'][0]\n"
                      "print('STATUS', p['status'], '|', p['reason'])\n"
                      "cfg = dlarray.show_config('dicts')['cpu']\n"
                      "print('ISA', cfg and cfg['isa'])\n", env=env, timeout=60)
    assert r.returncode == 0, r
    return r.stdout


@portable
@x86
def test_the_best_path_is_picked_by_default():
    out = isa_of_a_fresh_process({"DLARRAY_CPU_ISA": ""})
    assert "STATUS loaded" in out and f"ISA {best_path()} " in out, out
    assert "the best this CPU runs" in out, out


@portable
@x86
@pytest.mark.parametrize("path", PATHS)
def test_a_lower_path_can_be_forced(path):
    supported = PATHS[:PATHS.index(best_path()) + 1]
    out = isa_of_a_fresh_process({"DLARRAY_CPU_ISA": path})
    if path in supported:
        assert "STATUS loaded" in out and f"ISA {path} " in out and "forced" in out, out
    else:  # a path this CPU cannot run is refused with a reason, never a SIGILL
        assert "STATUS init failed" in out and f"runs up to {best_path()}" in out, out


@portable
def test_an_unknown_path_is_refused_with_the_choices():
    out = isa_of_a_fresh_process({"DLARRAY_CPU_ISA": "sse9"})
    assert "STATUS init failed" in out and "baseline, avx2 or avx512" in out, out
    r = proc_util.run("import dlarray\ntry:\n    dlarray.empty((2,), dlarray.cpu(0))\n"
                      "except RuntimeError as e:\n    print('RAISED', e)\n",
                      env={"DLARRAY_CPU_ISA": "sse9"}, timeout=60)
    assert "RAISED" in r.stdout and "DLARRAY_CPU_ISA" in r.stdout, r


@portable
@x86
@pytest.mark.parametrize("path", PATHS)
def test_every_supported_path_computes_right(path):
    # A quick cross-check here (the full op tests run per path in CI: scripts/isa_paths.sh).
    if path not in PATHS[:PATHS.index(best_path()) + 1]:
        pytest.skip(f"this CPU runs up to {best_path()}")
    r = proc_util.run("""
import numpy as np, dlarray
from dlarray import ops
rng = np.random.default_rng(0)
x = rng.standard_normal((1001, 257)).astype(np.float32)
a, o = dlarray.array(x), dlarray.empty(x.shape)
ops.softmax(a, o)
e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
assert np.allclose(o.asnumpy(), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
ops.relu(a, o)
assert np.array_equal(o.asnumpy(), np.maximum(x, 0))
w = rng.standard_normal((257, 33)).astype(np.float32)
m = dlarray.empty((1001, 33))
ops.matrix_multiply(a, False, dlarray.array(w), False, m)
assert np.allclose(m.asnumpy(), x.astype(np.float64) @ w, rtol=1e-4, atol=1e-3)
print("OK", dlarray.show_config("dicts")["cpu"]["isa"])
""", env={"DLARRAY_CPU_ISA": path}, timeout=120)
    assert r.returncode == 0 and f"OK {path} " in r.stdout, r
