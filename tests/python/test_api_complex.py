"""complex64 and complex128 through the elementwise table (issue 21), against NumPy on every
device: the arithmetic, the transcendental functions with C99 Annex G's special values (NaN, +-inf
and -0.0 in either part), the predicates, real/imag/conj/abs, the operators with Python complex
scalars (NEP 50), on odd shapes, 0-d, empty, one element and sizes crossing 1024 and 65536."""
import numpy as np
import pytest

import dlarray
from ufunc_util import SHAPES, dev

C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
COMPLEX = [C64, C128]
PART = {C64: np.dtype(np.float32), C128: np.dtype(np.float64)}
# Relative to |result|: a few ulp of the part type, more for the functions whose real and
# imaginary parts come from different formulas.
RTOL = {C64: 2.0 ** -17, C128: 2.0 ** -44}
# (no huge finite values: NumPy's own complex64 results there depend on FMA contraction)
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0]

# name: (NumPy's function, the magnitude of the finite parts drawn)
UNARY = {
    "sqrt": (np.sqrt, 100), "exp": (np.exp, 10), "expm1": (np.expm1, 10), "log": (np.log, 100),
    "log1p": (np.log1p, 100), "log2": (np.log2, 100), "log10": (np.log10, 100),
    "sin": (np.sin, 6), "cos": (np.cos, 6), "tan": (np.tan, 3), "asin": (np.arcsin, 3),
    "acos": (np.arccos, 3), "atan": (np.arctan, 3), "sinh": (np.sinh, 6),
    "cosh": (np.cosh, 6), "tanh": (np.tanh, 6), "asinh": (np.arcsinh, 10),
    "acosh": (np.arccosh, 10), "atanh": (np.arctanh, 3), "reciprocal": (np.reciprocal, 5),
    "negative": (np.negative, 5), "positive": (np.positive, 5), "square": (np.square, 5),
    "sign": (np.sign, 5), "conj": (np.conj, 5), "round": (np.round, 5),
}
BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
          "divide": np.divide, "pow": np.power}


def skip_unsupported(ctx, dtype):
    if repr(ctx).startswith("opencl") and dtype == C128:
        if "complex128" not in dlarray.__array_namespace_info__().dtypes(device=ctx):
            pytest.skip("no complex128 on this device")


def complex_data(rng, shape, dtype, scale=5.0, special=True):
    """Random complex values with parts in [-scale, scale], the special values mixed into either
    part (a fifth of the elements each)."""
    parts = []
    for _ in range(2):
        v = rng.uniform(-scale, scale, shape)
        flat = v.reshape(-1)
        if special and flat.size:
            mix = rng.random(flat.size) < 0.2
            flat[mix] = np.array(SPECIAL)[rng.integers(0, len(SPECIAL), flat.size)][mix]
        parts.append(v)
    z = np.empty(parts[0].shape, C128)
    z.real, z.imag = parts  # not re + 1j * im: 1j * inf is nan + inf j
    with np.errstate(over="ignore"):
        return z.astype(dtype)


def special_grid(dtype):
    """Every pair of the special values as (real, imaginary)."""
    re, im = np.meshgrid(SPECIAL, SPECIAL)
    z = np.empty(re.shape, np.complex128)
    z.real, z.imag = re, im
    return z.reshape(-1).astype(dtype)


def reference(name, a):
    """NumPy's result of function name on a (complex128), with the standard's special values
    where NumPy differs: sign is NaN + NaN j for a NaN part, expm1 of an infinite or NaN part is
    exp(a) - 1 (Annex G's exp), tanh(+-inf + y j) is +-1 + 0j with y's sign."""
    with np.errstate(all="ignore"):
        ref = np.asarray(UNARY[name][0](a))
        odd = ~(np.isfinite(a.real) & np.isfinite(a.imag))
        if name == "sign":
            ref[np.isnan(a.real) | np.isnan(a.imag)] = complex(np.nan, np.nan)
        elif name == "expm1":
            e = np.exp(a[odd])
            ref[odd] = (e.real - 1) + 0j
            ref.imag[odd] = e.imag
        elif name == "tanh":
            inf = np.isinf(a.real) & np.isfinite(a.imag)
            ref.real[inf] = np.sign(a.real[inf])
            ref.imag[inf] = np.copysign(0.0, a.imag[inf])
    return ref


def assert_complex_matches(got, ref, dtype, rtol=None, what=""):
    """got (an NDArray of dtype) equals ref (NumPy): NaN and infinite parts where ref has them,
    finite results within rtol of |ref|."""
    out = got.asnumpy()
    assert out.dtype == dtype and out.shape == ref.shape, what
    with np.errstate(over="ignore", invalid="ignore"):
        r = ref.astype(dtype).astype(C128)
    o = out.astype(C128)
    for part, other in (("real", "imag"), ("imag", "real")):
        op, rp = getattr(o, part), getattr(r, part)
        np.testing.assert_array_equal(np.isnan(op), np.isnan(rp),
                                      err_msg="%s %s NaN" % (what, part))
        inf = np.isinf(rp)
        np.testing.assert_array_equal(np.isinf(op[inf]), True, err_msg="%s %s inf" % (what, part))
        # Annex G leaves an infinity's sign open beside a NaN part ("+-inf + NaN j").
        signed = inf & ~np.isnan(getattr(r, other))
        np.testing.assert_array_equal(op[signed], rp[signed], err_msg="%s %s inf" % (what, part))
    fin = np.isfinite(r.real) & np.isfinite(r.imag)
    tol = RTOL[dtype] if rtol is None else rtol
    err = np.abs(o[fin] - r[fin])
    bound = tol * np.maximum(np.abs(r[fin]), np.finfo(PART[dtype]).tiny)
    bad = np.flatnonzero(err > bound)
    assert bad.size == 0, "%s: %d mismatches, first got %r want %r" % (
        what, bad.size, o[fin][bad[:1]], r[fin][bad[:1]])


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_unary_matches_numpy(ctx, rng, name, dtype):
    skip_unsupported(ctx, dtype)
    ref_fn, scale = UNARY[name]
    for shape in SHAPES:
        a = complex_data(rng, shape, dtype, scale)
        ref = reference(name, a.astype(C128))
        got = getattr(dlarray, name)(dev(a, ctx))
        assert_complex_matches(got, ref, dtype, what="%s %s" % (name, shape))


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_unary_special_values(ctx, name, dtype):
    """Every pair of NaN, +-inf, +-0.0 ... as (real, imaginary): the NaN, infinity and finite
    pattern of NumPy's result (C99 Annex G's), part by part."""
    skip_unsupported(ctx, dtype)
    a = special_grid(dtype)
    ref = reference(name, a.astype(C128))
    got = getattr(dlarray, name)(dev(a, ctx))
    assert_complex_matches(got, ref, dtype, what=name)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_binary_matches_numpy(ctx, rng, name, dtype):
    skip_unsupported(ctx, dtype)
    for shape in SHAPES:
        a = complex_data(rng, shape, dtype)
        b = complex_data(rng, shape, dtype)
        if name == "pow":  # small integer exponents too (repeated multiplication, as NumPy)
            flat = b.reshape(-1)
            flat[::3] = rng.integers(-4, 5, flat[::3].size)
        with np.errstate(all="ignore"):
            ref = BINARY[name](a, b)
        got = getattr(dlarray, name)(dev(a, ctx), dev(b, ctx))
        rtol = RTOL[dtype] * (64 if name == "pow" else 1)
        assert_complex_matches(got, ref, dtype, rtol, what="%s %s" % (name, shape))


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_binary_special_values(ctx, dtype):
    skip_unsupported(ctx, dtype)
    grid = special_grid(dtype)
    a, b = np.repeat(grid, grid.size), np.tile(grid, grid.size)
    x, y = dev(a, ctx), dev(b, ctx)
    for name in ("add", "subtract", "multiply", "divide"):
        with np.errstate(all="ignore"):
            ref = BINARY[name](a, b)
        assert_complex_matches(getattr(dlarray, name)(x, y), ref, dtype, what=name)
    for name, ref_fn in (("equal", np.equal), ("not_equal", np.not_equal)):
        np.testing.assert_array_equal(getattr(dlarray, name)(x, y).asnumpy(), ref_fn(a, b))


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_parts_and_predicates_exact(ctx, rng, dtype):
    skip_unsupported(ctx, dtype)
    for shape in SHAPES + [(len(SPECIAL) ** 2,)]:
        a = complex_data(rng, shape, dtype) if len(shape) != 1 or shape[0] != 100 else \
            special_grid(dtype)
        x = dev(a, ctx)
        for name, ref in (("real", a.real), ("imag", a.imag), ("abs", np.abs(a))):
            got = getattr(dlarray, name)(x)
            assert got.dtype == PART[dtype] and got.shape == a.shape
            if name == "abs":
                np.testing.assert_allclose(got.asnumpy(), ref, rtol=RTOL[dtype])
            else:
                np.testing.assert_array_equal(got.asnumpy(), ref)
                np.testing.assert_array_equal(np.signbit(got.asnumpy()), np.signbit(ref))
        for name, ref_fn in (("isnan", np.isnan), ("isinf", np.isinf),
                             ("isfinite", np.isfinite)):
            np.testing.assert_array_equal(getattr(dlarray, name)(x).asnumpy(), ref_fn(a))
        np.testing.assert_array_equal(dlarray.equal(x, x).asnumpy(), a == a)
        np.testing.assert_array_equal((x != x).asnumpy(), a != a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32], ids=str)
def test_parts_of_real_arrays(ctx, dtype):
    a = np.array([1, 0, 3], dtype)
    x = dev(a, ctx)
    np.testing.assert_array_equal(dlarray.real(x).asnumpy(), a)
    np.testing.assert_array_equal(dlarray.imag(x).asnumpy(), np.zeros(3, dtype))
    np.testing.assert_array_equal(dlarray.conj(x).asnumpy(), a)
    assert dlarray.imag(x).dtype == dtype
    for fn in (dlarray.real, dlarray.imag, dlarray.conj):
        with pytest.raises(TypeError, match="numeric"):
            fn(dev(np.array([True]), ctx))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.complex64], ids=str)
def test_python_complex_scalars_nep50(ctx, dtype):
    """A complex scalar with a float32 array gives complex64 (NEP 50), with float64 or an
    integer array complex128; on either side, and in the operators' reflected forms."""
    a = np.array([1.5, -2, 0], dtype)
    x = dev(a, ctx)
    for value in (2 - 1j, 1j, np.complex64(0.5 + 2j)):
        for got, ref in ((x + value, a + value), (value - x, value - a), (x * value, a * value),
                         (value / x, np.divide(value, a)), (x ** value, a ** value),
                         (dlarray.add(value, x), np.add(value, a)),
                         (dlarray.multiply(x, value), np.multiply(a, value))):
            assert got.dtype == ref.dtype, (value, got.dtype, ref.dtype)
            ref_dtype = np.dtype(ref.dtype)
            assert_complex_matches(got, ref, ref_dtype, RTOL[ref_dtype] * 64, what=repr(value))
        np.testing.assert_array_equal((x == value).asnumpy(), a == value)
        np.testing.assert_array_equal((x != value).asnumpy(), a != value)


def test_inplace_and_mixed_arrays(ctx):
    a = np.array([1 + 2j, -3j, 4], np.complex64)
    b = np.array([0.5, 2, -1], np.float32)
    x = dev(a, ctx)
    x += dev(b, ctx)
    x *= 2j
    np.testing.assert_allclose(x.asnumpy(), (a + b) * 2j, rtol=1e-6)
    y = dev(b, ctx) - dev(a, ctx)
    assert y.dtype == np.complex64
    np.testing.assert_allclose(y.asnumpy(), b - a, rtol=1e-6)
    np.testing.assert_array_equal((-dev(a, ctx)).asnumpy(), -a)
    np.testing.assert_allclose(abs(dev(a, ctx)).asnumpy(), np.abs(a), rtol=1e-6)
    z = dev(b, ctx)
    with pytest.raises(TypeError, match="same_kind|cannot be cast"):
        z += 1j  # a complex result cannot go into a real array


def test_complex_refused_where_the_standard_has_no_complex(ctx):
    x = dev(np.array([1 + 1j, 2], np.complex64), ctx)
    for fn in (dlarray.floor, dlarray.ceil, dlarray.trunc, dlarray.signbit, dlarray.logical_not,
               lambda v: dlarray.maximum(v, v), lambda v: dlarray.atan2(v, v),
               lambda v: dlarray.less(v, v), lambda v: dlarray.remainder(v, v)):
        with pytest.raises(TypeError, match="dtype"):
            fn(x)
    for fn in (lambda: x < x, lambda: x >= 1, lambda: dev(np.ones(2), ctx) > 1j):
        with pytest.raises(TypeError, match="no order"):
            fn()


@pytest.mark.parametrize("dtype", COMPLEX + [np.dtype(np.float32), np.dtype(np.bool_)], ids=str)
def test_complex_conversion(ctx, dtype):
    value = (1.5 - 2j) if dtype.kind == "c" else 1
    x = dlarray.asarray(np.array(value, dtype), device=ctx)
    assert complex(x) == complex(np.array(value, dtype))
    with pytest.raises((TypeError, ValueError)):
        complex(dlarray.asarray(np.ones(2, dtype), device=ctx))


REDUCE_SHAPES = [((), None), ((0,), None), ((1,), 0), ((7, 13), 1), ((7, 13), 0),
                 ((3, 0, 2), 1), ((2, 3, 5), (0, 2)), ((1025,), None), ((65536 + 3,), 0)]


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_reductions_match_numpy(ctx, rng, dtype):
    skip_unsupported(ctx, dtype)
    for shape, axis in REDUCE_SHAPES:
        a = complex_data(rng, shape, dtype, 1.0, special=False)
        x = dev(a, ctx)
        n = max(1, int(np.prod([shape[i] for i in np.atleast_1d(axis)]) if axis is not None
                       else np.prod(shape)))
        for name, ref_fn, rtol in (("sum", np.sum, RTOL[dtype] * n),
                                   ("prod", np.prod, RTOL[dtype] * n),
                                   ("mean", np.mean, RTOL[dtype] * n)):
            if name == "mean" and a.size == 0:
                continue
            got = getattr(dlarray, name)(x, axis=axis)
            ref = np.asarray(ref_fn(a.astype(C128), axis=axis))
            assert got.dtype == dtype, name
            assert_complex_matches(got, ref, dtype, rtol, what="%s %s %s" % (name, shape, axis))
        if a.ndim and isinstance(axis, int):
            for name, ref_fn in (("cumulative_sum", np.cumsum), ("cumulative_prod", np.cumprod)):
                got = getattr(dlarray, name)(x, axis=axis)
                ref = ref_fn(a.astype(C128), axis=axis)
                assert_complex_matches(got, ref, dtype, RTOL[dtype] * a.shape[axis],
                                       what="%s %s" % (name, shape))
    x = dev(np.array([1 + 2j, np.inf - 1j, complex(0, np.nan)], dtype), ctx)
    got = dlarray.sum(x).asnumpy()
    assert np.isinf(got.real) and np.isnan(got.imag)
    with pytest.raises(TypeError, match="imaginary"):
        dlarray.sum(x, dtype=np.float64)
    for fn in (dlarray.max, dlarray.min, dlarray.argmax, dlarray.argmin, dlarray.std):
        with pytest.raises(TypeError, match="complex"):
            fn(x)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_linear_algebra_matches_numpy(ctx, rng, dtype):
    skip_unsupported(ctx, dtype)
    for s1, s2 in (((3, 4), (4, 5)), ((1, 4, 7), (3, 7, 2)), ((5,), (5, 3)), ((1, 1), (1, 1)),
                   ((4, 0), (0, 3)), ((33, 65), (65, 17))):
        a = complex_data(rng, s1, dtype, 1.0, special=False)
        b = complex_data(rng, s2, dtype, 1.0, special=False)
        got = dlarray.matmul(dev(a, ctx), dev(b, ctx))
        assert_complex_matches(got, np.asarray(np.matmul(a.astype(C128), b)), dtype,
                               RTOL[dtype] * 64, what="matmul %s %s" % (s1, s2))
    # Past 2**20 products: four real GEMMs of the parts.
    a = complex_data(rng, (2, 96, 80), dtype, 1.0, special=False)
    b = complex_data(rng, (80, 140), dtype, 1.0, special=False)
    got = dlarray.matmul(dev(a, ctx), dev(b, ctx))
    assert_complex_matches(got, np.matmul(a.astype(C128), b), dtype, RTOL[dtype] * 256,
                           what="matmul by parts")
    a = complex_data(rng, (3, 9), dtype, 1.0, special=False)
    b = complex_data(rng, (3, 9), dtype, 1.0, special=False)
    ref = np.sum(np.conj(a.astype(C128)) * b, axis=-1)  # the standard conjugates x1
    assert_complex_matches(dlarray.vecdot(dev(a, ctx), dev(b, ctx)), ref, dtype,
                           RTOL[dtype] * 16, what="vecdot")
    ref = np.tensordot(a.astype(C128), b, axes=([1], [1]))
    got = dlarray.tensordot(dev(a, ctx), dev(b, ctx), axes=([1], [1]))
    assert_complex_matches(got, ref, dtype, RTOL[dtype] * 16, what="tensordot")


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_unique_groups_complex_values(ctx, rng, dtype):
    """unique_* order complex values by real part, then imaginary part (NumPy's order); every
    NaN is its own group."""
    skip_unsupported(ctx, dtype)
    for a in (np.array([1 + 2j, 3, 1 + 2j, 1 - 1j, complex(np.nan, 0), 3, 1 - 1j, 0], dtype),
              (rng.integers(-2, 3, 1500) + 1j * rng.integers(-2, 3, 1500)).astype(dtype)):
        got = dlarray.unique_all(dev(a, ctx))
        values, index, inverse, counts = np.unique(a, return_index=True, return_inverse=True,
                                                   return_counts=True, equal_nan=False)
        np.testing.assert_array_equal(got.values.asnumpy(), values)
        np.testing.assert_array_equal(got.indices.asnumpy(), index)
        np.testing.assert_array_equal(got.inverse_indices.asnumpy(), inverse)
        np.testing.assert_array_equal(got.counts.asnumpy(), counts)
    with pytest.raises(TypeError, match="no order"):
        dlarray.sort(dev(np.ones(2, dtype), ctx))
