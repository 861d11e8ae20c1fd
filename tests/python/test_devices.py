"""Devices: strings anywhere a context is taken, counts, names, memory info, the default device
and its context manager, and bad ids."""
import threading

import numpy as np
import pytest

import dlarray
from dlarray import ops


@pytest.mark.parametrize("text,want", [("cpu", (1, 0)), ("cpu:0", (1, 0)), ("cuda", (2, 0)),
                                       ("cuda:1", (2, 1)), ("gpu:0", (2, 0)), ("gpu", (2, 0))])
def test_device_strings(text, want):
    ctx = dlarray.device(text)
    assert (ctx.device_type, ctx.device_id) == want
    assert dlarray.DLContext(text) == ctx


def test_device_type_2_prints_cuda_and_gpu_still_parses():
    assert repr(dlarray.gpu(1)) == "cuda(1)" == repr(dlarray.DLContext("gpu:1"))
    assert repr(dlarray.DLContext(0, 30)) == "device_type_30(0)"  # no test plugin serves it


@pytest.mark.parametrize("text", ["tpu", "cuda:", "cuda:-1", "cuda:x", "", "cpu:0:1"])
def test_bad_device_strings(text):
    with pytest.raises(ValueError, match="device"):
        dlarray.device(text)


def test_strings_accepted_where_contexts_are():
    x = dlarray.empty((2, 3), "cpu")
    assert x.ctx == dlarray.cpu(0)
    y = dlarray.array([1.0, 2.0], ctx="cpu:0")
    z = y.copyto("cpu")
    np.testing.assert_array_equal(z.asnumpy(), [1.0, 2.0])
    assert dlarray.asarray(np.zeros(2), ctx="cpu").ctx == dlarray.cpu(0)
    assert dlarray.device_name("cpu") == dlarray.device_name(dlarray.cpu(0))
    dlarray.synchronize("cpu")
    dlarray.memory_stats("cpu")
    with pytest.raises(TypeError):
        dlarray.empty((2,), 3.5)


def test_device_count_and_name():
    assert dlarray.device_count("cpu") == 1
    assert dlarray.device_count(dlarray.cpu(0)) == 1
    assert dlarray.device_count("cuda") == dlarray.device_count("gpu") == len(
        [c for c in dlarray.devices() if c.device_type == 2])
    assert isinstance(dlarray.device_name("cpu"), str) and dlarray.device_name("cpu")
    with pytest.raises(ValueError, match="unknown device type"):
        dlarray.device_count("tpu")


def test_mem_info(ctx):
    free, total = dlarray.mem_info(ctx)
    assert 0 < free <= total


def test_bad_ids_name_the_valid_range():
    with pytest.raises(ValueError, match=r"cuda\(-1\): device ids start at 0 \(cuda devices: "):
        dlarray.gpu(-1)
    with pytest.raises(ValueError, match="start at 0"):
        dlarray.cpu(-2)
    with pytest.raises(ValueError, match=r"ids 0\.\.0"):
        dlarray.empty((2,), dlarray.cpu(3))
    with pytest.raises(ValueError, match=r"ids 0\.\.0"):
        dlarray.check_device("cpu:1")
    with pytest.raises(TypeError):
        dlarray.gpu(1.5)


def test_gpu_without_a_gpu_says_why():
    if dlarray.device_count("cuda") > 0:
        n = dlarray.device_count("cuda")
        with pytest.raises(ValueError, match=r"ids 0\.\.%d" % (n - 1)):
            dlarray.empty((2,), dlarray.gpu(n))
        return
    with pytest.raises((RuntimeError, ValueError), match="(?i)cuda|gpu"):
        dlarray.empty((2,), "cuda:0")


def test_default_device_and_context_manager():
    assert dlarray.default_device() == dlarray.cpu(0)
    with dlarray.using_device("cpu:0") as ctx:
        assert ctx == dlarray.cpu(0)
        assert dlarray.empty((1,)).ctx == ctx
    dlarray.set_default_device("cpu")
    assert dlarray.default_device() == dlarray.cpu(0)
    dlarray.set_default_device(None)
    with pytest.raises(ValueError):
        with dlarray.using_device("cpu:7"):
            pass
    assert dlarray.default_device() == dlarray.cpu(0)


def test_default_device_is_per_thread():
    seen = []
    gpus = [c for c in dlarray.devices() if c.device_type == 2]
    other = gpus[0] if gpus else dlarray.cpu(0)

    def worker():
        seen.append(dlarray.default_device())

    with dlarray.using_device(other):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert seen == [dlarray.cpu(0)]


def test_gpu_default_device_places_arrays():
    gpus = [c for c in dlarray.devices() if c.device_type == 2]
    if not gpus:
        pytest.skip("no usable GPU")
    with dlarray.using_device("cuda:0"):
        x = dlarray.array(np.ones(3, np.float32))
        y = dlarray.empty((3,))
        ops.relu(x, y)
        assert x.ctx == y.ctx == dlarray.gpu(0)


def test_asarray_puts_python_data_on_the_default_device(ctx):
    """Python lists and scalars have no device of their own: asarray puts them where array()
    does (it put them on the CPU whatever the default). So does NumPy's host memory (shared only
    where the default is the CPU); NDArrays keep their device."""
    host = np.arange(3, dtype=np.float32)
    with dlarray.using_device(ctx):
        for data in ([0.0, 1.0, 2.0], (0, 1, 2)):
            x = dlarray.asarray(data, dtype=np.float32)
            assert x.ctx == ctx
            np.testing.assert_array_equal(x.asnumpy(), host)
        assert dlarray.asarray(2.5).ctx == ctx
        assert dlarray.asarray(host).ctx == ctx
        on_cpu = dlarray.array(host, dlarray.cpu(0))
        assert dlarray.asarray(on_cpu) is on_cpu
        assert dlarray.asarray([1.0], ctx="cpu").ctx == dlarray.cpu(0)
