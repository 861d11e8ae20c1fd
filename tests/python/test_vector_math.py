"""The CPU's vectorised math functions (libmvec, backends/cpu/vector_math.cc) against a long-double
reference: float32 and float64, the whole domain from subnormals to overflow, special values
(NaN, +-inf, +-0, domain edges) exactly as NumPy gives them, sizes that end inside a vector and
cross the threads' split, and the switch that turns them off."""
import os
import subprocess
import sys

import numpy as np
import pytest

import dlarray as xp

CPU = xp.cpu(0)
# ours -> NumPy's name; the rows vector_math.cc serves.
UNARY = {"sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin", "acos": "arccos",
         "atan": "arctan", "sinh": "sinh", "cosh": "cosh", "asinh": "arcsinh",
         "acosh": "arccosh", "atanh": "arctanh", "expm1": "expm1", "log1p": "log1p",
         "log2": "log2", "log10": "log10"}
BINARY = {"pow": "power", "atan2": "arctan2", "hypot": "hypot"}  # pow: scalar, checked too
SPECIAL = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-30, -1e-30,
           1e30, -1e30, 88.7, 89.0, -104.0, 710.0, 1e-310, 3.0e38]
# Error bound in units in the last place: libmvec's documented bounds are 1-4 ulp.
ULPS = 4


def domain(dtype, n, rng):
    """n values spread over every binade of dtype, both signs, plus the special values."""
    info = np.finfo(dtype)
    exps = rng.uniform(np.log2(float(info.tiny)) - 8, np.log2(float(info.max)) - 1, n)
    x = (np.exp2(exps) * rng.choice([-1.0, 1.0], n)).astype(dtype)
    small = rng.uniform(-4, 4, n // 2).astype(dtype)  # where most of the functions' detail is
    with np.errstate(over="ignore"):
        special = np.array(SPECIAL).astype(dtype)
    return np.concatenate([special, small, x])


def reference(name, *args):
    with np.errstate(all="ignore"):
        return getattr(np, name)(*(a.astype(np.longdouble) for a in args))


def check(got, args, name, dtype):
    ref = reference(name, *args)
    with np.errstate(all="ignore"):
        want = ref.astype(dtype)  # the correctly rounded result (mostly)
        numpy_says = getattr(np, name)(*args)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan | np.isnan(numpy_says) & nan, err_msg=name)
    finite = np.isfinite(want) & ~nan
    inf = ~finite & ~nan
    np.testing.assert_array_equal(got[inf], want[inf], err_msg=name + ": infinities")
    zero = finite & (want == 0)
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(numpy_says[zero]),
                                  err_msg=name + ": signed zeros")
    # Within ULPS of the reference, measured in the reference's ulp (near overflow a result may
    # round to inf: the reference's last finite values are skipped).
    big = np.abs(want) >= np.finfo(dtype).max / 2
    keep = finite & ~big
    err = np.abs(got[keep].astype(np.longdouble) - ref[keep]) / np.spacing(np.abs(want[keep]))
    worst = int(np.argmax(err)) if err.size else 0
    assert err.size == 0 or err[worst] <= ULPS, (
        "%s(%s): %.1f ulp (got %r, want %r)" % (name, ", ".join(repr(a[keep][worst]) for a in args),
                                                 err[worst], got[keep][worst], want[keep][worst]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_within_ulps_of_long_double(name, dtype):
    a = domain(dtype, 70001, np.random.default_rng(1))
    got = getattr(xp, name)(xp.asarray(a, device=CPU)).asnumpy()
    assert got.dtype == dtype
    check(got, (a,), UNARY[name], dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_within_ulps_of_long_double(name, dtype):
    rng = np.random.default_rng(2)
    a = domain(dtype, 40003, rng)
    b = rng.permutation(domain(dtype, 40003, rng))
    if name == "pow":  # the interesting exponents are small; specials pair with specials too
        with np.errstate(invalid="ignore"):
            b = np.where(np.abs(b) > 64, np.round(b % 7), b).astype(dtype)
        b[:len(SPECIAL)] = np.array(SPECIAL[::-1]).astype(dtype)
    got = getattr(xp, name)(xp.asarray(a, device=CPU), xp.asarray(b, device=CPU)).asnumpy()
    check(got, (a, b), BINARY[name], dtype)


@pytest.mark.parametrize("n", [0, 1, 3, 15, 16, 17, 31, 1025, 65537])
def test_every_length_and_offset(n):
    """Lengths that end inside a vector (the padded tail) and views that start mid-vector."""
    a = np.linspace(-3, 3, n + 5).astype(np.float32)
    x = xp.asarray(a, device=CPU)
    for lo in (0, 3):
        got = xp.sin(x[lo:lo + n]).asnumpy()
        np.testing.assert_allclose(got, np.sin(a[lo:lo + n]), rtol=1e-6, atol=1e-7)
        got = xp.atan2(x[lo:lo + n], x[5 - lo:5 - lo + n]).asnumpy()
        np.testing.assert_allclose(got, np.arctan2(a[lo:lo + n], a[5 - lo:5 - lo + n]),
                                   rtol=1e-6, atol=1e-7)


def test_reported_and_switch_turns_it_off():
    status = xp.show_config(mode="dicts")["cpu"]["vector_math"]
    assert status.startswith("libmvec") or status.startswith("not found"), status
    code = ("import numpy as np, dlarray as xp; a = np.linspace(-9, 9, 1001).astype(np.float32);"
            "print(xp.show_config(mode='dicts')['cpu']['vector_math']);"
            "np.testing.assert_allclose(xp.sin(xp.asarray(a)).asnumpy(), np.sin(a), rtol=2e-6,"
            " atol=1e-7); print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, DLARRAY_VECTOR_MATH="0"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["off (DLARRAY_VECTOR_MATH=0)", "ok"]
