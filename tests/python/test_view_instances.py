"""x[i, j] of exact ints (Array::Subarray) and the Python instances of the fast paths, which
NDArray's deallocation keeps for reuse (python/src/instance.cc): NumPy's elements for every dtype,
layout and key length; views sharing memory; read-only flags; DLPack of the views; memory given
back when the last view goes, however many views were cached."""
import gc
import sys
import weakref

import numpy as np
import pytest

import dlarray
from dlarray._core import NDArray
from ufunc_util import REAL, data, skip_unsupported


def _views(x, a):
    """(ours, NumPy's) pairs of the same layouts: compact, transposed, reversed, strided."""
    return [(x, a), (x.T, a.T), (x[::-1], a[::-1]), (x[..., ::2], a[..., ::2])]


@pytest.mark.parametrize("dtype", REAL + [np.complex64], ids=str)
def test_integer_keys_against_numpy(ctx, rng, dtype):
    """Every full and partial key of ints (negative ones too) on odd shapes, compact and strided
    parents: NumPy's elements, shapes and a view of the same memory."""
    dtype = np.dtype(dtype)
    skip_unsupported(ctx, dtype)
    for shape in [(1,), (5, 3), (2, 3, 4), (3, 1, 2), (1, 1, 1), (4, 0)]:
        a = data(rng, shape, dtype)
        x = dlarray.array(a, ctx, dtype=dtype)
        for ours, want in _views(x, a):
            for n in range(1, want.ndim + 1):
                for key in np.ndindex(*want.shape[:n]):  # odd axes counted from the end
                    k = tuple(int(i) - want.shape[d] * (d % 2) for d, i in enumerate(key))
                    got = ours[k]
                    assert type(got) is NDArray and got.dtype == dtype, (shape, k)
                    assert got.shape == want[k].shape, (shape, k)
                    assert got.asnumpy().tobytes() == want[k].tobytes(), (shape, k)


SLICES = [slice(None), slice(1, None), slice(None, -1), slice(None, None, -1), slice(1, 4, 2),
          slice(-2, None, -2), slice(5, 1), slice(100, None), slice(None, None, 3),
          slice(-100, 100), slice(2, 2)]


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float64, np.bool_, np.complex64],
                         ids=str)
def test_keys_ending_in_a_slice_against_numpy(ctx, rng, dtype):
    """x[a:b:c] and x[i, a:b:c] (ints then a slice: Array::Subarray with a slice): NumPy's shapes,
    elements and compactness, on compact and strided parents, empty slices included; views of
    the same memory."""
    dtype = np.dtype(dtype)
    skip_unsupported(ctx, dtype)
    for shape in [(1,), (7,), (5, 3), (2, 5, 4), (4, 0)]:
        a = data(rng, shape, dtype)
        x = dlarray.array(a, ctx, dtype=dtype)
        for ours, want in _views(x, a):
            for n in range(want.ndim):
                for head in np.ndindex(*want.shape[:n]):
                    for s in SLICES:
                        k = tuple(int(i) for i in head) + (s,)
                        got = ours[k if n else s]
                        assert type(got) is NDArray and got.dtype == dtype, (shape, k)
                        assert got.shape == want[k].shape, (shape, k)
                        assert got.asnumpy().tobytes() == want[k].tobytes(), (shape, k)
                        assert got.is_contiguous == want[k].flags.c_contiguous or \
                            want[k].size == 0, (shape, k)
    x = dlarray.array(np.zeros(6, np.float32), ctx)
    x[1::2][...] = 4.0  # writes through the sliced view
    np.testing.assert_array_equal(x.asnumpy(), [0, 4, 0, 4, 0, 4])


def test_keys_ending_in_a_slice_errors_unchanged():
    """A slice of non-ints, a zero step, too many indices: the general path's errors."""
    x = dlarray.array(np.arange(6, dtype=np.float32).reshape(3, 2))
    with pytest.raises(TypeError):
        x[1.5:]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        x[::0]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 1, 1:]
    with pytest.raises(IndexError):
        x[5, 1:]


def test_integer_key_views_share_memory(ctx):
    """Writes through x[i, j] (0-d) and x[i] show in x, also for views of views."""
    x = dlarray.array(np.zeros((3, 4), np.float32), ctx)
    want = np.zeros((3, 4), np.float32)
    x[1, 2][...] = dlarray.array(np.float32(5), ctx)
    want[1, 2] = 5
    x[-1][-1][...] = dlarray.array(np.float32(7), ctx)
    want[-1, -1] = 7
    t = x.T
    t[0, 2][...] = dlarray.array(np.float32(3), ctx)
    want[2, 0] = 3
    np.testing.assert_array_equal(x.asnumpy(), want)
    assert x[1:][0, 2].asnumpy() == 5


def test_integer_key_errors_unchanged():
    """Keys the fast path leaves to the general one: its messages."""
    x = dlarray.array(np.arange(6, dtype=np.float32).reshape(3, 2))
    cases = {(3, 0): "index 3 is out of bounds for axis 0 with size 3",
             (0, -3): "index -3 is out of bounds for axis 1 with size 2",
             (0, 0, 0): "too many indices for an NDArray of 2 dimensions: 3 were given",
             (2**63, 0): "does not fit a 64-bit integer"}
    for key, message in cases.items():
        with pytest.raises(IndexError, match=message):
            x[key]
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 1 with size 0"):
        dlarray.array(np.zeros((4, 0), np.float32))[1, 0]
    with pytest.raises(TypeError):
        x[True, 0]
    assert x[np.int64(1), 0].asnumpy() == 2  # not an exact int: the general path


def test_read_only_views(ctx):
    """A read-only array's x[i, j] is read-only too."""
    if ctx.device_type != dlarray.cpu(0).device_type:
        pytest.skip("read-only arrays come from host memory")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    a.flags.writeable = False
    x = dlarray.asarray(a)
    with pytest.raises(ValueError, match="read-only"):
        x[1, 2][...] = dlarray.array(np.float32(1))
    with pytest.raises(ValueError, match="read-only"):
        x[1][0] = 1.0
    assert x[1, 2].asnumpy() == 5


def test_dlpack_of_integer_key_views(ctx):
    """__dlpack__ of x[i, j] and x[i]: NumPy reads the same memory."""
    if ctx.device_type != dlarray.cpu(0).device_type:
        pytest.skip("NumPy imports host memory only")
    x = dlarray.array(np.arange(12, dtype=np.float64).reshape(3, 4), dtype=np.float64)
    item = np.from_dlpack(x[2, 1])
    assert item.shape == () and item == 9
    row = np.from_dlpack(x.T[1])
    np.testing.assert_array_equal(row, [1, 5, 9])
    x[2, 1][...] = dlarray.array(np.float64(-1), dtype=np.float64)
    assert item == -1


def test_instances_reused_after_many_views_give_memory_back():
    """More live views than the instance cache keeps, freed and made again: every one right, and
    the memory's owner (a NumPy array) freed once the last view and array went."""
    a = np.arange(200, dtype=np.float32)
    base = sys.getrefcount(a)
    x = dlarray.asarray(a)
    assert sys.getrefcount(a) > base  # x shares a's memory
    views = [x[i] for i in range(200)]
    assert [float(v.asnumpy()) for v in views] == list(range(200))
    del views
    again = [x[i] for i in range(199, -1, -1)] + [x + x for _ in range(10)]
    assert [float(v.asnumpy()) for v in again[:200]] == list(range(199, -1, -1))
    np.testing.assert_array_equal(again[-1].asnumpy(), 2 * a)
    ref = weakref.ref(again[0])  # a weak reference to a reused instance
    del again
    gc.collect()
    assert ref() is None
    del x
    gc.collect()
    assert sys.getrefcount(a) == base


def test_view_freed_while_an_exception_propagates():
    """A view freed while an error is in flight (its frame unwinding) neither clears nor replaces
    the error, and the memory's owner goes with the last view."""
    a = np.arange(4, dtype=np.float32)
    base = sys.getrefcount(a)

    def fail():
        v = dlarray.asarray(a)[1]  # the only reference to the array: freed with the frame
        assert v.asnumpy() == 1
        raise KeyError("in flight")

    with pytest.raises(KeyError, match="in flight") as info:
        fail()
    del info
    gc.collect()
    assert sys.getrefcount(a) == base


def test_arrays_made_and_freed_on_other_threads(ctx):
    """Views and results made on worker threads (each thread's cache of array blocks) and freed
    on this one, and the other way round; the threads then end (their caches freed)."""
    import threading
    x = dlarray.array(np.arange(64, dtype=np.float32).reshape(8, 8), ctx)
    made = [[] for _ in range(4)]
    ours = [x[i] for i in range(8)] + [x + x for _ in range(8)]

    def work(k):
        for i in range(200):
            made[k].append((i, x[i % 8, k], x[i % 8] + x[k]))
        if k == 0:
            ours.clear()  # frees arrays the main thread made

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    for k in range(4):
        for i, item, row in made[k][-16:]:
            assert item.asnumpy() == a[i % 8, k]
            np.testing.assert_array_equal(row.asnumpy(), a[i % 8] + a[k])
    made.clear()
    assert float(x[7, 7].asnumpy()) == 63


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.bool_, np.complex64], ids=str)
def test_assignment_broadcasts_an_array_value(ctx, rng, dtype):
    """x[key] = y with y of another shape that broadcasts (NumPy's rules): rows, columns, 0-d
    values, strided targets and sources, a source that is a view of the target, a source on
    another device; a shape that does not broadcast names both."""
    dtype = np.dtype(dtype)
    skip_unsupported(ctx, dtype)
    a = data(rng, (5, 4, 3), dtype)
    cases = [((slice(1, 3),), (4, 3)), ((Ellipsis,), ()), ((Ellipsis,), (3,)), ((0,), (1, 3)),
             ((slice(None, None, -2), 1), (1,)), ((slice(None), slice(None), 0), (4,)),
             ((slice(1, None), slice(None, None, 2)), (1, 2, 3)), ((slice(3, 3),), (3,))]
    for key, shape in cases:
        x = dlarray.array(a, ctx, dtype=dtype)
        want = a.copy()
        v = data(rng, (2,) + shape, dtype)[::2][0] if shape else data(rng, (), dtype)
        want[key] = v
        x[key] = dlarray.array(v, ctx, dtype=dtype)
        assert x.asnumpy().tobytes() == want.tobytes(), (key, shape)
        if shape:  # a strided source of the same values
            w = np.repeat(np.asarray(v)[None], 2, 0)
            x[key] = dlarray.array(w, ctx, dtype=dtype)[::2][0]
            assert x.asnumpy().tobytes() == want.tobytes(), (key, shape)
    x = dlarray.array(a, ctx, dtype=dtype)
    want = a.copy()
    want[1:] = want[0]  # the value is a view of the target: read before written
    x[1:] = x[0]
    assert x.asnumpy().tobytes() == want.tobytes()
    if repr(ctx) != "cpu(0)":
        x = dlarray.array(a, ctx, dtype=dtype)
        x[2:] = dlarray.array(a[0], dtype=dtype)  # from the cpu
        want = a.copy()
        want[2:] = a[0]
        assert x.asnumpy().tobytes() == want.tobytes()
    x = dlarray.array(a, ctx, dtype=dtype)
    with pytest.raises(ValueError, match=r"\(2,\) to a target of shape \(5, 4, 3\).*broadcast"):
        x[...] = dlarray.array(np.zeros(2, dtype), ctx, dtype=dtype)
    with pytest.raises(ValueError, match="broadcast"):
        x[0] = dlarray.array(np.zeros((2, 4, 3), dtype), ctx, dtype=dtype)
