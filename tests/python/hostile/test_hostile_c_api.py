"""Hostile calls to the C API through ctypes: every entry point with null, freed and forged
handles and with caller-made arrays broken in one field each, in every operand position; bad
arguments to alloc, invoke and the rest. Each call must return -1 with a message naming the
problem and leave the other operands untouched. The cases run in one child interpreter."""
import ctypes

import numpy as np
import pytest

import proc_util
from capi_util import (CPU, FLOAT32, LIB, DLArrayDType, DLContext, Handle, HostArray, address,
                       alloc, check_call, from_numpy, invoke, last_error, to_numpy)

# Entry points: (name, number of handles, builds the argument list from the handles).
F = ctypes.c_float
ENTRIES = {
    "DLArraySet": (1, lambda h: (h[0], F(1.0))),
    "DLArrayBroadcastTo": (2, lambda h: (h[0], h[1])),
    "DLArrayReduceSumAxisZero": (2, lambda h: (h[0], h[1])),
    "DLArrayMatrixElementwiseAdd": (3, lambda h: (h[0], h[1], h[2])),
    "DLArrayMatrixElementwiseAddByConst": (2, lambda h: (h[0], F(2.0), h[1])),
    "DLArrayMatrixElementwiseMultiply": (3, lambda h: (h[0], h[1], h[2])),
    "DLGpuMatrixMultiplyByConst": (2, lambda h: (h[0], F(2.0), h[1])),
    "DLArrayMatrixMultiply": (3, lambda h: (h[0], 0, h[1], 0, h[2])),
    "DLArrayRelu": (2, lambda h: (h[0], h[1])),
    "DLArrayReluGradient": (3, lambda h: (h[0], h[1], h[2])),
    "DLArraySoftmax": (2, lambda h: (h[0], h[1])),
    "DLArraySoftmaxCrossEntropy": (3, lambda h: (h[0], h[1], h[2])),
    "DLArrayCopy": (2, lambda h: (h[0], h[1])),
    "DLArrayCopyFromTo": (2, lambda h: (h[0], h[1], None)),
}

# Bad operands: each builds (handle, keep-alive, words one of which the message must contain).
BAD = {
    "null": lambda: (None, None, ["null"]),
    "freed": lambda: _freed(),
    "inside_a_handle": lambda: _inner(),
    "ndim_negative": lambda: _caller(ndim=-1, words=["ndim"]),
    "ndim_65": lambda: _caller(ndim=65, words=["ndim"]),
    "no_data": lambda: _caller(data=False, words=["no data"]),
    "zero_dim": lambda: _caller(shape=(2, 0), words=["dimension"]),
    "negative_dim": lambda: _caller(shape=(-2, 2), words=["dimension"]),
    "count_overflow": lambda: _caller(shape=(2**62, 8), words=["overflow"]),
    "float24": lambda: _caller(dtype=(2, 24, 1), words=["dtype"]),
    "two_lanes": lambda: _caller(dtype=(2, 32, 2), words=["dtype"]),
    "cpu5": lambda: _caller(ctx=(1, 5), words=["cpu(5)", "different devices"]),
    "device_type_99": lambda: _caller(ctx=(99, 0), words=["device_type_99", "different devices"]),
    "strided": lambda: _caller(shape=(2, 2), strides=(1, 2), words=["compact", "strides"]),
    "misaligned": lambda: _caller(byte_offset=1, words=["aligned"]),
}


def _freed():
    h = alloc((2, 2))
    check_call(LIB.DLArrayFree(h))
    return h, None, ["freed"]


def _inner():
    h = alloc((2, 2))
    return ctypes.cast(address(h) + 16, Handle), h, ["not a handle", "handle"]


def _caller(shape=(2, 2), words=(), **kw):
    arr = HostArray(np.zeros(64, np.float32), shape=shape,
                    **{k: (DLArrayDType(*v) if k == "dtype" else DLContext(*v) if k == "ctx" else v)
                       for k, v in kw.items()})
    return arr.ptr, arr, list(words)


def _operand_case(entry, position, bad):
    def case():
        count, build = ENTRIES[entry]
        good = [alloc((2, 2)) for _ in range(count)]
        sentinel = np.arange(4, dtype=np.float32).reshape(2, 2)
        for g in good:
            from_numpy(g, sentinel)
        handle, keep, words = BAD[bad]()
        hs = list(good)
        hs[position] = handle
        fn = getattr(LIB, entry)
        rc = fn(*build(hs))
        msg = last_error()
        assert rc == -1, f"{entry} accepted a {bad} operand at {position}"
        assert any(w in msg for w in words), msg
        for i, g in enumerate(good):
            if i != position:
                np.testing.assert_array_equal(to_numpy(g, (2, 2)), sentinel)
        for g in good:
            check_call(LIB.DLArrayFree(g))
        del keep
    return case


CASES = {}
for _entry, (_count, _) in ENTRIES.items():
    for _pos in range(_count):
        for _bad in BAD:
            # One operand position per entry point for the caller-made variants keeps the count
            # reasonable; null, freed and forged handles go in every position.
            if _bad in ("null", "freed", "inside_a_handle") or _pos == _count - 1:
                CASES[f"{_entry}[{_pos}]={_bad}"] = _operand_case(_entry, _pos, _bad)


def _expect_fail(rc, *words):
    msg = last_error()
    assert rc == -1, "accepted"
    assert msg and any(w in msg for w in words), msg


def _alloc_case(shape, ndim=None, dtype=FLOAT32, ctx=CPU, out=True, words=()):
    def case():
        h = Handle()
        arr = None if shape is None else (ctypes.c_int64 * max(1, len(shape)))(*shape)
        rc = LIB.DLArrayAllocEx(arr, len(shape or ()) if ndim is None else ndim, dtype, ctx,
                                ctypes.byref(h) if out else None)
        _expect_fail(rc, *words)
        assert not h, "a handle was returned on failure"
    return case


CASES.update({
    "alloc_null_out": _alloc_case((2,), out=False, words=["out is null"]),
    "alloc_null_shape": _alloc_case(None, ndim=2, words=["shape"]),
    "alloc_ndim_negative": _alloc_case((2,), ndim=-1, words=["ndim"]),
    "alloc_ndim_65": _alloc_case((1,) * 65, words=["ndim", "64"]),
    "alloc_zero_dim": _alloc_case((3, 0), words=["dimension"]),
    "alloc_negative_dim": _alloc_case((-3,), words=["dimension"]),
    "alloc_overflow": _alloc_case((2**62, 2**62), words=["too large"]),
    "alloc_larger_than_memory": _alloc_case((2**45,), words=["cannot allocate", "too large"]),
    "alloc_float24": _alloc_case((2,), dtype=DLArrayDType(2, 24, 1), words=["dtype"]),
    "alloc_float0": _alloc_case((2,), dtype=DLArrayDType(2, 0, 1), words=["dtype"]),
    "alloc_lanes4": _alloc_case((2,), dtype=DLArrayDType(2, 32, 4), words=["dtype"]),
    "alloc_code9": _alloc_case((2,), dtype=DLArrayDType(9, 32, 1), words=["dtype"]),
    "alloc_cpu3": _alloc_case((2,), ctx=DLContext(1, 3), words=["cpu(3)"]),
    "alloc_cpu_minus1": _alloc_case((2,), ctx=DLContext(1, -1), words=["cpu(-1)"]),
    "alloc_device_type_0": _alloc_case((2,), ctx=DLContext(0, 0), words=["device_type_0"]),
    "alloc_device_type_32": _alloc_case((2,), ctx=DLContext(32, 0), words=["device_type_32"]),
    "alloc_device_type_negative": _alloc_case((2,), ctx=DLContext(-5, 0), words=["device_type_-5"]),
})


def _invoke_null_op():
    a = alloc((2,))
    _expect_fail(LIB.DLArrayInvoke(None, None, 0, None, 0, None, 0), "op is null")
    check_call(LIB.DLArrayFree(a))


def _invoke_unknown_op():
    _expect_fail(invoke("no_such_op", [], []), "unknown op", "no_such_op")


def _invoke_empty_name():
    _expect_fail(invoke("", [], []), "unknown op")


def _invoke_null_lists():
    _expect_fail(LIB.DLArrayInvoke(b"relu", None, 1, None, 1, None, 0), "null operand list")


def _invoke_null_attrs():
    a, b = alloc((2, 2)), alloc((2, 2))
    _expect_fail(LIB.DLArrayInvoke(b"array_set", None, 0,
                                   (Handle * 1)(a), 1, None, 1), "null attribute list")
    for h in (a, b):
        check_call(LIB.DLArrayFree(h))


def _invoke_counts(nin, nout, nattr):
    def case():
        a = alloc((2, 2))
        ins = [a] * nin
        outs = [a] * nout
        _expect_fail(invoke("relu", ins, outs, [0.0] * nattr), "takes 1 input")
        check_call(LIB.DLArrayFree(a))
    return case


def _invoke_huge_counts():
    a = alloc((2,))
    # The counts are refused before the (one-element) lists are read past their end.
    _expect_fail(invoke("relu", [a], [a], num_inputs=1 << 30), "takes 1 input")
    _expect_fail(invoke("relu", [a], [a], num_outputs=-(1 << 30)), "negative")
    check_call(LIB.DLArrayFree(a))


def _invoke_bad_flags():
    a, c = alloc((2, 2)), alloc((2, 2))
    for flags in ([float("nan"), 0.0], [0.0, 2.0], [-1.0, 0.0], [float("inf"), 1.0]):
        _expect_fail(invoke("matrix_multiply", [a, a], [c], flags), "trans_")
    for h in (a, c):
        check_call(LIB.DLArrayFree(h))


def _set_value_out_of_range():
    a = alloc((3,))
    _expect_fail(invoke("array_set", [], [a], [1e300]), "float32")
    _expect_fail(invoke("matrix_elementwise_add_by_const", [a], [a], [-1e39]), "float32")
    check_call(LIB.DLArrayFree(a))


def _error_kinds():
    a, b = alloc((2,)), alloc((3,))
    assert LIB.DLArrayRelu(a, b) == -1 and LIB.DLGetLastErrorKind() == 1
    odd = HostArray(np.zeros(4, np.float32), dtype=DLArrayDType(2, 24, 1))
    assert LIB.DLArrayCopyFromTo(odd.ref, odd.ref, None) == -1 and LIB.DLGetLastErrorKind() == 2
    h = Handle()
    assert LIB.DLArrayAlloc((ctypes.c_int64 * 1)(2**45), 1, CPU, ctypes.byref(h)) == -1
    assert LIB.DLGetLastErrorKind() == 3
    for x in (a, b):
        check_call(LIB.DLArrayFree(x))


def _misc():
    _expect_fail(LIB.DLArrayDeviceCount(1, None), "out is null")
    n = ctypes.c_int(-1)
    check_call(LIB.DLArrayDeviceCount(-7, ctypes.byref(n)))
    assert n.value == 0
    check_call(LIB.DLArrayDeviceCount(1 << 30, ctypes.byref(n)))
    assert n.value == 0
    _expect_fail(LIB.DLArraySynchronize(DLContext(1, 9)), "cpu(9)")
    _expect_fail(LIB.DLArraySynchronize(DLContext(77, 0)), "device_type_77")
    _expect_fail(LIB.DLArrayLoadPlugin(None), "path is null")
    _expect_fail(LIB.DLArrayLoadPlugin(b""), "empty")
    _expect_fail(LIB.DLArrayFree(ctypes.cast(ctypes.c_void_p(16), Handle)), "not made by")


def _many_double_frees():
    hs = [alloc((4,)) for _ in range(100)]
    for h in hs:
        check_call(LIB.DLArrayFree(h))
    fresh = [alloc((4,)) for _ in range(100)]
    for h in fresh:
        from_numpy(h, np.full(4, 5, np.float32))
    for h in hs:
        _expect_fail(LIB.DLArrayFree(h), "already freed")
        _expect_fail(LIB.DLArraySet(h, 1.0), "freed")
    for h in fresh:
        np.testing.assert_array_equal(to_numpy(h, (4,)), np.full(4, 5, np.float32))
        check_call(LIB.DLArrayFree(h))


def _caller_array_round_trip():
    # A caller-made array with a byte offset and compact strides is fine.
    x = np.arange(12, dtype=np.float32)
    view = HostArray(x, shape=(2, 4), byte_offset=16, strides=(4, 1))
    h = alloc((2, 4))
    check_call(LIB.DLArrayCopyFromTo(view.ref, h, None))
    np.testing.assert_array_equal(to_numpy(h, (2, 4)), x[4:].reshape(2, 4))
    check_call(LIB.DLArrayFree(h))


CASES.update({
    "invoke_null_op": _invoke_null_op,
    "invoke_unknown_op": _invoke_unknown_op,
    "invoke_empty_name": _invoke_empty_name,
    "invoke_null_lists": _invoke_null_lists,
    "invoke_null_attrs": _invoke_null_attrs,
    "invoke_2_inputs": _invoke_counts(2, 1, 0),
    "invoke_0_inputs": _invoke_counts(0, 1, 0),
    "invoke_2_outputs": _invoke_counts(1, 2, 0),
    "invoke_0_outputs": _invoke_counts(1, 0, 0),
    "invoke_1_attr": _invoke_counts(1, 1, 1),
    "invoke_huge_counts": _invoke_huge_counts,
    "invoke_bad_flags": _invoke_bad_flags,
    "set_value_out_of_range": _set_value_out_of_range,
    "error_kinds": _error_kinds,
    "misc": _misc,
    "many_double_frees": _many_double_frees,
    "caller_array_round_trip": _caller_array_round_trip,
})


@pytest.fixture(scope="module")
def outcome():
    return proc_util.run_cases(__file__, list(CASES))


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_c_api(outcome, name):
    proc_util.check_case(outcome, name)
