"""NDArray operators on every device against NumPy: + - * / unary -, @, comparisons, with scalars,
NumPy promotion (NEP 50) and broadcasting, in-place forms, and mixed-device errors."""
import numpy as np
import pytest

import dlarray


def _dev(a, ctx):
    return dlarray.array(a, ctx, dtype=a.dtype)


# One unit in the last place of each result dtype: NumPy's result and the kernel's are each
# rounded once to it, so they may differ by that at most (a float32 rounding of a float64 result
# would not pass).
ULP = {np.dtype(np.float16): 2.0 ** -10, np.dtype(np.float32): 2.0 ** -23,
       np.dtype(np.float64): 2.0 ** -52}


def _assert_matches(got, want):
    """got equals NumPy's want: exactly for integers and bool, within one ulp of the dtype for
    floats."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=ULP[want.dtype], atol=0)


BINARY = [
    ("add", lambda x, y: x + y),
    ("sub", lambda x, y: x - y),
    ("mul", lambda x, y: x * y),
    ("div", lambda x, y: x / y),
]


@pytest.mark.parametrize("name,fn", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("shapes", [((4, 5), (4, 5)), ((4, 5), (5,)), ((3, 1), (1, 6)),
                                    ((1,), (7, 3)), ((2, 1, 3), (4, 1))], ids=str)
def test_array_array(ctx, rng, name, fn, shapes):
    a = rng.standard_normal(shapes[0]).astype(np.float32)
    b = (rng.standard_normal(shapes[1]) + 3).astype(np.float32)
    got = fn(_dev(a, ctx), _dev(b, ctx))
    want = fn(a, b)
    assert isinstance(got, dlarray.NDArray) and got.ctx == ctx and got.shape == want.shape
    _assert_matches(got.asnumpy(), want)


@pytest.mark.parametrize("name,fn", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8, np.float64])
def test_scalars_and_promotion(ctx, rng, name, fn, dtype):
    a = (rng.integers(1, 50, size=(6, 7))).astype(dtype)
    x = _dev(a, ctx)
    for s in (2, 3.5, np.float32(1.5)):
        for got, want in ((fn(x, s), fn(a, s)), (fn(s, x), fn(s, a))):
            assert got.dtype == want.dtype, (s, got.dtype, want.dtype)
            _assert_matches(got.asnumpy(), want)


def test_mixed_dtypes_promote(ctx):
    a = np.arange(6, dtype=np.int32)
    b = np.linspace(0, 1, 6).astype(np.float16)
    got = _dev(a, ctx) + _dev(b, ctx)
    want = a + b
    _assert_matches(got.asnumpy(), want)


def test_unary_and_matmul(ctx, rng):
    a = rng.standard_normal((5, 7)).astype(np.float32)
    b = rng.standard_normal((7, 3)).astype(np.float32)
    v = rng.standard_normal(7).astype(np.float32)
    x, y = _dev(a, ctx), _dev(b, ctx)
    np.testing.assert_array_equal((-x).asnumpy(), -a)
    np.testing.assert_array_equal((+x).asnumpy(), a)
    np.testing.assert_allclose((x @ y).asnumpy(), a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose((x.T.T @ y).asnumpy(), a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose((y.T @ x.T).asnumpy(), b.T @ a.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose((x @ _dev(v, ctx)).asnumpy(), a @ v, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose((_dev(v, ctx) @ _dev(v, ctx)).asnumpy(), v @ v, rtol=1e-5)
    np.testing.assert_allclose((x[:, ::2] @ y[::2]).asnumpy(), a[:, ::2] @ b[::2], rtol=1e-5,
                               atol=1e-5)
    with pytest.raises(ValueError, match="last dimension of x1 \\(7\\)"):
        x @ x
    with pytest.raises(TypeError):
        -dlarray.array([True], ctx, dtype=bool)


@pytest.mark.parametrize("op", ["==", "!=", "<", "<=", ">", ">="])
def test_comparisons(ctx, rng, op):
    a = rng.integers(0, 4, size=(5, 6)).astype(np.float32)
    b = rng.integers(0, 4, size=(6,)).astype(np.float32)
    x, y = _dev(a, ctx), _dev(b, ctx)
    fn = eval("lambda p, q: p %s q" % op)
    got = fn(x, y)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got.asnumpy(), fn(a, b))
    np.testing.assert_array_equal(fn(x, 2).asnumpy(), fn(a, 2))
    np.testing.assert_array_equal(fn(2, x).asnumpy(), fn(2, a))


def test_inplace(ctx, rng):
    a = rng.standard_normal((4, 3)).astype(np.float32)
    x = _dev(a, ctx)
    ptr = x.data_ptr
    x += 1.0
    x *= _dev(np.full(3, 2.0, np.float32), ctx)
    x -= x
    x += _dev(a, ctx)
    x /= 4.0
    assert x.data_ptr == ptr
    np.testing.assert_allclose(x.asnumpy(), a / 4, rtol=1e-6)
    v = x[:, 1]  # a strided view: updated through a temporary
    v += 10.0
    np.testing.assert_allclose(x.asnumpy()[:, 1], a[:, 1] / 4 + 10, rtol=1e-6)
    i = _dev(np.arange(3, dtype=np.int32), ctx)
    with pytest.raises(TypeError, match="cannot be cast"):
        i += 0.5


def test_numpy_operand_and_errors(ctx):
    x = _dev(np.arange(4, dtype=np.float32), ctx)
    np.testing.assert_array_equal((x + np.ones(4, np.float32)).asnumpy(), np.arange(4) + 1)
    with pytest.raises(ValueError, match="broadcast"):
        x + _dev(np.ones(3, np.float32), ctx)
    assert (x == None) is False  # noqa: E711  (not an array: falls back to identity)


def test_mixed_devices_raise_the_ops_error():
    gpus = [c for c in dlarray.devices() if c.device_type == 2]
    if not gpus:
        pytest.skip("needs a GPU next to the CPU")
    x = dlarray.array([1.0, 2.0])
    y = dlarray.array([1.0, 2.0], gpus[0])
    with pytest.raises(ValueError, match="different devices"):
        x + y
