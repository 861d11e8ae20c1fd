"""NDArray and contexts: the seed's API and what a NumPy user expects."""
import threading
import time

import numpy as np
import pytest

import dlarray

# The devices at collection: tests of other files load test plugins with devices of their own
# (one whose allocations fail on purpose), which a later dlarray.devices() would list.
DEVICES = dlarray.devices()


def test_contexts():
    assert dlarray.cpu() == dlarray.cpu(0) != dlarray.gpu(0)
    assert repr(dlarray.cpu()) == "cpu(0)" and repr(dlarray.gpu(1)) == "cuda(1)"
    assert dlarray.gpu(1).device_type == 2 and dlarray.gpu(1).device_id == 1
    assert dlarray.is_gpu_ctx(dlarray.gpu()) and not dlarray.is_gpu_ctx(dlarray.cpu())
    assert len({dlarray.cpu(), dlarray.cpu(0), dlarray.gpu(0)}) == 2
    assert dlarray.DLContext(0, 1) == dlarray.cpu(0)  # the seed's argument order
    assert dlarray.cpu() in dlarray.devices()


def test_properties_and_roundtrip(ctx, rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    a = dlarray.array(x, ctx)
    assert a.shape == (3, 4) and a.ctx == ctx and a.dtype == np.float32
    assert a.size == 12 and a.ndim == 2 and a.nbytes == 48 and len(a) == 3
    np.testing.assert_array_equal(a.asnumpy(), x)
    np.testing.assert_array_equal(np.asarray(a), x)


def test_scalar_and_one_element(ctx):
    a = dlarray.array(np.float32(3.5), ctx)
    assert a.shape == ()
    assert a.asnumpy() == np.float32(3.5)
    b = dlarray.array([7.0], ctx)
    assert b.shape == (1,) and b.asnumpy()[0] == 7.0


def test_cpu_memory_is_64_byte_aligned():
    for n in (1, 3, 17, 1000, 4097):
        assert dlarray.empty((n,)).data_ptr % 64 == 0


def test_copyto_context_and_array(ctx, rng):
    x = rng.standard_normal(1000).astype(np.float32)
    a = dlarray.array(x, ctx)
    for target in DEVICES:
        b = a.copyto(target)
        assert b.ctx == target
        np.testing.assert_array_equal(b.asnumpy(), x)
        c = dlarray.empty((1000,), target)
        assert a.copyto(c) is c
        np.testing.assert_array_equal(c.asnumpy(), x)


def test_setitem(ctx):
    a = dlarray.empty((2, 3), ctx)
    a[:] = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(a.asnumpy(), np.arange(6).reshape(2, 3))
    a[:] = 1.5  # a scalar broadcasts, as in NumPy
    np.testing.assert_array_equal(a.asnumpy(), np.full((2, 3), 1.5))
    a[:] = [1, 2, 3]  # so does a row
    np.testing.assert_array_equal(a.asnumpy(), [[1, 2, 3], [1, 2, 3]])
    b = dlarray.array(np.ones((2, 3)), ctx)
    a[:] = b
    np.testing.assert_array_equal(a.asnumpy(), np.ones((2, 3)))
    a[:] = a  # self-assignment is a no-op


def test_repr(ctx):
    small = dlarray.array([[1, 2], [3, 4]], ctx)
    r = repr(small)
    assert "[[1., 2.]," in r and "float32" in r and repr(ctx) in r
    big = dlarray.empty((100, 100), ctx)
    assert repr(big) == f"NDArray(shape=(100, 100), dtype=float32, ctx={ctx!r})"


def test_other_dtypes_travel(ctx):
    x = np.arange(10, dtype=np.int64)
    a = dlarray.array(x, ctx, dtype=np.int64)
    assert a.dtype == np.int64
    np.testing.assert_array_equal(a.asnumpy(), x)
    d = dlarray.array(np.linspace(0, 1, 5), ctx, dtype="float64")
    assert d.dtype == np.float64
    np.testing.assert_array_equal(d.asnumpy(), np.linspace(0, 1, 5))


def _cpu_of_other_threads():
    """CPU time of every thread of this process but the calling one."""
    return time.process_time() - time.thread_time()


def test_gil_is_released_while_kernels_run():
    # A worker thread runs matrix products while the main thread ticks: takes the GIL, notes the
    # wall time and the CPU time the other threads (the worker and the pool) have used, sleeps
    # 1 ms. What counts is the CPU the others used *between two close ticks* (under 10 ms apart):
    # with the GIL held through a product (50 ms or more) no two close ticks can bracket any of
    # it, so only the Python between products adds up there (microseconds); with the GIL
    # released the product's CPU does. Counting CPU, not ticks or wall time, leaves a busy
    # machine's scheduling out (a descheduled thread neither ticks nor computes); a few attempts
    # absorb a main thread parked for a whole run.
    rng = np.random.default_rng(0)
    n, once = 256, 0.0
    while once < 0.05 and n < 2048:  # a product long enough to tick through, on any machine
        n *= 2
        a = dlarray.array(rng.standard_normal((n, n)))
        c = dlarray.empty((n, n))
        t0 = time.perf_counter()
        dlarray.ops.matrix_multiply(a, False, a, False, c)
        once = time.perf_counter() - t0
    seen = []
    for _ in range(5):
        done = threading.Event()

        def work():
            for _ in range(3):
                dlarray.ops.matrix_multiply(a, False, a, False, c)
            done.set()

        samples = []
        t = threading.Thread(target=work)
        t.start()
        while not done.is_set():
            samples.append((time.perf_counter(), _cpu_of_other_threads()))
            time.sleep(0.001)
        t.join()
        overlap = sum(c1 - c0 for (t0, c0), (t1, c1) in zip(samples, samples[1:])
                      if t1 - t0 < 0.01)
        seen.append(round(overlap, 4))
        if overlap >= 0.02:
            return
    pytest.fail(f"other threads' CPU seconds between close main-thread ticks: {seen}, for "
                f"products of {once * 1e3:.0f} ms (n={n}): the GIL is held while they run")


def test_memory_stats_count_cpu_allocations():
    before = dlarray.memory_stats(dlarray.cpu())
    a = dlarray.empty((1000,))
    after = dlarray.memory_stats(dlarray.cpu())
    assert after["num_allocations"] == before["num_allocations"] + 1
    assert after["bytes_in_use"] >= before["bytes_in_use"] + 4000
    del a
    assert dlarray.memory_stats(dlarray.cpu())["bytes_in_use"] == before["bytes_in_use"]


def test_synchronize(ctx, rng):
    # A queue of dependent ops (each reads the previous result; on a GPU they return as soon as
    # they are queued): after synchronize every one has run, in order.
    x = rng.standard_normal((512, 300)).astype(np.float32)
    a = dlarray.array(x, ctx)
    want = x.astype(np.float64)
    for i in range(40):
        dlarray.ops.matrix_elementwise_multiply_by_const(a, 0.5, a)
        dlarray.ops.matrix_elementwise_add_by_const(a, float(i), a)
        want = want * 0.5 + i
    assert dlarray.synchronize(ctx) is None
    np.testing.assert_allclose(a.asnumpy(), want, rtol=1e-6)
    dlarray.ops.relu(a, a)
    assert dlarray.synchronize() is None  # every device
    np.testing.assert_allclose(a.asnumpy(), np.maximum(want, 0), rtol=1e-6)
    # Devices nothing serves, and things that are not devices, are errors, not silent no-ops.
    with pytest.raises(ValueError, match=r"cpu\(7\) does not exist"):
        dlarray.synchronize(dlarray.cpu(7))
    with pytest.raises(ValueError, match="device type 77 is not a device type"):
        dlarray.synchronize(dlarray.DLContext(0, 77))
    with pytest.raises(TypeError, match="synchronize: ctx must be a DLContext"):
        dlarray.synchronize(3.5)


def test_matmul_precision_setting():
    assert dlarray.get_matmul_precision() == "highest"
    with pytest.raises(ValueError, match="tf32"):
        dlarray.set_matmul_precision("bf16")
    dlarray.set_matmul_precision("tf32")
    try:
        assert dlarray.get_matmul_precision() == "tf32"
    finally:
        dlarray.set_matmul_precision("highest")


def test_copies_are_safe_while_other_python_threads_run(ctx):
    """Copies release the GIL; the Python objects they return must be made with it held again."""
    stop = threading.Event()

    def churn():
        while not stop.is_set():
            [object() for _ in range(1000)]

    threads = [threading.Thread(target=churn) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        x = np.arange(1 << 16, dtype=np.float32)
        a = dlarray.array(x, ctx)
        for _ in range(300):
            b = a.copyto(ctx)
            c = dlarray.array(b, ctx)
            c[:] = b
        np.testing.assert_array_equal(c.asnumpy(), x)
    finally:
        stop.set()
        for t in threads:
            t.join()
