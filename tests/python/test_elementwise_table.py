"""The ops of the elementwise definition table (runtime/include/dlarray/elementwise_table.h): each
one on every device and float dtype against NumPy in float64, at sizes that cross thread and block
boundaries, odd shapes, 0-d, empty and one element; IEEE special values; the declared gradients
through dlarray.autodiff, checked by finite differences; and the errors."""
import numpy as np
import pytest

import dlarray
from dlarray import autodiff as ad
from dlarray import ops

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")
BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
FLOATS = [F32, F16, BF16, F64]
SHAPES = [(), (0,), (1,), (7, 13), (257, 33), (3, 1029), (32768 + 5,)]

# Unit roundoff of each dtype; tolerances below are counts of it.
U = {F16: 2.0 ** -11, BF16: 2.0 ** -8, F32: 2.0 ** -24, F64: 2.0 ** -53}
TINY = {F16: 2.0 ** -24, BF16: 2.0 ** -133, F32: 2.0 ** -149, F64: 5e-324}

# name -> (reference in float64, inputs drawn for it)
UNARY = {
    "exp": (np.exp, lambda rng, s: rng.uniform(-20, 20, s)),
    "log": (np.log, lambda rng, s: np.exp(rng.uniform(-30, 30, s))),
    "tanh": (np.tanh, lambda rng, s: rng.standard_normal(s) * 2),
}


def _units(ctx, dtype):
    """Roundings a result may be off by: the 16-bit types are computed in float32 and rounded
    once; float32/float64 get the few ulp of the device's math library (OpenCL allows 3-5)."""
    if dtype in (F16, BF16):
        return 2
    return 12 if repr(ctx).startswith("opencl") else 8


def _assert_close(got, ref, dtype, units):
    got = got.astype(np.float64)
    assert got.shape == ref.shape
    nan = np.isnan(ref)
    np.testing.assert_array_equal(np.isnan(got), nan)
    inf = np.isinf(ref)
    np.testing.assert_array_equal(got[inf], ref[inf])
    # The reference rounded to the dtype, then the kernel's own error.
    fin = ~(nan | inf)
    rounded = ref.astype(dtype).astype(np.float64)
    err = np.abs(got[fin] - ref[fin])
    bound = units * U[dtype] * np.abs(ref[fin]) + np.abs(rounded[fin] - ref[fin]) + units * TINY[dtype]
    bad = err > bound
    assert not bad.any(), (got[fin][bad][:5], ref[fin][bad][:5])


def _dev(a, ctx):
    return dlarray.array(a, ctx, dtype=a.dtype)


def test_the_table_ops_are_declared_by_the_core():
    floats = ["bfloat16", "float16", "float32", "float64"]
    for name in list(UNARY) + ["tanh_gradient"]:
        info = ops.op_info(name)
        assert info["owner"] == "core"
        # exp, log and tanh take complex too (test_api_complex.py)
        complex_too = ["complex128", "complex64"] if name in UNARY else []
        assert sorted(info["dtypes"]) == sorted(floats + complex_too)
        assert info["allow_inplace"]
    assert ops.op_info("tanh_gradient")["input_names"] == ["y", "dy"]
    assert ops.op_info("exp")["gradients"] == [
        {"input": 0, "op": "matrix_elementwise_multiply", "args": [("output", 0), ("output_grad", 0)]}]
    assert ops.op_info("log")["gradients"] == [
        {"input": 0, "op": "matrix_elementwise_divide", "args": [("output_grad", 0), ("input", 0)]}]
    assert ops.op_info("tanh")["gradients"] == [
        {"input": 0, "op": "tanh_gradient", "args": [("output", 0), ("output_grad", 0)]}]
    assert "hyperbolic tangent" in ops.tanh.__doc__


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_numpy(ctx, rng, name, shape, dtype):
    reference, draw = UNARY[name]
    with np.errstate(all="ignore"):  # the 16-bit types overflow to inf or underflow to 0
        x = draw(rng, shape).astype(dtype)
        ref = reference(x.astype(np.float64))
    y = getattr(ops, name)(_dev(x, ctx))
    assert y.ctx == ctx and y.shape == shape and y.dtype == dtype
    _assert_close(y.asnumpy(), ref, dtype, _units(ctx, dtype))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_tanh_gradient_matches_numpy(ctx, rng, shape, dtype):
    y = rng.uniform(-1, 1, shape).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    got = ops.tanh_gradient(_dev(y, ctx), _dev(dy, ctx))
    y64, dy64 = y.astype(np.float64), dy.astype(np.float64)
    # Three roundings in the compute type (y*y, 1-, dy*): bound them relative to the terms.
    ref = dy64 * (1 - y64 * y64)
    slack = 4 * U[F32 if dtype in (F16, BF16) else dtype] * np.abs(dy64) * (1 + y64 * y64)
    rounded = ref.astype(dtype).astype(np.float64)
    err = np.abs(got.asnumpy().astype(np.float64) - ref)
    assert (err <= slack + np.abs(rounded - ref) + TINY[dtype]).all()


SPECIAL = {
    "exp": [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 88.72, 89.0, 709.0, -87.0, -103.0, -104.0,
            -110.0, -746.0, 1e-30],
    "log": [np.nan, np.inf, -np.inf, -1.0, -1e-30, 0.0, -0.0, 1.0, 2.0, 0.5, 1e-40, 1e-45,
            3.4e38, 1.7e308, 5e-324, 1.0000001],
    "tanh": [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 0.29, 0.3, 0.31, -0.31, 1.0, 9.0,
             20.0, -20.0, 400.0],
}


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_special_values(ctx, name, dtype):
    with np.errstate(all="ignore"):
        x = np.array(SPECIAL[name], np.float64).astype(dtype)
        ref = UNARY[name][0](x.astype(np.float64))
    got = getattr(ops, name)(_dev(x, ctx)).asnumpy()
    _assert_close(got, ref, dtype, _units(ctx, dtype))
    # Signed zeros as NumPy gives them: tanh(-0) = -0, log(+-0) = -inf, exp(-0) = 1.
    zero = np.flatnonzero((x == 0) & np.signbit(x))
    with np.errstate(all="ignore"):
        expect = UNARY[name][0](x[zero].astype(np.float64))
    np.testing.assert_array_equal(np.signbit(got[zero].astype(np.float64)), np.signbit(expect))


def test_in_place_and_outputs(ctx, rng):
    x = rng.standard_normal(1000).astype(np.float32)
    a = _dev(x, ctx)
    ops.tanh(a, a)
    _assert_close(a.asnumpy(), np.tanh(x.astype(np.float64)), F32, _units(ctx, F32))
    out = dlarray.empty((1000,), ctx)
    assert ops.exp(_dev(x, ctx), out) is out
    _assert_close(out.asnumpy(), np.exp(x.astype(np.float64)), F32, _units(ctx, F32))


def test_errors(ctx):
    x = dlarray.array(np.arange(6, dtype=np.int32), ctx, dtype="int32")
    with pytest.raises(TypeError, match="int32"):
        ops.exp(x)
    f = dlarray.array(np.ones(6, np.float32), ctx)
    with pytest.raises(ValueError, match="same shape"):
        ops.tanh_gradient(f, dlarray.array(np.ones(5, np.float32), ctx))
    with pytest.raises(ValueError, match="same shape"):
        ops.log(f, dlarray.empty((5,), ctx))
    with pytest.raises(TypeError):
        ops.tanh(f, dlarray.empty((6,), ctx, "float64"))


def _fd_check(name, f64, x0, ctx):
    """d/dx of sum(f(x) * c) by autodiff on ctx against central differences in float64."""
    x, c = ad.Variable("x"), ad.Variable("c")
    loss = ad.reducesumaxiszero_op(ad.reducesumaxiszero_op(getattr(ad.ops, name)(x) * c))
    grad, = ad.gradients(loss, [x])
    rng = np.random.default_rng(1)
    cv = rng.standard_normal(x0.shape).astype(np.float32)
    ex = ad.Executor([loss, grad], ctx=ctx)
    _, got = ex.run({x: x0, c: cv}, convert_to_numpy_ret_vals=True)
    h = 1e-6
    base = x0.astype(np.float64)
    numeric = (f64(base + h) - f64(base - h)) / (2 * h) * cv
    np.testing.assert_allclose(np.asarray(got), numeric, rtol=2e-4, atol=1e-5)


@pytest.mark.parametrize("exec_ctx", [None] + list(dlarray.devices()), ids=repr)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_declared_gradients_match_finite_differences(exec_ctx, name):
    rng = np.random.default_rng(0)
    x0 = rng.uniform(0.2, 2.0, (5, 7)).astype(np.float32)  # inside every function's domain
    _fd_check(name, UNARY[name][0], x0, exec_ctx)


# The arithmetic and relu ops of the table, checked bit for bit against NumPy in the dtype itself
# (NumPy and ml_dtypes compute the 16-bit types in float32 and round once, as the kernels do;
# integers wrap around in both). name -> (inputs, scalar attribute or None, NumPy's result).
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                              np.uint32, np.uint64)]
ARITH = {
    "matrix_elementwise_add": (["a", "b"], None, lambda a, b: a + b),
    "matrix_elementwise_multiply": (["a", "b"], None, lambda a, b: a * b),
    "matrix_elementwise_divide": (["a", "b"], None, lambda a, b: a / b),
    "matrix_elementwise_add_by_const": (["x"], "value", lambda x, v: x + v),
    "matrix_elementwise_multiply_by_const": (["x"], "value", lambda x, v: x * v),
    "matrix_elementwise_divide_by_const": (["x"], "value", lambda x, v: x / v),
    "relu": (["x"], None, lambda x: np.maximum(x, np.zeros_like(x))),
    "relu_gradient": (["x", "grad"], None, lambda x, g: g * (x > 0).astype(g.dtype)),
}
FLOAT_ONLY = {"matrix_elementwise_divide", "matrix_elementwise_divide_by_const", "relu",
              "relu_gradient"}
FLOAT_SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5, 3e38]


def _draw(rng, shape, dtype):
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.asarray(rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True))
    x = np.asarray(rng.standard_normal(shape) * 10).astype(dtype)
    flat = x.reshape(-1)
    with np.errstate(over="ignore"):
        flat[:len(FLOAT_SPECIALS)] = np.array(FLOAT_SPECIALS[:flat.size]).astype(dtype)
    return x


def _arith_cases():
    for name in sorted(ARITH):
        for dtype in FLOATS + ([] if name in FLOAT_ONLY else INTS):
            yield pytest.param(name, dtype, id=f"{name}-{dtype}")


def test_arithmetic_and_relu_are_declared_as_before():
    numeric = ["float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64",
               "uint8", "uint16", "uint32", "uint64"]
    for name, (inputs, attr, _) in ARITH.items():
        info = ops.op_info(name)
        assert info["owner"] == "core" and info["allow_inplace"]
        assert info["input_names"] == inputs
        assert info["attr_names"] == ([attr] if attr else [])
        # add, multiply and divide take complex too (first in the core's dtype order)
        complex_too = [] if "by_const" in name or "relu" in name else ["complex64", "complex128"]
        assert info["dtypes"] == complex_too + (numeric[:4] if name in FLOAT_ONLY else numeric)
    assert ops.op_info("relu")["gradients"] == [
        {"input": 0, "op": "relu_gradient", "args": [("input", 0), ("output_grad", 0)]}]
    assert ops.op_info("matrix_elementwise_divide")["gradients"] == []


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name, dtype", list(_arith_cases()))
def test_arithmetic_and_relu_match_numpy(ctx, rng, name, dtype, shape):
    inputs, attr, reference = ARITH[name]
    xs = [_draw(rng, shape, dtype) for _ in inputs]
    args = [_dev(x, ctx) for x in xs]
    if attr is not None:
        value = -3.7 if dtype in FLOATS else -300.9  # integers: truncated, wrapped into dtype
        args.append(value)
        xs.append(np.array(value).astype(dtype) if dtype in FLOATS
                  else np.array(int(value)).astype(dtype))
    with np.errstate(all="ignore"):
        ref = reference(*xs)
    got = getattr(ops, name)(*args)
    assert got.shape == shape and got.dtype == dtype
    wide = np.float64 if dtype in FLOATS else dtype  # exact; NumPy's NaN test needs a float
    np.testing.assert_array_equal(got.asnumpy().astype(wide), ref.astype(dtype).astype(wide))


@pytest.mark.parametrize("name", ["matrix_elementwise_add_by_const", "relu", "relu_gradient"])
def test_arithmetic_in_place(ctx, rng, name):
    inputs, attr, reference = ARITH[name]
    xs = [_draw(rng, (4099,), F32) for _ in inputs]
    arrays = [_dev(x, ctx) for x in xs]
    extra = [2.5] if attr else []
    with np.errstate(all="ignore"):
        ref = reference(*xs, *[np.float32(v) for v in extra])
    getattr(ops, name)(*arrays, *extra, arrays[0])
    np.testing.assert_array_equal(arrays[0].asnumpy(), ref)


def test_scalar_attribute_checks(ctx):
    i8 = dlarray.array(np.arange(6, dtype=np.int8), ctx, dtype="int8")
    with pytest.raises(ValueError, match="has no integer value"):
        ops.matrix_elementwise_add_by_const(i8, float("nan"))
    with pytest.raises(ValueError, match=r"out of the range of int64"):
        ops.matrix_elementwise_multiply_by_const(i8, 1e19)
    h = dlarray.array(np.ones(3, np.float16), ctx, dtype="float16")
    with pytest.raises(ValueError, match="float16 range"):
        ops.matrix_elementwise_divide_by_const(h, 1e5)
    with pytest.raises(TypeError, match="int8"):
        ops.matrix_elementwise_divide_by_const(i8, 2.0)
