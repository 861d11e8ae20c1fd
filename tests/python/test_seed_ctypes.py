"""The seed's own ctypes client (_base.py, ndarray.py, gpu_op.py from seed 000, extracted at test
time, see seed_client.py) against libc_runtime_api.so, on every usable device, checked with NumPy:
the twelve dlsys op tests' cases (plus odd shapes and 1-element arrays), copies both ways, and the
error returns. Nothing of ours is imported by the client: it finds the library at its own path."""
import ctypes
import os

import numpy as np
import pytest

import dlarray
import seed_client


@pytest.fixture(scope="module")
def seed(tmp_path_factory):
    reason = seed_client.missing_reason()
    if reason:
        pytest.skip(reason)
    with seed_client.imported(tmp_path_factory.mktemp("seed_client")) as mods:
        yield mods


@pytest.fixture
def sctx(seed, ctx):
    """The seed's DLContext for the usable device ctx (conftest runs each test on every one)."""
    return seed.ndarray.DLContext(ctx.device_id, ctx.device_type)  # any device type, as cpu()/gpu()


def softmax_func(y):
    """NumPy softmax over rows, as the seed's autodiff.softmax_func."""
    b = y - np.max(y, axis=1, keepdims=True)
    expb = np.exp(b)
    return expb / np.sum(expb, axis=1, keepdims=True)


def uniform(rng, lo, hi, shape):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def last_error(seed):
    return seed.lib.DLGetLastError().decode()


# -- the client's view of the seed's structs ------------------------------------------------------

def test_client_finds_our_library_at_its_own_path(seed):
    lib_path = seed.base._LIB._name
    assert lib_path.endswith("../../build/lib/libc_runtime_api.so")
    assert os.path.realpath(lib_path) == os.path.realpath(dlarray.seed_lib_path())


def test_struct_layouts_are_the_seeds(seed, sctx, ctx):
    assert ctypes.sizeof(seed.ndarray.DLArray) == 32
    arr = seed.ndarray.empty((3, 5, 7), ctx=sctx)
    assert arr.shape == (3, 5, 7)
    got = arr.ctx  # read back from the C struct: device_id first, then device_type
    assert (got.device_id, got.device_type) == (ctx.device_id, ctx.device_type)
    if ctx.device_type in (1, 2):  # the seed's repr names only its own two device types,
        # CUDA devices as gpu(N) (the seed's client code, unchanged); ours print them as cuda(N)
        seed_name = {1: "cpu", 2: "gpu"}[ctx.device_type]
        assert repr(got) == "%s(%d)" % (seed_name, ctx.device_id)
        assert repr(ctx) == "%s(%d)" % ({1: "cpu", 2: "cuda"}[ctx.device_type], ctx.device_id)


# -- the twelve dlsys op tests' cases, on every device -------------------------------------------

@pytest.mark.parametrize("shape", [(500, 200), (37, 129), (1,)])
def test_array_set(seed, sctx, shape):
    arr = seed.ndarray.empty(shape, ctx=sctx)
    seed.gpu_op.array_set(arr, 1.)
    np.testing.assert_array_equal(arr.asnumpy(), np.ones(shape, np.float32))
    seed.gpu_op.array_set(arr, -2.5)
    np.testing.assert_array_equal(arr.asnumpy(), np.full(shape, -2.5, np.float32))


@pytest.mark.parametrize("shape,to_shape", [((200, 300), (130, 200, 300)), ((1, 7), (33, 5, 7)),
                                            ((1,), (1, 1))])
def test_broadcast_to(seed, sctx, rng, shape, to_shape):
    x = uniform(rng, -1, 1, shape)
    arr_x = seed.ndarray.array(x, ctx=sctx)
    arr_y = seed.ndarray.empty(to_shape, ctx=sctx)
    seed.gpu_op.broadcast_to(arr_x, arr_y)
    np.testing.assert_array_equal(arr_y.asnumpy(), np.broadcast_to(x, to_shape))


@pytest.mark.parametrize("shape", [(500, 200, 100), (37, 129), (1, 1)])
def test_reduce_sum_axis_zero(seed, sctx, rng, shape):
    x = uniform(rng, 0, 20, shape)
    arr_x = seed.ndarray.array(x, ctx=sctx)
    arr_y = seed.ndarray.empty(shape[1:], ctx=sctx)
    seed.gpu_op.reduce_sum_axis_zero(arr_x, arr_y)
    np.testing.assert_allclose(arr_y.asnumpy(), np.sum(x, axis=0), rtol=1e-5)


ELEMENTWISE_SHAPES = [(500, 200), (37, 129), (1, 1)]


@pytest.mark.parametrize("shape", ELEMENTWISE_SHAPES)
def test_matrix_elementwise_add(seed, sctx, rng, shape):
    x, y = uniform(rng, 0, 10, shape), uniform(rng, 0, 10, shape)
    arr_x, arr_y = seed.ndarray.array(x, ctx=sctx), seed.ndarray.array(y, ctx=sctx)
    arr_z = seed.ndarray.empty(shape, ctx=sctx)
    seed.gpu_op.matrix_elementwise_add(arr_x, arr_y, arr_z)
    np.testing.assert_allclose(arr_z.asnumpy(), x + y, rtol=1e-6)


@pytest.mark.parametrize("shape", [(2000, 3000), (37, 129), (1, 1)])
def test_matrix_elementwise_add_by_const(seed, sctx, rng, shape):
    x, val = uniform(rng, 0, 10, shape), float(rng.uniform(-5, 5))
    arr_x, arr_y = seed.ndarray.array(x, ctx=sctx), seed.ndarray.empty(shape, ctx=sctx)
    seed.gpu_op.matrix_elementwise_add_by_const(arr_x, val, arr_y)
    np.testing.assert_allclose(arr_y.asnumpy(), x + np.float32(val), rtol=1e-6)


@pytest.mark.parametrize("shape", ELEMENTWISE_SHAPES)
def test_matrix_elementwise_multiply(seed, sctx, rng, shape):
    x, y = uniform(rng, 0, 10, shape), uniform(rng, 0, 10, shape)
    arr_x, arr_y = seed.ndarray.array(x, ctx=sctx), seed.ndarray.array(y, ctx=sctx)
    arr_z = seed.ndarray.empty(shape, ctx=sctx)
    seed.gpu_op.matrix_elementwise_multiply(arr_x, arr_y, arr_z)
    np.testing.assert_allclose(arr_z.asnumpy(), x * y, rtol=1e-6)


@pytest.mark.parametrize("shape", [(2000, 3000), (37, 129), (1, 1)])
def test_matrix_elementwise_multiply_by_const(seed, sctx, rng, shape):
    x, val = uniform(rng, 0, 10, shape), float(rng.uniform(-5, 5))
    arr_x, arr_y = seed.ndarray.array(x, ctx=sctx), seed.ndarray.empty(shape, ctx=sctx)
    seed.gpu_op.matrix_elementwise_multiply_by_const(arr_x, val, arr_y)
    np.testing.assert_allclose(arr_y.asnumpy(), x * np.float32(val), rtol=1e-6)


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("m,k,n", [(500, 700, 1000), (37, 129, 65), (1, 1, 1)])
def test_matrix_multiply(seed, sctx, rng, m, k, n, trans_a, trans_b):
    a = uniform(rng, 0, 10, (k, m) if trans_a else (m, k))
    b = uniform(rng, 0, 10, (n, k) if trans_b else (k, n))
    arr_a, arr_b = seed.ndarray.array(a, ctx=sctx), seed.ndarray.array(b, ctx=sctx)
    arr_c = seed.ndarray.empty((m, n), ctx=sctx)
    seed.gpu_op.matrix_multiply(arr_a, trans_a, arr_b, trans_b, arr_c)
    want = np.dot(a.T if trans_a else a, b.T if trans_b else b)
    np.testing.assert_allclose(arr_c.asnumpy(), want, rtol=1e-5)


@pytest.mark.parametrize("shape", [(2000, 2500), (37, 129), (1,)])
def test_relu(seed, sctx, rng, shape):
    x = uniform(rng, -1, 1, shape)
    arr_x, arr_y = seed.ndarray.array(x, ctx=sctx), seed.ndarray.empty(shape, ctx=sctx)
    seed.gpu_op.relu(arr_x, arr_y)
    np.testing.assert_array_equal(arr_y.asnumpy(), np.maximum(x, 0))


@pytest.mark.parametrize("shape", [(2000, 2500), (37, 129), (1,)])
def test_relu_gradient(seed, sctx, rng, shape):
    x, grad = uniform(rng, -1, 1, shape), uniform(rng, -5, 5, shape)
    arr_x, arr_g = seed.ndarray.array(x, ctx=sctx), seed.ndarray.array(grad, ctx=sctx)
    arr_y = seed.ndarray.empty(shape, ctx=sctx)
    seed.gpu_op.relu_gradient(arr_x, arr_g, arr_y)
    np.testing.assert_array_equal(arr_y.asnumpy(), ((x > 0) * grad).astype(np.float32))


@pytest.mark.parametrize("shape", [(400, 1000), (37, 129), (1, 1)])
def test_softmax(seed, sctx, rng, shape):
    x = uniform(rng, -5, 5, shape)
    arr_x, arr_y = seed.ndarray.array(x, ctx=sctx), seed.ndarray.empty(shape, ctx=sctx)
    seed.gpu_op.softmax(arr_x, arr_y)
    np.testing.assert_allclose(arr_y.asnumpy(), softmax_func(x), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("shape", [(400, 1000), (37, 129), (1, 1)])
def test_softmax_cross_entropy(seed, sctx, rng, shape):
    y, y_ = uniform(rng, -5, 5, shape), uniform(rng, -5, 5, shape)
    arr_y, arr_y_ = seed.ndarray.array(y, ctx=sctx), seed.ndarray.array(y_, ctx=sctx)
    arr_out = seed.ndarray.empty((1,), ctx=sctx)
    seed.gpu_op.softmax_cross_entropy(arr_y, arr_y_, arr_out)
    want = -np.sum(y_ * np.log(softmax_func(y.astype(np.float64))), axis=1).mean()
    np.testing.assert_allclose(arr_out.asnumpy(), [want], rtol=1e-4, atol=1e-6)


# -- copies and asnumpy ---------------------------------------------------------------------------

def test_copies_both_ways(seed, sctx, rng):
    nd = seed.ndarray
    x, y = uniform(rng, -3, 3, (129, 33)), uniform(rng, -3, 3, (129, 33))
    arr = nd.array(x, ctx=sctx)                      # host -> device
    np.testing.assert_array_equal(arr.asnumpy(), x)  # device -> host
    same = arr.copyto(sctx)                          # device -> new array on the same device
    on_cpu = arr.copyto(nd.cpu(0))                   # device -> cpu array
    arr[:] = y                                       # NumPy into an existing array
    np.testing.assert_array_equal(arr.asnumpy(), y)
    np.testing.assert_array_equal(same.asnumpy(), x)
    np.testing.assert_array_equal(on_cpu.asnumpy(), x)
    assert repr(on_cpu.ctx) == "cpu(0)"
    back = nd.empty((129, 33), ctx=sctx)
    back[:] = on_cpu                                 # cpu array -> device array
    np.testing.assert_array_equal(back.asnumpy(), x)
    arr[:] = np.arange(129 * 33).reshape(33, 129).T  # int64, not contiguous: the seed converts
    np.testing.assert_array_equal(arr.asnumpy(), np.arange(129 * 33).reshape(33, 129).T)
    with pytest.raises(ValueError, match="shape do not match"):  # the seed's own check
        arr[:] = np.zeros((33, 129), np.float32)


def test_one_element_arrays(seed, sctx):
    arr = seed.ndarray.array(np.array([4.5], np.float32), ctx=sctx)
    np.testing.assert_array_equal(arr.asnumpy(), [4.5])
    arr = seed.ndarray.array([[-1.5]], ctx=sctx)  # a list: the seed converts it
    assert arr.shape == (1, 1)
    np.testing.assert_array_equal(arr.asnumpy(), [[-1.5]])


def test_caller_made_host_arrays_are_used_in_place(seed, rng):
    """A DLArray the client builds over NumPy memory (_numpyasarray) is an operand without a copy:
    the op writes straight into the NumPy buffer."""
    x = uniform(rng, -1, 1, (65, 3))
    out = np.full_like(x, 7.0)
    src, src_shape = seed.ndarray.NDArray._numpyasarray(x)
    dst, dst_shape = seed.ndarray.NDArray._numpyasarray(out)
    assert seed.lib.DLGpuRelu(ctypes.byref(src), ctypes.byref(dst)) == 0, last_error(seed)
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    assert seed.lib.DLGpuMatrixMultiplyByConst(ctypes.byref(src), ctypes.c_float(2.0),
                                               ctypes.byref(dst)) == 0, last_error(seed)
    np.testing.assert_array_equal(out, x * 2)
    del src_shape, dst_shape


# -- errors: -1 and a message, never a crash ------------------------------------------------------

def raw_alloc(seed, shape, sctx):
    h = seed.ndarray.DLArrayHandle()
    rc = seed.lib.DLArrayAlloc(seed.base.c_array(ctypes.c_int64, shape), ctypes.c_int(len(shape)),
                               sctx, ctypes.byref(h))
    return rc, h


def test_bad_shapes_give_minus_one_and_a_message(seed, sctx):
    nd, lib = seed.ndarray, seed.lib
    a, b = nd.empty((4, 3), ctx=sctx), nd.empty((3, 5), ctx=sctx)
    assert lib.DLGpuRelu(a.handle, b.handle) == -1
    assert "DLGpuRelu" in last_error(seed) and "(4, 3)" in last_error(seed)
    assert "(3, 5)" in last_error(seed)
    assert lib.DLGpuMatrixMultiply(a.handle, False, a.handle, False, b.handle) == -1
    assert "inner dimensions" in last_error(seed)
    assert lib.DLGpuMatrixElementwiseAdd(a.handle, b.handle, a.handle) == -1
    assert lib.DLGpuBroadcastTo(a.handle, b.handle) == -1
    assert "cannot broadcast" in last_error(seed)
    assert lib.DLGpuSoftmaxCrossEntropy(a.handle, a.handle, b.handle) == -1
    assert "1 element" in last_error(seed)
    assert lib.DLArrayCopyFromTo(a.handle, b.handle, None) == -1
    assert "differs from target shape" in last_error(seed)
    with pytest.raises(AssertionError):  # the seed's check_call on DLArrayAlloc's -1
        nd.empty((2, -1), ctx=sctx)
    assert "(2, -1)" in last_error(seed)


def test_freed_and_null_handles_are_errors(seed, sctx):
    lib = seed.lib
    rc, h = raw_alloc(seed, (6,), sctx)
    rc2, other = raw_alloc(seed, (6,), sctx)
    assert rc == 0 and rc2 == 0, last_error(seed)
    assert lib.DLArrayFree(h) == 0
    assert lib.DLArrayFree(h) == -1 and "already freed" in last_error(seed)
    assert lib.DLGpuRelu(h, other) == -1 and "input 0 is a freed handle" in last_error(seed)
    assert lib.DLGpuArraySet(h, ctypes.c_float(1)) == -1
    assert "output is a freed handle" in last_error(seed)
    assert lib.DLArrayCopyFromTo(other, h, None) == -1
    assert "copy target is a freed handle" in last_error(seed)
    assert lib.DLGpuRelu(None, other) == -1 and "null handle" in last_error(seed)
    assert lib.DLArrayFree(None) == -1 and "null handle" in last_error(seed)
    assert lib.DLArrayCopyFromTo(other, other, ctypes.c_void_p(1)) == -1
    assert "stream" in last_error(seed)
    assert lib.DLArrayFree(other) == 0


def test_a_freed_handle_stays_freed_when_its_memory_is_reused(seed, sctx):
    """DLArrayFree(h), an alloc that may get the same memory, then a call on h: an error with a
    message, and the live array is untouched (issue 26, defect 4)."""
    lib, nd = seed.lib, seed.ndarray
    seen = set()
    for _ in range(50):
        rc, h1 = raw_alloc(seed, (4, 4), sctx)
        assert rc == 0, last_error(seed)
        seen.add(ctypes.addressof(h1.contents))
        assert lib.DLArrayFree(h1) == 0
        rc, h2 = raw_alloc(seed, (4, 4), sctx)
        assert rc == 0, last_error(seed)
        assert ctypes.addressof(h2.contents) not in seen, "a freed handle was handed out again"
        seen.add(ctypes.addressof(h2.contents))
        assert lib.DLGpuArraySet(h2, ctypes.c_float(7.0)) == 0, last_error(seed)
        assert lib.DLGpuArraySet(h1, ctypes.c_float(9.0)) == -1, "a stale handle was written"
        assert "output is a freed handle" in last_error(seed)
        assert lib.DLGpuRelu(h1, h2) == -1 and "input 0 is a freed handle" in last_error(seed)
        assert lib.DLArrayFree(h1) == -1 and "already freed" in last_error(seed)
        got = np.zeros((4, 4), np.float32)
        dst, dst_shape = nd.NDArray._numpyasarray(got)
        assert lib.DLArrayCopyFromTo(h2, ctypes.byref(dst), None) == 0, last_error(seed)
        np.testing.assert_array_equal(got, np.full((4, 4), 7.0, np.float32))
        assert h2.contents.ndim == 2 and [h2.contents.shape[i] for i in range(2)] == [4, 4]
        assert lib.DLArrayFree(h2) == 0
        assert h2.contents.ndim == 0, "a freed handle still describes an array"
        del dst_shape


def test_bad_contexts_are_errors(seed):
    nd = seed.ndarray
    rc, _ = raw_alloc(seed, (4,), nd.cpu(3))
    assert rc == -1 and "cpu(3)" in last_error(seed)
    rc, _ = raw_alloc(seed, (4,), nd.DLContext(0, 7))  # DLPack's Vulkan: no plugin here
    assert rc == -1 and "vulkan(0)" in last_error(seed)
    rc, _ = raw_alloc(seed, (4,), nd.DLContext(0, 21))  # a type DLPack has no name for
    assert rc == -1 and "device_type_21(0)" in last_error(seed)


def test_gpu_without_a_gpu_is_an_error_code(seed):
    if any(c.device_type == 2 for c in dlarray.devices()):
        pytest.skip("a GPU is usable here: the op tests above ran on it")
    rc, _ = raw_alloc(seed, (4,), seed.ndarray.gpu(0))
    assert rc == -1 and "cuda(0)" in last_error(seed)
    with pytest.raises(AssertionError):
        seed.ndarray.empty((4,), ctx=seed.ndarray.gpu(0))
