"""dlarray.rtc on a GPU: RawKernel, RawModule, ElementwiseKernel and Rtc (the seed's own bodies)
against NumPy at sizes that cross block boundaries, argument typing, stream order, launch limits,
shared memory, per-device code, the disk cache, and faults reported at the next sync.

Run on a GPU machine: ``cd tests/python && python -m pytest -q test_rtc_gpu.py
test_rtc_layers.py`` (every test here skips itself elsewhere, with the reason)."""
import json
import subprocess
import sys

import numpy as np
import pytest

import dlarray
import dlarray.rtc as rtc
from conftest import not_under_sanitizer
from rtc_util import ADD, GPUS, needs_gpu, rtc_cache, seed_kernels  # noqa: F401

pytestmark = needs_gpu
SIZES = [1, 255, 256, 257, 1025, 100003]


@pytest.fixture
def gpu():
    return GPUS[0]


def rand(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("n", SIZES)
def test_gpu_raw_kernel_adds_like_numpy(gpu, n):
    add = rtc.RawKernel(ADD, "add")
    x, y = rand(n, 1), rand(n, 2)
    dx, dy = dlarray.array(x, gpu), dlarray.array(y, gpu)
    dz = dlarray.empty((n,), gpu)
    add(((n + 127) // 128,), (128,), (dx, dy, dz, n))
    np.testing.assert_array_equal(dz.asnumpy(), x + y)


TYPED = r"""
extern "C" __global__ void typed(float* out, float a, double b, long long c, unsigned int d,
                                 bool flag, short e) {
  out[0] = a; out[1] = (float)b; out[2] = (float)c; out[3] = (float)d;
  out[4] = flag ? 1.0f : 0.0f; out[5] = (float)e;
}
"""


def test_gpu_python_numbers_take_the_signatures_types(gpu):
    k = rtc.RawKernel(TYPED, "typed")
    out = dlarray.empty((6,), gpu)
    k(1, 1, (out, 1.5, 2.25, -(2**40), 4000000000, True, -7))
    np.testing.assert_array_equal(out.asnumpy(), [1.5, 2.25, -(2**40), 4000000000, 1, -7])
    k(1, 1, [out, np.float32(0.5), np.float64(-1.0), np.int64(3), np.uint32(9), False,
             np.int16(2)])
    np.testing.assert_array_equal(out.asnumpy(), [0.5, -1.0, 3, 9, 0, 2])
    k(1, 1, (out, 3, 4, 5, 6, 1, 7))  # ints where floats are declared: converted
    np.testing.assert_array_equal(out.asnumpy(), [3, 4, 5, 6, 1, 7])


TEMPLATE = r"""
template <typename T>
__global__ void fill(T* y, T value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = value;
}
__global__ void twice(float* y, int n) {   // C++ linkage: found by its C++ name
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= 2.0f;
}
"""


def test_gpu_templates_and_cxx_kernels_by_name(gpu):
    module = rtc.RawModule(code=TEMPLATE, name_expressions=["fill<double>", "fill<float>"])
    y = dlarray.empty((1000,), gpu, dtype="float64")
    module.get_function("fill<double>")((4,), (256,), (y, np.float64(2.5), np.int32(1000)))
    np.testing.assert_array_equal(y.asnumpy(), np.full(1000, 2.5))
    z = dlarray.empty((1000,), gpu)
    module.get_function("fill<float>")((4,), (256,), (z, np.float32(3.0), np.int32(1000)))
    module.get_function("twice")((4,), (256,), (z, 1000))
    np.testing.assert_array_equal(z.asnumpy(), np.full(1000, 6.0, np.float32))
    fill = module.get_function("fill<double>")
    if fill.attributes()["num_params"] == 3:  # drivers of CUDA 12.4 and newer can say
        with pytest.raises(TypeError, match=r"takes 3 arguments \(as the driver reports\), got 2"):
            fill(1, 1, (y, np.float64(1)))


INCREMENT = r"""
extern "C" __global__ void inc(float* z, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) z[i] += 1.0f;
}
"""


def test_gpu_launches_follow_the_ops_on_the_stream(gpu):
    n = 1 << 22
    inc = rtc.RawKernel(INCREMENT, "inc")
    z = dlarray.empty((n,), gpu)
    for _ in range(3):
        dlarray.ops.array_set(z, 5.0)              # queued before the kernel
        inc((n // 256,), (256,), (z, n))
        dlarray.ops.matrix_elementwise_add(z, z, z)  # queued after it
    np.testing.assert_array_equal(z.asnumpy(), np.full(n, 12.0, np.float32))


def test_gpu_launch_limits_name_the_kernel(gpu):
    add = rtc.RawKernel(ADD, "add")
    args = (None, None, None, 0)
    with pytest.raises(ValueError, match=r"kernel 'add': block \(2048, 1, 1\) is out of range"):
        add(1, 2048, args)
    with pytest.raises(ValueError, match=r"kernel 'add': a block of 2048 threads \(64, 32, 1\) "
                                         r"exceeds the kernel's limit of 1024"):
        add(1, (64, 32), args)
    with pytest.raises(ValueError, match=r"kernel 'add': grid \(1, 70000, 1\) is out of range"):
        add((1, 70000), 1, args)
    limit = add.attributes(gpu)["max_dynamic_shared_bytes"]
    with pytest.raises(ValueError, match="kernel 'add': %d bytes of dynamic shared memory exceed "
                                         "what cuda" % (limit + 1)):
        add(1, 1, args, shared_mem=limit + 1)
    bounded = rtc.RawKernel('extern "C" __global__ void __launch_bounds__(128) b(int* x) {}', "b")
    with pytest.raises(ValueError, match=r"exceeds the kernel's limit of 128 threads per block"):
        bounded(1, 256, (None,))
    add(1, 1, args)  # the process goes on
    dlarray.synchronize(gpu)


SHARED = r"""
extern "C" __global__ void reverse(const float* x, float* y, int n) {
  extern __shared__ float buffer[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) buffer[i] = x[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = buffer[n - 1 - i];
}
"""


def test_gpu_more_than_48k_of_dynamic_shared_memory(gpu):
    k = rtc.RawKernel(SHARED, "reverse")
    limit = k.attributes(gpu)["max_dynamic_shared_bytes"]
    n = min(limit, 96 * 1024) // 4
    x = rand(n)
    dx, dy = dlarray.array(x, gpu), dlarray.empty((n,), gpu)
    k(1, 256, (dx, dy, n), shared_mem=n * 4)
    np.testing.assert_array_equal(dy.asnumpy(), x[::-1])


def test_gpu_code_is_built_for_the_devices_architecture(gpu):
    from test_rtc_compile import cubin_arch
    arch = dlarray._rtc_build.device_arch(gpu.device_id)
    code = rtc.RawKernel(ADD, "add").compile(ctx=gpu)
    newest = rtc.status()["archs"][-1]
    assert cubin_arch(code) == (arch if arch <= newest and arch in rtc.status()["archs"] else None)
    assert dlarray._core.get_option(gpu, "compute_capability:%d" % gpu.device_id) == \
        "%d.%d" % divmod(arch, 10)
    attrs = rtc.RawKernel(ADD, "add").attributes(gpu)
    assert attrs["max_threads_per_block"] >= 128 and attrs["device_id"] == gpu.device_id


def test_gpu_a_new_process_loads_from_the_disk_cache(gpu, monkeypatch):
    source = ADD + "// disk cache on the GPU\n"
    rtc.RawKernel(source, "add").compile(ctx=gpu)
    rtc.clear_memory_cache()

    def no_nvrtc(*args):
        raise AssertionError("compiled again instead of loading the cached cubin")
    monkeypatch.setattr(dlarray._core, "_rtc_compile", no_nvrtc)
    add = rtc.RawKernel(source, "add")
    x = dlarray.array(np.arange(300, dtype=np.float32), gpu)
    z = dlarray.empty((300,), gpu)
    add((3,), (128,), (x, x, z, 300))
    np.testing.assert_array_equal(z.asnumpy(), 2 * np.arange(300, dtype=np.float32))


def test_gpu_code_freed_while_recording_a_graph_is_unloaded_after_it(gpu):
    # A garbage collection in the middle of a recording may free compiled code (an executor of
    # an earlier step). Unloading waits for the stream first, which a recording stream must not
    # be asked: it broke the recording, and the next op failed ("CUBLAS_STATUS_EXECUTION_
    # FAILED", cudaErrorStreamCaptureInvalidated). The unload now waits for the recording's end.
    import gc
    from dlarray import ops
    from dlarray.autodiff import record_cuda_graph
    n = 1025
    x, y = rand(n, 1), rand(n, 2)
    dx, dy, dz, dr = (dlarray.array(v, gpu) for v in (x, y, np.zeros(n, np.float32), -x))
    doomed = [rtc.RawKernel(ADD.replace("add(", "add_doomed("), "add_doomed")]
    doomed[0](((n + 127) // 128,), (128,), (dx, dy, dz, n))  # loaded now
    np.testing.assert_array_equal(dz.asnumpy(), x + y)
    add = rtc.RawKernel(ADD, "add")

    def body():
        ops.relu(dr, dr)
        doomed.clear()
        rtc.clear_memory_cache()  # the last references to add_doomed's module
        gc.collect()
        add(((n + 127) // 128,), (128,), (dr, dy, dz, n))

    graph = record_cuda_graph(body, gpu)
    dz[:] = 0
    graph.launch()
    np.testing.assert_array_equal(dz.asnumpy(), np.maximum(-x, 0) + y)
    # the stream works on, and code compiled anew loads
    again = rtc.RawKernel(ADD.replace("add(", "add_doomed("), "add_doomed")
    again(((n + 127) // 128,), (128,), (dx, dx, dz, n))
    np.testing.assert_array_equal(dz.asnumpy(), x + x)


@pytest.mark.skipif(len(GPUS) < 2, reason="needs 2 GPUs")
def test_gpu_kernels_run_on_each_devices_arrays():
    add = rtc.RawKernel(ADD, "add")
    for ctx in GPUS[:2]:
        x = dlarray.array(np.ones(10, np.float32), ctx)
        z = dlarray.empty((10,), ctx)
        add(1, 32, (x, x, z, 10))
        np.testing.assert_array_equal(z.asnumpy(), np.full(10, 2.0))
    other = dlarray.empty((10,), GPUS[1])
    with pytest.raises(ValueError,
                       match=r"argument 2 \(float\* z\) is on cuda\(1\) but argument 0"):
        add(1, 32, (x.copyto(GPUS[0]), x.copyto(GPUS[0]), other, 10))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])  # 16-byte vectors or not
@pytest.mark.parametrize("shape", [(1,), (3,), (1023,), (1025,), (4099, 5), (2, 3, 513)])
def test_gpu_elementwise_kernel_matches_numpy(gpu, shape, dtype):
    add = rtc.ElementwiseKernel("T x, T y", "T z", "z = x + y", "ew_add")
    x, y = (rand(shape, 1) * 100).astype(dtype), (rand(shape, 2) * 100).astype(dtype)
    z = add(dlarray.array(x, gpu, dtype=dtype), dlarray.array(y, gpu, dtype=dtype))
    assert z.shape == shape and z.ctx == gpu and z.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(z.asnumpy(), x + y)
    acc = dlarray.array(x, gpu, dtype=dtype)
    rtc.ElementwiseKernel("T y", "T acc", "acc += y", "ew_acc")(dlarray.array(y, gpu, dtype=dtype),
                                                               acc)
    np.testing.assert_array_equal(acc.asnumpy(), x + y)  # an output that is read: loaded


def test_gpu_elementwise_scalars_types_raw_and_in_place(gpu):
    axpb = rtc.ElementwiseKernel("T x, T a, raw T table", "T y, float32 w",
                                 "y = a * x + table[i % 3]; w = (float)i", "axpb")
    x = np.arange(10, dtype=np.float64)
    table = np.array([100.0, 200.0, 300.0])
    y, w = axpb(dlarray.array(x, gpu, np.float64), 2.0, dlarray.array(table, gpu, np.float64))
    np.testing.assert_array_equal(y.asnumpy(), 2 * x + table[np.arange(10) % 3])
    np.testing.assert_array_equal(w.asnumpy(), np.arange(10, dtype=np.float32))
    assert y.dtype == np.float64
    square = rtc.ElementwiseKernel("float32 x", "float32 y", "y = x * x", "square")
    d = dlarray.array(rand(5000), gpu)
    expected = d.asnumpy() ** 2
    square(d, d)  # in place: the kernel is compiled without __restrict__
    np.testing.assert_array_equal(d.asnumpy(), expected)
    with pytest.raises(TypeError, match="'x' is float32, got an array of float64"):
        square(dlarray.array(x, gpu, np.float64))
    with pytest.raises(ValueError, match="has shape"):
        rtc.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x + y", "k")(
            dlarray.array(rand(4), gpu), dlarray.array(rand(5), gpu))
    counter = rtc.ElementwiseKernel("", "raw int32 out", "if (i == 0) out[0] = _ind.size()",
                                    "count")
    out = dlarray.empty((1,), gpu, dtype="int32")
    counter(out, size=777)
    assert out.asnumpy()[0] == 777


def test_gpu_seed_softmax_and_softmax_grad_run_unchanged(gpu):
    kernels = seed_kernels()
    x = rand((100, 10), 3) * 4
    labels = np.random.default_rng(4).integers(0, 10, 100).astype(np.float32)
    dx_in, dl = dlarray.array(x, gpu), dlarray.array(labels, gpu)
    dy, dgrad = dlarray.empty((100, 10), gpu), dlarray.empty((100, 10), gpu)
    names_in, names_out, body = kernels["softmax"]
    fwd = rtc.Rtc("softmax", [(names_in[0], dx_in)], [(names_out[0], dy)], body)
    fwd.push([dx_in], [dy], (1, 1, 1), (x.shape[0], 1, 1))          # the seed's launch
    e = np.exp(x - x.max(axis=1, keepdims=True))
    softmax = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(dy.asnumpy(), softmax, rtol=1e-5, atol=1e-7)
    names_in, names_out, body = kernels["softmax_grad"]
    bwd = rtc.Rtc("softmax_grad", list(zip(names_in, [dy, dl])), [(names_out[0], dgrad)], body)
    bwd.push([dy, dl], [dgrad], (100, 1, 1), (10, 1, 1))
    expected = dy.asnumpy() - np.eye(10, dtype=np.float32)[labels.astype(int)]
    np.testing.assert_allclose(dgrad.asnumpy(), expected, rtol=1e-6, atol=1e-7)


def test_gpu_seed_reorg_runs_unchanged_and_its_grad_is_wrong(gpu):
    import test_rtc_layers
    layers = test_rtc_layers.layers
    kernels = seed_kernels()
    shape = (2, 3, 8, 8)
    x, gy = rand(shape, 5), rand((2, 12, 4, 4), 6)
    dx_in, dy = dlarray.array(x, gpu), dlarray.empty((2, 12, 4, 4), gpu)
    names_in, names_out, body = kernels["reorg"]
    rtc.Rtc("reorg", [(names_in[0], dx_in)], [(names_out[0], dy)], body).push(
        [dx_in], [dy], (shape[0] * shape[1], 1, 1), (1, 1, 1))
    np.testing.assert_array_equal(dy.asnumpy(), layers.reorg_numpy(x))
    dgy, dgx = dlarray.array(gy, gpu), dlarray.array(np.zeros(shape, np.float32), gpu)
    names_in, names_out, body = kernels["reorg_grad"]
    rtc.Rtc("reorg_grad", [(names_in[0], dgy)], [(names_out[0], dgx)], body).push(
        [dgy], [dgx], (gy.shape[0] * gy.shape[1] // 4, 1, 1), (1, 1, 1))
    seed = dgx.asnumpy()
    np.testing.assert_array_equal(seed, test_rtc_layers.seed_reorg_grad_as_written(gy, shape))
    correct = layers.reorg_grad_numpy(gy)
    assert not np.allclose(seed, correct)
    assert np.all(seed.reshape(6, 64)[:, 34:] == 0)  # offsets it never writes
    # Ours: the adjoint of the forward, on the GPU.
    ours = layers.Reorg()
    gx = dlarray.empty(shape, gpu)
    ours.backward_gpu([dgy], [dx_in], [dy], [gx])
    np.testing.assert_array_equal(gx.asnumpy(), correct)


def test_gpu_rtc_push_compiles_again_for_new_shapes(gpu):
    body = "int i = threadIdx.x; if (i < x_dims[0]) y[i] = 2.0f * x[i] + x_ndim;"
    small = dlarray.array(np.arange(4, dtype=np.float32), gpu)
    k = rtc.Rtc("scale2", [("x", small)], [("y", small)], body)
    for n in (4, 7):
        x = dlarray.array(np.arange(n, dtype=np.float32), gpu)
        y = dlarray.empty((n,), gpu)
        k.push([x], [y], (1, 1, 1), (32, 1, 1))
        np.testing.assert_array_equal(y.asnumpy(), 2 * np.arange(n) + 1)


FAULT = r"""
import json, numpy as np, dlarray, dlarray.rtc as rtc
out = {}
gpu = dlarray.gpu(0)
bad = rtc.RawKernel('extern "C" __global__ void bad(float* p) { p[1 << 28] = 1.0f; }', "bad")
x = dlarray.array(np.zeros(4, np.float32), gpu)
bad(1, 1, (x,))
out["launched"] = True
try:
    dlarray.synchronize(gpu)
except RuntimeError as e:
    out["sync"] = str(e)
try:
    dlarray.array(np.ones(4, np.float32), gpu).asnumpy()
except (RuntimeError, MemoryError) as e:
    out["after"] = type(e).__name__ + ": " + str(e)
cpu = dlarray.array(np.ones(3, np.float32), dlarray.cpu())
dlarray.ops.matrix_elementwise_add(cpu, cpu, cpu)
out["cpu"] = cpu.asnumpy().tolist()
print(json.dumps(out))
"""


@not_under_sanitizer
def test_gpu_a_faulting_kernel_surfaces_at_the_next_sync():
    result = subprocess.run([sys.executable, "-c", FAULT], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["launched"]
    assert "cudaErrorIllegalAddress" in out["sync"] or "cudaErrorLaunchFailure" in out["sync"], out
    assert "cudaStreamSynchronize" in out["sync"]
    # The context is lost (CUDA allows nothing more on it): later GPU work raises, the CPU works.
    assert "after" in out and "Error" in out["after"]
    assert out["cpu"] == [2.0, 2.0, 2.0]
