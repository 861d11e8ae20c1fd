"""The primitives-only backend (tests/plugins/primitives_c, device "cprim:0"): a plugin in plain C
with kernels for the primitives alone must run the array API's functions, composed in Python,
exactly as NumPy computes them. It runs in a child process, where it is the default device (a
plugin cannot be unloaded, and the ``ctx`` fixture of the other tests must not see it)."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import TEST_PLUGIN_DIR

HERE = pathlib.Path(__file__).resolve().parent
SOURCES = HERE.parent / "plugins" / "primitives_c"

# Sizes: 0-d, empty, one element, odd shapes, and sizes crossing 1024 and 65536.
SHAPES = [(), (0,), (1,), (3, 5), (2, 0, 3), (1025,), (3, 7, 5), (65537,)]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float32", "float64"]
COMPLEX = ["complex64", "complex128"]
ALL = ["bool"] + INTS + FLOATS + COMPLEX
HALF = ["float16", "bfloat16"]  # not the standard's, but dlarray's and every backend's
REAL = ["bool"] + INTS + HALF + FLOATS


def _np_dtype(dtype):
    if dtype == "bfloat16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)


def data(dtype, shape, seed=0, nan=False):
    """Values of dtype and shape that every case may take; nan: a few NaN among floats."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype in HALF:
        values = rng.uniform(-4, 4, n)
        if nan and n > 4:
            values[rng.integers(0, n, 3)] = np.nan
        return values.astype(_np_dtype(dtype)).reshape(shape)
    if nan and dtype in FLOATS:
        values = data(dtype, shape, seed).reshape(-1)
        if n > 4:
            values[rng.integers(0, n, 3)] = np.nan
        return values.reshape(shape)
    if dtype == "bool":
        return rng.random(n).reshape(shape) < 0.5
    if dtype in INTS:
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), n,
                            endpoint=True).astype(dtype).reshape(shape)
    real = rng.uniform(-4, 4, n) + (rng.uniform(-4, 4, n) * 1j if dtype in COMPLEX else 0)
    return real.astype(dtype).reshape(shape)


def _elementwise(name, dtypes, arity=1):
    return [(f"{name}[{d}]", name, d, arity) for d in dtypes]


# (id, function of the namespace, dtype, inputs): one function of many dtypes at many shapes.
ELEMENTWISE = (_elementwise("add", ALL[1:], 2) + _elementwise("multiply", ALL[1:], 2)
               + _elementwise("subtract", ALL[1:], 2) + _elementwise("divide", FLOATS + COMPLEX, 2)
               + _elementwise("negative", ALL[1:]) + _elementwise("abs", INTS + FLOATS)
               + _elementwise("exp", FLOATS + COMPLEX) + _elementwise("log", FLOATS)
               + _elementwise("sqrt", COMPLEX) + _elementwise("tanh", FLOATS + COMPLEX)
               + _elementwise("sin", FLOATS + COMPLEX) + _elementwise("floor", FLOATS)
               + _elementwise("round", FLOATS) + _elementwise("sign", ALL[1:])
               + _elementwise("floor_divide", INTS + FLOATS, 2)
               + _elementwise("remainder", INTS + FLOATS, 2)
               + _elementwise("maximum", INTS + FLOATS, 2) + _elementwise("hypot", FLOATS, 2)
               + _elementwise("logaddexp", FLOATS, 2)
               + _elementwise("bitwise_xor", ["bool"] + INTS, 2)
               + _elementwise("bitwise_invert", INTS) + _elementwise("isnan", ALL)
               + _elementwise("equal", ALL, 2) + _elementwise("less", ALL[:-2], 2)
               + _elementwise("logical_and", ["bool"], 2) + _elementwise("real", COMPLEX)
               + _elementwise("imag", COMPLEX) + _elementwise("conj", COMPLEX)
               + _elementwise("log1p", COMPLEX) + _elementwise("expm1", COMPLEX)
               + _elementwise("add", HALF, 2) + _elementwise("multiply", HALF, 2)
               + _elementwise("exp", HALF) + _elementwise("floor_divide", HALF, 2)
               + _elementwise("maximum", HALF, 2) + _elementwise("isnan", HALF))

# (id, expression over xp and x (of dtype, (3, 7, 5), with NaN for the floats), dtypes): the
# reductions, scans, sorting and indexing primitives on every dtype they take.
PER_DTYPE = [
    ("sum", "xp.sum(x, axis=1)", ALL[1:] + HALF), ("prod", "xp.prod(x, axis=(0, 2))", ALL[1:]),
    ("max", "xp.max(x, axis=0)", REAL), ("min", "xp.min(x)", REAL),
    ("argmax", "xp.argmax(x, axis=1)", REAL), ("argmin", "xp.argmin(x, axis=2)", REAL),
    ("any", "xp.any(x, axis=1)", REAL), ("all", "xp.all(x, axis=(0, 1))", REAL),
    ("cumsum", "xp.cumulative_sum(x, axis=1)", ALL[1:]),
    ("sort", "xp.sort(x, axis=2)", REAL), ("argsort", "xp.argsort(x, axis=1, stable=True)", REAL),
    ("mask", "x[x != x[0, 0, 0]]", ALL + HALF),
    ("take", "xp.take(x, xp.asarray([4, 0, 4]), axis=1)", ALL + HALF),
    ("where", "xp.where(x == x[0, 0, 0], x[0], x)", ALL + HALF),
    ("strided_copy", "xp.permute_dims(xp.flip(x, axis=1), (2, 1, 0))[::2]", ALL + HALF),
    ("broadcast", "xp.broadcast_to(x[:, :1], (3, 7, 5)) == x", ALL + HALF),
    ("matmul", "x[0] @ x[1].T", FLOATS + HALF + COMPLEX),
]
PER_DTYPE_CASES = [(f"{key}[{d}]", expr, d) for key, expr, dtypes in PER_DTYPE for d in dtypes]
# astype between every pair the standard allows (complex to real is refused), of values in
# [0, 100) that every dtype holds.
ASTYPE = [(a, b) for a in ALL + HALF for b in ALL + HALF if not (a in COMPLEX and b not in COMPLEX)]

# (id, expression over the namespace xp and the arrays x (float64 (3, 7, 5)), i (int32 (3, 7,
# 5)), b (bool (3, 7, 5)), c (complex128 (4, 3)), e (float32 (0, 4)), big (float32 (65537,)),
# and NumPy's expression of the same where it differs (np).
COMPOSITES = [
    ("sum_axes", "xp.sum(x, axis=(0, 2))"),
    ("prod_keepdims", "xp.prod(i[:1], axis=1, keepdims=True)"),
    ("max", "xp.max(x, axis=1)"), ("min_int", "xp.min(i, axis=(0, 1))"),
    ("mean_std", "xp.std(x, axis=0, correction=1) + xp.mean(x)"), ("var", "xp.var(big)"),
    ("argmax", "xp.argmax(x, axis=2)"), ("argmin_flat", "xp.argmin(i)"),
    ("any_all", "xp.any(b, axis=0) & xp.all(b, axis=2)[:, :, None]"),
    ("count_nonzero", "xp.count_nonzero(b, axis=1)"), ("sum_empty", "xp.sum(e, axis=0)"),
    ("sum_complex", "xp.sum(c, axis=0)"), ("sum_big", "xp.sum(big)"),
    ("cumsum", "xp.cumulative_sum(i, axis=1)"),
    ("cumprod_initial", "xp.cumulative_prod(x[:, :3], axis=1, include_initial=True)"),
    ("sort_desc", "xp.sort(x, axis=1, descending=True)", "np.flip(np.sort(x, axis=1), axis=1)"),
    ("argsort", "xp.argsort(i, axis=0)", "np.argsort(i, axis=0, stable=True)"),
    ("argsort_desc", "xp.argsort(i, axis=0, descending=True)",
     "2 - np.flip(np.argsort(np.flip(i, axis=0), axis=0, stable=True), axis=0)"),
    ("argsort_big", "xp.argsort(big)", "np.argsort(big, stable=True)"),
    ("unique", "xp.sort(xp.unique_values(i))"),
    ("searchsorted", "xp.searchsorted(xp.sort(big), big[:100])"),
    ("mask_get", "x[x > 0]"), ("nonzero", "xp.stack(xp.nonzero(b))"),
    ("take", "xp.take(x, xp.asarray([2, 0, -1, 0]), axis=1)"),
    ("take_along", "xp.take_along_axis(x, xp.argsort(x, axis=2), axis=2)"),
    ("where", "xp.where(b, x, -x)"), ("where_int", "xp.where(b, i, 7)"),
    ("broadcast", "x + xp.ones((5,), dtype=xp.float64)"),
    ("transpose_copy", "xp.permute_dims(x, (2, 0, 1)) * 1"),
    ("flip_roll", "xp.roll(xp.flip(i, axis=1), 3, axis=1)"),
    ("concat", "xp.concat([x, x[:1]], axis=0)"),
    ("tile_repeat", "xp.repeat(xp.tile(i[0], (2, 1)), 2, axis=0)"),
    ("astype", "xp.astype(x * 30, xp.int8)"), ("astype_uint", "xp.astype(i, xp.uint16)"),
    ("astype_complex", "xp.astype(x, xp.complex64)"), ("astype_bool", "xp.astype(x, xp.bool)"),
    ("matmul", "xp.matmul(x, xp.permute_dims(x, (0, 2, 1)))"), ("matmul_int", "i[0] @ i[1].T"),
    ("matmul_complex", "c @ xp.conj(c).T"),
    ("tensordot", "xp.tensordot(x, x, axes=([0, 2], [0, 2]))"),
    ("full", "xp.full((4, 3), -7, dtype=xp.int16)"), ("full_bool", "xp.full((7,), True)"),
    ("ones_int8", "xp.ones((3, 1025), dtype=xp.int8)"), ("zeros_like", "xp.zeros_like(i)"),
    ("full_complex", "xp.full((2, 3), 1 - 2j)"), ("arange", "xp.arange(3, 40, 3.5)"),
    ("linspace", "xp.linspace(-1, 1, 1025)"), ("eye", "xp.eye(4, 5, k=1, dtype=xp.uint8)"),
    ("setitem", "_set(x)"), ("clip", "xp.clip(x, -1, 2)"), ("diff", "xp.diff(i, axis=1, n=2)"),
    ("pow_int", "i ** 2"), ("scalar_ops", "(i + 300) * 3 // 7 - (i % 5)"),
    ("compare_scalar", "(x >= 0.5) | (i == 3)"),
    ("inv", "xp.linalg.inv(x[0, :5] + 10 * xp.eye(5, dtype=xp.float64))"),
    ("fft", "xp.fft.fft(c, axis=0)"),
]


def numpy_value(expr, x):
    """NumPy's value of expr; bfloat16 (ml_dtypes, whose sort is not NaN-aware and whose matmul
    gives float32) computed in float32 and rounded back."""
    if str(x.dtype) != "bfloat16":
        return np.asarray(eval(expr, {"xp": np}, {"x": x}))
    want = np.asarray(eval(expr, {"xp": np}, {"x": x.astype(np.float32)}))
    return want.astype(x.dtype) if want.dtype == np.float32 else want


def _set(x):
    """Boolean-mask and integer-array assignment (scatter)."""
    y = x * 1
    y[y > 1] = 0.5
    y[:, 2] = -1.0
    return y


CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import dlarray as xp
    sys.path.insert(0, sys.argv[1])
    import test_primitives_backend as t

    assert xp.__array_namespace_info__().default_device() == xp.device("cprim:0")
    results = {}

    def check(key, compute):
        try:
            ours, want = compute()
            got = ours.asnumpy()
            assert ours.device == xp.device("cprim:0"), ours.device
            assert got.dtype == want.dtype, (got.dtype, want.dtype)
            assert got.shape == want.shape, (got.shape, want.shape)
            if str(want.dtype) in t.HALF:  # rounded once more than NumPy's at times
                np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                                           rtol=1e-2, atol=1e-2, equal_nan=True)
            elif want.dtype.kind in "fc":
                tol = 2e-6 if want.dtype in (np.float32, np.complex64) else 1e-12
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
            else:
                np.testing.assert_array_equal(got, want)
            results[key] = "ok"
        except Exception as e:  # noqa: BLE001: reported back to the test
            results[key] = "%s: %s" % (type(e).__name__, e)

    for key, name, dtype, arity in t.ELEMENTWISE:
        for shape in t.SHAPES:
            args = [t.data(dtype, shape, seed) for seed in range(arity)]
            if name in ("floor_divide", "remainder") and dtype in t.INTS:
                args[1] = np.where(args[1] == 0, 3, args[1]).astype(dtype)
            check(key + str(shape), lambda: (getattr(xp, name)(*[xp.asarray(a) for a in args]),
                                             getattr(np, name)(*args)))
    arrays = {"x": t.data("float64", (3, 7, 5)), "i": t.data("int32", (3, 7, 5), 1),
              "b": t.data("bool", (3, 7, 5), 2), "c": t.data("complex128", (4, 3), 3),
              "e": t.data("float32", (0, 4)), "big": t.data("float32", (65537,), 4)}
    for key, expr, *np_expr in t.COMPOSITES:
        check(key, lambda: (eval(expr, {"xp": xp, "_set": t._set},
                                 {k: xp.asarray(v) for k, v in arrays.items()}),
                            np.asarray(eval((np_expr or [expr])[0],
                                            {"xp": np, "np": np, "_set": t._set}, dict(arrays)))))
    for key, expr, dtype in t.PER_DTYPE_CASES:
        x = t.data(dtype, (3, 7, 5), nan=True)
        check(key, lambda: (eval(expr, {"xp": xp}, {"x": xp.asarray(x)}), t.numpy_value(expr, x)))
    for a, b in t.ASTYPE:
        x = t.data(a, (1025,))
        x = (np.abs(x) * 25 if a not in ("bool",) else x).astype(x.dtype)  # in [0, 100)
        check("astype[%s->%s]" % (a, b),
              lambda: (xp.astype(xp.asarray(x), t._np_dtype(b)), x.astype(t._np_dtype(b))))
    print(json.dumps(results))
""")


def _plugin():
    plugin = TEST_PLUGIN_DIR / "cprim_plugin.so" if TEST_PLUGIN_DIR is not None else None
    if plugin is None or not plugin.is_file():
        pytest.skip("cprim_plugin.so was not built (DLARRAY_BUILD_TESTS)")
    return plugin


@pytest.fixture(scope="module")
def results():
    plugin = _plugin()
    run = subprocess.run([sys.executable, "-c", CHILD, str(HERE)], capture_output=True, text=True,
                         env=dict(os.environ, DLARRAY_PLUGIN_PATH=str(plugin),
                                  DLARRAY_DEFAULT_DEVICE="cprim:0"), timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", ELEMENTWISE, ids=[c[0] for c in ELEMENTWISE])
def test_elementwise_matches_numpy(results, case):
    if "bfloat16" in case[0]:
        pytest.importorskip("ml_dtypes")
    failures = {k: v for k, v in results.items()
                if k.startswith(case[0] + "(") and v != "ok"}
    assert not failures, failures
    assert sum(k.startswith(case[0] + "(") for k in results) == len(SHAPES)


@pytest.mark.parametrize("key", [c[0] for c in COMPOSITES] + [c[0] for c in PER_DTYPE_CASES]
                         + ["astype[%s->%s]" % pair for pair in ASTYPE])
def test_composites_match_numpy(results, key):
    if "bfloat16" in key:
        pytest.importorskip("ml_dtypes")
    assert results[key] == "ok", results[key]


def _child(code, plugin):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=dict(os.environ, DLARRAY_PLUGIN_PATH=str(plugin)),
                          timeout=300)


def test_only_primitives_and_clear_errors():
    """The plugin registers kernels for the primitives and nothing else; an op without a kernel
    there, and an index out of bounds in a primitive, are clear Python errors."""
    plugin = _plugin()
    run = _child("""
        import json, numpy as np, dlarray
        rec = next(p for p in dlarray.plugins() if p["name"] == "cprim")
        dev = dlarray.device("cprim:0")
        errors = []
        x = dlarray.asarray(np.ones((2, 3), np.float32), device=dev)
        for call in (lambda: dlarray.ops.softmax(x),
                     lambda: dlarray.ops.gather(dlarray.reshape(x, (1, 2, 3)),
                                                dlarray.asarray([5], device=dev))):
            try:
                call()
            except Exception as e:
                errors.append([type(e).__name__, str(e)])
        print(json.dumps({"status": rec["status"], "ops": rec["ops"], "errors": errors}))
    """, plugin)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["status"] == "loaded"
    outside = {"copy", "astype", "broadcast_to", "array_set", "where", "compare",
               "compare_by_const", "reduce", "scan", "matrix_multiply", "gather", "scatter",
               "nonzero", "argsort"}
    # Every op of the SDK's elementwise definition table, and no other.
    header = (HERE.parents[1] / "runtime/include/dlarray/elementwise_table.h").read_text()
    table = set(re.findall(r"\b(?:X1|X2|XS|P1|P2|R1)\((\w+),", header)) - {"name"}
    assert len(table) > 70 and {"relu", "exp", "bitwise_invert", "isnan", "real"} <= table
    assert set(report["ops"]) == outside | table
    (kind, message), (kind2, message2) = report["errors"]
    assert kind == "RuntimeError" and "no kernel is registered for cprim" in message
    # The raw primitive's error (the array API's functions raise it as an IndexError).
    assert kind2 == "ValueError" and "gather: index 5 is out of bounds" in message2


def test_builds_against_the_installed_sdk(tmp_path):
    """The sources compile as C99 with the installed package's headers alone (no core library:
    -Wl,--no-undefined), and the library they make serves the device."""
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        pytest.skip("no C compiler")
    include = subprocess.run([sys.executable, "-m", "dlarray", "--include-dir"],
                             capture_output=True, text=True, check=True).stdout.strip()
    lib = tmp_path / "cprim_from_sdk.so"
    subprocess.run([cc, "-std=c99", "-O1", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-fPIC",
                    "-fvisibility=hidden", "-shared", "-I" + include,
                    *sorted(str(p) for p in SOURCES.glob("*.c")), "-o", str(lib), "-lm",
                    "-Wl,--no-undefined"], check=True)
    run = _child("""
        import numpy as np, dlarray
        x = dlarray.asarray(np.arange(6.0).reshape(2, 3), device="cprim:0")
        print(float(dlarray.sum(dlarray.exp(x) * x)))
    """, lib)
    assert run.returncode == 0, run.stderr
    ref = np.sum(np.exp(np.arange(6.0)) * np.arange(6.0))
    assert abs(float(run.stdout) - ref) < 1e-9 * ref
