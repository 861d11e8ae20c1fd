"""GPU exchange without copies: DLPack with PyTorch, CuPy and JAX both ways (memory shared: a
write on one side is seen on the other), the stream handshake (the producer's pending work is
ordered before ours), __cuda_array_interface__ both ways, and __array__'s copy contract for device
arrays. Each test skips with its reason where there is no GPU or the library is missing."""
import numpy as np
import pytest

import dlarray
from dlarray import ops

GPU = dlarray.gpu(0)
HAS_GPU = GPU in dlarray.devices()
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="no usable GPU (the CUDA plugin reports "
                                                   "zero devices here)")


def _torch_cuda():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    return torch


def _cupy():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001  (CuPy raises its own types without a driver)
        pytest.skip("CuPy has no CUDA device: %s" % e)
    return cupy


def _jax_gpu():
    jax = pytest.importorskip("jax", reason="JAX is not installed")
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus:
        pytest.skip("JAX has no GPU backend (jax[cuda] not installed)")
    return jax, gpus[0]


@needs_gpu
def test_torch_both_ways_share_memory():
    torch = _torch_cuda()
    t = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    x = dlarray.from_dlpack(t)
    assert x.ctx == dlarray.gpu(t.device.index or 0) and x.data_ptr == t.data_ptr()
    t[0, 0] = 42.0  # torch writes on its stream; our read is ordered after it
    assert x.asnumpy()[0, 0] == 42.0
    ops.matrix_elementwise_add_by_const(x, 1.0, x)  # we write; torch sees it
    back = torch.from_dlpack(x)
    assert back.data_ptr() == t.data_ptr()
    want = np.arange(12, dtype=np.float32).reshape(3, 4) + 1
    want[0, 0] = 43.0
    np.testing.assert_array_equal(back.cpu().numpy(), want)


@needs_gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64", "int8", "uint8", "bool"])
def test_torch_dtypes_and_views(dtype):
    torch = _torch_cuda()
    tdt = getattr(torch, dtype)
    t = (torch.arange(24, device="cuda") % 7).to(tdt).reshape(4, 6)[:, ::2]
    x = dlarray.from_dlpack(t)
    assert not x.is_contiguous
    c = x.copy()
    back = torch.from_dlpack(c)
    assert back.dtype == tdt and torch.equal(back, t.contiguous())


@needs_gpu
def test_torch_stream_handshake_orders_producer_work():
    """A long kernel queued by torch on its own stream must finish before our op reads."""
    torch = _torch_cuda()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        a = torch.randn(2048, 2048, device="cuda")
        for _ in range(20):
            a = a @ a / 45.0
        t = a.sum(0)
        x = dlarray.from_dlpack(t)  # our stream waits for s through an event
    out = dlarray.empty(x.shape, x.ctx)
    ops.copy(x, out)
    s.synchronize()
    np.testing.assert_array_equal(out.asnumpy(), t.cpu().numpy())


@needs_gpu
def test_export_waits_on_our_stream():
    torch = _torch_cuda()
    x = dlarray.array(np.zeros((4096, 4096), np.float32), GPU)
    ops.array_set(x, 3.0)  # queued on our stream
    t = torch.from_dlpack(x)  # torch's current stream waits for ours
    assert float(t.sum().item()) == 3.0 * 4096 * 4096


@needs_gpu
def test_cupy_both_ways_and_cuda_array_interface():
    cupy = _cupy()
    c = cupy.arange(10, dtype=cupy.float32)
    x = dlarray.from_dlpack(c)
    c[1] = 7.0
    # The write is queued on CuPy's stream, our read on ours: DLPack leaves ordering later work
    # to the user (compute-sanitizer's timing made the read overtake the write).
    cupy.cuda.get_current_stream().synchronize()
    assert x.asnumpy()[1] == 7.0
    back = cupy.from_dlpack(x)
    back[2] = -1.0
    assert float(c[2]) == -1.0
    via_cai = cupy.asarray(x)  # our __cuda_array_interface__
    assert via_cai.data.ptr == x.data_ptr
    y = dlarray.asarray(cupy.ones(5, cupy.float16), ctx="cuda:0")
    assert y.dtype == np.float16 and y.asnumpy().sum() == 5


@needs_gpu
def test_cuda_array_interface_import_without_dlpack():
    cupy = _cupy()

    class OnlyCai:
        def __init__(self, arr):
            self.arr = arr
            self.__cuda_array_interface__ = arr.__cuda_array_interface__

    src = cupy.arange(6, dtype=cupy.int32)
    x = dlarray.asarray(OnlyCai(src), ctx="cuda:0")
    assert x.data_ptr == src.data.ptr
    np.testing.assert_array_equal(x.asnumpy(), np.arange(6))


@needs_gpu
def test_jax_both_ways():
    jax, dev = _jax_gpu()
    j = jax.device_put(jax.numpy.arange(8, dtype=jax.numpy.float32), dev)
    x = dlarray.from_dlpack(j)
    np.testing.assert_array_equal(x.asnumpy(), np.arange(8, dtype=np.float32))
    y = dlarray.array(np.ones(4, np.float32), GPU)
    k = jax.numpy.from_dlpack(y)
    assert float(k.sum()) == 4.0


@needs_gpu
def test_array_protocol_on_gpu():
    x = dlarray.array(np.arange(3, dtype=np.float32), GPU)
    np.testing.assert_array_equal(np.asarray(x), [0, 1, 2])  # a host copy is allowed
    with pytest.raises(ValueError, match="copy=False"):
        np.asarray(x, copy=False)
    with pytest.raises(BufferError):
        memoryview(x)
    cai = x.__cuda_array_interface__
    assert cai["version"] == 3 and cai["data"][0] == x.data_ptr and cai["stream"] is not None


@needs_gpu
def test_dlpack_to_cpu_with_copy():
    x = dlarray.array(np.arange(4, dtype=np.float32), GPU)
    host = np.from_dlpack(x, device="cpu", copy=True) if hasattr(np, "from_dlpack") else None
    np.testing.assert_array_equal(host, np.arange(4))
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(1, 0), copy=False)


@needs_gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_matmul_uses_float32_accumulation(dtype):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    npdt = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 512)).astype(npdt)
    b = rng.standard_normal((512, 128)).astype(npdt)
    c = dlarray.empty((256, 128), GPU, npdt)
    ops.matrix_multiply(dlarray.array(a, GPU, npdt), False, dlarray.array(b, GPU, npdt), False, c)
    want = a.astype(np.float32) @ b.astype(np.float32)
    got = c.asnumpy().astype(np.float32)
    # float32 accumulation: only the final rounding to 8 (bf16) or 11 (f16) bits is lost.
    rel = 2 ** -7 if dtype == "bfloat16" else 2 ** -10
    np.testing.assert_allclose(got, want, rtol=rel, atol=rel * np.abs(want).max())


@needs_gpu
def test_mem_info_and_device_name():
    free, total = dlarray.mem_info("cuda:0")
    assert 0 < free <= total
    assert dlarray.device_name("gpu:0")
