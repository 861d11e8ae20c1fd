"""One dtype parser for every entry point that takes a dtype, and bfloat16's promotion (issue 26,
defect 9): ``astype('bfloat16')`` raised "data type 'bfloat16' not understood" while
``array(..., dtype='bfloat16')`` took it, and ``bf16 + f16`` leaked NumPy's DTypePromotionError."""
import numpy as np
import pytest

import dlarray
from dlarray import _core, ndarray
from proc_util import run

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)

NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64", "bfloat16"]


def _spellings(name):
    """Every way a caller may write the dtype: its name, the numpy dtype, the scalar type, the
    type code, and the Python type where there is one."""
    if name == "bfloat16":
        return [("str", "bfloat16"), ("dtype", BF16), ("type", ml_dtypes.bfloat16)]
    dt = np.dtype(name)
    out = [("str", name), ("dtype", dt), ("type", dt.type), ("code", dt.str[1:])]
    python = {"bool": bool, "int64": int, "float64": float}.get(name)
    if python is not None:
        out.append(("python", python))
    return out


CASES = [(name, kind, spec) for name in NAMES for kind, spec in _spellings(name)]
CASE_IDS = ["%s-%s" % (name, kind) for name, kind, _ in CASES]


def _entry_points(ctx):
    """Every public entry point taking a dtype: (name, call(dtype) -> NDArray)."""
    src = dlarray.array([1, 0, 1], ctx, np.float32)
    return [
        ("dlarray.empty", lambda d: dlarray.empty((3,), ctx, d)),
        ("dlarray.array", lambda d: dlarray.array([1, 0, 1], ctx, d)),
        ("dlarray.array(NDArray)", lambda d: dlarray.array(src, ctx, d)),
        ("dlarray.asarray", lambda d: dlarray.asarray([1, 0, 1], ctx, d)),
        ("dlarray.asarray(NDArray)", lambda d: dlarray.asarray(src, ctx, d)),
        ("ndarray.empty", lambda d: ndarray.empty((3,), ctx, d)),
        ("ndarray.array", lambda d: ndarray.array([1, 0, 1], ctx, d)),
        ("NDArray.astype", lambda d: src.astype(d)),
        ("NDArray.astype(copy=False)", lambda d: src.astype(d, copy=False)),
        ("_core.empty", lambda d: _core.empty((3,), ctx, d)),
        ("_core.array", lambda d: _core.array([1, 0, 1], ctx, d)),
    ]


@pytest.mark.parametrize("name,kind,spec", CASES, ids=CASE_IDS)
def test_every_entry_point_takes_every_spelling(ctx, name, kind, spec):
    want = BF16 if name == "bfloat16" else np.dtype(name)
    assert _core.parse_dtype(spec) == want
    for entry, call in _entry_points(ctx):
        got = call(spec)
        assert got.dtype == want, "%s(%r) gave %s" % (entry, spec, got.dtype)
        assert got.shape == (3,)
    x = dlarray.array([1, 0, 1], ctx, spec)
    np.testing.assert_array_equal(x.asnumpy().astype(np.float64), [1, 0, 1])
    # the ops' output inference takes the same spellings
    (shape, dtype), = _core.infer_outputs("copy", [(3,)], [spec], [])
    assert shape == (3,) and dtype == want


BAD = [("unknown name", "floaty"), ("long double complex", np.clongdouble), ("object", object),
       ("a number", 3.5), ("a list", [1]), ("a string dtype", np.dtype("U3"))]


@pytest.mark.parametrize("spec", [b for _, b in BAD], ids=[a for a, _ in BAD])
def test_bad_dtypes_raise_type_error_naming_the_argument(ctx, spec):
    with pytest.raises(TypeError, match="dtype"):
        _core.parse_dtype(spec)
    for entry, call in _entry_points(ctx):
        with pytest.raises(TypeError, match="dtype") as info:
            call(spec)
        assert "Unable to cast" not in str(info.value), entry


def test_astype_bfloat16_string_round_trips(ctx):
    x = dlarray.array([1.5, -2.0, 3.25], ctx, np.float32)
    y = x.astype("bfloat16")
    assert y.dtype == BF16
    np.testing.assert_array_equal(y.astype("float32").asnumpy(), [1.5, -2.0, 3.25])


# bfloat16 promotes as float16 does in NumPy, except that the two together give float32.
PROMOTIONS = [
    (BF16, np.float16, np.float32), (np.float16, BF16, np.float32), (BF16, BF16, BF16),
    (BF16, np.float32, np.float32), (BF16, np.float64, np.float64), (BF16, np.int8, BF16),
    (BF16, np.uint8, BF16), (BF16, np.int16, np.float32), (BF16, np.int32, np.float64),
    (BF16, np.int64, np.float64), (BF16, np.bool_, BF16),
]


@pytest.mark.parametrize("a,b,want", PROMOTIONS,
                         ids=["%s-%s" % (np.dtype(a).name, np.dtype(b).name)
                              for a, b, _ in PROMOTIONS])
def test_bfloat16_promotion(ctx, a, b, want):
    ha = np.array([1.0, 2.0, 3.0]).astype(a)
    hb = np.array([0.5, 4.0, 1.0]).astype(b) if np.dtype(b).kind == "f" or b is BF16 else \
        np.array([1, 4, 1]).astype(b)
    x, y = dlarray.array(ha, ctx, a), dlarray.array(hb, ctx, b)
    exact = ha.astype(np.float64) + hb.astype(np.float64)
    for result in (x + y, y + x):
        assert result.dtype == np.dtype(want)
        np.testing.assert_allclose(result.asnumpy().astype(np.float64), exact, rtol=1e-2)
    assert (x == y).dtype == np.bool_
    np.testing.assert_array_equal((x == y).asnumpy(), ha.astype(np.float64) == hb.astype(
        np.float64))


def test_bfloat16_with_python_scalars_stays_bfloat16(ctx):
    x = dlarray.array([1.0, 2.0], ctx, "bfloat16")
    for result in (x + 1.5, 1.5 * x, x - 1, x / 2):
        assert result.dtype == BF16, result
    np.testing.assert_array_equal((x + 1.5).astype("float32").asnumpy(), [2.5, 3.5])
    assert (x + np.float16(1)).dtype == np.float32  # a NumPy scalar is strong: float16
    assert (x @ dlarray.array([1.0, 1.0], ctx, np.float16)).dtype == np.float32


@pytest.mark.parametrize("name,kind,spec", CASES, ids=CASE_IDS)
def test_array_protocol_takes_every_spelling(name, kind, spec):
    """__array__(dtype) is an entry point too (NumPy passes it a dtype; callers any spelling).
    The name 'bfloat16' is tried in a fresh interpreter: ml_dtypes, once imported by any test,
    registers it with NumPy."""
    if (name, kind) != ("bfloat16", "str"):
        out = dlarray.array([1, 0, 1]).__array__(spec)
        assert out.dtype == (BF16 if name == "bfloat16" else np.dtype(name))
        return
    r = run("import dlarray\n"
            "print(dlarray.array([1, 0, 1]).__array__('bfloat16').dtype)\n", timeout=120)
    assert r.returncode == 0, r
    assert r.stdout.split()[-1] == "bfloat16"


def test_custom_ops_and_rtc_parse_dtypes_the_same_way():
    # dlarray.custom's out_dtype takes every spelling the arrays take (bfloat16 included) ...
    from dlarray import custom
    from dlarray._rtc_source import c_type
    for spelling in ("bfloat16", BF16, "float16", np.float32, "int8"):
        assert custom._dtype(spelling) == dlarray._core.parse_dtype(spelling)
    with pytest.raises(TypeError, match=r"dlarray.custom: 'float128x' is not a dtype"):
        custom._dtype("float128x")
    # ... and rtc names the dtype it has no C type for, instead of NumPy's "not understood".
    assert c_type("float32", "x") == "float" and c_type(np.int64, "x") == "long long"
    with pytest.raises(TypeError, match=r"x: dlarray.rtc has no C type for dtype bfloat16"):
        c_type("bfloat16", "x")
