"""The OpenCL backend (backends/opencl) beyond the op suite, which conftest already runs on every
OpenCL device: copies with the CPU both ways, device selection (DLARRAY_OPENCL_DEVICES), zero
devices with a reason, the program-binary cache (keys, checksums, damaged entries rebuilt),
errors. Skipped where the plugin has no device (no OpenCL implementation, e.g. PoCL)."""
import hashlib
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import dlarray
from dlarray import _cache, ops

OPENCL = [c for c in dlarray.devices() if c.device_type == 4]
PLUGIN = next((p for p in dlarray.plugins() if p["name"] == "opencl"), None)


def needs_opencl():
    if not OPENCL:
        why = (PLUGIN["status"] + ": " + PLUGIN["reason"]) if PLUGIN else "plugin not built"
        pytest.skip("no OpenCL device (%s)" % why)
    return OPENCL[0]


def run(code, **env):
    """Runs code in a fresh interpreter with env added; returns its JSON output."""
    full = dict(os.environ)
    full.update({k: v for k, v in env.items() if v is not None})
    for k, v in env.items():
        if v is None:
            full.pop(k, None)
    out = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


REPORT = """
import json, dlarray
p = next(p for p in dlarray.plugins() if p["name"] == "opencl")
devs = [dlarray._core.device_name(c) for c in dlarray.devices() if c.device_type == 4]
err = ""
try:
    dlarray.empty((2,), dlarray.opencl(0))
except Exception as e:
    err = type(e).__name__ + ": " + str(e)
print(json.dumps({"status": p["status"], "reason": p["reason"], "devices": devs, "err": err}))
"""


def test_context_constructor():
    assert dlarray.opencl() == dlarray.opencl(0) == dlarray.DLContext(0, 4)
    assert dlarray.opencl(3).device_type == 4 and dlarray.opencl(3).device_id == 3
    assert not dlarray.is_gpu_ctx(dlarray.opencl(0))
    assert repr(dlarray.opencl(2)) == "opencl(2)"
    assert dlarray.device("opencl:2") == dlarray.opencl(2)


@pytest.mark.parametrize("shape", [(1,), (7,), (33, 65), (1000, 1001), (2, 3, 4, 5)])
def test_copies_with_the_cpu_both_ways(rng, shape):
    ctx = needs_opencl()
    x = rng.standard_normal(shape).astype(np.float32)
    a = dlarray.array(x, ctx)                      # numpy -> opencl
    np.testing.assert_array_equal(a.asnumpy(), x)  # opencl -> numpy
    c = dlarray.array(x * 2, dlarray.cpu())
    c.copyto(a)                                    # cpu -> opencl
    np.testing.assert_array_equal(a.asnumpy(), x * 2)
    back = a.copyto(dlarray.cpu())                 # opencl -> cpu
    assert back.ctx == dlarray.cpu()
    np.testing.assert_array_equal(back.asnumpy(), x * 2)
    other = a.copyto(ctx)                          # opencl -> opencl
    a[:] = np.full(shape, 0.5)  # (a scalar into a 1-element array trips a binding bug)
    np.testing.assert_array_equal(other.asnumpy(), x * 2)
    np.testing.assert_array_equal(a.asnumpy(), np.full(shape, 0.5, np.float32))


def test_ops_mix_with_copies_in_queue_order(rng):
    ctx = needs_opencl()
    x = rng.standard_normal((513, 257)).astype(np.float32)
    a, b = dlarray.array(x, ctx), dlarray.empty(x.shape, ctx)
    for i in range(20):  # kernels and copies interleaved on one in-order queue
        ops.matrix_elementwise_add_by_const(a, 1.0, b)
        a[:] = b.asnumpy()
    np.testing.assert_allclose(a.asnumpy(), x + 20, rtol=1e-5)


def test_device_name_memory_and_stats():
    ctx = needs_opencl()
    name = dlarray._core.device_name(ctx)
    assert "GiB" in name and "OpenCL" in name
    before = dlarray.memory_stats(ctx)["bytes_in_use"]
    a = dlarray.empty((1024, 1024), ctx)
    assert dlarray.memory_stats(ctx)["bytes_in_use"] >= before + 4 * 1024 * 1024
    del a
    assert dlarray.memory_stats(ctx)["bytes_in_use"] == before
    dlarray.empty_cache(ctx)
    assert dlarray.memory_stats(ctx)["bytes_reserved"] == dlarray.memory_stats(ctx)["bytes_in_use"]


def test_too_large_an_array_is_a_memory_error():
    ctx = needs_opencl()
    with pytest.raises(MemoryError, match="CL_DEVICE_MAX_MEM_ALLOC_SIZE"):
        dlarray.empty((1 << 40,), ctx)


def test_options():
    ctx = needs_opencl()
    assert dlarray._core.get_option(ctx, "driver_version")
    assert "|" in dlarray._core.get_option(ctx, "platform")
    for c in OPENCL:  # per device: "platform:<id>"; the plain key is device 0's
        assert "|" in dlarray._core.get_option(c, "platform:%d" % c.device_id)
        assert dlarray._core.get_option(c, "driver_version:%d" % c.device_id)
    assert dlarray._core.get_option(ctx, "platform:0") == dlarray._core.get_option(ctx, "platform")
    with pytest.raises(ValueError, match="'x' is not a device id"):
        dlarray._core.get_option(ctx, "platform:x")
    with pytest.raises(ValueError, match="opencl\\(%d\\) does not exist" % len(OPENCL)):
        dlarray._core.get_option(ctx, "platform:%d" % len(OPENCL))
    with pytest.raises(ValueError, match="unknown option 'nope'.*program_cache"):
        dlarray._core.get_option(ctx, "nope")


def test_python_m_dlarray_lists_the_device_with_its_memory():
    needs_opencl()
    out = subprocess.run([sys.executable, "-m", "dlarray"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "opencl" in out.stdout and "GiB" in out.stdout


@pytest.mark.parametrize("spec,count,reason", [
    ("pocl:0", 1, ""), ("pocl:*", None, ""), ("0", 1, ""), ("*", None, ""),
    ("nvidia-is-not-here:*", 0, "no OpenCL platform's name or vendor contains"),
    ("pocl:99", 0, "so there is no device 99"), ("pocl:x", 0, "is not a selector")])
def test_device_selection(spec, count, reason):
    needs_opencl()
    pocl = [c for c in OPENCL
            if "Portable Computing Language" in
            dlarray._core.get_option(c, "platform:%d" % c.device_id)]
    if not pocl:
        pytest.skip("these selectors name PoCL")
    r = run(REPORT, DLARRAY_OPENCL_DEVICES=spec)
    if count is None:  # "pocl:*": PoCL's devices; "*": every platform's (NVIDIA's too, say)
        count = len(pocl) if spec.startswith("pocl") else len(OPENCL)
    assert len(r["devices"]) == count
    if count == 0:
        assert r["status"] == "no devices"
        assert reason in r["reason"] and "DLARRAY_OPENCL_DEVICES='%s'" % spec in r["reason"]
        assert "pocl:0 (" in r["reason"]  # the devices there are, by selector
        assert r["err"].startswith("RuntimeError") and reason in r["err"]
    else:
        assert r["status"] == "loaded" and not r["err"]


def test_no_opencl_implementation_means_zero_devices_with_the_reason(tmp_path):
    if PLUGIN is None:
        pytest.skip("opencl_backend.so not built")
    # The ICD loader reads the implementations from OCL_ICD_VENDORS: here, an empty folder.
    # OCL_ICD_FILENAMES, where set (the GPU machine names PoCL and NVIDIA's there), comes first.
    r = run(REPORT, OCL_ICD_VENDORS=str(tmp_path), OPENCL_VENDOR_PATH=str(tmp_path),
            OCL_ICD_FILENAMES=None)
    assert r["status"] == "no devices" and r["devices"] == []
    assert "no OpenCL platform" in r["reason"] and "CL_PLATFORM_NOT_FOUND_KHR" in r["reason"]
    assert r["err"].startswith("RuntimeError") and "no OpenCL platform" in r["err"]


PROGRAM = """
import json, numpy as np, dlarray
ctx = dlarray.opencl(0)
x = np.linspace(-3, 3, 1001).astype(np.float32)
y = dlarray.empty(x.shape, ctx)
dlarray.ops.relu(dlarray.array(x, ctx), y)
print(json.dumps({"ok": bool((y.asnumpy() == np.maximum(x, 0)).all()),
                  "cache": dlarray._core.get_option(ctx, "program_cache")}))
"""


def relu_entries(cache):
    """The cache entries of the program relu is in (the elementwise table's)."""
    found = []
    for key_file in (cache / "opencl").glob("*/key.json"):
        parts = json.loads(key_file.read_text())
        if "DL_MAP1(dl_relu," in parts[1]:
            found.append(key_file.parent)
    return found


def test_program_binaries_are_cached_with_dlarray_cache_conventions(tmp_path, monkeypatch):
    needs_opencl()
    # This process reads the entry too, and the cache touches nothing outside its own root.
    monkeypatch.setenv("DLARRAY_CACHE_DIR", str(tmp_path))
    r = run(PROGRAM, DLARRAY_CACHE_DIR=str(tmp_path))
    assert r["ok"] and r["cache"] == str(tmp_path / "opencl")
    entries = relu_entries(tmp_path)
    assert len(entries) == 1
    entry = entries[0]
    parts = json.loads((entry / "key.json").read_text())
    # The key is dlarray._cache.make_key of (format, source, options, platform, device, driver).
    assert entry.name == _cache.make_key(*parts)
    assert "-DT=float" in parts[2] and len(parts) == 6
    binary = entry / "program.bin"
    digest = (entry / "program.bin.sha256").read_text().strip()
    assert digest == hashlib.sha256(binary.read_bytes()).hexdigest()
    assert _cache.verified_file(binary) == binary  # Python's reader accepts the C++ writer's
    assert not [p for p in entry.iterdir() if ".tmp" in p.name]  # no temporary left behind
    mtime = binary.stat().st_mtime_ns
    assert run(PROGRAM, DLARRAY_CACHE_DIR=str(tmp_path))["ok"]
    assert binary.stat().st_mtime_ns == mtime  # warm: read, not rebuilt


@pytest.mark.parametrize("damage", ["truncated", "garbage with a matching checksum"])
def test_a_damaged_binary_is_rebuilt(tmp_path, damage, monkeypatch):
    needs_opencl()
    monkeypatch.setenv("DLARRAY_CACHE_DIR", str(tmp_path))  # this process checks the entry too
    assert run(PROGRAM, DLARRAY_CACHE_DIR=str(tmp_path))["ok"]
    entry = relu_entries(tmp_path)[0]
    binary = entry / "program.bin"
    good = binary.read_bytes()
    if damage == "truncated":
        binary.write_bytes(good[: len(good) // 2])
    else:  # the checksum passes, the driver refuses it
        bad = b"not a program binary" * 10
        binary.write_bytes(bad)
        (entry / "program.bin.sha256").write_text(hashlib.sha256(bad).hexdigest())
    assert run(PROGRAM, DLARRAY_CACHE_DIR=str(tmp_path))["ok"]
    rebuilt = binary.read_bytes()
    assert len(rebuilt) > 100 and b"not a program binary" not in rebuilt
    assert _cache.verified_file(binary) == binary


def test_an_unusable_cache_folder_only_costs_builds(tmp_path):
    needs_opencl()
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    r = run(PROGRAM, DLARRAY_CACHE_DIR=str(blocker / "cache"))
    assert r["ok"] and r["cache"].startswith("disabled: ") and "DLARRAY_CACHE_DIR" in r["cache"]


FORK = """
import json, os, sys, numpy as np, dlarray
ctx = dlarray.opencl(0)
a = dlarray.array(np.ones((300, 300)), ctx)
dlarray.ops.relu(a, a)
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    import signal
    signal.alarm(20)  # a hang would end here, and fail the test
    out = {}
    dlarray.synchronize(ctx)  # nothing of OpenCL's to wait for in the child
    dlarray.synchronize(dlarray.cpu())
    try:  # every device: where the parent had initialised CUDA, gpu(n) refuses, naming spawn
        dlarray.synchronize()
        out["sync"] = "ok"
    except RuntimeError as e:
        out["sync"] = str(e)
    c = dlarray.array(np.ones(5))
    dlarray.ops.relu(c, c)  # the CPU still works
    for name, fn in [("op", lambda: dlarray.ops.relu(a, a)), ("read", a.asnumpy),
                     ("new", lambda: dlarray.empty((4,), ctx))]:
        try:
            fn()
            out[name] = "no error"
        except RuntimeError as e:
            out[name] = str(e)
    os.write(w, json.dumps(out).encode())
    os._exit(0)
os.close(w)
child = json.loads(os.read(r, 65536).decode())
_, status = os.waitpid(pid, 0)
print(json.dumps({"child": child, "status": status, "parent": float(a.asnumpy().sum())}))
"""


def test_a_forked_child_gets_an_error_not_a_hang():
    needs_opencl()
    r = run(FORK)
    assert r["status"] == 0 and r["parent"] == 90000.0
    for name in ("op", "read", "new"):
        assert "fork()ed" in r["child"][name] and "spawn" in r["child"][name], r["child"]
    sync = r["child"]["sync"]
    assert sync == "ok" or ("cuda(" in sync and "fork" in sync and "spawn" in sync), sync


def test_gpu_kernel_variants_pass_the_op_suite(tmp_path):
    """The kernels' GPU variants (a vector per work-item, a work-group per row, 4-wide tiles) on
    this OpenCL device, forced by DLARRAY_OPENCL_KERNELS=gpu: the whole op suite again."""
    needs_opencl()
    here = pathlib.Path(__file__).resolve().parent
    env = dict(os.environ, DLARRAY_OPENCL_KERNELS="gpu", DLARRAY_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(here / "test_ops.py"), "-k", repr(OPENCL[0]).split("(")[0]],
                         env=env, cwd=here,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and "failed" not in out.stdout
    options = [json.loads(k.read_text())[2] for k in (tmp_path / "opencl").glob("*/key.json")]
    assert options and all("-DVW=4" in o and "-DDLARRAY_CPU" not in o for o in options)


def test_gpu_kernel_variants_pass_the_dtype_and_view_suites(tmp_path):
    """The GPU variants again (DLARRAY_OPENCL_KERNELS=gpu) over the dtype and view suites: strided
    copies with one element per work-item, the 4-wide integer wrap-around vectors, the 64-bit
    integer sums, float16 through the float32 GPU kernels. A representative dtype of each kind
    (the CPU variant runs them all in the main suite) keeps this run short; every view test runs."""
    needs_opencl()
    here = pathlib.Path(__file__).resolve().parent
    env = dict(os.environ, DLARRAY_OPENCL_KERNELS="gpu", DLARRAY_CACHE_DIR=str(tmp_path))
    name = repr(OPENCL[0]).split("(")[0]
    pick = "test_views or float16 or int8 or uint64 or bool or float64"
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(here / "test_dtypes.py"), str(here / "test_views.py"),
                          "-k", "%s and (%s)" % (name, pick)],
                         env=env, cwd=here, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and "failed" not in out.stdout
    options = [json.loads(k.read_text())[2] for k in (tmp_path / "opencl").glob("*/key.json")]
    assert any("-DT=ushort -DT_KIND=1" in o for o in options)  # float16 ran
    assert all("-DVW=4" in o and "-DDLARRAY_CPU" not in o for o in options)
