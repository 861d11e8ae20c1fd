"""fork() after parallel ops, and interpreter exit while daemon threads are inside large ops.

Each case runs in a fresh interpreter with a time limit: on failure it hangs or dies by a signal,
which must not take the test session with it.
"""
import pytest

import proc_util
from conftest import has_gpu

# The parent runs ops large enough for the CPU backend's threads (>= 32K elements), so that the
# thread pool exists when it forks.
PARENT = """
import os, sys
import numpy as np
import dlarray
from dlarray import ops

rng = np.random.default_rng(0)
x = rng.standard_normal((800, 800)).astype(np.float32)
w = rng.standard_normal((800, 300)).astype(np.float32)
a, wa = dlarray.array(x), dlarray.array(w)
o, mm, s = dlarray.empty(x.shape), dlarray.empty((800, 300)), dlarray.empty((800,))
ops.relu(a, o)
ops.matrix_multiply(a, False, wa, False, mm)
ops.reduce_sum_axis_zero(a, s)


def child_checks():
    ops.relu(a, o)
    ok = np.array_equal(o.asnumpy(), np.maximum(x, 0))
    ops.matrix_multiply(a, False, wa, False, mm)
    ok &= np.allclose(mm.asnumpy(), x @ w, rtol=1e-4, atol=1e-3)
    ops.reduce_sum_axis_zero(a, s)
    ok &= np.allclose(s.asnumpy(), x.sum(axis=0, dtype=np.float64), rtol=1e-5, atol=1e-4)
    ok &= np.array_equal(dlarray.array(x).asnumpy(), x)
    return bool(ok)
"""


def test_os_fork_child_computes_in_parallel_after_parallel_ops_in_parent():
    # The child gets a fresh pool of the parent's size: its ops run on several threads again.
    r = proc_util.run(PARENT + """
threads = dlarray.get_num_threads()
pid = os.fork()
if pid == 0:
    try:
        code = 0 if child_checks() and child_checks() else 3
        workers = len(os.listdir("/proc/self/task"))
        if dlarray.get_num_threads() != threads or (threads > 1 and workers < 2):
            print("child threads", dlarray.get_num_threads(), workers, file=sys.stderr)
            code = 5
    except BaseException as e:
        print("child raised", type(e).__name__, e, file=sys.stderr, flush=True)
        code = 4
    os._exit(code)
_, status = os.waitpid(pid, 0)
print("child exit", os.waitstatus_to_exitcode(status))
assert child_checks()  # the parent keeps its threads
print("parent ok")
""", timeout=60)
    assert not r.timed_out, f"the forked child hung: {r}"
    assert r.returncode == 0, r
    assert "child exit 0" in r.stdout and "parent ok" in r.stdout, r
    assert "dlarray warning" not in r.stderr, r


def test_multiprocessing_pool_with_fork_start_method():
    r = proc_util.run(PARENT + """
import multiprocessing as mp


def work(seed):
    r = np.random.default_rng(seed)
    y = r.standard_normal((512, 300)).astype(np.float32)
    ya, yo = dlarray.array(y), dlarray.empty(y.shape)
    ops.relu(ya, yo)
    col = dlarray.empty((300,))
    ops.reduce_sum_axis_zero(ya, col)
    return (bool(np.array_equal(yo.asnumpy(), np.maximum(y, 0))) and
            bool(np.allclose(col.asnumpy(), y.sum(axis=0, dtype=np.float64), rtol=1e-5,
                             atol=1e-4)) and child_checks())


if __name__ == "__main__":
    with mp.get_context("fork").Pool(2) as pool:
        results = pool.map(work, range(6))
    print("results", results)
    assert all(results)
    print("pool ok")
""", timeout=90)
    assert not r.timed_out, f"the fork pool hung: {r}"
    assert r.returncode == 0 and "pool ok" in r.stdout, r


def test_fork_before_any_parallel_op_keeps_threads():
    # A child forked before the pool existed starts its own: no warning, correct results.
    r = proc_util.run("""
import os
import numpy as np
import dlarray
from dlarray import ops
pid = os.fork()
if pid == 0:
    x = np.arange(1 << 20, dtype=np.float32) - 5e5
    a, o = dlarray.array(x), dlarray.empty(x.shape)
    ops.relu(a, o)
    os._exit(0 if np.array_equal(o.asnumpy(), np.maximum(x, 0)) else 3)
_, status = os.waitpid(pid, 0)
print("child exit", os.waitstatus_to_exitcode(status))
""", timeout=60)
    assert not r.timed_out and r.returncode == 0 and "child exit 0" in r.stdout, r
    # No threads before the first parallel op, so Python does not warn about forking a
    # multi-threaded process; where a GPU is, its driver starts threads of its own at load.
    if not has_gpu():
        assert "fork" not in r.stderr, r


@pytest.mark.skipif(not has_gpu(), reason="needs a usable GPU")
def test_gpu_op_in_forked_child_raises_clearly():
    r = proc_util.run("""
import os, sys
import numpy as np
import dlarray
from dlarray import ops
g = dlarray.array(np.ones((1000, 1000), np.float32), dlarray.gpu(0))
o = dlarray.empty((1000, 1000), dlarray.gpu(0))
ops.relu(g, o)
dlarray.synchronize()
pid = os.fork()
if pid == 0:
    try:
        ops.relu(g, o)
        dlarray.synchronize()
        os._exit(3)
    except RuntimeError as e:
        print("child error:", e, flush=True)
        os._exit(0 if "fork" in str(e) else 4)
_, status = os.waitpid(pid, 0)
print("child exit", os.waitstatus_to_exitcode(status))
""", timeout=60)
    assert not r.timed_out, f"the GPU op in the forked child hung: {r}"
    assert "child exit 0" in r.stdout, r


EXIT_WITH_DAEMONS = """
import sys, threading, time
import numpy as np
import dlarray
from dlarray import ops

op = sys.argv[1] if len(sys.argv) > 1 else "{op}"
n = 1000
started = threading.Barrier({threads} + 1)


def work():
    rng = np.random.default_rng()
    a = dlarray.array(rng.standard_normal((n, n)))
    b = dlarray.array(rng.standard_normal((n, n)))
    o = dlarray.empty((n, n))
    started.wait()
    while True:
        if op == "relu":
            ops.relu(a, o)
        elif op == "matrix_multiply":
            ops.matrix_multiply(a, False, b, False, o)
        elif op == "copy":
            o.asnumpy()
            o[:] = b
        else:
            ops.reduce_sum_axis_zero(a, dlarray.empty((n,)))


for _ in range({threads}):
    threading.Thread(target=work, daemon=True).start()
started.wait()
time.sleep({delay})
print("main exits", flush=True)
"""


@pytest.mark.parametrize("op", ["relu", "matrix_multiply", "copy", "reduce_sum_axis_zero"])
def test_exit_with_daemon_threads_inside_large_ops(op):
    runs = 8 if op in ("relu", "matrix_multiply") else 3
    results = proc_util.run_many(EXIT_WITH_DAEMONS.format(op=op, threads=4, delay=0.2), runs,
                                 timeout=60)
    for r in results:
        assert not r.timed_out, r
        assert r.returncode == 0, r
        assert "terminate called" not in r.stderr and "Fatal Python error" not in r.stderr, r
        assert "main exits" in r.stdout, r
