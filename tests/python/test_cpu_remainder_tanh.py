"""The CPU's float32 vector forms of remainder (table_math.h: an exact fmod in double lanes, moved
into the divisor's sign) and tanh, on every instruction set path the backend dispatches
(baseline, avx2, avx512: each in a fresh process with DLARRAY_CPU_ISA, as test_isa_paths.py
forces them). remainder must equal NumPy's bit for bit (float32 fmod is exact; the sign move is
one float add in both); tanh must stay within a few ulp of float64's over a dense sweep of
float32, with NumPy's special values (signed zeros, +-1 past saturation, NaN). float64 tanh runs
through libmvec's vector tanh (vector_math.cc): within 4 ulp of long double, as its other rows;
float64 remainder through vector_math.cc's own form (AVX2 and AVX-512), bit for bit NumPy's."""
import pathlib

import numpy as np
import pytest

import dlarray
import proc_util

LIB = pathlib.Path(dlarray.__file__).resolve().parent / "lib"
PATHS = ["baseline", "avx2", "avx512"]
ISA_FLAGS = {"baseline": set(), "avx2": {"avx2", "fma", "bmi2"},
             "avx512": {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}}
TANH_ULPS = 3.0  # measured worst over every float below 10: 2.61 ulp (avx512), 2.68 (baseline)

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.5, 0.1, 1e-45, -1e-45,
                    1.17549435e-38, -1e-38, 3e38, -3e38, 2.0**23, 2.0**23 - 1, 2.0**24 - 1,
                    -(2.0**24), 7.0, -7.0], np.float32)


def cpu_flags():
    with open("/proc/cpuinfo") as f:
        return set(f.read().split("flags", 1)[1].split("\n", 1)[0].split())


def paths():
    """The ISA paths to test: each this CPU runs (portable build), else the one native plugin."""
    if not (LIB / "cpu_backend_baseline.so").exists():
        return [None]
    flags = cpu_flags()
    return [p for p in PATHS if ISA_FLAGS[p] <= flags]


def remainder_pairs(rng, n=1 << 18):
    """Operand pairs that reach every lane of the vector form and its scalar fallback."""
    bits = lambda: rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    sign = lambda: rng.choice(np.array([-1, 1], np.float32), n)
    pairs = [(bits(), bits()),  # every exponent, NaN and infinities among them
             (rng.uniform(-4, 4, n).astype(np.float32), rng.uniform(-4, 4, n).astype(np.float32))]
    # Ratios from 2^-40 to 2^40: the vector lanes (quotient below 2^23) and the fallback's.
    a = (np.exp2(rng.uniform(-30, 30, n)) * sign()).astype(np.float32)
    pairs.append((a, (np.exp2(rng.uniform(-30, 30, n)) * sign()).astype(np.float32)))
    # Quotients at integers (and one float step off them), where a rounded division would
    # give the wrong multiple: up to 2^24, past the vector lanes' 2^23.
    b = rng.uniform(0.5, 4, n).astype(np.float32)
    q = rng.integers(0, 2**24, n).astype(np.float32)
    a = (q * b).astype(np.float32)
    step = rng.integers(-1, 2, n).astype(np.float32)
    a = np.nextafter(a, a + step).astype(np.float32)
    pairs.append((a * sign(), b * sign()))
    # Subnormal divisors and dividends.
    tiny = (rng.integers(1, 2**23, n).astype(np.uint32)).view(np.float32) * sign()
    pairs.append((tiny, np.roll(tiny, 1)))
    x, y = (v.ravel() for v in np.meshgrid(SPECIAL, SPECIAL))
    pairs.append((x.copy(), y.copy()))
    return np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])


def remainder_pairs_f64(rng, n=1 << 17):
    """The float64 twins of remainder_pairs: quotients up to 2^53 (the vector lanes stop at 2^52)."""
    sign = lambda: rng.choice([-1.0, 1.0], n)
    bits = lambda: rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64)
    b = rng.uniform(0.5, 4, n)
    a = rng.integers(0, 2**53, n).astype(np.float64) * b
    a = np.nextafter(a, a + rng.integers(-1, 2, n))
    tiny = rng.integers(1, 2**52, n, dtype=np.uint64).view(np.float64) * sign()
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -2.5, 5e-324, -5e-324, 1.7e308,
                        -1.7e308, 2.0**52, 2.0**53 - 1, 0.1])
    x, y = (v.ravel() for v in np.meshgrid(special, special))
    pairs = [(bits(), bits()), (rng.uniform(-4, 4, n), rng.uniform(-4, 4, n)),
             (np.exp2(rng.uniform(-60, 60, n)) * sign(), np.exp2(rng.uniform(-60, 60, n)) * sign()),
             (a * sign(), b * sign()), (tiny, np.roll(tiny, 1)), (x, y)]
    return np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])


def tanh_sweep():
    """Every 331st float32 bit pattern (both signs, subnormals, NaN) and every float in the
    ranges where the formula changes or saturates, and the special values."""
    bits = np.arange(0, 2**32, 331, dtype=np.uint64).astype(np.uint32).view(np.float32)
    edges = [np.arange(np.float32(x).view(np.uint32) - 20000, np.float32(x).view(np.uint32) + 20000,
                       dtype=np.uint32).view(np.float32) for x in (0.3, 9.0, 9.0109, 1e-4)]
    x = np.concatenate([bits] + edges + [SPECIAL])
    return np.concatenate([x, -x])


CHILD = """
import numpy as np
import dlarray as xp
d = {d!r}
a, b, t, t64, a64, b64 = (np.load(d + '/' + k + '.npy')
                         for k in ('a', 'b', 't', 't64', 'a64', 'b64'))
np.save(d + '/rem.npy', xp.remainder(xp.asarray(a), xp.asarray(b)).asnumpy())
np.save(d + '/tanh.npy', xp.tanh(xp.asarray(t)).asnumpy())
np.save(d + '/tanh64.npy', xp.tanh(xp.asarray(t64)).asnumpy())
np.save(d + '/rem64.npy', xp.remainder(xp.asarray(a64), xp.asarray(b64)).asnumpy())
cfg = xp.show_config('dicts')['cpu']
print('ISA', cfg and cfg['isa'])
"""


def run_on(path, tmp_path, a, b, t, t64, a64, b64):
    for k, v in (("a", a), ("b", b), ("t", t), ("t64", t64), ("a64", a64), ("b64", b64)):
        np.save(tmp_path / f"{k}.npy", v)
    env = {"DLARRAY_CPU_ISA": path} if path else {}
    r = proc_util.run(CHILD.format(d=str(tmp_path)), env=env, timeout=300)
    assert r.returncode == 0, r
    if path:
        assert f"ISA {path}" in r.stdout, r
    return tuple(np.load(tmp_path / f"{k}.npy") for k in ("rem", "tanh", "tanh64", "rem64"))


def same_bits(got, want):
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    bits = np.uint32 if want.dtype == np.float32 else np.uint64
    bad = np.flatnonzero(got[~nan].view(bits) != want[~nan].view(bits))
    assert bad.size == 0, [(got[~nan][i], want[~nan][i]) for i in bad[:5]]


def check_tanh(x, got):
    with np.errstate(invalid="ignore"):  # signalling NaN patterns of the sweep
        want64 = np.tanh(x.astype(np.float64))
    want = want64.astype(np.float32)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    # Saturation and the signed zeros exactly; the rest within TANH_ULPS of float64's value.
    exact = ~nan & ((np.abs(want) == 1) | (x == 0))
    same_bits(got[exact], want[exact])
    with np.errstate(over="ignore"):
        tiny = np.float64(np.finfo(np.float32).smallest_subnormal)
        ulp = np.maximum(np.spacing(np.abs(want[~nan])).astype(np.float64), tiny)
    err = np.abs(got[~nan].astype(np.float64) - want64[~nan]) / ulp
    worst = np.argmax(err)
    assert err[worst] <= TANH_ULPS, (x[~nan][worst], got[~nan][worst], err[worst])
    np.testing.assert_array_equal(np.signbit(got[~nan]), np.signbit(want[~nan]))


@pytest.mark.parametrize("path", paths(), ids=lambda p: p or "native")
def test_remainder_and_tanh_on_every_isa_path(path, tmp_path):
    rng = np.random.default_rng(21)
    a, b = remainder_pairs(rng)
    t = tanh_sweep()
    t64 = tanh64_inputs(rng)
    a64, b64 = remainder_pairs_f64(rng)
    rem, th, th64, rem64 = run_on(path, tmp_path, a, b, t, t64, a64, b64)
    with np.errstate(all="ignore"):
        same_bits(rem, np.remainder(a, b))
        same_bits(rem64, np.remainder(a64, b64))
    check_tanh(t, th)
    check_tanh64(t64, th64)


def tanh64_inputs(rng, n=200000):
    """float64 operands from 1e-300 to past saturation (19 and up), both signs, the specials."""
    sign = rng.choice([-1.0, 1.0], n)
    return np.concatenate([rng.standard_normal(n) * 3, rng.uniform(-25, 25, n),
                           np.exp(rng.uniform(-690, 5, n)) * sign,
                           [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 19.0, 22.0, 710.0]])


def check_tanh64(x, got):
    ref = np.tanh(x.astype(np.longdouble))
    want = ref.astype(np.float64)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(np.signbit(got[~nan]), np.signbit(want[~nan]))
    err = np.abs(got[~nan].astype(np.longdouble) - ref[~nan]) / np.maximum(
        np.spacing(np.abs(want[~nan])), 5e-324)
    assert err.max() <= 4, (x[~nan][np.argmax(err)], float(err.max()))
    np.testing.assert_array_equal(got[np.abs(x) >= 20], np.sign(x[np.abs(x) >= 20]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 100003])
def test_remainder_tails_and_in_place(rng, n, dtype):
    # Sizes that leave a scalar tail (and one lone vector) on every vector width; in place.
    a = (rng.standard_normal(n) * 50).astype(dtype)
    b = (rng.standard_normal(n) * 3).astype(dtype)
    b[::5] = -b[::5]
    want = np.remainder(a, b)
    same_bits(dlarray.remainder(dlarray.asarray(a), dlarray.asarray(b)).asnumpy(), want)
    xa, xb = dlarray.asarray(a.copy()), dlarray.asarray(b)
    dlarray.ops.remainder(xa, xb, xa)
    same_bits(xa.asnumpy(), want)


def test_remainder_float16_keeps_the_scalar_loop(rng):
    # float16 computes in float32 and rounds once: NumPy's NaNs and zeros' signs at least.
    a, b = remainder_pairs(rng, 4096)
    with np.errstate(all="ignore"):
        a, b = a.astype(np.float16), b.astype(np.float16)
        want = np.remainder(a, b)
    got = dlarray.remainder(dlarray.asarray(a), dlarray.asarray(b)).asnumpy()
    assert got.dtype == np.float16
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))
