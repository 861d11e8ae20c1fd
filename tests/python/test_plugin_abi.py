"""The plugin ABI as a third party meets it: a plugin written in C99, one built against the older
ABI 2.0 headers, plugins that misbehave, the loader's edge cases, and plugin ops as Python
functions (signatures, keywords, help, output allocation)."""
import inspect
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import dlarray
from dlarray import _core

C99_TYPE, ABI20_TYPE, ABI21_TYPE = 25, 26, 28


def python(code, timeout=60, **env):
    """Runs code in a fresh interpreter; returns (returncode, stdout + stderr)."""
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, **env),
                         capture_output=True, text=True, timeout=timeout)
    return out.returncode, out.stdout + out.stderr


@pytest.fixture
def c99(test_plugin_dir):
    return dlarray.load_plugin(test_plugin_dir / "c99_plugin.so")


@pytest.fixture
def abi20(test_plugin_dir):
    return dlarray.load_plugin(test_plugin_dir / "abi20_plugin.so")


def test_c99_plugin_loads_and_serves_a_device(c99, rng):
    assert c99["status"] == "loaded" and c99["abi_version"] == _core.PLUGIN_ABI_VERSION
    assert c99["version"] == "1.0" and c99["device_count"] == 2
    # c99_axpy has kernels for two device types but is one op: listed once.
    assert sorted(c99["ops"]) == ["c99_axpy", "copy", "relu"]
    assert c99["declared_ops"] == ["c99_axpy"]
    dev = dlarray.DLContext(1, C99_TYPE)
    # The device type prints, and parses, as its plugin named it.
    assert repr(dev) == "c99_device(1)" and c99["device_type"] == "c99_device"
    assert dlarray.DLContext("c99_device:1") == dev and _core.device_count("c99_device") == 2
    assert _core.device_name(dev) == "c99 host device 1"
    assert _core.get_option(dev, "language") == "C99"
    with pytest.raises(ValueError, match="c99 device: unknown option"):
        _core.get_option(dev, "nope")
    x = rng.standard_normal((37, 129)).astype(np.float32)
    a = dlarray.array(x, dev)
    out = dlarray.empty(x.shape, dev)
    dlarray.ops.relu(a, out)
    np.testing.assert_array_equal(out.asnumpy(), np.maximum(x, 0))
    y = rng.standard_normal(x.shape).astype(np.float32)
    for ctx in (dev, dlarray.cpu()):
        r = dlarray.ops.c99_axpy(dlarray.array(x, ctx), dlarray.array(y, ctx), alpha=-2.5,
                                 out=dlarray.empty(x.shape, ctx))
        assert r.ctx == ctx
        np.testing.assert_allclose(r.asnumpy(), -2.5 * x + y, rtol=1e-6)


def test_c99_plugin_errors_are_reported(c99):
    a, b = dlarray.array(np.ones(4)), dlarray.array(np.ones(5))
    with pytest.raises(ValueError, match="c99_axpy: x, y and out must have one shape"):
        dlarray.ops.c99_axpy(a, b, 1.0, dlarray.empty((4,)))
    with pytest.raises(ValueError, match="c99_axpy: alpha is NaN"):
        dlarray.ops.c99_axpy(a, a, float("nan"), dlarray.empty((4,)))
    # c99_axpy checks shapes itself and declares no shape inference: outputs must be given.
    with pytest.raises(ValueError, match="cannot infer its output shapes"):
        dlarray.ops.c99_axpy(a, a, 1.0)


@pytest.fixture
def abi21(test_plugin_dir):
    return dlarray.load_plugin(test_plugin_dir / "abi21_plugin.so")


def test_plugin_of_abi_2_1_runs_on_the_abi_3_core(abi21, rng):
    assert _core.PLUGIN_ABI_VERSION == (3, 1)  # 3.1: DLArrayGradient.attrs, .when
    assert abi21["status"] == "loaded" and abi21["abi_version"] == (2, 1), abi21["reason"]
    dev = dlarray.DLContext(1, ABI21_TYPE)
    assert repr(dev) == "abi21_device(1)"
    x = rng.standard_normal((7, 5)).astype(np.float32)
    a = dlarray.array(x, dev)
    r = dlarray.ops.abi21_axpy(a, a, 0.5, dlarray.empty(x.shape, dev))
    np.testing.assert_allclose(r.asnumpy(), 1.5 * x, rtol=1e-6)
    # Its 2.x copy takes plain pointers: the core adds the byte offsets of views for it, both ways.
    np.testing.assert_array_equal(a[2:5].asnumpy(), x[2:5])
    a[3:6] = x[:3]
    np.testing.assert_array_equal(a.asnumpy(), np.concatenate([x[:3], x[:3], x[6:]]))
    empty = dlarray.array(np.zeros((0, 5), np.float32), dev)
    assert empty.asnumpy().shape == (0, 5)


def test_plugin_built_against_abi_2_0_headers_runs(abi20, rng):
    assert abi20["status"] == "loaded", abi20["reason"]
    assert abi20["abi_version"] == (2, 0)
    dev = dlarray.DLContext(0, ABI20_TYPE)
    x = rng.standard_normal(1000).astype(np.float32)
    r = dlarray.ops.abi20_axpy(dlarray.array(x, dev), dlarray.array(x, dev), 3.0,
                               dlarray.empty(x.shape, dev))
    np.testing.assert_allclose(r.asnumpy(), 4 * x, rtol=1e-6)
    # Functions an ABI 2.0 table lacks are absent, not garbage: the defaults answer.
    assert _core.memory_stats(dev)["bytes_in_use"] == 0
    _core.empty_cache(dev)


def test_newer_major_is_refused_with_both_versions(test_plugin_dir):
    major, minor = _core.PLUGIN_ABI_VERSION
    with pytest.raises(RuntimeError, match=rf"built for plugin ABI {major + 1}\.0, this runtime "
                                           rf"has plugin ABI {major}\.{minor}"):
        dlarray.load_plugin(test_plugin_dir / "wrong_abi_plugin.so")


def test_one_plugin_declaring_an_op_twice_differently_is_refused(test_plugin_dir):
    with pytest.raises(RuntimeError, match="dup_decl_op.*declared twice by this plugin"):
        dlarray.load_plugin(test_plugin_dir / "dup_decl_plugin.so")
    assert "dup_decl_op" not in dlarray.ops.op_names()


def test_null_allocation_and_foreign_exceptions_are_errors(test_plugin_dir):
    rec = dlarray.load_plugin(test_plugin_dir / "misbehaving_plugin.so")
    assert rec["status"] == "loaded"
    with pytest.raises(RuntimeError, match=r"misbehaving plugin's allocate returned no memory .* "
                                           r"on misbehaving\(0\)"):
        dlarray.empty((4,), dlarray.DLContext(0, 27))
    with pytest.raises(RuntimeError, match="misbehave: plugin 'misbehaving' threw an exception "
                                           "that is not a std::exception"):
        dlarray.ops.misbehave(dlarray.array(np.ones(3)))
    dlarray.ops.relu(dlarray.array(np.ones(3)), dlarray.empty((3,)))  # the process is fine


def test_device_type_zero_is_not_blamed_on_op_plugins():
    with pytest.raises(ValueError, match=r"device type 0 is not a device type"):
        dlarray.empty((2,), dlarray.DLContext(0, 0))


def test_a_fifo_is_never_opened(tmp_path):
    fifo = tmp_path / "hang.so"
    os.mkfifo(fifo)
    with pytest.raises(RuntimeError, match="not a regular file"):
        dlarray.load_plugin(fifo)
    code = "import dlarray, json; print(json.dumps([p['reason'] for p in dlarray.plugins()]))"
    rc, out = python(code, timeout=30, DLARRAY_PLUGIN_PATH=str(tmp_path))
    assert rc == 0, out  # discovery skipped the FIFO instead of hanging on it


def test_a_nul_byte_in_a_path_is_an_error(test_plugin_dir):
    with pytest.raises((ValueError, RuntimeError), match="NUL"):
        dlarray.load_plugin(str(test_plugin_dir / "c99_plugin.so") + "\0trailing")


def test_a_failed_path_is_tried_again_once_fixed(tmp_path, test_plugin_dir):
    target = tmp_path / "fixed_later.so"
    target.write_text("not yet a library")
    # Refused by the dynamic loader, which says why.
    with pytest.raises(RuntimeError, match=r"open failed: .*fixed_later\.so: file too short"):
        dlarray.load_plugin(target)
    target.unlink()
    shutil.copy(test_plugin_dir / "c99_plugin.so", tmp_path / "c99_copy.so")
    (tmp_path / "c99_copy.so").rename(target)
    code = f"""
import dlarray
try:
    dlarray.load_plugin({str(tmp_path / 'other.so')!r})
except RuntimeError:
    pass
open({str(tmp_path / 'late.so')!r}, 'w').write('text')
try:
    dlarray.load_plugin({str(tmp_path / 'late.so')!r})
except RuntimeError as e:
    reason = str(e)
else:
    raise SystemExit('a text file loaded as a plugin')
assert 'open failed' in reason and 'late.so: file too short' in reason, reason
import shutil; shutil.copy({str(target)!r}, {str(tmp_path / 'late2.so')!r})
import os; os.replace({str(tmp_path / 'late2.so')!r}, {str(tmp_path / 'late.so')!r})
print(dlarray.load_plugin({str(tmp_path / 'late.so')!r})['status'])
"""
    rc, out = python(code)
    assert rc == 0 and out.strip().endswith("loaded"), out


def test_failed_records_stay_bounded(tmp_path):
    code = f"""
import dlarray
before = len(dlarray.plugins())
for i in range(3000):
    try:
        dlarray.load_plugin({str(tmp_path)!r} + '/missing_%d.so' % i)
    except RuntimeError:
        pass
print(len(dlarray.plugins()) - before)
"""
    rc, out = python(code, timeout=120)
    assert rc == 0, out
    assert int(out.split()[-1]) <= 256


def test_disable_plugins_entries_are_trimmed():
    code = "import dlarray; print([p['status'] for p in dlarray.plugins() if p['name'] == 'cpu'])"
    rc, out = python(code, DLARRAY_DISABLE_PLUGINS=" cpu , sigmoid_ops ")
    assert rc == 0 and "['disabled']" in out, out


def test_plugin_op_functions_feel_native(c99, rng):
    op = dlarray.ops.c99_axpy
    assert str(inspect.signature(op)) == "(x, y, alpha, out=None)"
    assert "c99_axpy" in dir(dlarray.ops) and "sigmoid" in dir(dlarray.ops)
    assert "out = alpha * x + y" in op.__doc__ and "Parameters" in op.__doc__
    assert "alpha : float" in op.__doc__ and "plugin 'c99_device'" in op.__doc__
    x = rng.standard_normal(5).astype(np.float32)
    a, out = dlarray.array(x), dlarray.empty((5,))
    assert op(y=a, x=a, alpha=1.0, out=out) is out
    np.testing.assert_allclose(out.asnumpy(), 2 * x, rtol=1e-6)
    assert op(a, a, 0.5, out) is out
    with pytest.raises(TypeError, match=r"c99_axpy\(x, y, alpha, out=None\): .*'beta'"):
        op(a, a, alpha=1.0, beta=1.0)
    with pytest.raises(TypeError, match=r"c99_axpy\(x, y, alpha, out=None\): .*'alpha'"):
        op(a, a)
    with pytest.raises(TypeError, match="attributes .* must be numbers"):
        op(a, a, "fast", out)
    with pytest.raises(AttributeError, match="no op 'no_such_op'"):
        dlarray.ops.no_such_op


def test_sigmoid_allocates_its_output_from_the_inferred_shape(rng):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    y = dlarray.ops.sigmoid(dlarray.array(x))
    assert y.shape == (3, 4, 5) and y.dtype == np.float32
    np.testing.assert_allclose(y.asnumpy(), 1 / (1 + np.exp(-x)), rtol=1e-6)
    assert dlarray.ops.infer_outputs("sigmoid", [(2, 3)], [np.dtype("float32")], []) == \
        [((2, 3), np.dtype("float32"))]
    with pytest.raises(TypeError, match="input 'x' must be an NDArray"):
        dlarray.ops.sigmoid(x)


def test_command_line():
    run = [sys.executable, "-m", "dlarray"]
    out = subprocess.run(run + ["--help"], capture_output=True, text=True, check=True).stdout
    assert "--cmake-dir" in out and "--check" in out
    cmake_dir = pathlib.Path(subprocess.run(run + ["--cmake-dir"], capture_output=True, text=True,
                                            check=True).stdout.strip())
    assert (cmake_dir / "dlarrayConfig.cmake").is_file()
    assert (cmake_dir / "dlarrayConfig-version.cmake").is_file()
    include = pathlib.Path(subprocess.run(run + ["--include-dir"], capture_output=True, text=True,
                                          check=True).stdout.strip())
    assert (include / "dlarray" / "plugin_api.h").is_file()
    report = subprocess.run(run, capture_output=True, text=True, check=True).stdout
    assert "ops declared by plugins" in report and "sigmoid(x, y=None)" in report
    assert "ops against NumPy" not in report  # the op check runs only with --check
    bad = subprocess.run(run + ["--frobnicate"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unrecognized arguments" in bad.stderr
