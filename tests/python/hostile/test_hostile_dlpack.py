"""Hostile DLPack exchanges (issue 26): capsules whose strides, byte_offset or device overflow,
producers that report impossible devices, and arguments of __dlpack__ / from_dlpack of the wrong
type or range. Each must raise a standard exception naming the field or argument, never crash
(a crash was the audit's finding for the first two) or import a wrong array. The cases run in
one child interpreter."""
import numpy as np
import pytest

import dlarray
import proc_util
from hostile_util import raises
from dlpack_util import Producer, arange_producer


CASES = {}


def _refused(fields, exc, *words):
    def case():
        for versioned in (True, False):
            p = arange_producer(4, versioned=versioned, **fields)
            raises(exc, lambda: dlarray.from_dlpack(p), *words)
            assert p.deleted == 1, f"deleter called {p.deleted} times (versioned={versioned})"
    return case


# --- layouts whose byte span overflows (the audit's crash 1) ---------------------------------
BAD_LAYOUTS = {
    "strides_2_61": dict(shape=[2, 2], strides=[2**61, 1]),  # the audit's case
    "strides_minus_2_61": dict(shape=[2, 2], strides=[-2**61, 1]),
    "strides_2_62_times_2": dict(shape=[3], strides=[2**62]),
    "strides_int64_max": dict(shape=[2], strides=[2**63 - 1]),
    "strides_int64_min": dict(shape=[2], strides=[-2**63]),
    "sum_of_steps": dict(shape=[2, 2], strides=[2**60, 2**60 + 2**59]),  # each fits, the sum not
    "span_both_ways": dict(shape=[2, 2], strides=[2**60, -2**60]),  # hi - lo: 2**63 + 4 bytes
    "offset_plus_span": dict(shape=[2], strides=[2**60], byte_offset=2**62),
}
for _name, _fields in BAD_LAYOUTS.items():
    CASES[f"layout_{_name}"] = _refused(_fields, ValueError, "strides")

# --- byte_offset (the audit's crash 2) -------------------------------------------------------
for _name, _offset in {"2_63_plus_8": 2**63 + 8, "2_63": 2**63, "uint64_max": 2**64 - 4}.items():
    CASES[f"byte_offset_{_name}"] = _refused(dict(shape=[3], byte_offset=_offset), ValueError,
                                             "byte_offset")
CASES["byte_offset_misaligned"] = _refused(dict(shape=[3], byte_offset=2), ValueError,
                                           "aligned")
CASES["byte_offset_wraps_the_address_space"] = _refused(
    dict(shape=[2], data=2**64 - 64, byte_offset=2**62), ValueError, "address space")
CASES["negative_strides_before_address_0"] = _refused(
    dict(shape=[3], strides=[-1], data=4), ValueError, "address space")


def _good_layouts():
    # What a producer may legitimately send still reads right: offsets, negative strides.
    for versioned in (True, False):
        for fields, want in [(dict(shape=[4], byte_offset=12), [3, 4, 5, 6]),
                             (dict(shape=[4], strides=[-1], byte_offset=28), [7, 6, 5, 4]),
                             (dict(shape=[2, 2], strides=[-4, 2], byte_offset=16), [[4, 6],
                                                                                   [0, 2]]),
                             (dict(shape=[1, 3], strides=[2**62 + 1, 2]), [[0, 2, 4]]),
                             (dict(shape=[0], byte_offset=2**63 - 4), np.zeros(0))]:
            p = arange_producer(8, versioned=versioned, **fields)
            x = dlarray.from_dlpack(p)
            np.testing.assert_array_equal(x.asnumpy(), np.asarray(want, np.float32))
            del x
            assert p.deleted == 1


CASES["good_layouts"] = _good_layouts

# --- device numbers that do not fit DLPack's int32 (the audit's defect 7) --------------------
BAD_DEVICES = {
    "type_2_32_plus_1": ((2**32 + 1, 0), OverflowError),  # was read as cpu(0)
    "id_2_32": ((1, 2**32), OverflowError),
    "type_2_70": ((2**70, 0), OverflowError),
    "type_string": (("cpu", 0), TypeError),
    "type_float": ((1.0, 0), TypeError),
    "triple": ((1, 0, 0), BufferError),
    "list": ([1, 0], BufferError),
}
for _name, (_dev, _exc) in BAD_DEVICES.items():
    CASES[f"dlpack_device_{_name}"] = (lambda d=_dev, e=_exc: raises(
        e, lambda: dlarray.from_dlpack(arange_producer(4, shape=[4], dlpack_device=d)),
        "__dlpack_device__"))


_MISSING = object()


def _cuda_array_interface(**fields):
    interface = dict({"shape": (4,), "typestr": "<f4", "data": (4096, False), "version": 3},
                     **fields)

    class Fake:
        __cuda_array_interface__ = {k: v for k, v in interface.items() if v is not _MISSING}
    return Fake()


# A cpu ctx took the producer's integer as a host pointer (the audit's defect 7); malformed
# interfaces reached pybind11's cast errors.
CUDA_ARRAY_INTERFACES = {
    "on_cpu": (_cuda_array_interface(), ValueError, "ctx must be a cuda device"),
    "not_a_producer": (object(), TypeError, "obj (object) has no __cuda_array_interface__"),
    "none": (None, TypeError, "obj (NoneType)"),
    "shape_string": (_cuda_array_interface(shape="4"), TypeError, "['shape']"),
    "shape_2_70": (_cuda_array_interface(shape=(2**70,)), TypeError, "['shape']"),
    "data_float": (_cuda_array_interface(data=1.5), TypeError, "['data']"),
    "no_data": (_cuda_array_interface(data=_MISSING), ValueError, "no 'data'"),
    "strides_string": (_cuda_array_interface(strides="x"), TypeError, "['strides']"),
}
for _name, (_obj, _exc, _word) in CUDA_ARRAY_INTERFACES.items():
    CASES[f"cuda_array_interface_{_name}"] = (lambda o=_obj, e=_exc, w=_word: raises(
        e, lambda: dlarray._core.from_cuda_array_interface(o, dlarray.cpu(0)), w))

for _name, _copy in {"string": "no", "tuple": (1,), "object": object()}.items():
    CASES[f"array_protocol_copy_{_name}"] = (lambda c=_copy: raises(
        TypeError, lambda: dlarray.array([1.0]).__array__(copy=c), "copy"))

# --- arguments of the wrong type or range (the audit's defect 8) -----------------------------
FROM_DLPACK_ARGS = {
    "copy_string": (dict(copy="no"), TypeError, "copy"),
    "copy_int": (dict(copy=1), TypeError, "copy"),
    "device_float": (dict(device=3.5), TypeError, "device"),
    "device_tuple": (dict(device=(1, 0)), TypeError, "device"),
}
for _name, (_kw, _exc, _word) in FROM_DLPACK_ARGS.items():
    CASES[f"from_dlpack_{_name}"] = (lambda k=_kw, e=_exc, w=_word: raises(
        e, lambda: dlarray.from_dlpack(np.arange(3.0), **k), w))


def _bad_argument_consumes_nothing():
    p = arange_producer(4, shape=[4])
    raises(TypeError, lambda: dlarray.from_dlpack(p, copy="no"), "copy")
    assert p.requests == [] and p.deleted == 0


CASES["from_dlpack_bad_argument_consumes_nothing"] = _bad_argument_consumes_nothing

DLPACK_ARGS = {
    "stream_2_70": (dict(stream=2**70), OverflowError, "stream"),
    "stream_string": (dict(stream="s"), TypeError, "stream"),
    "max_version_string": (dict(max_version="x"), TypeError, "max_version"),
    "max_version_1_tuple": (dict(max_version=(1,)), TypeError, "max_version"),
    "max_version_2_40": (dict(max_version=(2**40, 0)), OverflowError, "max_version"),
    "max_version_negative": (dict(max_version=(-1, 0)), OverflowError, "max_version"),
    "max_version_floats": (dict(max_version=(1.0, 0)), TypeError, "max_version"),
    "dl_device_string": (dict(dl_device="cpu"), TypeError, "dl_device"),
    "dl_device_triple": (dict(dl_device=(1, 0, 0)), TypeError, "dl_device"),
    "dl_device_2_32": (dict(dl_device=(2**32 + 1, 0)), OverflowError, "dl_device"),
    "copy_string": (dict(copy="no"), TypeError, "copy"),
}
for _name, (_kw, _exc, _word) in DLPACK_ARGS.items():
    CASES[f"dlpack_{_name}"] = (lambda k=_kw, e=_exc, w=_word: raises(
        e, lambda: dlarray.array([1.0, 2.0]).__dlpack__(**k), w))


def _dlpack_good_arguments():
    x = dlarray.array([1.0, 2.0])
    for kw in [dict(stream=None), dict(stream=-1), dict(max_version=(1, 0)),
               dict(max_version=(2**32 - 1, 0)), dict(dl_device=(1, 0)), dict(copy=True),
               dict(copy=np.bool_(False))]:
        np.testing.assert_array_equal(np.from_dlpack(_Capsule(x.__dlpack__(**kw))), [1.0, 2.0])


class _Capsule:
    """Hands NumPy a capsule already made (NumPy asks with its own arguments)."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **_):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


CASES["dlpack_good_arguments"] = _dlpack_good_arguments


@pytest.fixture(scope="module")
def outcome():
    return proc_util.run_cases(__file__, list(CASES))


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_dlpack(outcome, name):
    proc_util.check_case(outcome, name)
