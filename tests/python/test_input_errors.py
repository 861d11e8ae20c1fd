"""Objects that were never initialised, silent conversions and unclear errors (issue 14)."""
import copy
import math
import os
import pickle

import numpy as np
import pytest

import dlarray
import proc_util
from dlarray import ops


# --- NDArray.__new__ / DLContext.__new__: objects whose every use must raise, never crash ----

NDARRAY_USES = {
    "shape": lambda n: n.shape, "ctx": lambda n: n.ctx, "dtype": lambda n: n.dtype,
    "size": lambda n: n.size, "ndim": lambda n: n.ndim, "nbytes": lambda n: n.nbytes,
    "data_ptr": lambda n: n.data_ptr, "asnumpy": lambda n: n.asnumpy(),
    "array": lambda n: np.asarray(n), "repr": repr, "len": len,
    "copyto ctx": lambda n: n.copyto(dlarray.cpu(0)),
    "copyto array": lambda n: n.copyto(dlarray.empty((2,))),
    "copy into": lambda n: dlarray.empty((2,)).copyto(n),
    "setitem": lambda n: n.__setitem__(slice(None), 1.0),
    "set from": lambda n: dlarray.empty((2,)).__setitem__(slice(None), n),
    "relu in": lambda n: ops.relu(n, dlarray.empty((2,))),
    "relu out": lambda n: ops.relu(dlarray.empty((2,)), n),
    "invoke": lambda n: ops.invoke("relu", [n], [n]),
    "array of": lambda n: dlarray.array(n),
    "copy.copy": copy.copy, "pickle": pickle.dumps,
}


@pytest.fixture(scope="module")
def uninitialised_uses():
    """Every use of an NDArray made by NDArray.__new__, in one child (on failure it crashes)."""
    r = proc_util.run("""
import dlarray
import test_input_errors as t
try:
    n = dlarray.NDArray.__new__(dlarray.NDArray)
except TypeError as e:
    print("new refused:", e)
    raise SystemExit
for name in sorted(t.NDARRAY_USES):
    print("trying", name, flush=True)
    try:
        t.NDARRAY_USES[name](n)
    except (TypeError, ValueError, RuntimeError) as e:
        print("use", name, "raised", type(e).__name__, e, flush=True)
    else:
        print("use", name, "NO ERROR", flush=True)
""", timeout=60, env={"PYTHONPATH": os.pathsep.join(
        [os.path.dirname(os.path.abspath(__file__))] +
        os.environ.get("PYTHONPATH", "").split(os.pathsep))})
    return r


@pytest.mark.parametrize("use", sorted(NDARRAY_USES))
def test_uninitialised_ndarray_raises(uninitialised_uses, use):
    r = uninitialised_uses
    if "new refused" in r.stdout:
        return
    assert f"use {use} raised" in r.stdout, r
    assert f"use {use} NO ERROR" not in r.stdout and r.returncode == 0, r


def test_uninitialised_dlcontext_raises():
    try:
        c = dlarray.DLContext.__new__(dlarray.DLContext)
    except TypeError:
        return
    for use in (lambda: c.device_id, lambda: c.device_type, lambda: repr(c), lambda: hash(c),
                lambda: c == dlarray.cpu(0), lambda: dlarray.empty((2,), c),
                lambda: pickle.dumps(c), lambda: dlarray.synchronize(c)):
        with pytest.raises(TypeError):
            use()


def test_subclass_without_init_cannot_be_used():
    r = proc_util.run("""
import dlarray


class Sub(dlarray.NDArray):
    pass


for make in (lambda: Sub(), lambda: Sub.__new__(Sub).shape, lambda: Sub.__new__(Sub).asnumpy()):
    try:
        make()
    except TypeError as e:
        print("raised", e)
    else:
        print("NO ERROR")
""")
    assert r.returncode == 0 and r.stdout.count("raised") == 3, r


def test_contexts_still_construct_and_pickle():
    c = dlarray.DLContext(0, 1)
    assert c == dlarray.cpu(0)
    assert pickle.loads(pickle.dumps(c)) == c
    assert copy.copy(c) == c


# --- silent conversions ---------------------------------------------------------------------

@pytest.mark.parametrize("obj", [None, [1.0, None], "abc", ["1", "2"], {"a": 1}, object(),
                                 np.array([None, 1.0], dtype=object), b"12"])
def test_array_rejects_non_numeric(ctx, obj):
    with pytest.raises(TypeError, match="array"):
        dlarray.array(obj, ctx)


@pytest.mark.parametrize("value", [None, [None, 1.0], "1.5", object()])
def test_setitem_rejects_non_numeric(ctx, value):
    a = dlarray.array(np.arange(2, dtype=np.float32), ctx)
    with pytest.raises(TypeError):
        a[:] = value
    np.testing.assert_array_equal(a.asnumpy(), [0, 1])


@pytest.mark.parametrize("flag", [None, "yes", 1.5, float("nan"), [], np.float32(1.0)])
def test_matmul_transpose_flags_must_be_bools(ctx, flag):
    a, b, c = dlarray.empty((2, 2), ctx), dlarray.empty((2, 2), ctx), dlarray.empty((2, 2), ctx)
    with pytest.raises(TypeError, match="trans"):
        ops.matrix_multiply(a, flag, b, False, c)
    with pytest.raises(TypeError, match="trans"):
        ops.matrix_multiply(a, False, b, flag, c)


@pytest.mark.parametrize("flag,expect", [(True, True), (False, False), (np.bool_(True), True),
                                         (1, True), (0, False)])
def test_matmul_transpose_flags_accepted(ctx, flag, expect):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a, c = dlarray.array(x, ctx), dlarray.empty((3, 3) if expect else (2, 2), ctx)
    ops.matrix_multiply(a, flag, a, not expect, c)
    ref = x.T @ x if expect else x @ x.T
    np.testing.assert_allclose(c.asnumpy(), ref)


@pytest.mark.parametrize("attrs", [[math.nan, 0.0], [0.0, math.nan], [2.0, 0.0], [0.5, 0.0],
                                   [math.inf, 0.0], [-1.0, 0.0]])
def test_matmul_transpose_attributes_must_be_0_or_1(ctx, attrs):
    a, c = dlarray.empty((2, 2), ctx), dlarray.empty((2, 2), ctx)
    with pytest.raises(ValueError, match="trans_"):
        ops.invoke("matrix_multiply", [a, a], [c], attrs)


@pytest.mark.parametrize("value", [1e300, -1e300, 3.5e38, -1e39, float(np.finfo(np.float64).max)])
def test_float32_attribute_overflow_is_an_error(ctx, value):
    a = dlarray.array(np.ones(3, np.float32), ctx)
    with pytest.raises(ValueError, match="float32"):
        ops.array_set(a, value)
    with pytest.raises(ValueError, match="float32"):
        ops.matrix_elementwise_add_by_const(a, value, a)
    with pytest.raises(ValueError, match="float32"):
        ops.matrix_elementwise_multiply_by_const(a, value, a)
    np.testing.assert_array_equal(a.asnumpy(), np.ones(3))


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 3.4028235e38, -3.4028235e38,
                                   1e-50])
def test_float32_attribute_inf_nan_and_edge_values_are_kept(ctx, value):
    a = dlarray.empty((3,), ctx)
    ops.array_set(a, value)
    np.testing.assert_array_equal(a.asnumpy(), np.full(3, np.float32(value)))


def test_load_plugin_path_with_nul_byte(test_plugin_dir):
    real = str(test_plugin_dir / "fake_device_plugin.so")
    with pytest.raises(ValueError, match="NUL"):
        dlarray.load_plugin(real + "\0ignored")
    with pytest.raises(ValueError, match="NUL"):
        dlarray.load_plugin("\0" + real)


def test_load_plugin_path_types(tmp_path):
    with pytest.raises(TypeError):
        dlarray.load_plugin(None)
    with pytest.raises(TypeError):
        dlarray.load_plugin(42)
    with pytest.raises(RuntimeError, match="no such file"):
        dlarray.load_plugin(tmp_path / "absent.so")           # os.PathLike is accepted
    with pytest.raises(RuntimeError, match="no such file"):
        dlarray.load_plugin(os.fsencode(tmp_path / "absent2.so"))  # so are bytes


@pytest.mark.parametrize("value", [" cpu", "cpu ", "sigmoid_ops, cpu", " all "])
def test_disable_plugins_entries_are_trimmed(value):
    r = proc_util.run("""
import dlarray
print({p["name"]: p["status"] for p in dlarray.plugins()})
""", env={"DLARRAY_DISABLE_PLUGINS": value})
    assert r.returncode == 0, r
    assert "'cpu': 'disabled'" in r.stdout, r


# --- clear errors ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(2**70,), (-2**70,), [np.uint64(2**64 - 1)], (2**63,),
                                   (3, 2**64), (-2**63 - 1,)])
def test_empty_with_out_of_range_dimension(shape):
    with pytest.raises((ValueError, OverflowError), match="dimension|shape"):
        dlarray.empty(shape)


@pytest.mark.parametrize("shape", [(2**62, 2**62), (2**40, 2**40, 2**40)])
def test_empty_with_overflowing_size(shape):
    with pytest.raises((ValueError, MemoryError), match="too large"):
        dlarray.empty(shape)


@pytest.mark.parametrize("bad", ["x", 1, 1.5, [1, 0], (1, 0), object()])
def test_context_arguments_must_be_contexts(bad):
    with pytest.raises(TypeError, match="DLContext"):
        dlarray.synchronize(bad)
    with pytest.raises(TypeError, match="DLContext"):
        dlarray.empty_cache(bad)
