"""The CPU backend's threads: set_num_threads / get_num_threads, OMP_NUM_THREADS, results at every
thread count, threads that sleep when idle, concurrent callers, and show_config's report."""
import os
import pathlib
import threading
import time

import numpy as np
import pytest

import dlarray
from dlarray import ops

import proc_util

CPU = dlarray.cpu(0)


@pytest.fixture
def restore_threads():
    old = dlarray.get_num_threads()
    yield
    dlarray.set_num_threads(old)


def test_set_and_get(restore_threads):
    for n in (1, 3, 2, 7):
        dlarray.set_num_threads(n)
        assert dlarray.get_num_threads() == n
        assert f"({n} threads)" in dlarray._core.device_name(CPU)
    dlarray.set_num_threads(np.int64(2))
    assert dlarray.get_num_threads() == 2


@pytest.mark.parametrize("bad", [0, -1, 4096, 10**20])
def test_out_of_range_raises_value_error(bad, restore_threads):
    before = dlarray.get_num_threads()
    with pytest.raises(ValueError, match="from 1 to 4095"):
        dlarray.set_num_threads(bad)
    assert dlarray.get_num_threads() == before


@pytest.mark.parametrize("bad", [2.0, "2", None, True])
def test_non_integers_raise_type_error(bad):
    with pytest.raises(TypeError, match="int"):
        dlarray.set_num_threads(bad)


def test_core_option_is_validated_too(restore_threads):
    # The device option under the Python API checks its text itself.
    for text in ("", "two", "3x", "0", "99999"):
        with pytest.raises(ValueError, match="num_threads"):
            dlarray._core.set_option(CPU, "num_threads", text)


@pytest.mark.parametrize("env, expected", [("1", 1), ("3", 3), ("2,1", 2)])
def test_default_follows_omp_num_threads(env, expected):
    r = proc_util.run("import dlarray; print('threads', dlarray.get_num_threads())",
                      env={"OMP_NUM_THREADS": env}, timeout=60)
    assert r.returncode == 0 and f"threads {expected}" in r.stdout, r


def test_default_is_the_usable_cpus():
    # An empty OMP_NUM_THREADS counts as unset.
    r = proc_util.run("import os, dlarray; print(dlarray.get_num_threads(), "
                      "len(os.sched_getaffinity(0)))", env={"OMP_NUM_THREADS": ""}, timeout=60)
    assert r.returncode == 0, r
    ours, usable = r.stdout.split()
    assert ours == usable, r


def _check_every_op(rng, shapes):
    for shape in shapes:
        x = rng.standard_normal(shape).astype(np.float32)
        w = rng.standard_normal((shape[1], 37)).astype(np.float32)
        a, o = dlarray.array(x), dlarray.empty(shape)
        ops.relu(a, o)
        np.testing.assert_array_equal(o.asnumpy(), np.maximum(x, 0))
        ops.softmax(a, o)
        e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(o.asnumpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5,
                                   atol=1e-7)
        labels = np.eye(shape[1], dtype=np.float32)[rng.integers(0, shape[1], shape[0])]
        loss = dlarray.empty((1,))
        ops.softmax_cross_entropy(a, dlarray.array(labels), loss)
        x64 = x.astype(np.float64)
        lse = np.log(np.exp(x64 - x64.max(1, keepdims=True)).sum(1)) + x64.max(1)
        ref = np.mean(lse - (labels * x64).sum(1))
        np.testing.assert_allclose(loss.asnumpy()[0], ref, rtol=1e-5)
        s = dlarray.empty((shape[1],))
        ops.reduce_sum_axis_zero(a, s)
        np.testing.assert_allclose(s.asnumpy(), x.sum(axis=0, dtype=np.float64), rtol=1e-5,
                                   atol=1e-4)
        mm = dlarray.empty((shape[0], 37))
        ops.matrix_multiply(a, False, dlarray.array(w), False, mm)
        np.testing.assert_allclose(mm.asnumpy(), x.astype(np.float64) @ w, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_results_at_every_thread_count(threads, rng, restore_threads):
    # Shapes large enough to go parallel, with odd sizes that leave ragged chunks.
    dlarray.set_num_threads(threads)
    _check_every_op(rng, [(1001, 257), (4099, 33), (257, 4099)])


def test_concurrent_callers_while_resizing(rng, restore_threads):
    # Several Python threads run ops (the GIL is released for large arrays) while another
    # changes the pool's size: every result stays right, nothing hangs.
    errors = []
    stop = threading.Event()

    def resize():
        n = 1
        while not stop.is_set():
            dlarray.set_num_threads(n % 4 + 1)
            n += 1
            time.sleep(0.001)

    def work(seed):
        try:
            _check_every_op(np.random.default_rng(seed), [(1001, 257)] * 3)
        except Exception as e:  # reported below
            errors.append(e)

    resizer = threading.Thread(target=resize)
    resizer.start()
    workers = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(120)
    stop.set()
    resizer.join(10)
    assert not any(t.is_alive() for t in workers), "a caller hung"
    assert not errors, errors


IDLE_CPU = """
import os, time
import numpy as np
import dlarray
from dlarray import ops


def cpu_ns(tid):  # CPU time of one thread (schedstat: ns; stat: clock ticks as a fallback)
    try:
        with open("/proc/self/task/%s/schedstat" % tid) as f:
            return int(f.read().split()[0])
    except OSError:
        with open("/proc/self/task/%s/stat" % tid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 10**9 // os.sysconf("SC_CLK_TCK")


before = set(os.listdir("/proc/self/task"))
dlarray.set_num_threads({threads})
x = dlarray.array(np.ones((2048, 2048), np.float32))
o = dlarray.empty((2048, 2048))
for _ in range(20):
    ops.relu(x, o)
# The pool starts its workers at its first parallel loop: the threads that appeared since.
pool = sorted(set(os.listdir("/proc/self/task")) - before)
t0, c0 = time.monotonic(), sum(cpu_ns(t) for t in pool)
time.sleep(0.5)
print("idle", len(pool), (sum(cpu_ns(t) for t in pool) - c0) / 1e9 / (time.monotonic() - t0))
"""


def _idle_worker_load(env, attempts):
    """CPU time the pool's threads spent per second of idle wall time, in up to `attempts` fresh
    processes (stopping at the first below 5 %): (the lowest, all of them)."""
    loads = []
    for _ in range(attempts):
        r = proc_util.run(IDLE_CPU.format(threads=3), env=env, timeout=60)
        assert r.returncode == 0, r
        _, workers, busy = r.stdout.split()
        assert int(workers) == 2, r  # the pool's threads: three, the caller's among them
        loads.append(float(busy))
        if loads[-1] < 0.05:
            break
    return min(loads), loads


@pytest.mark.parametrize("policy", [None, "passive"])
def test_idle_threads_sleep(policy):
    # After the last op the workers stop spinning within microseconds: half a second of idle
    # time costs (almost) no CPU time, so a machine busy with other work gets its cores back.
    # What is measured is the CPU time of the pool's own threads, not the process's: other
    # libraries' threads are not the pool's (OpenBLAS's server threads spin for up to 0.1 s after
    # the library loads, which on CI's machine overlapped the idle half second), and other
    # processes do not count; a few attempts absorb a worker still descheduled from its last task.
    env = {"OMP_WAIT_POLICY": policy, "DLARRAY_SPIN_US": ""} if policy else {"DLARRAY_SPIN_US": ""}
    # Only the CPU plugin: a GPU or OpenCL driver starts threads of its own that do work while
    # the pool idles (0.2-0.8 s of CPU a second on a GPU machine), and they are not the pool's.
    env["DLARRAY_DISABLE_PLUGINS"] = "cuda,opencl"
    low, loads = _idle_worker_load(env, attempts=3)
    assert low < 0.05, loads


@pytest.mark.parametrize("env, text", [({"OMP_WAIT_POLICY": "passive"}, "sleep at once"),
                                       ({"OMP_WAIT_POLICY": "active"}, "spin 2000 us"),
                                       ({"DLARRAY_SPIN_US": "7"}, "spin 7 us"),
                                       ({}, "spin 50 us")])
def test_wait_policy_follows_the_environment(env, text):
    env = dict({"OMP_WAIT_POLICY": "", "DLARRAY_SPIN_US": ""}, **env)
    r = proc_util.run("import dlarray; print(dlarray.show_config('dicts')['cpu']['wait_policy'])",
                      env=env, timeout=60)
    assert r.returncode == 0 and text in r.stdout, r


def test_show_config_reports_threads_and_blas(capsys):
    cfg = dlarray.show_config(mode="dicts")
    cpu = cfg["cpu"]
    assert cpu["num_threads"] == dlarray.get_num_threads()
    assert "sleep" in cpu["wait_policy"]
    blas = cpu["blas"]
    if cpu["gemm"] == "cblas" and "openblas" in blas["name"].lower():
        assert blas["core"], blas  # the kernel OpenBLAS picked for this CPU, e.g. "Haswell"
        assert blas["core"] in blas["config"], blas
        assert blas["threads"] == 1, blas  # ours split the products
        assert pathlib.Path(blas["library"]).is_file(), blas
    dlarray.show_config()
    out = capsys.readouterr().out
    assert "threads: %d" % dlarray.get_num_threads() in out
    assert blas["name"] in out and "plugins:" in out
    with pytest.raises(ValueError, match="mode"):
        dlarray.show_config(mode="yaml")


def test_cpu_blas_is_numpys_openblas_from_its_package():
    # scipy-openblas32 is a dependency: the plugin finds its library where pip put it.
    blas = dlarray.show_config(mode="dicts")["cpu"]["blas"]
    if not blas["name"].startswith("scipy-openblas32"):
        pytest.skip("built without scipy-openblas32 (DLARRAY_CPU_BLAS=SYSTEM/OFF, or not "
                    "importable at build time): %s" % blas["name"])
    scipy_openblas32 = pytest.importorskip("scipy_openblas32")
    assert (pathlib.Path(blas["library"]).resolve().parent
            == pathlib.Path(scipy_openblas32.get_lib_dir()).resolve()), blas
