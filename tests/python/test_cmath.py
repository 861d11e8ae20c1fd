"""The complex transcendental functions (dlarray/complex_math.h on cpu and cuda, the same
algorithms in OpenCL C on opencl) at the edges of the range, against NumPy (glibc's): parts near the largest and smallest
finite values (1e300, 1e-300, subnormals; 3e38 and 1e-40 for complex64), where z * z, e^x or
|z|^2 overflow or underflow on the way to a representable result; near the branch points +-1 and
+-i; signed zeros. test_api_complex.py draws moderate values and the Annex G special values."""
import numpy as np
import pytest

import dlarray
from test_api_complex import C64, C128, PART, assert_complex_matches, skip_unsupported
from ufunc_util import dev

FUNCTIONS = {
    "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
}
# Parts of each size class: tiny (subnormal included), near 1 (the branch points), the sizes
# where e^x, sinh and cosh overflow (kLnMax and just past it) or tanh rounds to 1, and huge.
EDGES = {
    C64: [0.0, 1e-45, 1e-40, 1e-38, 1e-30, 1e-20, 1e-10, 1e-4, 0.5, 0.9999, 1.0, 1.0001, 1.5,
          3.0, 9.5, 30.0, 88.0, 89.0, 95.0, 150.0, 1e4, 1e5, 4e19, 1e30, 3e38],
    C128: [0.0, 5e-324, 1e-310, 1e-300, 1e-200, 1e-160, 1e-20, 1e-8, 0.5, 0.99999999, 1.0,
           1.0000001, 1.5, 3.0, 22.5, 30.0, 700.0, 710.0, 720.0, 1e7, 1e8, 4e19, 1e150, 1e300,
           1.7e308],
}
# A few ulp of the part type, relative to |result| (NumPy's: glibc's, correctly rounded or
# nearly so).
ULPS = 8
def edge_grid(dtype):
    """Every pair of EDGES and their negatives as (real, imaginary)."""
    v = np.array(EDGES[dtype] + [-x for x in EDGES[dtype]])
    re, im = np.meshgrid(v, v)
    z = np.empty(re.shape, C128)
    z.real, z.imag = re, im
    return z.reshape(-1).astype(dtype)


def random_range(rng, dtype, n):
    """Parts log-uniform over the whole exponent range, either sign; half the elements with one
    part of moderate size (where the other part's size matters most)."""
    top = 38 if dtype == C64 else 307
    parts = [rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-top, top, n) for _ in range(2)]
    moderate = rng.random(n) < 0.5
    parts[rng.integers(0, 2)][moderate] = rng.uniform(-5, 5, moderate.sum())
    z = np.empty(n, C128)
    z.real, z.imag = parts
    return z.astype(dtype)


def reference(name, z):
    with np.errstate(all="ignore"):
        return np.asarray(FUNCTIONS[name](z.astype(C128)))


def check(ctx, name, z, dtype):
    got = getattr(dlarray, name)(dev(z, ctx))
    ref = reference(name, z)
    eps = np.finfo(PART[dtype]).eps
    assert_complex_matches(got, ref, dtype, rtol=ULPS * eps, what=name)
    # Zero parts keep NumPy's sign for finite inputs (Annex G leaves some signs open beside
    # infinite and NaN ones).
    out = got.asnumpy()
    fin = np.isfinite(z.real) & np.isfinite(z.imag)
    for part in ("real", "imag"):
        o, r = getattr(out, part), getattr(ref.astype(dtype), part)
        zero = fin & (o == 0) & (r == 0)
        np.testing.assert_array_equal(np.signbit(o[zero]), np.signbit(r[zero]),
                                      err_msg="%s: the sign of a zero %s part" % (name, part))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("dtype", [C64, C128], ids=str)
def test_edges_of_the_range(ctx, name, dtype):
    skip_unsupported(ctx, dtype)
    check(ctx, name, edge_grid(dtype), dtype)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("dtype", [C64, C128], ids=str)
def test_whole_range(ctx, rng, name, dtype):
    """Random parts over every exponent, in an array past 65536 elements (several blocks and
    threads), against NumPy."""
    skip_unsupported(ctx, dtype)
    check(ctx, name, random_range(rng, dtype, 65536 + 7), dtype)


@pytest.mark.parametrize("dtype", [C64, C128], ids=str)
def test_reported_cases(ctx, dtype):
    """The cases that libcu++'s functions got wrong on CUDA (issue 21): inf for asinh of a
    large z (the answer is about 45), NaN for tan/tanh of a large part, Annex G's values
    beside a NaN part."""
    skip_unsupported(ctx, dtype)
    nan, inf = np.nan, np.inf
    cases = {
        "asinh": [(4e19, 1.0), (1.0, 4e19), (3e37, -3e37)],
        "asin": [(4e19, 1.0), (-1.0, 4e19)],
        "acosh": [(4e19, 1.0), (-3e37, 1.0), (0.0, nan)],
        "atan": [(4e19, 1.0), (1.0, -4e19), (1e4, 0.0)],
        "atanh": [(4e19, 1.0), (1.0, 1e-30), (1.0, 0.0)],
        "tanh": [(100.0, 1.0), (-1e4, 3.0), (0.0, inf), (0.0, nan)],
        "tan": [(1.0, 100.0), (3.0, -1e4)],
    }
    for name, values in cases.items():
        z = np.empty(len(values), C128)
        z.real, z.imag = zip(*values)
        check(ctx, name, z.astype(dtype), dtype)


@pytest.mark.parametrize("dtype", [C64, C128], ids=str)
def test_pow_general_case(ctx, rng, dtype):
    """a ** b beyond small integer exponents is exp(b log a) with C99's product (glibc's
    cpow, NumPy's): infinities recovered from a NaN product."""
    skip_unsupported(ctx, dtype)
    a = np.array([2 + 3j, -1.5 + 0.5j, 1e-3 - 4j, 0.5 + 0j, complex(np.inf, 1)], dtype)
    b = np.array([0.5 - 1j, 2.5 + 0j, -0.75 + 2j, 1j, 0.5 + 0j], dtype)
    with np.errstate(all="ignore"):
        ref = np.power(a.astype(C128), b.astype(C128))
    got = dlarray.pow(dev(a, ctx), dev(b, ctx))
    assert_complex_matches(got, ref, dtype, rtol=64 * np.finfo(PART[dtype]).eps, what="pow")
