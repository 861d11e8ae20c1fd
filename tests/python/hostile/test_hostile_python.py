"""Hostile use of the Python API: bad shapes, dtypes, contexts, operands, keys, values, attributes
and objects that were never initialised. Each case must raise the expected exception with a
message naming the problem, or compute what NumPy computes; nothing may crash. The cases run in
one child interpreter (a crash there fails the cases after it, not the session)."""
import copy
import math
import pickle

import numpy as np
import pytest

import dlarray
import proc_util
from hostile_util import raises
from dlarray import ops


class Index:
    def __init__(self, v):
        self.v = v

    def __index__(self):
        if isinstance(self.v, BaseException):
            raise self.v
        return self.v


CASES = {}

# --- shapes --------------------------------------------------------------------------------
BAD_SHAPES = {
    "none": (None, TypeError, "shape"),
    "string": ("abc", TypeError, "shape"),
    "bytes": (b"ab", TypeError, "shape"),
    "float": (1.5, TypeError, "shape"),
    "float_entry": ([2, 1.5], TypeError, "integers"),
    "nested": ([[1, 2]], TypeError, "integers"),
    "negative": ((-1,), ValueError, "dimension"),
    "huge_positive": ((2**70,), ValueError, "dimension"),
    "huge_negative": ((-2**70,), ValueError, "dimension"),
    "uint64_max": ([np.uint64(2**64 - 1)], ValueError, "dimension"),
    "int64_max_plus_1": ((2**63,), ValueError, "dimension"),
    "int64_min": ((-2**63,), ValueError, "dimension"),
    "product_overflow": ((2**62, 2**62), MemoryError, "too large"),
    "larger_than_memory": ((2**44,), MemoryError, "cannot allocate"),
    "dims_65": ((1,) * 65, ValueError, "64"),
    "index_raises": ((Index(ZeroDivisionError("boom")),), ZeroDivisionError, "boom"),
    "index_negative": ((Index(-3),), ValueError, "dimension"),
    "dict": ({"a": 1}, TypeError, "shape"),
}
for _name, (_shape, _exc, _word) in BAD_SHAPES.items():
    CASES[f"empty_shape_{_name}"] = (lambda s=_shape, e=_exc, w=_word:
                                     raises(e, lambda: dlarray.empty(s), w))


def _good_shapes():
    for shape, want in [(np.int64(3), (3,)), ((np.int32(2), 3), (2, 3)), ((), ()),
                        ((0,), (0,)), ((3, 0, 2), (3, 0, 2)),  # zero-size arrays (issue 10)
                        ([1] * 64, (1,) * 64), ((Index(4),), (4,)), (range(1, 4), (1, 2, 3))]:
        assert dlarray.empty(shape).shape == want


CASES["empty_good_shapes"] = _good_shapes

# --- dtypes --------------------------------------------------------------------------------
for _dt in [np.clongdouble, "U3", "S2", object, "datetime64[s]", "timedelta64[s]", "V4",
            np.longdouble]:
    CASES[f"empty_dtype_{np.dtype(_dt).name}"] = (
        lambda d=_dt: raises(TypeError, lambda: dlarray.empty((2,), dtype=d), "dtype"))
CASES["empty_dtype_not_a_dtype"] = lambda: raises(TypeError, lambda: dlarray.empty(
    (2,), dtype="no_such_type"))

# --- contexts ------------------------------------------------------------------------------
BAD_CONTEXTS = {
    "unknown_string": ("tpu", ValueError, "tpu"),  # "cpu", "cuda:1" ... are devices (issue 10)
    "bad_id_string": ("cpu:x", ValueError, "cpu:x"),
    "int": (0, TypeError, ""),
    "float": (1.5, TypeError, ""),
    "cpu5": (dlarray.cpu(5), ValueError, "cpu(5)"),
    "gpu7": (dlarray.gpu(7), (RuntimeError, ValueError), "cuda(7)"),
    "type99": (dlarray.DLContext(0, 99), ValueError, "device type 99 is not a device type"),
    "type0": (dlarray.DLContext(0, 0), ValueError, "device type 0 is not a device type"),
    "negative_id": (dlarray.DLContext(-1, 1), ValueError, "cpu(-1)"),
}
for _name, (_ctx, _exc, _word) in BAD_CONTEXTS.items():
    CASES[f"empty_ctx_{_name}"] = (lambda c=_ctx, e=_exc, w=_word:
                                   raises(e, lambda: dlarray.empty((2,), c), w))
    CASES[f"array_ctx_{_name}"] = (lambda c=_ctx, e=_exc, w=_word:
                                   raises(e, lambda: dlarray.array([1.0], c), w))
for _name, _bad in {"huge_id": (2**40, 1), "string_id": ("a", 1), "float_type": (0, 1.5)}.items():
    CASES[f"dlcontext_{_name}"] = (lambda b=_bad: raises(TypeError, lambda: dlarray.DLContext(*b)))
for _fn in ("synchronize", "empty_cache", "memory_stats"):
    CASES[f"{_fn}_string"] = (lambda f=_fn: raises(ValueError, lambda: getattr(dlarray, f)("x"),
                                                   "unknown device type 'x'"))
    CASES[f"{_fn}_int"] = (lambda f=_fn: raises(TypeError, lambda: getattr(dlarray, f)(3)))
CASES["set_option_unknown"] = lambda: raises(ValueError, lambda: dlarray._core.set_option(
    dlarray.cpu(0), "no_such_option", "1"), "no_such_option")
CASES["get_option_unknown"] = lambda: raises(ValueError, lambda: dlarray._core.get_option(
    dlarray.cpu(0), "no_such_option"), "no_such_option")
CASES["matmul_precision_bad"] = lambda: raises(ValueError, lambda: dlarray.set_matmul_precision(
    "fast"), "precision")

# --- array(): data that is not numbers -----------------------------------------------------
for _name, _obj in {"none": None, "list_with_none": [1.0, None], "string": "1.5",
                    "string_list": ["1", "2"], "bytes": b"12", "dict": {"a": 1},
                    "object": object(), "object_array": np.array([None], dtype=object),
                    "complex": 1 + 2j, "complex_array": np.ones(3, np.complex64),
                    "ragged": [[1.0], [1.0, 2.0]], "set": {1.0}}.items():
    CASES[f"array_of_{_name}"] = (lambda o=_obj: raises((TypeError, ValueError),
                                                        lambda: dlarray.array(o)))


def _array_good_inputs():
    for obj, want in [(True, np.float32(1)), ([1, 2], [1, 2]), (np.float64(2.5), 2.5),
                      (np.arange(6, dtype=np.int64).reshape(2, 3)[:, ::2], [[0, 2], [3, 5]]),
                      (np.float16(3), 3.0), (memoryview(np.ones(2, np.float32)), [1, 1])]:
        np.testing.assert_array_equal(dlarray.array(obj).asnumpy(), np.asarray(want, np.float32))


CASES["array_good_inputs"] = _array_good_inputs

# --- arr[:] = value, keys and values -------------------------------------------------------
# Basic indexing keys (ints, slices, tuples, None) select views (issue 10); lists and arrays are
# index arrays (NumPy's rules, tests/python/test_api_index_mixed.py); the rest is refused.
for _name, _key in {"string": "x", "list_of_strings": ["0"], "float": 1.5, "too_many": (0, 0, 0),
                    "out_of_range": 5, "list_out_of_range": [0, 2]}.items():
    CASES[f"setitem_key_{_name}"] = (lambda k=_key: raises(
        (ValueError, TypeError, IndexError), lambda: dlarray.empty((2, 2)).__setitem__(k, 1.0)))
for _name, _value in {"none": None, "string": "1", "object": object(), "complex": 1j,
                      "wrong_shape": np.ones((3, 3)), "list_with_none": [None, 1.0]}.items():
    CASES[f"setitem_value_{_name}"] = (lambda v=_value: raises(
        (TypeError, ValueError), lambda: dlarray.empty((2, 2)).__setitem__(slice(None), v)))


def _setitem_good():
    a = dlarray.empty((2, 3))
    a[:] = 7
    np.testing.assert_array_equal(a.asnumpy(), np.full((2, 3), 7, np.float32))
    a[...] = np.arange(3)                     # broadcast
    np.testing.assert_array_equal(a.asnumpy(), np.tile(np.arange(3, dtype=np.float32), (2, 1)))
    a[()] = np.float64(1.5)
    np.testing.assert_array_equal(a.asnumpy(), np.full((2, 3), 1.5, np.float32))
    a[:] = a                                  # itself
    np.testing.assert_array_equal(a.asnumpy(), np.full((2, 3), 1.5, np.float32))


CASES["setitem_good"] = _setitem_good

# --- copyto ---------------------------------------------------------------------------------
for _name, _target in {"string": "tpu", "none": None, "int": 1,
                       "other_shape": dlarray.empty((3,)), "numpy": np.empty(2, np.float32),
                       "other_dtype": dlarray.empty((2,), dtype="int32")}.items():
    CASES[f"copyto_{_name}"] = (lambda t=_target: raises(
        (TypeError, ValueError), lambda: dlarray.empty((2,)).copyto(t)))

# --- ops with bad operands ------------------------------------------------------------------
OPS = {  # op: arguments with NDArray placeholders "A" (2, 2) and scalars
    "array_set": ["A", 1.0], "broadcast_to": ["A", "A"], "reduce_sum_axis_zero": ["A", "B"],
    "matrix_elementwise_add": ["A", "A", "A"], "matrix_elementwise_add_by_const": ["A", 1.0, "A"],
    "matrix_elementwise_multiply": ["A", "A", "A"],
    "matrix_elementwise_multiply_by_const": ["A", 1.0, "A"],
    "matrix_multiply": ["A", False, "A", False, "C"], "relu": ["A", "A"],
    "relu_gradient": ["A", "A", "A"], "softmax": ["A", "A"],
    "softmax_cross_entropy": ["A", "A", "O"], "copy": ["A", "A"],
}


def _op_args(op, bad_at=None, bad=None):
    made = {"A": lambda: dlarray.array(np.arange(4, dtype=np.float32).reshape(2, 2)),
            "B": lambda: dlarray.empty((2,)), "C": lambda: dlarray.empty((2, 2)),
            "O": lambda: dlarray.empty((1,))}
    args = [made[a]() if isinstance(a, str) else a for a in OPS[op]]
    if bad_at is not None:
        args[bad_at] = bad
    return args


for _op, _spec in OPS.items():
    _arrays = [i for i, a in enumerate(_spec) if isinstance(a, str)]
    for _bad_name, _bad in {"none": None, "numpy": np.zeros((2, 2), np.float32), "int": 3,
                            "int32_array": "int32"}.items():
        # None in an output's place is its default (allocate): None as an input is refused
        _pos = _arrays[-1] if _bad_name == "int32_array" else _arrays[0]
        if _bad_name == "int32_array" and len(_arrays) == 1:
            continue  # array_set fills any dtype (issue 10): no operand to disagree with

        def _case(op=_op, pos=_pos, bad=_bad):
            if isinstance(bad, str):
                bad = dlarray.empty((2, 2) if op != "softmax_cross_entropy" else (1,), dtype=bad)
            raises(TypeError, lambda: getattr(ops, op)(*_op_args(op, pos, bad)))
        CASES[f"op_{_op}_{_bad_name}"] = _case

for _name, _value in {"string": "1", "none": None, "complex": 1j}.items():
    CASES[f"scalar_{_name}"] = (lambda v=_value: raises(TypeError, lambda: ops.array_set(
        dlarray.empty((2,)), v)))
for _name, _value in {"1e300": 1e300, "-1e39": -1e39}.items():
    CASES[f"scalar_overflow_{_name}"] = (lambda v=_value: raises(ValueError, lambda: ops.array_set(
        dlarray.empty((2,)), v), "float32"))
for _name, _flag in {"none": None, "string": "yes", "float": 1.0, "two": 2, "nan": math.nan,
                     "list": [True]}.items():
    CASES[f"matmul_flag_{_name}"] = (lambda f=_flag: raises((TypeError, ValueError), lambda: (
        ops.matrix_multiply(*_op_args("matrix_multiply", 1, f))), "trans"))

# --- invoke ---------------------------------------------------------------------------------
CASES["invoke_unknown"] = lambda: raises(ValueError, lambda: ops.invoke("nope", [], []), "nope")
CASES["invoke_counts"] = lambda: raises(ValueError, lambda: ops.invoke(
    "relu", [dlarray.empty((2,))] * 2, [dlarray.empty((2,))]), "takes 1 input")
CASES["invoke_none_operand"] = lambda: raises(TypeError, lambda: ops.invoke(
    "relu", [None], [dlarray.empty((2,))]))
CASES["invoke_string_attr"] = lambda: raises(TypeError, lambda: ops.invoke(
    "array_set", [], [dlarray.empty((2,))], ["x"]))
CASES["invoke_nan_flag"] = lambda: raises(ValueError, lambda: ops.invoke(
    "matrix_multiply", [dlarray.empty((2, 2))] * 2, [dlarray.empty((2, 2))], [math.nan, 0]),
    "trans_a")
CASES["ops_unknown_attribute"] = lambda: raises(AttributeError, lambda: ops.no_such_op)

# --- NaN and infinities compute like NumPy --------------------------------------------------


def _nan_softmax():
    x = np.array([[1.0, np.nan, 2.0], [1.0, 2.0, 3.0], [np.inf, 0.0, 1.0]], np.float32)
    a, y = dlarray.array(x), dlarray.empty(x.shape)
    ops.softmax(a, y)
    got = y.asnumpy()
    assert np.isnan(got[0]).all() and np.isnan(got[2]).any()
    e = np.exp(x[1] - x[1].max())
    np.testing.assert_allclose(got[1], e / e.sum(), rtol=1e-6)


def _nan_cross_entropy():
    y = np.array([[1.0, np.nan], [0.0, 1.0]], np.float32)
    out = dlarray.empty((1,))
    ops.softmax_cross_entropy(dlarray.array(y), dlarray.array(np.eye(2, dtype=np.float32)), out)
    assert np.isnan(out.asnumpy()[0])


def _nan_large_softmax():
    # A row long enough for the vector path, NaN at every lane position of the first row.
    x = np.random.default_rng(0).standard_normal((4, 4099)).astype(np.float32)
    x[0, ::7] = np.nan
    y = dlarray.empty(x.shape)
    ops.softmax(dlarray.array(x), y)
    got = y.asnumpy()
    assert np.isnan(got[0]).all() and np.isfinite(got[1:]).all()


CASES.update({"nan_softmax": _nan_softmax, "nan_cross_entropy": _nan_cross_entropy,
              "nan_large_softmax": _nan_large_softmax})

# --- objects never initialised --------------------------------------------------------------


def _uninitialised(fn, word):
    def case():
        n = dlarray.NDArray.__new__(dlarray.NDArray)
        raises(TypeError, lambda: fn(n), word)
    return case


UNINITIALISED_USES = {
    "shape": (lambda n: n.shape, "__new__"),
    "asnumpy": (lambda n: n.asnumpy(), "__new__"),
    "repr": (repr, "__new__"),
    "relu": (lambda n: ops.relu(n, n), "__new__"),
    "deepcopy": (copy.deepcopy, ""),
    "setitem": (lambda n: n.__setitem__(slice(None), 1), "__new__"),
}
for _name, (_fn, _word) in UNINITIALISED_USES.items():
    CASES[f"uninitialised_ndarray_{_name}"] = _uninitialised(_fn, _word)


def _uninitialised_context():
    c = dlarray.DLContext.__new__(dlarray.DLContext)
    for use in (lambda: c.device_id, lambda: repr(c), lambda: hash(c),
                lambda: dlarray.empty((1,), c), lambda: pickle.dumps(c)):
        raises(TypeError, use, "__new__")


CASES["uninitialised_context"] = _uninitialised_context
def _ndarray_pickle():
    x = dlarray.array([1.0, 2.0])
    y = pickle.loads(pickle.dumps(x))  # a host copy; the device is kept (issue 10)
    assert y.ctx == x.ctx
    np.testing.assert_array_equal(y.asnumpy(), [1.0, 2.0])


CASES["ndarray_pickle"] = _ndarray_pickle
CASES["ndarray_init"] = lambda: raises(TypeError, lambda: dlarray.NDArray())
CASES["len_of_0d"] = lambda: raises(TypeError, lambda: len(dlarray.empty(())))


@pytest.fixture(scope="module")
def outcome():
    return proc_util.run_cases(__file__, list(CASES))


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_python(outcome, name):
    proc_util.check_case(outcome, name)
