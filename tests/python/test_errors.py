"""Bad input raises a clear Python exception naming the problem; nothing crashes."""
import numpy as np
import pytest

import dlarray
from dlarray import ops


def e(shape, ctx):
    return dlarray.empty(shape, ctx)


# (op name, operands builder) where the shapes do not fit; every op is covered.
MISMATCHES = {
    "array_set": None,  # one operand and a scalar: no shape to mismatch
    "broadcast_to": lambda c: (e((3, 2), c), e((4, 3), c)),
    "reduce_sum_axis_zero": lambda c: (e((5, 3), c), e((5,), c)),
    "matrix_elementwise_add": lambda c: (e((2, 3), c), e((3, 2), c), e((2, 3), c)),
    "matrix_elementwise_add_by_const": lambda c: (e((2, 3), c), 1.0, e((2, 4), c)),
    "matrix_elementwise_multiply": lambda c: (e((2, 3), c), e((2, 3), c), e((6,), c)),
    "matrix_elementwise_multiply_by_const": lambda c: (e((2, 3), c), 1.0, e((3, 3), c)),
    "matrix_multiply": lambda c: (e((2, 3), c), False, e((2, 3), c), False, e((2, 3), c)),
    "relu": lambda c: (e((2, 3), c), e((3, 3), c)),
    "relu_gradient": lambda c: (e((2, 3), c), e((2, 2), c), e((2, 3), c)),
    "softmax": lambda c: (e((2, 3), c), e((3, 2), c)),
    "softmax_cross_entropy": lambda c: (e((2, 3), c), e((2, 4), c), e((1,), c)),
    "copy": lambda c: (e((2, 3), c), e((2, 4), c)),
}


@pytest.mark.parametrize("name", sorted(k for k, v in MISMATCHES.items() if v))
def test_shape_mismatch_raises_value_error_with_shapes(ctx, name):
    with pytest.raises(ValueError, match=r"\(2, 3\)|\(3, 2\)|\(5, 3\)"):
        getattr(ops, name)(*MISMATCHES[name](ctx))


@pytest.mark.parametrize("ta,tb,msg", [(False, False, "inner dimensions 3 and 4"),
                                       (True, False, "inner dimensions 2 and 4")])
def test_matmul_inner_dimension_message(ctx, ta, tb, msg):
    with pytest.raises(ValueError, match=msg):
        ops.matrix_multiply(e((2, 3), ctx), ta, e((4, 5), ctx), tb, e((2, 5), ctx))


def test_wrong_rank(ctx):
    with pytest.raises(ValueError, match="2-D"):
        ops.matrix_multiply(e((2, 3, 1), ctx), False, e((3, 2), ctx), False, e((2, 2), ctx))
    with pytest.raises(ValueError, match="1 element"):
        ops.softmax_cross_entropy(e((2, 3), ctx), e((2, 3), ctx), e((2,), ctx))


def test_in_place_where_not_allowed(ctx):
    a = dlarray.array(np.eye(3), ctx)
    with pytest.raises(ValueError, match="in place"):
        ops.matrix_multiply(a, False, a, False, a)


@pytest.mark.parametrize("shape", [(-1,), (3, -2)])
def test_negative_shape(ctx, shape):
    with pytest.raises(ValueError, match="dimension"):
        dlarray.empty(shape, ctx)


@pytest.mark.parametrize("shape", [(2 ** 62,), (2 ** 40, 2 ** 40), (1 << 45,)])
def test_huge_shape_is_memory_error(ctx, shape):
    with pytest.raises(MemoryError):
        dlarray.empty(shape, ctx)
    a = dlarray.array([1.0, 2.0], ctx)  # and the runtime still works
    np.testing.assert_array_equal(a.asnumpy(), [1.0, 2.0])


def test_bad_shape_types():
    with pytest.raises(TypeError, match="integers"):
        dlarray.empty((2.5, 3))
    with pytest.raises(TypeError, match="shape"):
        dlarray.empty("abc")


def test_non_float32_and_non_contiguous_input_is_converted(ctx):
    x64 = np.arange(12, dtype=np.float64).reshape(3, 4) / 7
    a = dlarray.array(x64, ctx)
    assert a.dtype == np.float32
    np.testing.assert_allclose(a.asnumpy(), x64.astype(np.float32))
    xi = np.arange(6, dtype=np.int64).reshape(2, 3)
    np.testing.assert_array_equal(dlarray.array(xi, ctx).asnumpy(), xi.astype(np.float32))
    strided = np.arange(40, dtype=np.float32).reshape(5, 8)[::2, 1::3]
    assert not strided.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(dlarray.array(strided, ctx).asnumpy(), strided)
    fortran = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = dlarray.empty((2, 3), ctx)
    b[:] = fortran
    np.testing.assert_array_equal(b.asnumpy(), fortran)
    np.testing.assert_array_equal(dlarray.array([[1, 2], [3, 4]], ctx).asnumpy(), [[1, 2], [3, 4]])


def test_non_float32_arrays_are_refused_by_ops(ctx):
    a = dlarray.empty((4,), ctx, dtype="int32")
    b = dlarray.empty((4,), ctx)
    with pytest.raises(TypeError, match="int32"):
        ops.relu(a, b)


def test_setitem_shape_mismatch(ctx):
    a = dlarray.empty((2, 3), ctx)
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        a[:] = np.zeros((3, 2))
    with pytest.raises(ValueError, match=r"\(3,\)"):
        a[0] = np.zeros(2)


def test_wrong_argument_types(ctx):
    a = dlarray.empty((2,), ctx)
    with pytest.raises(TypeError):
        ops.relu(np.zeros(2, np.float32), a)
    with pytest.raises(TypeError):
        ops.matrix_elementwise_add_by_const(a, "x", a)
    with pytest.raises(TypeError):
        a.copyto(3.5)
    with pytest.raises(ValueError, match="unknown device type 'tpu'"):
        a.copyto("tpu")


def test_none_operands(ctx):
    a = dlarray.empty((2,), ctx)
    with pytest.raises(TypeError):
        ops.relu(None, a)
    with pytest.raises(TypeError, match="got None"):
        ops.invoke("relu", [None], [a])
    with pytest.raises(TypeError, match="got None"):
        ops.invoke("relu", [a], [None])


def test_device_id_out_of_range():
    with pytest.raises(ValueError, match=r"cpu\(3\) does not exist"):
        dlarray.empty((2,), dlarray.cpu(3))
    if any(c.device_type == 2 for c in dlarray.devices()):
        n = sum(c.device_type == 2 for c in dlarray.devices())
        with pytest.raises(ValueError, match=rf"cuda\({n}\) does not exist"):
            dlarray.empty((2,), dlarray.gpu(n))


def test_gpu_without_cuda_plugin_raises_the_stored_reason():
    if any(c.device_type == 2 for c in dlarray.devices()):
        pytest.skip("a GPU is usable here")
    with pytest.raises(RuntimeError, match=r"cuda\(0\)") as info:
        dlarray.empty((2,), dlarray.gpu(0))
    msg = str(info.value)
    cuda = [p for p in dlarray.plugins() if p["name"] == "cuda"]
    if cuda:  # installed but unusable (no driver): its status and reason are in the message
        assert cuda[0]["reason"] in msg
        assert cuda[0]["status"] in msg
    else:
        assert "cuda_backend.so" in msg
    with pytest.raises(RuntimeError, match=r"cuda\(0\)"):
        dlarray.array(np.ones(3), dlarray.gpu(0))
    a = dlarray.array(np.ones(3))  # the cpu still works
    with pytest.raises(RuntimeError, match=r"cuda\(0\)"):
        a.copyto(dlarray.gpu(0))


def test_unknown_plugin_op():
    with pytest.raises(AttributeError, match="no op 'no_such_op'"):
        ops.no_such_op  # noqa: B018
    with pytest.raises(ValueError, match="unknown op"):
        ops.invoke("no_such_op", [], [dlarray.empty((1,))])
