"""C API: handles that stay invalid after free, operand counts checked first, caller-made arrays
validated (element-count overflow, odd dtypes, contexts out of range)."""
import ctypes
import threading

import numpy as np
import pytest

from capi_util import (CPU, FLOAT32, LIB, DLArrayDType, DLContext, Handle, HostArray, address,
                       alloc, check_call, from_numpy, invoke, last_error, to_numpy)


def test_double_free_is_an_error_even_when_the_memory_is_reused():
    for _ in range(50):
        h1 = alloc((4, 4))
        check_call(LIB.DLArrayFree(h1))
        h2 = alloc((4, 4))  # the allocator may hand out the same memory again
        from_numpy(h2, np.full((4, 4), 7, np.float32))
        assert LIB.DLArrayFree(h1) == -1, "a freed handle was accepted by DLArrayFree"
        assert "freed" in last_error()
        assert LIB.DLArraySet(h1, 1.0) == -1, "a stale handle was written through"
        assert "freed" in last_error()
        np.testing.assert_array_equal(to_numpy(h2, (4, 4)), np.full((4, 4), 7, np.float32))
        check_call(LIB.DLArrayFree(h2))
        assert LIB.DLArrayFree(h2) == -1


def test_handles_are_never_reused_while_the_table_lives():
    seen = set()
    for _ in range(2000):
        h = alloc((3,))
        assert address(h) not in seen
        seen.add(address(h))
        check_call(LIB.DLArrayFree(h))


def test_handle_reads_like_the_seed():
    # The seed's ndarray.py reads shape, ndim and ctx through handle.contents.
    h = alloc((5, 7, 2))
    c = h.contents
    assert c.ndim == 3 and [c.shape[i] for i in range(3)] == [5, 7, 2]
    assert (c.ctx.device_type, c.ctx.device_id) == (1, 0)
    assert (c.dtype.code, c.dtype.bits, c.dtype.lanes) == (2, 32, 1)
    check_call(LIB.DLArrayFree(h))
    assert h.contents.ndim == 0 and not h.contents.shape, "a freed handle still describes an array"


def test_handle_pointing_inside_a_live_handle_is_rejected():
    h = alloc((4,))
    inner = ctypes.cast(address(h) + 8, Handle)
    assert LIB.DLArrayFree(inner) == -1
    assert LIB.DLArrayRelu(inner, h) == -1
    check_call(LIB.DLArrayFree(h))


def test_threads_freeing_the_same_handles_free_each_exactly_once():
    for _ in range(20):
        hs = [alloc((8,)) for _ in range(64)]
        results = []

        def free_all():
            results.extend(LIB.DLArrayFree(h) for h in hs)

        threads = [threading.Thread(target=free_all) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results.count(0) == len(hs) and results.count(-1) == 3 * len(hs)


def test_invoke_checks_counts_before_reading_operands():
    a, b = alloc((4,)), alloc((4,))
    # Two inputs for relu (which takes one), the second null: the count is the error.
    assert invoke("relu", [a, None], [b]) == -1
    msg = last_error()
    assert "relu: takes 1 input" in msg and "got 2 inputs" in msg, msg
    assert invoke("relu", [a], [b, None]) == -1
    assert "1 output" in last_error() and "2 outputs" in last_error(), last_error()
    assert invoke("relu", [a], [b], attrs=[1.0]) == -1
    assert "0 attributes" in last_error() and "1 attribute;" not in last_error(), last_error()
    assert last_error().endswith("1 attribute"), last_error()
    assert invoke("relu", [a], [b], num_inputs=-1) == -1
    assert "negative" in last_error(), last_error()
    check_call(invoke("relu", [a], [b]))
    for h in (a, b):
        check_call(LIB.DLArrayFree(h))


@pytest.mark.parametrize("shape", [(2**62, 4), (2**32, 2**32), (3, 2**61, 3), (2**63 - 1, 2)])
def test_caller_array_with_overflowing_element_count(shape):
    buf = np.zeros(16, np.float32)
    big = HostArray(buf, shape=shape)
    assert LIB.DLArrayRelu(big.ref, big.ref) == -1
    assert "overflow" in last_error() or "too many elements" in last_error(), last_error()
    assert LIB.DLArrayCopyFromTo(big.ref, big.ref, None) == -1
    h = alloc((16,))
    assert LIB.DLArrayCopyFromTo(big.ref, h, None) == -1
    check_call(LIB.DLArrayFree(h))


@pytest.mark.parametrize("dtype,what", [((2, 0, 1), "float0"), ((2, 24, 1), "float24"),
                                        ((2, 32, 2), "float32x2"), ((2, 32, 0), "float32x0"),
                                        ((7, 32, 1), "type32"), ((2, 4, 1), "float4"),
                                        ((0, 12, 1), "int12")])
def test_caller_array_with_unsupported_dtype_is_rejected(dtype, what):
    x, y = np.zeros(64, np.float32), np.ones(64, np.float32)
    src = HostArray(x, shape=(4,), dtype=DLArrayDType(*dtype))
    dst = HostArray(y, shape=(4,), dtype=DLArrayDType(*dtype))
    assert LIB.DLArrayCopyFromTo(src.ref, dst.ref, None) == -1
    assert what in last_error() and "dtype" in last_error(), last_error()
    assert LIB.DLArrayRelu(src.ref, dst.ref) == -1
    assert (y == 1).all()


@pytest.mark.parametrize("bad_ctx", [(1, 5), (1, -1), (0, 0), (-3, 0), (99, 0), (2**31 - 1, 0)])
def test_caller_array_with_context_out_of_range(bad_ctx):
    x, y = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    src = HostArray(x)
    dst = HostArray(y, ctx=DLContext(*bad_ctx))
    assert LIB.DLArrayCopyFromTo(src.ref, dst.ref, None) == -1, "copy into a bad context"
    assert LIB.DLArrayCopyFromTo(dst.ref, src.ref, None) == -1, "copy from a bad context"
    assert LIB.DLArrayRelu(dst.ref, dst.ref) == -1
    assert (y == 0).all()


def test_caller_array_other_broken_fields():
    x = np.zeros(8, np.float32)
    cases = [HostArray(x, ndim=-1), HostArray(x, ndim=65), HostArray(x, shape=(0,)),
             HostArray(x, shape=(-4,)), HostArray(x, data=False),
             HostArray(x, shape=(2, 4), strides=(1, 2)),
             HostArray(x, shape=(4,), byte_offset=2)]  # found by the fuzzer: misaligned floats
    good = HostArray(np.zeros(8, np.float32))
    for c in cases:
        assert LIB.DLArrayCopyFromTo(c.ref, good.ref, None) == -1
        assert LIB.DLArrayCopyFromTo(good.ref, c.ref, None) == -1
        assert LIB.DLArrayRelu(c.ref, c.ref) == -1
        assert last_error()


def test_alloc_rejects_the_same_dtypes():
    h = Handle()
    shape = (ctypes.c_int64 * 1)(4)
    for dtype in [(2, 0, 1), (2, 24, 1), (2, 32, 2), (9, 32, 1)]:
        assert LIB.DLArrayAllocEx(shape, 1, DLArrayDType(*dtype), CPU, ctypes.byref(h)) == -1
    assert LIB.DLArrayAllocEx((ctypes.c_int64 * 2)(2**62, 4), 2, FLOAT32, CPU,
                              ctypes.byref(h)) == -1
