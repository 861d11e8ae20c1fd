"""CUDA-specific behaviour of cuda_backend.so: the caching allocator, asynchronous ops, several
GPUs, out-of-memory errors, the matmul precision option, and the kernels' size tiers (warp per
row, block per row, long rows; split reductions). The generic op tests (test_ops.py) already
compare every op with NumPy on every device; the GPU tests skip when there is no GPU."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import dlarray
from conftest import not_under_sanitizer
from dlarray import ops

GPU = dlarray.gpu(0)


def _cuda_plugin():
    return next((p for p in dlarray.plugins() if p["name"] == "cuda"), None)


def _skip_reason():
    plugin = _cuda_plugin()
    if plugin is None:
        return "cuda_backend.so is not built (no CUDA toolkit at build time)"
    return f"no usable GPU: cuda plugin {plugin['status']}: {plugin['reason']}"


needs_gpu = pytest.mark.skipif(GPU not in dlarray.devices(), reason=_skip_reason())
needs_two_gpus = pytest.mark.skipif(dlarray.gpu(1) not in dlarray.devices(),
                                    reason="fewer than two GPUs")


def _gpu(x):
    return dlarray.array(np.ascontiguousarray(x, dtype=np.float32), GPU)


def _softmax(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_plugin_without_gpu_says_why():
    """Built but unusable (no driver, no GPU): the status carries the CUDA error by name."""
    plugin = _cuda_plugin()
    if plugin is None:
        pytest.skip(_skip_reason())
    if GPU in dlarray.devices():
        assert plugin["status"] == "loaded" and plugin["device_count"] >= 1
        return
    assert plugin["device_count"] == 0
    assert "cuda" in plugin["reason"].lower()
    with pytest.raises(Exception, match="(?i)cuda"):
        dlarray.empty((2,), GPU)


@needs_gpu
def test_memory_stats_track_arrays_and_empty_cache():
    dlarray.synchronize(GPU)
    dlarray.empty_cache(GPU)
    base = dlarray.memory_stats(GPU)
    assert set(base) == {"bytes_in_use", "bytes_reserved", "num_allocations", "num_frees",
                         "peak_bytes_in_use"}
    arrays = [dlarray.empty((1000, 1000), GPU) for _ in range(3)]
    held = dlarray.memory_stats(GPU)
    assert held["bytes_in_use"] >= base["bytes_in_use"] + 3 * 4_000_000
    assert held["peak_bytes_in_use"] >= held["bytes_in_use"]
    del arrays
    freed = dlarray.memory_stats(GPU)
    assert freed["bytes_in_use"] == base["bytes_in_use"]
    assert freed["bytes_reserved"] >= held["bytes_in_use"] - base["bytes_in_use"]  # cached
    again = dlarray.empty((1000, 1000), GPU)  # served from the cache
    assert dlarray.memory_stats(GPU)["num_allocations"] == freed["num_allocations"]
    del again
    dlarray.empty_cache(GPU)
    emptied = dlarray.memory_stats(GPU)
    assert emptied["bytes_reserved"] == emptied["bytes_in_use"]
    assert emptied["num_frees"] > freed["num_frees"]


@needs_gpu
def test_steady_training_loop_makes_no_new_allocations(rng):
    x = _gpu(rng.standard_normal((500, 200)))
    w = _gpu(rng.standard_normal((200, 10)))
    labels = np.zeros((500, 10), np.float32)
    labels[np.arange(500), rng.integers(0, 10, 500)] = 1
    y_ = _gpu(labels)

    def step():
        h = dlarray.empty((500, 10), GPU)
        p = dlarray.empty((500, 10), GPU)
        loss = dlarray.empty((1,), GPU)
        grad_w = dlarray.empty((200, 10), GPU)
        col = dlarray.empty((10,), GPU)
        ops.matrix_multiply(x, False, w, False, h)
        ops.relu(h, h)
        ops.softmax(h, p)
        ops.softmax_cross_entropy(h, y_, loss)
        ops.matrix_multiply(x, True, p, False, grad_w)
        ops.reduce_sum_axis_zero(p, col)
        ops.matrix_elementwise_multiply_by_const(grad_w, -0.1, grad_w)
        ops.matrix_elementwise_add(w, grad_w, w)

    step()
    before = dlarray.memory_stats(GPU)["num_allocations"]
    for _ in range(100):
        step()
    dlarray.synchronize(GPU)
    assert dlarray.memory_stats(GPU)["num_allocations"] == before


@needs_gpu
def test_ops_are_asynchronous_until_synchronize(rng):
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    x = _gpu(a)
    for _ in range(200):
        ops.matrix_elementwise_multiply_by_const(x, 1.0001, x)
    dlarray.synchronize(GPU)
    np.testing.assert_allclose(x.asnumpy(), a * np.float32(1.0001) ** 200, rtol=1e-4)


@needs_gpu
def test_host_source_may_be_reused_after_upload(rng):
    for n in (1, 1000, 3_000_001):
        a = rng.standard_normal(n).astype(np.float32)
        expected = a.copy()
        x = dlarray.array(a, GPU)
        a[:] = 7.0  # the upload must already have read a
        np.testing.assert_array_equal(x.asnumpy(), expected)


@needs_gpu
@pytest.mark.parametrize("cols", [1, 31, 33, 1024, 1025, 4097, 8192, 8193, 16385, 100000])
def test_softmax_tiers(rng, cols):
    rows = 3 if cols > 10000 else 37
    a = (rng.standard_normal((rows, cols)) * 30).astype(np.float32)
    a[0, 0] = -np.inf
    out = dlarray.empty(a.shape, GPU)
    ops.softmax(_gpu(a), out)
    np.testing.assert_allclose(out.asnumpy(), _softmax(a), rtol=1e-4, atol=1e-7)


@needs_gpu
@pytest.mark.parametrize("shape", [(1, 1), (100000, 10), (9, 2049), (3, 16385), (2, 100000)])
def test_softmax_cross_entropy_tiers_and_determinism(rng, shape):
    y = (rng.standard_normal(shape) * 4).astype(np.float32)
    y_ = rng.uniform(0, 1, shape).astype(np.float32)
    ref = np.mean(-np.sum(y_ * np.log(_softmax(y)), axis=-1))
    out = dlarray.empty((1,), GPU)
    yd, td = _gpu(y), _gpu(y_)
    ops.softmax_cross_entropy(yd, td, out)
    first = out.asnumpy()
    np.testing.assert_allclose(first, [ref], rtol=2e-5, atol=1e-6)
    ops.softmax_cross_entropy(yd, td, out)
    np.testing.assert_array_equal(out.asnumpy(), first)


@needs_gpu
@pytest.mark.parametrize("shape", [(1,), (1000003,), (500, 200, 100), (100000, 3), (3, 5),
                                   (4097, 33), (64, 8192)])
def test_reduce_sum_axis_zero_split_rows_is_deterministic(rng, shape):
    a = rng.uniform(-1, 1, shape).astype(np.float32)
    out = dlarray.empty(shape[1:] or (1,), GPU)
    x = _gpu(a)
    ops.reduce_sum_axis_zero(x, out)
    first = out.asnumpy()
    np.testing.assert_allclose(first, a.astype(np.float64).sum(axis=0).reshape(first.shape),
                               rtol=1e-5, atol=1e-5 * np.sqrt(shape[0]) * 4)
    ops.reduce_sum_axis_zero(x, out)
    np.testing.assert_array_equal(out.asnumpy(), first)


@needs_gpu
@pytest.mark.parametrize("src,dst", [((1,), (1000,)), ((8,), (999, 8)), ((8192,), (9, 8192)),
                                     ((3, 1, 5), (3, 4, 5)), ((6, 1), (6, 7)),
                                     ((2, 1, 3, 1), (5, 2, 4, 3, 6))])
def test_broadcast_to_paths(rng, src, dst):
    a = rng.standard_normal(src).astype(np.float32)
    out = dlarray.empty(dst, GPU)
    ops.broadcast_to(_gpu(a), out)
    np.testing.assert_array_equal(out.asnumpy(), np.broadcast_to(a, dst))


@needs_gpu
@not_under_sanitizer
def test_out_of_memory_raises_memory_error_and_runtime_survives():
    with pytest.raises(MemoryError, match=r"bytes.*cuda\(0\)"):
        dlarray.empty((1 << 40,), GPU)  # 4 TiB
    x = _gpu(np.array([1.0, -2.0, 3.0]))
    ops.relu(x, x)
    np.testing.assert_array_equal(x.asnumpy(), [1.0, 0.0, 3.0])


@needs_gpu
def test_matmul_precision_tf32_option(rng):
    a = rng.standard_normal((512, 2048)).astype(np.float32)
    b = rng.standard_normal((2048, 512)).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    xa, xb, out = _gpu(a), _gpu(b), dlarray.empty((512, 512), GPU)

    def rel_err():
        ops.matrix_multiply(xa, False, xb, False, out)
        return np.linalg.norm(out.asnumpy() - ref) / np.linalg.norm(ref)

    assert dlarray.get_matmul_precision() == "highest"
    assert dlarray._core.get_option(GPU, "matmul_precision") == "highest"
    highest = rel_err()
    try:
        dlarray.set_matmul_precision("tf32")
        assert dlarray._core.get_option(GPU, "matmul_precision") == "tf32"
        tf32 = rel_err()
    finally:
        dlarray.set_matmul_precision("highest")
    assert highest < 1e-5
    assert 10 * highest < tf32 < 1e-2
    with pytest.raises(ValueError):
        dlarray._core.set_option(GPU, "matmul_precision", "fast")


@needs_two_gpus
def test_second_gpu_runs_ops_and_copies_both_ways(rng):
    g1 = dlarray.gpu(1)
    a = rng.standard_normal((513, 257)).astype(np.float32)
    x0 = _gpu(a)
    ops.relu(x0, x0)  # queued on gpu(0) before the copy reads x0
    x1 = x0.copyto(g1)
    assert x1.ctx == g1
    ops.matrix_elementwise_multiply_by_const(x1, 2.0, x1)
    back = x1.copyto(GPU)
    np.testing.assert_array_equal(back.asnumpy(), np.maximum(a, 0) * 2)
    assert dlarray.memory_stats(g1)["bytes_in_use"] >= a.nbytes
    with pytest.raises(ValueError):
        ops.matrix_elementwise_add(x0, x1, x1)  # operands on two devices


@needs_gpu
@not_under_sanitizer
def test_failing_kernel_raises_with_the_cuda_error_name_at_next_sync(test_plugin_dir):
    """A kernel that faults returns at once (asynchronous); the next synchronizing call raises
    RuntimeError naming the CUDA error. Run in a child process: the fault poisons the context."""
    plugin = test_plugin_dir / "cuda_fault_plugin.so"
    if not plugin.exists():
        pytest.skip("cuda_fault_plugin.so was not built")
    code = f"""
import json, dlarray
dlarray.load_plugin({str(plugin)!r})
out = dlarray.empty((4,), dlarray.gpu(0))
dlarray.ops.test_fault(out)
try:
    dlarray.synchronize(dlarray.gpu(0))
    err = None
except RuntimeError as e:
    err = str(e)
print(json.dumps({{"err": err}}))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    err = json.loads(proc.stdout.strip().splitlines()[-1])["err"]
    assert err is not None and "cudaErrorIllegalAddress" in err, err


def test_cuda_plugin_is_built_where_the_toolkit_is():
    """With nvcc at build time (CI has the toolkit but no driver) the plugin is installed and
    tried; it is either usable or reports why not."""
    import shutil
    if not (shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")):
        pytest.skip("no CUDA toolkit on this machine")
    if os.environ.get("DLARRAY_CUDA_OFF") == "1":
        pytest.skip("this build was configured with DLARRAY_CUDA=OFF (make sanitize)")
    plugin = _cuda_plugin()
    assert plugin is not None, "cuda_backend.so was not built although nvcc is installed"
    assert plugin["status"] in ("loaded", "no devices", "open failed"), plugin
    assert plugin["status"] == "loaded" or plugin["reason"]
