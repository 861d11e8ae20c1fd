"""Hostile concurrency: threads running random ops (every result checked against NumPy), threads
racing to free C API handles and to use them, fork() and multiprocessing with the 'fork' start
method while threads compute, and interpreter exit while daemon threads are inside large ops.
The in-process cases run in one child interpreter; exit cases each start their own."""
import os
import threading
import time

import numpy as np
import pytest

import dlarray
import proc_util
from dlarray import ops

SECONDS = float(os.environ.get("DLARRAY_HOSTILE_SECONDS", "1.5"))


def _random_op(rng, big):
    """One random op on fresh arrays: (name, our result, NumPy's, rtol)."""
    rows = int(rng.integers(1, 700 if big else 40))
    cols = int(rng.integers(1, 300 if big else 40))
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    y = rng.standard_normal((rows, cols)).astype(np.float32)
    a, b = dlarray.array(x), dlarray.array(y)
    kind = int(rng.integers(0, 8))
    if kind == 0:
        o = dlarray.empty(x.shape)
        ops.relu(a, o)
        return "relu", o.asnumpy(), np.maximum(x, 0), 0
    if kind == 1:
        o = dlarray.empty(x.shape)
        ops.matrix_elementwise_add(a, b, o)
        return "add", o.asnumpy(), x + y, 0
    if kind == 2:
        o = dlarray.empty((cols,))
        ops.reduce_sum_axis_zero(a, o)
        return "sum", o.asnumpy(), x.sum(axis=0, dtype=np.float64), 1e-5
    if kind == 3:
        o = dlarray.empty((rows, rows))
        ops.matrix_multiply(a, False, b, True, o)
        return "matmul", o.asnumpy(), x.astype(np.float64) @ y.T.astype(np.float64), 1e-4
    if kind == 4:
        o = dlarray.empty(x.shape)
        ops.softmax(a, o)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return "softmax", o.asnumpy(), e / e.sum(axis=1, keepdims=True), 1e-5
    if kind == 5:
        o = dlarray.empty((3, rows, cols))
        ops.broadcast_to(a, o)
        return "broadcast", o.asnumpy(), np.broadcast_to(x, (3, rows, cols)), 0
    if kind == 6:
        o = a.copyto(dlarray.cpu(0))
        return "copyto", o.asnumpy(), x, 0
    o = dlarray.empty(x.shape)
    ops.matrix_elementwise_multiply_by_const(a, 0.5, o)
    return "mulc", o.asnumpy(), x * np.float32(0.5), 0


def _threads(count, body, seconds=SECONDS):
    errors = []
    stop = time.monotonic() + seconds

    def run(i):
        rng = np.random.default_rng(i)
        try:
            while time.monotonic() < stop:
                body(rng, i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(f"thread {i}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:5]


def _check_random_ops(big):
    def body(rng, _):
        name, got, want, rtol = _random_op(rng, big)
        if rtol == 0:
            np.testing.assert_array_equal(got, want, err_msg=name)
        else:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-4, err_msg=name)
    return body


def _shared_inputs(rng, i):
    x = SHARED["x"]
    o = dlarray.empty(x.shape)
    if i % 2:
        ops.relu(SHARED["a"], o)
        np.testing.assert_array_equal(o.asnumpy(), np.maximum(x, 0))
    else:
        ops.matrix_elementwise_add(SHARED["a"], SHARED["a"], o)
        np.testing.assert_array_equal(o.asnumpy(), x + x)


SHARED = {}


def _case_shared_inputs():
    x = np.random.default_rng(9).standard_normal((512, 300)).astype(np.float32)
    SHARED.update(x=x, a=dlarray.array(x))
    _threads(6, _shared_inputs)


def _churn(rng, _):
    arrays = [dlarray.array(np.full((int(rng.integers(1, 2000)),), v, np.float32))
              for v in range(8)]
    for v, a in enumerate(arrays):
        assert a.asnumpy()[0] == v
    del arrays


def _c_api():
    from capi_util import LIB, alloc, check_call, from_numpy, last_error, to_numpy
    return LIB, alloc, check_call, from_numpy, last_error, to_numpy


def _case_c_api_use_while_freeing():
    LIB, alloc, check_call, from_numpy, last_error, to_numpy = _c_api()
    errors = []
    for _ in range(30):
        hs = [alloc((64,)) for _ in range(32)]
        for h in hs:
            from_numpy(h, np.full(64, 3, np.float32))

        def use():
            out = np.empty(64, np.float32)
            from capi_util import HostArray
            view = HostArray(out)
            for h in hs:
                rc = LIB.DLArrayCopyFromTo(h, view.ref, None)
                if rc == 0 and not (out == 3).all():
                    errors.append("wrong data from a live handle")
                if rc != 0 and "freed" not in last_error():
                    errors.append(last_error())

        def free():
            for h in hs:
                LIB.DLArrayFree(h)

        threads = [threading.Thread(target=use) for _ in range(3)] + [threading.Thread(target=free)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(LIB.DLArrayFree(h) == -1 for h in hs)
    assert not errors, errors[:5]


def _case_c_api_ops_in_threads():
    LIB, alloc, check_call, from_numpy, last_error, to_numpy = _c_api()

    def body(rng, _):
        n = int(rng.integers(1, 5000))
        x = rng.standard_normal(n).astype(np.float32)
        a, b = alloc((n,)), alloc((n,))
        from_numpy(a, x)
        check_call(LIB.DLArrayRelu(a, b))
        np.testing.assert_array_equal(to_numpy(b, (n,)), np.maximum(x, 0))
        check_call(LIB.DLArrayFree(a))
        check_call(LIB.DLArrayFree(b))
        assert LIB.DLArrayFree(a) == -1
    _threads(6, body)


FORK_CHILD = """
import os, sys, threading, time
import numpy as np
import dlarray
from dlarray import ops
x = np.random.default_rng(0).standard_normal((1000, 1000)).astype(np.float32)
a, w = dlarray.array(x), dlarray.array(x[:, :200])
stop = False


def spin():
    o, m = dlarray.empty(x.shape), dlarray.empty((1000, 200))
    while not stop:
        ops.relu(a, o)
        ops.matrix_multiply(a, False, w, False, m)


threads = [threading.Thread(target=spin, daemon=True) for _ in range(2)]
for t in threads:
    t.start()
time.sleep(0.3)
{fork}
stop = True
for t in threads:
    t.join()
print("parent ok", flush=True)
"""

FORK_RAW = """
codes = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        o = dlarray.empty(x.shape)
        ops.relu(a, o)
        ok = np.array_equal(o.asnumpy(), np.maximum(x, 0))
        m = dlarray.empty((1000, 200))
        ops.matrix_multiply(a, False, w, False, m)
        ok = ok and np.allclose(m.asnumpy(), x @ x[:, :200], rtol=1e-3, atol=1e-2)
        os._exit(0 if ok else 3)
    codes.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    time.sleep(0.05)
print("children", codes, flush=True)
assert codes == [0, 0, 0]
"""

FORK_POOL = """
import multiprocessing as mp


def work(i):
    y = x[i * 100:(i + 1) * 100]
    o = dlarray.empty(y.shape)
    ops.relu(dlarray.array(y), o)
    s = dlarray.empty((1000,))
    ops.reduce_sum_axis_zero(a, s)
    return bool(np.array_equal(o.asnumpy(), np.maximum(y, 0))) and bool(
        np.allclose(s.asnumpy(), x.sum(axis=0, dtype=np.float64), rtol=1e-5, atol=1e-3))


with mp.get_context("{method}").Pool(2) as pool:
    results = pool.map(work, range(8))
print("pool", results, flush=True)
assert all(results)
"""


SPAWN = """
import multiprocessing as mp
import numpy as np
import dlarray
from dlarray import ops


def work(i):
    x = np.arange(1 << 20, dtype=np.float32) - i * 1000
    o = dlarray.empty(x.shape)
    ops.relu(dlarray.array(x), o)
    return bool(np.array_equal(o.asnumpy(), np.maximum(x, 0)))


if __name__ == "__main__":
    a, o = dlarray.array(np.ones((1000, 1000), np.float32)), dlarray.empty((1000, 1000))
    ops.relu(a, o)
    with mp.get_context("spawn").Pool(2) as pool:
        results = pool.map(work, range(4))
    print("pool", results, flush=True)
    assert all(results)
"""


def _case_spawn_pool():
    r = proc_util.run_script(SPAWN, timeout=120)
    assert not r.timed_out and r.returncode == 0, r
    assert "dlarray warning" not in r.stderr, r  # spawned children start their own threads


def _fork_case(snippet, timeout=120):
    def case():
        r = proc_util.run(FORK_CHILD.replace("{fork}", snippet), timeout=timeout)
        assert not r.timed_out, f"hung: {r}"
        assert r.returncode == 0 and "parent ok" in r.stdout, r
        assert "Fatal" not in r.stderr and "terminate called" not in r.stderr, r
    return case


EXIT_CODE = """
import ctypes, sys, threading, time
import numpy as np
import dlarray
from dlarray import ops
kind = {kind!r}
n = 900


def work():
    rng = np.random.default_rng()
    a = dlarray.array(rng.standard_normal((n, n)))
    b = dlarray.empty((n, n))
    big = dlarray.empty((8, n, n))
    col = dlarray.empty((n,))
    while True:
        if kind == "softmax":
            ops.softmax(a, b)
        elif kind == "broadcast":
            ops.broadcast_to(a, big)
        elif kind == "asnumpy":
            big.asnumpy()
        elif kind == "synchronize":
            ops.relu(a, b)
            dlarray.synchronize()
        elif kind == "mixed":
            ops.matrix_multiply(a, False, a, True, b)
            ops.reduce_sum_axis_zero(a, col)
            a[:] = b
        elif kind == "new_arrays":
            c = dlarray.array(np.ones((n, n), np.float32))
            ops.relu(c, b)


for _ in range(3):
    threading.Thread(target=work, daemon=True).start()
time.sleep(0.4)
{ending}
"""


def _exit_case(kind, ending="print('main exits', flush=True)", runs=3):
    def case():
        code = EXIT_CODE.format(kind=kind, ending=ending)
        for r in proc_util.run_many(code, runs, timeout=60):
            assert not r.timed_out, r
            assert r.returncode == 0, r
            assert "terminate called" not in r.stderr and "Fatal Python" not in r.stderr, r
    return case


CASES = {
    "threads_random_small_ops": lambda: _threads(8, _check_random_ops(False)),
    "threads_random_large_ops": lambda: _threads(4, _check_random_ops(True)),
    "threads_shared_inputs": _case_shared_inputs,
    "threads_array_churn": lambda: _threads(6, _churn),
    "c_api_use_while_freeing": _case_c_api_use_while_freeing,
    "c_api_ops_in_threads": _case_c_api_ops_in_threads,
    "fork_while_threads_compute": _fork_case(FORK_RAW),
    "fork_pool_while_threads_compute": _fork_case(FORK_POOL.replace("{method}", "fork")),
    "spawn_pool_after_parallel_ops": _case_spawn_pool,
    "exit_softmax": _exit_case("softmax"),
    "exit_broadcast": _exit_case("broadcast"),
    "exit_asnumpy": _exit_case("asnumpy"),
    "exit_synchronize": _exit_case("synchronize"),
    "exit_mixed": _exit_case("mixed"),
    "exit_new_arrays": _exit_case("new_arrays"),
    "exit_sys_exit_code": _exit_case("mixed", "sys.exit(0)"),
    "exit_after_atexit_op": _exit_case("mixed", "import atexit\natexit.register("
                                       "lambda: ops.relu(dlarray.empty((n, n)), "
                                       "dlarray.empty((n, n))))"),
    "exit_from_exception": _exit_case("softmax", "try:\n    raise KeyboardInterrupt\n"
                                      "except KeyboardInterrupt:\n    pass"),
}


@pytest.fixture(scope="module")
def outcome():
    return proc_util.run_cases(__file__, list(CASES), timeout=600)


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_concurrency(outcome, name):
    proc_util.check_case(outcome, name)
