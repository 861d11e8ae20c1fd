"""The array API standard's namespace constants, dtype objects, data type functions and
``__array_namespace_info__`` (2024.12), against the standard's tables and NumPy."""
import itertools

import numpy as np
import pytest

import dlarray as xp

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")

NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float32", "float64", "complex64", "complex128"]
INTS = [xp.int8, xp.int16, xp.int32, xp.int64, xp.uint8, xp.uint16, xp.uint32, xp.uint64]


def test_version_and_dtype_objects():
    assert xp.__array_api_version__ == "2024.12"
    for name in NAMES + ["float16", "bfloat16"]:
        dtype = getattr(xp, name)
        assert dtype == np.dtype(name if name != "bfloat16" else ml_dtypes.bfloat16)
        assert name in xp.__all__
    # The dtype objects are what arrays report.
    assert xp.asarray(np.arange(3, dtype=np.int16)).dtype == xp.int16
    assert xp.empty((2,), xp.cpu(0), "bfloat16").dtype == xp.bfloat16
    assert xp.bool != xp.uint8 and xp.float32 != xp.int32


# The standard's promotion table (same-kind cases) and NumPy 2's mixed ones.
PROMOTIONS = [
    ((xp.int8, xp.int16), xp.int16), ((xp.int32, xp.int64), xp.int64),
    ((xp.uint8, xp.uint16), xp.uint16), ((xp.uint32, xp.uint64), xp.uint64),
    ((xp.uint8, xp.int8), xp.int16), ((xp.uint16, xp.int16), xp.int32),
    ((xp.uint32, xp.int8), xp.int64), ((xp.float32, xp.float64), xp.float64),
    ((xp.float32, xp.complex64), xp.complex64), ((xp.float64, xp.complex64), xp.complex128),
    ((xp.complex64, xp.complex128), xp.complex128), ((xp.bool, xp.bool), xp.bool),
    ((xp.int8, 1), xp.int8), ((xp.uint8, 1), xp.uint8), ((xp.float32, 1.5), xp.float32),
    ((xp.float16, 1.5), xp.float16), ((xp.bfloat16, 1.5), xp.bfloat16),
    ((xp.bfloat16, xp.float32), xp.float32), ((xp.bfloat16, xp.float16), xp.float32),
    ((xp.complex64, 1.5), xp.complex64), ((xp.float32, 1j), xp.complex64),
    ((xp.bool, True), xp.bool), ((xp.int8, xp.int16, xp.int32), xp.int32),
]


@pytest.mark.parametrize("args, expected", PROMOTIONS, ids=str)
def test_result_type(args, expected):
    assert xp.result_type(*args) == expected
    assert xp.result_type(*reversed(args)) == expected


def test_result_type_of_arrays_and_errors():
    a = xp.asarray(np.zeros(3, np.int8))
    b = xp.asarray(np.zeros(3, np.float32))
    assert xp.result_type(a, b) == np.result_type(np.int8, np.float32)
    assert xp.result_type(a, 7) == xp.int8
    with pytest.raises(TypeError, match="at least one array or dtype"):
        xp.result_type(1, 2.0)
    with pytest.raises(TypeError, match="dlarray dtype"):
        xp.result_type("float32", xp.int8)
    with pytest.raises(TypeError, match="dlarray dtype"):
        xp.result_type(np.zeros(3), xp.int8)  # a NumPy array is not this namespace's


def test_can_cast_follows_promotion():
    for a, b in itertools.product(INTS + [xp.float32, xp.float64, xp.bool], repeat=2):
        if xp.result_type(a, b) == b and (a == b or xp.isdtype(a, "bool") == xp.isdtype(b, "bool")):
            assert xp.can_cast(a, b), (a, b)
    assert not xp.can_cast(xp.int16, xp.int8)
    assert not xp.can_cast(xp.float64, xp.float32)
    assert not xp.can_cast(xp.int64, xp.uint64)
    assert xp.can_cast(xp.asarray(np.zeros(2, np.int8)), xp.int64)
    with pytest.raises(TypeError, match="can_cast: to"):
        xp.can_cast(xp.int8, "int16")


KIND_MEMBERS = {
    "bool": [xp.bool],
    "signed integer": [xp.int8, xp.int16, xp.int32, xp.int64],
    "unsigned integer": [xp.uint8, xp.uint16, xp.uint32, xp.uint64],
    "real floating": [xp.float16, xp.bfloat16, xp.float32, xp.float64],
    "complex floating": [xp.complex64, xp.complex128],
}


def test_isdtype():
    every = [d for members in KIND_MEMBERS.values() for d in members]
    for kind, members in KIND_MEMBERS.items():
        for d in every:
            assert xp.isdtype(d, kind) == (d in members), (d, kind)
    for d in every:
        assert xp.isdtype(d, "integral") == (d in INTS)
        assert xp.isdtype(d, "numeric") == (d != xp.bool)
        assert xp.isdtype(d, d) and xp.isdtype(d, (xp.bool, d, "complex floating"))
    assert not xp.isdtype(xp.int8, (xp.bool, "real floating"))
    with pytest.raises(ValueError, match="unknown kind 'integer'"):
        xp.isdtype(xp.int8, "integer")
    with pytest.raises(TypeError, match="isdtype: dtype"):
        xp.isdtype("int8", "integral")


@pytest.mark.parametrize("dtype", [xp.float16, xp.bfloat16, xp.float32, xp.float64,
                                   xp.complex64, xp.complex128], ids=str)
def test_finfo(dtype):
    info = xp.finfo(dtype)
    real = {xp.complex64: np.float32, xp.complex128: np.float64}.get(dtype, dtype)
    ref = ml_dtypes.finfo(real) if real == xp.bfloat16 else np.finfo(real)
    assert info.dtype == real and info.bits == ref.bits
    for field in ("eps", "max", "min", "smallest_normal"):
        value = getattr(info, field)
        assert type(value) is float and value == float(getattr(ref, field)), field
    if dtype in (xp.float32, xp.float64):
        assert xp.finfo(xp.asarray(np.ones(2, dtype))).bits == info.bits


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_iinfo(dtype):
    info = xp.iinfo(dtype)
    ref = np.iinfo(dtype)
    assert (info.bits, info.min, info.max, info.dtype) == (ref.bits, ref.min, ref.max, dtype)
    assert type(info.min) is int and type(info.max) is int
    assert xp.iinfo(xp.asarray(np.zeros(1, dtype))).max == ref.max


def test_info_errors():
    with pytest.raises(TypeError, match="not a floating dtype"):
        xp.finfo(xp.int32)
    with pytest.raises(TypeError, match="not an integer dtype"):
        xp.iinfo(xp.float32)
    with pytest.raises(TypeError, match="finfo: type"):
        xp.finfo(float)


def test_array_namespace_info():
    info = xp.__array_namespace_info__()
    caps = info.capabilities()
    assert set(caps) == {"boolean indexing", "data-dependent shapes", "max dimensions",
                         "linalg host fallback", "fft host fallback"}  # issue 22's fallbacks
    assert caps["max dimensions"] == 64
    assert info.default_device() == xp.default_device()
    assert info.devices() == list(xp.devices())
    assert info.default_dtypes() == {"real floating": xp.float64, "complex floating": xp.complex128,
                                     "integral": xp.int64, "indexing": xp.int64}
    # The defaults are what asarray makes of Python numbers.
    assert xp.asarray(1.0).dtype == info.default_dtypes()["real floating"]
    assert xp.asarray(1).dtype == info.default_dtypes()["integral"]
    every = info.dtypes()
    assert every["float32"] == xp.float32 and every["bool"] == xp.bool
    assert every["complex64"] == xp.complex64 and every["complex128"] == xp.complex128
    assert set(info.dtypes(kind="integral")) == {str(d) for d in INTS}
    assert set(info.dtypes(kind=("bool", "real floating"))) == {"bool", "float32", "float64"}
    for device in info.devices():
        if repr(device).rsplit("(", 1)[0] in ("cpu", "cuda", "opencl"):
            assert info.dtypes(device=device) == every
        else:  # a test plugin's device, loaded by another file in this process: its own kernels
            assert set(info.dtypes(device=device)) <= set(every)
        assert info.default_dtypes(device=device) == info.default_dtypes()
    assert info.dtypes(device="cpu") == every
    with pytest.raises(ValueError):
        info.dtypes(device="no_such_device:0")
    with pytest.raises(ValueError, match="unknown kind"):
        info.dtypes(kind="floating")


def test_asarray_puts_host_data_on_the_default_device(ctx):
    # What lets the array API suite run per device (DLARRAY_DEFAULT_DEVICE): Python and NumPy data
    # go to the default device; an NDArray keeps its own.
    on_cpu = xp.asarray([1.0, 2.0], xp.cpu())
    with xp.using_device(ctx):
        for data in (1.5, [1, 2], 1j, np.arange(3)):
            x = xp.asarray(data)
            assert x.ctx == ctx
            np.testing.assert_array_equal(x.asnumpy(), np.asarray(data))
        assert xp.asarray(on_cpu).ctx == xp.cpu()
        assert xp.asarray([1.0], xp.cpu()).ctx == xp.cpu()
