"""DLARRAY_LOG=info|debug: plugin discovery, the CPU backend's choices, kernel caches and fallbacks
through the ``dlarray`` logger (python/dlarray/_log.py); a bad value raises at import."""
import logging
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import dlarray
from dlarray import _cache, _log
from dlarray import autodiff as ad

from conftest import ROOT

EXAMPLE_C = ROOT / "examples" / "custom_op_c" / "axpby.c"


def run_python(code, tmp_path, **env):
    """``code`` in a fresh interpreter outside the repository, with ``env`` added (None removes)."""
    environ = {k: v for k, v in os.environ.items() if k != "DLARRAY_LOG"}
    environ["DLARRAY_CACHE_DIR"] = str(tmp_path / "cache")  # its own, whatever the caller set
    for key, value in env.items():
        if value is None:
            environ.pop(key, None)
        else:
            environ[key] = value
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=environ, timeout=300)


def test_level_from_env():
    assert _log.level_from_env(None) is None
    assert _log.level_from_env("") is None
    assert _log.level_from_env("warning") is None
    assert _log.level_from_env(" INFO ") == logging.INFO
    assert _log.level_from_env("debug") == logging.DEBUG
    with pytest.raises(ValueError, match=r"DLARRAY_LOG='loud' is not a log level: use "
                                         r"DLARRAY_LOG=info or DLARRAY_LOG=debug"):
        _log.level_from_env("loud")


def test_unset_is_quiet(tmp_path):
    run = run_python("import dlarray; dlarray.empty((2,)); print('ok')", tmp_path)
    assert run.returncode == 0 and run.stdout == "ok\n", run.stderr
    assert run.stderr == ""
    run = run_python("import dlarray", tmp_path, DLARRAY_LOG="warning")
    assert run.returncode == 0 and run.stderr == ""


def test_bad_value_raises_at_import(tmp_path):
    run = run_python("import dlarray", tmp_path, DLARRAY_LOG="loud")
    assert run.returncode == 1
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("ValueError: DLARRAY_LOG='loud' is not a log level"), run.stderr
    assert "info" in last and "debug" in last


def test_debug_logs_plugins_and_cpu_choices_to_stderr(tmp_path):
    bogus = tmp_path / "not_a_plugin.so"
    bogus.write_bytes(b"not an ELF file")
    run = run_python("import dlarray", tmp_path, DLARRAY_LOG="debug",
                     DLARRAY_PLUGIN_PATH=str(bogus), DLARRAY_DISABLE_PLUGINS="sigmoid_ops")
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    assert all(line.startswith(("dlarray INFO: ", "dlarray DEBUG: ")) for line in lines), lines
    cpu = next(p for p in dlarray.plugins() if p["name"] == "cpu")
    assert ("dlarray INFO: plugin cpu: loaded (1 cpu device(s), %d ops) from plugins folder, %s"
            % (len(cpu["ops"]), cpu["path"])) in lines
    assert "dlarray DEBUG: plugin cpu ops: " + ", ".join(cpu["ops"]) in lines
    assert any(line.startswith("dlarray INFO: plugin sigmoid_ops: disabled (plugins folder, ")
               for line in lines), lines
    bad = [line for line in lines if str(bogus) in line]
    assert len(bad) == 1 and "(DLARRAY_PLUGIN_PATH, %s): " % bogus in bad[0], lines
    config = dlarray.show_config(mode="dicts")["cpu"]
    assert "dlarray INFO: cpu: instruction set path " + config["isa"] in lines
    if config["gemm"] == "cblas":
        assert any(line.startswith("dlarray INFO: cpu: matrix products through "
                                   + config["blas"]["name"]) for line in lines), lines


def test_info_leaves_out_debug(tmp_path):
    run = run_python("import dlarray", tmp_path, DLARRAY_LOG="info")
    assert run.returncode == 0, run.stderr
    assert "dlarray INFO: plugin cpu: loaded" in run.stderr
    assert "DEBUG" not in run.stderr


def test_cpp_extension_cache_miss_then_hit(tmp_path):
    code = ("import dlarray.cpp_extension as c; c.load('axpby_log', [%r])" % str(EXAMPLE_C))
    first = run_python(code, tmp_path, DLARRAY_LOG="debug")
    assert first.returncode == 0, first.stderr
    assert "dlarray INFO: cache miss: cpp_extension 'axpby_log' built in " in first.stderr
    assert "cache hit: cpp_extension" not in first.stderr
    second = run_python(code, tmp_path, DLARRAY_LOG="debug")
    assert second.returncode == 0, second.stderr
    assert "dlarray DEBUG: cache hit: cpp_extension 'axpby_log' from %s" % (
        tmp_path / "cache" / "cpp_extension") in second.stderr
    assert "cache miss" not in second.stderr


def test_startup_records_reach_an_application_handler(caplog):
    """Without DLARRAY_LOG the records still go to the application's logging (here caplog's)."""
    with caplog.at_level(logging.DEBUG, logger="dlarray"):
        _log.log_startup()
    messages = [r.getMessage() for r in caplog.records if r.name == "dlarray"]
    assert any(m.startswith("plugin cpu: loaded") for m in messages), messages
    assert any(m.startswith("cpu: instruction set path") for m in messages), messages


def test_startup_says_nothing_when_nobody_listens(caplog, monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("show_config was asked although the log is off")
    monkeypatch.setattr(dlarray._config, "show_config", fail)
    with caplog.at_level(logging.WARNING, logger="dlarray"):
        _log.log_startup()
    assert caplog.records == []


def test_missing_kernels():
    records = [
        {"name": "cpu", "status": "loaded", "device_type": "cpu", "device_count": 1,
         "ops": ["relu", "exp"]},
        {"name": "ocl", "status": "loaded", "device_type": "opencl", "device_count": 1,
         "ops": ["relu"]},
        {"name": "gpu", "status": "open failed", "device_type": "", "device_count": 0,
         "ops": []},
        {"name": "ext", "status": "loaded", "device_type": "", "device_count": 0,
         "ops": ["sig"]},
    ]
    devices = {"relu": ["cpu", "opencl"], "exp": ["cpu"], "sig": ["cpu"]}
    assert _log._missing_kernels(records, lambda op: {"devices": devices[op]}) == {
        "opencl": ["exp", "sig"]}


def test_corrupt_cache_entry_is_logged(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("DLARRAY_CACHE_DIR", str(tmp_path))
    entry = _cache.entry_dir("logtest", "k")
    path = _cache.store_bytes(entry / "blob", b"good")
    with caplog.at_level(logging.DEBUG, logger="dlarray"):
        assert _cache.load_bytes(path) == b"good"
        assert caplog.records == []                      # a good entry: nothing to say
        path.write_bytes(b"bad")
        assert _cache.load_bytes(path) is None
        assert _cache.load_bytes(path) is None           # now a plain miss: said once
    messages = [r.getMessage() for r in caplog.records]
    assert messages == ["cache: dropped the corrupt or half-written entry %s (it is rebuilt)"
                        % path]


class _NumpyOnly(ad.CustomOp):
    """y = 2 x in NumPy only: a CPU executor runs it on host copies (a fallback)."""

    def forward_numpy(self, in_data, out_data):
        out_data[0][:] = 2 * in_data[0]

    def backward_numpy(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = 2 * out_grad[0]


def test_custom_op_fallback_is_logged_once(caplog):
    x = ad.Variable("x")
    executor = ad.Executor([_NumpyOnly()(x)], ctx=dlarray.cpu(0))
    feed = {x: dlarray.array(np.ones((2, 3), np.float32))}
    with caplog.at_level(logging.INFO, logger="dlarray"):
        for _ in range(3):
            out, = executor.run(feed, convert_to_numpy_ret_vals=True)
    np.testing.assert_array_equal(out, np.full((2, 3), 2.0))
    messages = [r.getMessage() for r in caplog.records if "_NumpyOnly" in r.getMessage()]
    assert messages == ["fallback: _NumpyOnly: forward runs as NumPy code on host copies of the "
                        "arrays"]


def test_custom_aot_cache_miss_then_hit(tmp_path, monkeypatch, caplog):
    from dlarray import _aot_build
    monkeypatch.setenv("DLARRAY_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "twice.c"
    source.write_text("int Twice(int x) { return 2 * x; }\n")
    with caplog.at_level(logging.DEBUG, logger="dlarray"):
        first = _aot_build.compile_source(str(source))
        second = _aot_build.compile_source(str(source))
    assert first == second and first.is_file()
    messages = [r.getMessage() for r in caplog.records if "custom AOT" in r.getMessage()]
    assert len(messages) == 2, messages
    assert messages[0].startswith("cache miss: custom AOT %s built with " % source)
    assert messages[1] == "cache hit: custom AOT %s from %s" % (source, first)
    assert [r.levelno for r in caplog.records if "custom AOT" in r.getMessage()] == [
        logging.INFO, logging.DEBUG]


def test_rtc_cache_lookups_are_logged(tmp_path, monkeypatch, caplog):
    """Memory hit, disk hit and miss of rtc's program cache, with NVRTC replaced by a stub (the
    logging is what is tested; test_rtc_cache tests the cache with the real compiler)."""
    from dlarray import _core, _rtc_build
    monkeypatch.setenv("DLARRAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(_rtc_build, "require", lambda service: None)
    monkeypatch.setattr(_core, "_rtc_compile", lambda *args: (True, b"\x7fELF stub",
                                                               _core._RTC_CUBIN, "", []),
                        raising=False)
    _rtc_build.clear_memory_cache()
    source = "extern \"C\" __global__ void k() {}"
    with caplog.at_level(logging.DEBUG, logger="dlarray"):
        _rtc_build.compile_program(source, "log_probe", arch=90)   # miss: compiled
        _rtc_build.compile_program(source, "log_probe", arch=90)   # in memory
        _rtc_build.clear_memory_cache()
        _rtc_build.compile_program(source, "log_probe", arch=90)   # on disk
    _rtc_build.clear_memory_cache()
    messages = [r.getMessage() for r in caplog.records if "rtc program 'log_probe'" in
                r.getMessage()]
    folder = re.escape(str(tmp_path / "cache" / "rtc"))
    patterns = [r"cache miss: rtc program 'log_probe' compiled for sm_90 in [0-9.]+ s, key \w+$",
                r"cache hit \(memory\): rtc program 'log_probe' for sm_90, key \w+$",
                r"cache hit \(disk\): rtc program 'log_probe' for sm_90 from %s/\w+/program.bin$"
                % folder]
    assert len(messages) == 3 and all(re.match(p, m) for p, m in zip(patterns, messages)), messages
