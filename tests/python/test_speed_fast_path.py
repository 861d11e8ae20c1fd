"""The operators' C++ fast path (python/src/fast_path.cc) against the general Python path it
stands in for (dlarray/_operators.py): the same dtype, values and errors for every dtype, operand
kind and shape, on every device; which calls it takes; the CPU's reused small blocks."""
import numpy as np
import pytest

import dlarray
from dlarray import _core, _operators
from dlarray._core import NDArray
from ufunc_util import BF16, REAL, data, skip_unsupported

DTYPES = REAL + [np.dtype(np.complex64), np.dtype(np.complex128)]
# 0-d, empty, one element, odd 2-D, past a thread's chunk.
SHAPES = [(), (0,), (1,), (7, 13), (65536 + 3,)]
# Python scalars of each kind the fast path reads, and those it must leave to the general path
# (bool, past the dtype's range, past 2**53, past int64, NumPy scalars).
SCALARS = [2.5, -0.0, float("nan"), float("inf"), 3, -7, 0, 127, 128, 255, 256, -129, 2**31,
           2**53, 2**53 + 1, -2**63, 2**64, True, np.float32(1.5), np.int8(3)]
METHODS = sorted(_operators._FAST_METHODS)


def _general(dunder, a, other):
    return _operators._FAST_METHODS[dunder][1](a, other)


def _outcome(fn):
    """(dtype, host values) of fn(), or (exception type, message)."""
    try:
        result = fn()
    except Exception as err:  # noqa: BLE001  (the errors are compared)
        return type(err), str(err)
    if result is NotImplemented:
        return NotImplemented
    return result.dtype, result.asnumpy()


def _same(fast, general, what):
    if isinstance(fast, tuple) and isinstance(fast[0], type):
        assert fast == general, what
        return
    assert fast is not NotImplemented and general is not NotImplemented, what
    assert fast[0] == general[0], what
    assert fast[1].shape == general[1].shape, what
    assert fast[1].tobytes() == general[1].tobytes(), what  # one op on both paths: the same bits


def _arrays(ctx, rng, shape, dtype):
    a, b = data(rng, shape, dtype), data(rng, shape, dtype)
    if dtype.kind == "c":
        with np.errstate(invalid="ignore"):  # inf * 1j
            a = a + 1j * data(rng, shape, np.float64).astype(dtype)
            b = b + 1j * data(rng, shape, np.float64).astype(dtype)
    if dtype.kind in "iu" and dtype.itemsize == 8:
        b[b == 0] = 1  # integer division by zero is the op's business, not this test's
    return (dlarray.array(a, ctx, dtype=dtype), dlarray.array(b, ctx, dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_arrays_match_the_general_path(ctx, rng, dtype):
    skip_unsupported(ctx, dtype)
    if dtype.kind == "c" and "complex64" not in dlarray.__array_namespace_info__().dtypes(
            device=ctx):
        pytest.skip("no complex on this device")
    for shape in SHAPES:
        x, y = _arrays(ctx, rng, shape, dtype)
        for dunder in METHODS:
            with np.errstate(all="ignore"):
                fast = _outcome(lambda: getattr(x, dunder)(y))
                general = _outcome(lambda: _general(dunder, x, y))
            _same(fast, general, (dunder, dtype, shape))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_scalars_match_the_general_path(ctx, rng, dtype):
    skip_unsupported(ctx, dtype)
    if dtype.kind == "c" and "complex64" not in dlarray.__array_namespace_info__().dtypes(
            device=ctx):
        pytest.skip("no complex on this device")
    for shape in [(), (0,), (7, 13)]:
        x, _ = _arrays(ctx, rng, shape, dtype)
        for dunder in METHODS:
            for value in SCALARS:
                fast = _outcome(lambda: getattr(x, dunder)(value))
                general = _outcome(lambda: _general(dunder, x, value))
                _same(fast, general, (dunder, dtype, shape, value))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.float64], ids=str)
def test_against_numpy(ctx, rng, dtype):
    """The common cases give NumPy's dtype and values (odd sizes, NaN and inf among them)."""
    dtype = np.dtype(dtype)
    skip_unsupported(ctx, dtype)
    for shape in SHAPES:
        a, b = data(rng, shape, dtype), data(rng, shape, dtype)
        b[b == 0] = 1
        x, y = dlarray.array(a, ctx, dtype=dtype), dlarray.array(b, ctx, dtype=dtype)
        with np.errstate(all="ignore"):
            cases = [(x + y, a + b), (x - y, a - b), (x * y, a * b), (x * 3, a * 3),
                     (2 + x, 2 + a), (x - 1, a - 1), (4 * x, 4 * a)]
            if dtype.kind == "f":
                cases += [(x / y, a / b), (x / 2.5, a / 2.5), (x + 0.5, a + 0.5)]
        for got, want in cases:
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6 if dtype == np.float32
                                       else 1e-12)


def test_errors_are_the_general_paths():
    """Overflowing ints, two devices, non-arrays: the general path's exceptions and messages."""
    x = dlarray.array(np.arange(5, dtype=np.int8), dtype=np.int8)
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        x + 1000
    u = dlarray.array(np.arange(5, dtype=np.uint8), dtype=np.uint8)
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        u * -1
    f = dlarray.array(np.ones(3, np.float32))
    with pytest.raises(OverflowError):
        f + 10**400
    with pytest.raises(TypeError):
        f + "a"
    devices = dlarray.devices()
    if len(devices) > 1:
        g = dlarray.array(np.ones(3, np.float32), devices[1])
        fast = _outcome(lambda: f + g)
        assert fast == _outcome(lambda: _operators._add(f, g))
        assert isinstance(fast[0], type) and issubclass(fast[0], ValueError)
    with pytest.raises(ValueError):  # shapes that do not broadcast
        f + dlarray.array(np.ones(4, np.float32))


def test_calls_the_fast_path_takes():
    """The planner is asked once per combination; views, mixed dtypes, subclasses, bools and
    ints past 2**53 go to the general path."""
    asked, general = [], []

    def plan(name, dtype, other):
        asked.append((name, dtype, other))
        return _operators._fast_plan(name, dtype, other)

    def slow(a, b):
        general.append(b)
        return _operators._add(a, b)

    method = _core._fast_operator("__fast_path_test__", "add", slow, plan)
    x = dlarray.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = dlarray.array(np.ones((2, 3), np.float32))
    for _ in range(3):
        np.testing.assert_array_equal(method(x, y).asnumpy(), x.asnumpy() + 1)
        np.testing.assert_array_equal(method(x, 2).asnumpy(), x.asnumpy() + 2)
        np.testing.assert_array_equal(method(x, 0.5).asnumpy(), x.asnumpy() + 0.5)
    assert [(n, d, o) for n, d, o in asked] == [("add", np.dtype(np.float32), np.dtype(np.float32)),
                                                ("add", np.dtype(np.float32), int),
                                                ("add", np.dtype(np.float32), float)]
    assert general == []
    i = dlarray.array(np.arange(3, dtype=np.int64), dtype=np.int64)
    others = [x.T.copy().T, dlarray.array(np.ones((2, 3), np.float64), dtype=np.float64), True,
              np.float32(1)]
    for other in others:
        method(x, other)
    method(x[:, ::2], 1.0)  # a view on the left
    method(i, 2**53 + 1)  # exact integer path
    with pytest.raises(OverflowError, match="out of bounds for int64"):
        method(i, -2**63 - 1)  # past int64: the general path's error
    assert len(general) == len(others) + 3
    with pytest.raises(TypeError):
        method(1.0, x)  # not an NDArray on the left: the descriptor refuses


def test_methods_are_fast_path_descriptors():
    for dunder in METHODS:
        assert type(getattr(NDArray, dunder)).__name__ == "method_descriptor", dunder


def test_small_blocks_keep_memory_stats_consistent():
    ctx = dlarray.cpu(0)
    x = dlarray.array(np.ones(3, np.float32))
    before = dlarray.memory_stats(ctx)
    results = [x + x for _ in range(100)]
    during = dlarray.memory_stats(ctx)
    assert during["num_allocations"] - before["num_allocations"] == 100
    assert during["bytes_in_use"] - before["bytes_in_use"] == 100 * 12
    assert during["bytes_reserved"] >= during["bytes_in_use"]
    del results
    after = dlarray.memory_stats(ctx)
    assert after["bytes_in_use"] == before["bytes_in_use"]
    assert after["num_frees"] - before["num_frees"] == 100
    assert after["bytes_reserved"] >= after["bytes_in_use"]
    # Reused blocks hold their old bytes; the ops overwrite them all.
    fresh = [x * 0.0 for _ in range(50)]
    for r in fresh:
        np.testing.assert_array_equal(r.asnumpy(), np.zeros(3, np.float32))


def test_memory_stats_count_every_thread():
    """Allocation and free counts are kept per thread and summed: arrays made on threads that
    have ended, freed on another thread, small and large, all counted once."""
    import threading
    ctx = dlarray.cpu(0)
    x = dlarray.array(np.ones(3, np.float32))
    big = dlarray.array(np.ones(70000, np.float32))  # past the reused small blocks
    before = dlarray.memory_stats(ctx)
    made = []

    def work():
        made.extend([x + x for _ in range(40)] + [big + big for _ in range(3)])

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    during = dlarray.memory_stats(ctx)
    assert during["num_allocations"] - before["num_allocations"] == 3 * 43
    assert during["num_frees"] == before["num_frees"]
    assert during["bytes_in_use"] - before["bytes_in_use"] == 3 * (40 * 12 + 3 * 280000)
    del made[:]  # freed on this thread, made on the ended ones
    after = dlarray.memory_stats(ctx)
    assert after["num_frees"] - before["num_frees"] == 3 * 43
    assert after["bytes_in_use"] == before["bytes_in_use"]
    assert after["num_allocations"] - after["num_frees"] == (before["num_allocations"]
                                                             - before["num_frees"])


def test_bfloat16_scalar_stays_bfloat16():
    if BF16 is None:
        pytest.skip("no ml_dtypes")
    x = dlarray.array(np.ones(4, BF16), dtype=BF16)
    assert (x * 2.5).dtype == BF16 and (x + 1).dtype == BF16


def _skip_device_dtype(ctx, dtype):
    skip_unsupported(ctx, dtype)
    if dtype.kind == "c" and "complex64" not in dlarray.__array_namespace_info__().dtypes(
            device=ctx):
        pytest.skip("no complex on this device")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_binary_functions_match_the_general_path(ctx, rng, dtype):
    """dlarray.add and the other functions of two arrays (builtins with the fast path for two
    compact arrays of one dtype and shape) against _elementwise_api._binary: same dtypes, bits
    and errors; the cases the fast path leaves (a scalar, another dtype, a broadcast, a view,
    keywords) still give the general path's answer."""
    from dlarray import _elementwise_api as ew
    _skip_device_dtype(ctx, dtype)
    for shape in [(), (0,), (1,), (7, 13), (1025,)]:
        x, y = _arrays(ctx, rng, shape, dtype)
        for name in ew._BINARY:
            with np.errstate(all="ignore"):
                fast = _outcome(lambda: getattr(dlarray, name)(x, y))
                want = _outcome(lambda: ew._binary(name, x, y))
            _same(fast, want, (name, dtype, shape))
    x, y = _arrays(ctx, rng, (6, 4), dtype)
    other = dlarray.array(np.ones((6, 4), np.float64), ctx, dtype=np.float64) \
        if "float64" in dlarray.__array_namespace_info__().dtypes(device=ctx) else x
    for name in ("add", "less", "maximum", "atan2"):
        for args in [(x[:, ::2], y[:, ::2]), (x, y[0]), (x, 2), (3, y), (x, other)]:
            with np.errstate(all="ignore"):
                _same(_outcome(lambda: getattr(dlarray, name)(*args)),
                      _outcome(lambda: ew._binary(name, *args)), (name, dtype, "mixed"))
        with pytest.raises(TypeError):  # positional-only, as before
            getattr(dlarray, name)(x1=x, x2=y)


def test_binary_function_calls_the_fast_path_takes(monkeypatch):
    """Two compact float32 arrays of one shape never reach _binary; a broadcast does."""
    from dlarray import _elementwise_api as ew
    x = dlarray.array(np.arange(6, dtype=np.float32), dlarray.cpu())
    dlarray.add(x, x)  # the plan is made (by the planner, not _binary)
    calls = []
    real = ew._binary
    monkeypatch.setattr(ew, "_binary", lambda *a: calls.append(a[0]) or real(*a))
    np.testing.assert_array_equal(dlarray.add(x, x).asnumpy(), np.arange(6) * 2)
    np.testing.assert_array_equal(dlarray.less(x, x + 1).asnumpy(), np.ones(6, bool))
    assert calls == []
    dlarray.add(x, x.reshape(1, 6))
    assert calls == ["add"]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_unary_functions_match_the_general_path(ctx, rng, dtype):
    """dlarray.exp and the other functions of one array (builtins with the fast path) against
    _elementwise_api's general path, positional and keyword calls, views."""
    from dlarray import _elementwise_api as ew
    _skip_device_dtype(ctx, dtype)
    general = {**{n: (lambda n: lambda x: ew._unary(n, x))(n) for n in ew._UNARY},
               **{n: (lambda n: lambda x: ew._predicate(n, x))(n) for n in ew._UNARY_PREDICATES}}
    for shape in [(), (0,), (1,), (7, 13), (1025,)]:
        x, _ = _arrays(ctx, rng, shape, dtype)
        for name, slow in general.items():
            with np.errstate(all="ignore"):
                fast = _outcome(lambda: getattr(dlarray, name)(x))
                want = _outcome(lambda: slow(x))
            _same(fast, want, (name, dtype, shape))
    x, _ = _arrays(ctx, rng, (6, 4), dtype)
    view = x[:, ::2]
    for name in ("abs", "isnan", "negative"):
        _same(_outcome(lambda: getattr(dlarray, name)(view)), _outcome(lambda: general[name](view)),
              (name, "view"))
        with pytest.raises(TypeError, match="positional"):  # x is positional-only, as before
            getattr(dlarray, name)(x=x)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_whole_reductions_match_the_general_path(ctx, rng, dtype):
    """sum/prod/min/max(x) (the fast path: every element into a 0-d array) against the general
    path, and the calls it leaves to it (axis, keepdims, dtype, empty, 0-d, views)."""
    from dlarray import _statistics_api as st
    _skip_device_dtype(ctx, dtype)
    general = {"sum": lambda x, **k: st._accumulate(x, "sum", k.get("axis"), False, None, "sum"),
               "prod": lambda x, **k: st._accumulate(x, "prod", k.get("axis"), False, None,
                                                     "prod"),
               "min": lambda x, **k: st._extreme(x, "min", k.get("axis"), False),
               "max": lambda x, **k: st._extreme(x, "max", k.get("axis"), False)}
    for shape in [(), (0,), (1,), (7, 13), (3, 1, 5), (65536 + 3,)]:
        x, _ = _arrays(ctx, rng, shape, dtype)
        if dtype.kind == "f" or dtype == BF16:  # small values: products stay finite
            x = dlarray.array(np.clip(x.asnumpy(), -1.01, 1.01), ctx, dtype=dtype)
        for name, slow in general.items():
            with np.errstate(all="ignore"):
                fast = _outcome(lambda: getattr(dlarray, name)(x))
                want = _outcome(lambda: slow(x))
            _same(fast, want, (name, dtype, shape))
            if len(shape) == 2:
                _same(_outcome(lambda: getattr(dlarray, name)(x, axis=1)),
                      _outcome(lambda: slow(x, axis=1)), (name, dtype, "axis"))
                _same(_outcome(lambda: getattr(dlarray, name)(x[:, ::2])),
                      _outcome(lambda: slow(x[:, ::2])), (name, dtype, "view"))


def test_reductions_against_numpy(rng):
    for dtype in (np.float32, np.int32, np.uint8, np.float64, np.int64):
        for shape in [(1,), (7, 13), (65536 + 3,)]:
            a = data(rng, shape, np.dtype(dtype), special=False)
            x = dlarray.array(a, dtype=dtype)
            for name in ("sum", "max", "min"):
                got, want = getattr(dlarray, name)(x), getattr(np, name)(a)
                assert got.shape == () and got.dtype == want.dtype, (name, dtype)
                np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)
    assert dlarray.sum(dlarray.array(np.ones(3, np.float32)), keepdims=True).shape == (1,)


def test_function_signatures():
    import inspect
    assert str(inspect.signature(dlarray.exp)) == "(x, /)"
    assert str(inspect.signature(dlarray.sum)) == "(x, /, *, axis=None, dtype=None, keepdims=False)"
    assert str(inspect.signature(dlarray.max)) == "(x, /, *, axis=None, keepdims=False)"
    assert "Parameters" in dlarray.sum.__doc__ and "elementwise" in dlarray.exp.__doc__
    with pytest.raises(TypeError, match="exp: x must be a dlarray array"):
        dlarray.exp(1.0)
    with pytest.raises(TypeError, match="sum: x must be a dlarray NDArray"):
        dlarray.sum([1.0])


def test_alternating_keys_use_their_own_plans(ctx):
    """The last-key plan cache: calls that switch dtype, operand kind and function every time get
    each one's own result dtype and values."""
    skip_unsupported(ctx, np.dtype(np.float64))
    host = {dt: np.arange(1, 6, dtype=dt) for dt in (np.float32, np.float64, np.int32, np.uint8)}
    arrays = {dt: dlarray.array(h, ctx, dtype=dt) for dt, h in host.items()}
    for _ in range(3):
        for dt, x in arrays.items():
            for got, want in [(x + x, host[dt] + host[dt]), (x * 2, host[dt] * 2),
                              (x - 1.5, host[dt] - 1.5), (x / x, host[dt] / host[dt]),
                              (dlarray.exp(x), np.exp(host[dt].astype(
                                  dt if np.dtype(dt).kind == "f" else np.float64)))]:
                assert got.dtype == want.dtype, (dt, got.dtype, want.dtype)
                np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


def test_fast_results_are_ordinary_instances(ctx):
    """Arrays the fast path makes itself (without py::cast, outside pybind11's registry of
    instances): writable, indexable, weakly referenceable, and their memory goes back when
    they do."""
    import gc
    import weakref
    x = dlarray.array(np.arange(4, dtype=np.float32), ctx)
    r = x + x
    assert type(r) is NDArray
    r[1] = 7.0
    np.testing.assert_array_equal(r.asnumpy(), [0, 7, 4, 6])
    r += 1
    np.testing.assert_array_equal(r.asnumpy(), [1, 8, 5, 7])
    e = dlarray.exp(x)
    e_ref = weakref.ref(e)
    del e
    gc.collect()
    assert e_ref() is None
    before = dlarray.memory_stats(ctx)["bytes_in_use"]
    for _ in range(100):
        x / x
    assert dlarray.memory_stats(ctx)["bytes_in_use"] == before


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_], ids=str)
def test_sizes_around_the_gil_threshold(ctx, rng, dtype):
    """Either side of the size where the op releases the GIL (and takes the checked Invoke):
    the same bits as NumPy."""
    dtype = np.dtype(dtype)
    for n in (2**15 - 1, 2**15, 2**15 + 1):
        a = data(rng, (n,), dtype)
        b = data(rng, (n,), dtype)
        x, y = dlarray.array(a, ctx, dtype=dtype), dlarray.array(b, ctx, dtype=dtype)
        if dtype.kind == "b":
            np.testing.assert_array_equal((x & y).asnumpy(), a & b)
            continue
        with np.errstate(all="ignore"):  # inf - inf, wrapping ints: alike on both sides
            np.testing.assert_array_equal((x + y).asnumpy(), a + b)
            np.testing.assert_array_equal((x * 3).asnumpy(), a * dtype.type(3))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_take_matches_the_general_path(ctx, rng, dtype):
    """dlarray.take (a builtin: one gather for compact arrays on one device, int64 1-D indices, an
    int axis) against _indexing_api's general path and NumPy: every axis, negative indices,
    sizes past a block, empty and 1-element arrays; the calls it leaves (views, int32 indices,
    2-D indices, a missing or bad axis, an index out of bounds, two devices) still get the general
    path's answer and exception."""
    from dlarray import _indexing_api as ix
    _skip_device_dtype(ctx, dtype)
    cases = [((1025,), 0, 700), ((1,), None, 3), ((0,), 0, 0), ((5, 0), 0, 4), ((7, 13), 1, 9),
             ((7, 13), -2, 11), ((3, 4, 5), 1, 0), ((2, 300, 3), 1, 257)]
    for shape, axis, m in cases:
        x, _ = _arrays(ctx, rng, shape, dtype)
        n = shape[axis or 0]
        idx = rng.integers(-n, n, m) if n else np.zeros(m, np.int64)
        ind = dlarray.array(idx.astype(np.int64), ctx, dtype=np.int64)
        kw = {} if axis is None else {"axis": axis}
        fast = _outcome(lambda: dlarray.take(x, ind, **kw))
        _same(fast, _outcome(lambda: ix._take_general(x, ind, **kw)), (dtype, shape, axis))
        want = np.take(x.asnumpy(), idx, axis=axis or 0)  # (the same bits: NaNs, -0.0)
        assert fast[1].shape == want.shape and fast[1].tobytes() == want.tobytes()
    x, _ = _arrays(ctx, rng, (6, 4), dtype)
    ind = dlarray.array(np.array([3, -1, 0], np.int64), ctx, dtype=np.int64)
    others = [(x[:, ::2], ind, {"axis": 1}), (x, ind.astype(dlarray.int32), {"axis": 0}),
              (x, ind.reshape(3, 1), {"axis": 0}), (x, ind, {}), (x, ind, {"axis": 2}),
              (x, ind, {"axis": True}), (x, dlarray.array(np.array([6], np.int64), ctx,
                                                           dtype=np.int64), {"axis": 0}),
              (x, ind, {"axis": 0, "mode": "wrap"})]
    if ctx.device_type != 1:
        others.append((x, dlarray.array(np.array([0], np.int64), dlarray.cpu(), dtype=np.int64),
                       {"axis": 0}))
    for args in others:
        want = _outcome(lambda: ix._take_general(args[0], args[1], **args[2]))
        _same(_outcome(lambda: dlarray.take(args[0], args[1], **args[2])), want, args[2])
    with pytest.raises(IndexError, match="out of bounds"):
        dlarray.take(x, dlarray.array(np.array([-7], np.int64), ctx, dtype=np.int64), axis=0)


def test_take_calls_the_fast_path_takes(monkeypatch):
    """Compact arrays and int64 indices never reach the general path's Python; int32 do."""
    from dlarray import _indexing_api as ix
    x = dlarray.array(np.arange(12, dtype=np.float32).reshape(3, 4), dlarray.cpu())
    ind = dlarray.array(np.array([2, 0], np.int64), dlarray.cpu(), dtype=np.int64)
    dlarray.take(x, ind, axis=1)  # the plan is made
    calls = []
    monkeypatch.setattr(ix, "_axis", lambda *a: calls.append(a) or 0)
    np.testing.assert_array_equal(dlarray.take(x, ind, axis=1).asnumpy(),
                                  np.arange(12).reshape(3, 4)[:, [2, 0]])
    assert calls == []
    dlarray.take(x, ind.astype(dlarray.int32), axis=0)
    assert len(calls) == 1


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_take_along_axis_matches_the_general_path(ctx, rng, dtype):
    """dlarray.take_along_axis (a builtin: gather_along, or for one row the gather, for compact
    arrays and int64 indices of x's shape outside the axis) against the general path and NumPy;
    broadcast indices, views, int32, an index out of bounds, empty arrays: the general path's
    answer and exception."""
    from dlarray import _indexing_api as ix
    _skip_device_dtype(ctx, dtype)
    cases = [((1025,), -1, 700), ((1,), 0, 3), ((7, 13), 1, 9), ((7, 13), 0, 4), ((3, 4, 5), 1, 6),
             ((2, 300, 3), -2, 257), ((1, 9), 1, 5), ((4, 1), 0, 2)]
    for shape, axis, m in cases:
        x, _ = _arrays(ctx, rng, shape, dtype)
        n = shape[axis]
        ishape = list(shape)
        ishape[axis] = m
        idx = rng.integers(-n, n, ishape)
        ind = dlarray.array(idx.astype(np.int64), ctx, dtype=np.int64)
        fast = _outcome(lambda: dlarray.take_along_axis(x, ind, axis=axis))
        _same(fast, _outcome(lambda: ix._take_along_axis_general(x, ind, axis=axis)),
              (dtype, shape, axis))
        want = np.take_along_axis(x.asnumpy(), idx, axis=axis)
        assert fast[1].shape == want.shape and fast[1].tobytes() == want.tobytes()
    x, _ = _arrays(ctx, rng, (6, 4), dtype)
    ind = dlarray.array(np.array([[3, -1, 0, 1]] * 6, np.int64), ctx, dtype=np.int64)
    bad = dlarray.array(np.full((6, 4), 4, np.int64), ctx, dtype=np.int64)
    others = [(x, ind, {}), (x[:, ::2], ind[:, :2], {}), (x, ind[:1], {"axis": 1}),
              (x, ind.astype(dlarray.int32), {"axis": 1}), (x, ind, {"axis": None}),
              (x, ind, {"axis": 2}), (x, bad, {"axis": 1}), (x[:0], ind[:0], {"axis": 1}),
              (x, ind.reshape(24), {"axis": 0})]
    for args in others:
        want = _outcome(lambda: ix._take_along_axis_general(args[0], args[1], **args[2]))
        _same(_outcome(lambda: dlarray.take_along_axis(args[0], args[1], **args[2])), want,
              args[2])
