"""Write paths that must refuse what they are given (issue 26): extension names that would put
files outside the cache and cache paths that resolve outside it (defect 3), read-only outputs of
AOT custom ops, cpp_extension ops, copies and rtc launches (defect 5), and Custom attributes that C
would read cut short or wrapped (defects 8 and 10). Each case checks that nothing was written:
no file outside the cache, the NumPy memory under a read-only array unchanged."""
import ctypes
import os
import shutil

import numpy as np
import pytest

import dlarray
import dlarray.rtc as rtc
import op_examples
from aot_util import GPUS, KERNELS, example, needs_nvcc, probe
from dlarray import _cache, cpp_extension
from dlarray.custom import Custom, compile_source, load_library

HAVE_CXX = shutil.which(os.environ.get("CXX", "c++")) is not None
needs_cxx = pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler on this machine")


@pytest.fixture(scope="module", autouse=True)
def shared_cache(aot_cache):
    """The session's cache for the AOT sources these tests compile (tests of the cache itself
    replace it with one of their own)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DLARRAY_CACHE_DIR", str(aot_cache))
        yield


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache in tmp_path, with 'victim' folders where '../victim' and '../../../victim' from
    the cache and from an entry (root/namespace/key) land, so that an escape leaves files."""
    root = tmp_path / "home" / "user" / "cache"
    (tmp_path / "home" / "user" / "victim").mkdir(parents=True)
    (tmp_path / "victim").mkdir()
    monkeypatch.setenv("DLARRAY_CACHE_DIR", str(root))
    return root


def files_outside(tmp_path, root):
    return sorted(str(p) for p in tmp_path.rglob("*")
                  if p.is_file() and root not in p.parents)


# -- defect 3: cpp_extension names and the cache writer -------------------------------------------

@pytest.mark.parametrize("name", ["../../../victim/owned", "../victim/owned", "a; touch x",
                                  "{victim}/owned", "a/b", "", "1st", "a-b", "caf\u00e9", "a\0b",
                                  "name.so"])
def test_load_inline_refuses_a_name_that_is_not_a_c_identifier(cache, tmp_path, name):
    name = name.replace("{victim}", str(tmp_path / "victim"))  # an absolute path, in tmp_path
    with pytest.raises(ValueError, match="name must be a C identifier"):
        cpp_extension.load_inline(name, ["int x;"])
    assert files_outside(tmp_path, cache) == []
    assert not (cache / "cpp_extension_src").exists(), "a path was built from the bad name"


@pytest.mark.parametrize("name", [None, 3, b"abc", ["a"]])
def test_extension_names_must_be_strings(cache, name):
    with pytest.raises(TypeError, match="load_inline: name must be a str"):
        cpp_extension.load_inline(name, ["int x;"])
    with pytest.raises(TypeError, match="load: name must be a str"):
        cpp_extension.load(name, ["x.cc"])


@pytest.mark.parametrize("arg", ["cpp_sources", "cuda_sources"])
@pytest.mark.parametrize("sources,message", [
    ((1,), r"\[0\] must be a str \(source text\), got int"),
    (["int x;", None], r"\[1\] must be a str \(source text\), got NoneType"),
    (b"int x;", " must be a str or a list of str, got bytes"),  # was a list of ints
    (3, " must be a str or a list of str, got int")], ids=["tuple_int", "none", "bytes", "int"])
def test_load_inline_sources_must_be_text(cache, arg, sources, message):
    """Was AttributeError: 'int' object has no attribute 'encode'; nothing is written."""
    kwargs = {"cpp_sources": ["int x;"], arg: sources}
    with pytest.raises(TypeError, match=r"load_inline\('ok'\): %s%s" % (arg, message)):
        cpp_extension.load_inline("ok", **kwargs)
    assert not (cache / "cpp_extension_src").exists()


def test_load_refuses_a_bad_name_before_reading_sources(cache, tmp_path):
    src = tmp_path / "ok.cc"
    src.write_text("int x;")
    with pytest.raises(ValueError, match="load: name must be a C identifier.*'../x'"):
        cpp_extension.load("../x", [str(src)])
    assert files_outside(tmp_path, cache) == [str(src)]


def test_the_cache_writer_refuses_paths_that_resolve_outside(cache, tmp_path):
    entry = _cache.entry_dir("ns", "key")
    escape = entry / ".." / ".." / ".." / "victim" / "owned.bin"
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.store_bytes(escape, b"data")
    src = entry / "built.so"
    src.write_bytes(b"library")
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.store_file(src, escape)
    assert src.read_bytes() == b"library", "the source was moved before the refusal"
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.entry_dir("..", "x")
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.entry_dir("ns", "/abs")
    with pytest.raises(ValueError, match="outside the cache folder"):
        with _cache.locked(tmp_path / "victim"):
            pass
    assert files_outside(tmp_path, cache) == []


def test_the_cache_follows_no_symlink_out(cache, tmp_path):
    entry = _cache.entry_dir("ns", "key")
    (entry / "link").symlink_to(tmp_path / "victim", target_is_directory=True)
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.store_bytes(entry / "link" / "owned.bin", b"data")
    (entry / "file_link").symlink_to(tmp_path / "victim" / "target")
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.store_bytes(entry / "file_link", b"data")
    (cache / "planted").symlink_to(tmp_path / "victim", target_is_directory=True)
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.entry_dir("planted", "key")
    assert files_outside(tmp_path, cache) == []


def test_verifying_a_path_outside_removes_nothing(cache, tmp_path):
    precious = tmp_path / "victim" / "precious.txt"
    precious.write_text("keep me")
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.verified_file(precious)  # it has no manifest: inside the cache it would go
    with pytest.raises(ValueError, match="outside the cache folder"):
        _cache.load_bytes(_cache.cache_dir() / ".." / ".." / ".." / "victim" / "precious.txt")
    assert precious.read_text() == "keep me"


def test_the_cache_still_writes_inside(cache):
    entry = _cache.entry_dir("ns", "key")
    dest = _cache.store_bytes(entry / "sub.bin", b"abc")
    assert _cache.load_bytes(dest) == b"abc"
    with _cache.locked(entry):
        pass


# -- defect 5: read-only outputs ------------------------------------------------------------------

def read_only_numpy(values):
    a = np.array(values, dtype=np.float32)
    a.flags.writeable = False
    return a


@pytest.fixture(scope="module")
def add(shared_cache):
    return Custom(example("custom_add.cc", "CustomAdd"), out_shape=lambda a, b: a,
                  out_dtype="float32", name="add")


def test_an_aot_op_refuses_a_read_only_output(add):
    a, b = dlarray.array([1.0, 2.0, 3.0]), dlarray.array([3.0, 2.0, 1.0])
    arr = read_only_numpy([7.0, 7.0, 7.0])
    o = dlarray.asarray(arr)
    assert o.readonly and o.data_ptr == arr.ctypes.data  # shares the NumPy memory
    with pytest.raises(ValueError, match="add: output 0 is read-only"):
        add(a, b, out=o)
    with pytest.raises(ValueError, match="add: output 0 is read-only"):
        add(a, b, out=(o,))
    with pytest.raises(ValueError, match="add: output 0 is read-only"):
        add._run(a, b, o)  # the executor's bound call
    np.testing.assert_array_equal(arr, [7.0, 7.0, 7.0])
    writable = dlarray.empty((3,))
    assert add(a, b, out=writable) is writable
    np.testing.assert_array_equal(writable.asnumpy(), [4, 4, 4])


def test_a_read_only_input_is_still_read(add):
    a = dlarray.asarray(read_only_numpy([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(add(a, a).asnumpy(), [2, 4, 6])


def test_two_outputs_one_read_only():
    op = Custom(probe("SumDiff"), out_shape=lambda a, b: [a, a],
                out_dtype=["float64", "float64"])
    a = dlarray.array(np.ones(3), dtype="float64")
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="output 1 is read-only"):
        op(a, a, out=(dlarray.empty((3,), dtype="float64"), dlarray.asarray(frozen)))
    np.testing.assert_array_equal(frozen, 0)


def test_copyto_and_array_set_refuse_a_read_only_target():
    arr = read_only_numpy([5.0, 6.0])
    o = dlarray.asarray(arr)
    with pytest.raises(ValueError, match="read-only"):
        dlarray.array([1.0, 2.0]).copyto(o)
    with pytest.raises(ValueError, match="array_set: the output is read-only"):
        dlarray.ops.array_set(o, 9.0)
    with pytest.raises(ValueError, match="read-only"):
        o[:] = 1.0
    np.testing.assert_array_equal(arr, [5.0, 6.0])


def _read_only_outputs(name):
    """Valid inputs and attributes of op `name` ((2, 2) float32 ones, False / 0 / 1.0) and, for
    each output, a read-only NumPy array of the shape and dtype the op infers with the NDArray
    over it (None for an op that cannot infer them)."""
    info = dlarray.ops.op_info(name)
    attrs = [{"bool": False, "int": 0, "float": 1.0}[t] for t in info["attr_types"]]
    inputs = [op_examples.spec(name, n) for n in info["input_names"]]
    try:
        specs = dlarray.ops.infer_outputs(name, [s for s, _ in inputs], [d for _, d in inputs],
                                          attrs)
    except ValueError:
        specs = [op_examples.spec(name, n) for n in info["output_names"]]
    values = {n: op_examples.ones(name, n) for n in info["input_names"]}
    values.update(zip(info["attr_names"], attrs))
    frozen = {}
    for out, (shape, dtype) in zip(info["output_names"], specs):
        host = np.full(shape, 7, dtype)
        host.flags.writeable = False
        frozen[out] = host
        values[out] = dlarray.asarray(host)
    return info, values, frozen


@pytest.mark.parametrize("name", [n for n in dlarray.ops.op_names()
                                  if "cpu" in dlarray.ops.op_info(n)["devices"]
                                  and "float32" in dlarray.ops.op_info(n)["dtypes"]])
def test_every_op_refuses_a_read_only_output(name):
    """Through the generic wrapper of dlarray.ops (positional and keyword outputs) and invoke:
    the op is named and the NumPy memory stays as it was."""
    info, values, frozen = _read_only_outputs(name)
    fn = getattr(dlarray.ops, name)
    order = info["call_order"]
    message = "%s: the output is read-only" % name
    with pytest.raises(ValueError, match=message):
        fn(*[values[n] for n in order])
    with pytest.raises(ValueError, match=message):
        fn(**values)
    with pytest.raises(ValueError, match=message):
        dlarray.ops.invoke(name, [values[n] for n in info["input_names"]],
                           [values[n] for n in info["output_names"]],
                           [values[n] for n in info["attr_names"]])
    for host in frozen.values():
        np.testing.assert_array_equal(host, np.full(host.shape, 7, host.dtype))


def test_collectives_refuse_a_read_only_array_they_would_write():
    import dlarray.distributed as dist
    assert not dist.is_initialized()  # the check comes first, so no group is needed
    arr = read_only_numpy([1.0, 2.0])
    frozen, x = dlarray.asarray(arr), dlarray.array([1.0, 2.0])
    for call, message in [(lambda: dist.all_reduce(frozen), "all_reduce: array is read-only"),
                          (lambda: dist.all_reduce_coalesced([x, frozen]),
                           r"all_reduce_coalesced: arrays\[1\] is read-only"),
                          (lambda: dist.broadcast(frozen), "broadcast: array is read-only"),
                          (lambda: dist.all_gather(x, out=frozen), "all_gather: out is read-only"),
                          (lambda: dist.reduce_scatter(x, out=frozen),
                           "reduce_scatter: out is read-only")]:
        with pytest.raises(ValueError, match=message):
            call()
    with pytest.raises(RuntimeError):
        dist.all_gather(frozen)  # a read-only input is fine: only the missing group is refused
    np.testing.assert_array_equal(arr, [1.0, 2.0])


CUBE = """
#include "dlarray/plugin.h"
namespace {
void Cube(const dlarray::KernelContext& c) {
  const float* x = static_cast<const float*>(c.inputs[0]->data);
  float* y = static_cast<float*>(c.outputs[0]->data);
  for (int64_t i = 0, n = dlarray::NumElements(c.outputs[0]); i < n; ++i) y[i] = x[i] * x[i] * x[i];
}
void Register(dlarray::Registry* r) {
  dlarray::OpSchema s;
  s.name = "wp_cube";
  r->declare_op(s);
  r->register_kernel("wp_cube", kDLArrayCPU, &Cube);
}
}  // namespace
DLARRAY_DEFINE_PLUGIN("wp_cube", 0, nullptr, &Register)
"""


@needs_cxx
def test_a_cpp_extension_op_refuses_a_read_only_output():
    ext = cpp_extension.load_inline("wp_cube", CUBE)
    x = dlarray.array([1.0, 2.0])
    arr = read_only_numpy([0.5, 0.5])
    with pytest.raises(ValueError, match="wp_cube: the output is read-only"):
        ext.wp_cube(x, dlarray.asarray(arr))
    with pytest.raises(ValueError, match="wp_cube: the output is read-only"):
        dlarray.ops.invoke("wp_cube", [x], [dlarray.asarray(arr)])
    np.testing.assert_array_equal(arr, [0.5, 0.5])
    np.testing.assert_array_equal(ext.wp_cube(x).asnumpy(), [1.0, 8.0])


# rtc: a read-only array goes only to a pointer-to-const parameter. The check comes before the
# device is looked at, so a cpu array shows it here; the GPU tests below launch for real.
WRITE = r"""
extern "C" __global__ void fill(const float* src, float* dst, float* const also, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { dst[i] = src[i]; also[i] = src[i]; }
}
"""


def test_rtc_signatures_say_which_pointers_are_read_only():
    from dlarray._rtc_source import kernels_in
    code = r"""
    extern "C" __global__ void k(const float* a, float const* b, const float* const c,
                                 float* const d, float* e, const float* const* f,
                                 const float** g, const float h[], float i[], int n) {}
    """
    params, _ = kernels_in(code)["k"]
    assert [p[4] for p in params] == [True, True, True, False, False, True, False, True, False,
                                      False]


@pytest.mark.skipif({p["name"]: p["status"] for p in dlarray.plugins()}.get("cuda") not in
                    ("loaded", "no devices"), reason="no plugin offers dlarray.rtc.v1 here")
def test_rtc_raw_kernel_refuses_a_read_only_array_for_a_writable_pointer():
    kernel = rtc.RawKernel(WRITE, "fill")
    arr = read_only_numpy([1.0, 2.0])
    frozen = dlarray.asarray(arr)
    # None (a null pointer) before it: a cpu array there would be refused first, for its device
    with pytest.raises(ValueError, match=r"argument 1 \(float\* dst\) is given a read-only array"):
        kernel((1,), (2,), (None, frozen, None, 2))
    with pytest.raises(ValueError, match=r"argument 2 \(float\* const also\) is given a "
                                         r"read-only array"):
        kernel((1,), (2,), (None, None, frozen, 2))
    with pytest.raises(ValueError, match=r"argument 0 \(const float\* src\) is on cpu\(0\)"):
        kernel((1,), (2,), (frozen, None, None, 2))  # a const pointer takes it (wrong device)
    np.testing.assert_array_equal(arr, [1.0, 2.0])


def test_rtc_kernels_of_unknown_signature_take_no_read_only_array():
    module = rtc.RawModule(code=r"""
    template <typename T> __global__ void tfill(const T* src, T* dst, int n) {
      if (threadIdx.x < n) dst[threadIdx.x] = src[threadIdx.x];
    }""", name_expressions=["tfill<float>"])
    kernel = module.get_function("tfill<float>")  # a template instance: its types are not read
    frozen = dlarray.asarray(read_only_numpy([1.0]))
    with pytest.raises(ValueError, match="argument 0 is given a read-only array.*not known"):
        kernel((1,), (1,), (frozen, frozen, frozen, 1))


def test_rtc_mxnet_and_elementwise_refuse_read_only_arrays():
    arr = read_only_numpy([1.0, 2.0])
    frozen, x = dlarray.asarray(arr), dlarray.array([1.0, 2.0])
    k = rtc.Rtc("copy", [("x", x)], [("y", x)], "y[threadIdx.x] = x[threadIdx.x];")
    with pytest.raises(ValueError, match="Rtc 'copy': 'y' is read-only"):
        k.push([x], [frozen], (1,), (2,))
    with pytest.raises(ValueError, match="Rtc 'copy': 'x' is read-only"):
        k.push([frozen], [x], (1,), (2,))  # the body may write x: its pointer is not const
    ew = rtc.ElementwiseKernel("float32 x", "float32 y", "y = x * 2", "twice")
    with pytest.raises(ValueError, match="ElementwiseKernel 'twice': output 'y' is read-only"):
        ew(x, frozen)
    np.testing.assert_array_equal(arr, [1.0, 2.0])


def read_only_gpu(x):
    """A read-only view of the gpu array x: its versioned DLPack capsule, flagged read-only."""
    capsule = x.__dlpack__(max_version=(1, 0))
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    managed = get(capsule, b"dltensor_versioned")
    flags = ctypes.c_uint64.from_address(managed + 24)  # version, manager_ctx, deleter, flags
    flags.value |= 1  # DLPACK_FLAG_BITMASK_READ_ONLY
    view = dlarray.from_dlpack(capsule)
    assert view.readonly
    return view


gpu_rtc = pytest.mark.skipif(not rtc.is_available() or not GPUS,
                             reason="rtc launches need NVRTC and a GPU: %s"
                             % (rtc.status()["launch"] or rtc.status()["compile"]))


@gpu_rtc
def test_rtc_launches_on_a_gpu_keep_read_only_arrays_unwritten():
    g = GPUS[0]
    src = dlarray.array([1.0, 2.0, 3.0], g)
    target = dlarray.array([7.0, 7.0, 7.0], g)
    frozen = read_only_gpu(target)
    kernel = rtc.RawKernel(WRITE, "fill")
    with pytest.raises(ValueError, match="dst.*read-only"):
        kernel((1,), (3,), (src, frozen, dlarray.empty((3,), g), 3))
    dlarray.synchronize()
    np.testing.assert_array_equal(target.asnumpy(), [7, 7, 7])
    out, also = dlarray.empty((3,), g), dlarray.empty((3,), g)
    kernel((1,), (3,), (read_only_gpu(src), out, also, 3))  # a const pointer takes it
    np.testing.assert_array_equal(out.asnumpy(), [1, 2, 3])
    ew = rtc.ElementwiseKernel("float32 x", "float32 y", "y = x * 2", "twice")
    with pytest.raises(ValueError, match="output 'y' is read-only"):
        ew(src, frozen)
    np.testing.assert_array_equal(ew(read_only_gpu(src)).asnumpy(), [2, 4, 6])
    np.testing.assert_array_equal(target.asnumpy(), [7, 7, 7])


@pytest.mark.skipif(not GPUS, reason="no usable GPU on this machine")
@needs_nvcc
def test_a_gpu_aot_op_refuses_a_read_only_output():
    g = GPUS[0]
    op = Custom({"gpu": example("custom_add.cu", "CustomAdd")}, out_shape=lambda a, b: a,
                out_dtype="float32", name="gadd")
    a = dlarray.array([1.0, 2.0], g)
    target = dlarray.array([5.0, 5.0], g)
    with pytest.raises(ValueError, match="gadd: output 0 is read-only"):
        op(a, a, out=read_only_gpu(target))
    np.testing.assert_array_equal(target.asnumpy(), [5, 5])


# -- defects 8 and 10: Custom attributes ----------------------------------------------------------

@pytest.mark.parametrize("value", [2**70, -2**63 - 1, 2**63, [1, 2**64], (0.5, 2**100)])
def test_an_attribute_past_int64_is_an_overflow_error_naming_it(value):
    with pytest.raises(OverflowError, match="attribute 'big'"):
        Custom(probe("Probe"), [32], "float64", attrs={"big": value})


def test_int64_bounds_are_accepted():
    Custom(probe("Probe"), [32], "float64", attrs={"lo": -2**63, "hi": 2**63 - 1})


@pytest.mark.parametrize("value", [{"a": 1}, None, b"bytes", [1, "x"], [[1]], object(), 1j])
def test_an_attribute_of_a_wrong_type_is_a_type_error_naming_it(value):
    with pytest.raises(TypeError, match="attribute 'odd' must be a bool, int, float, str"):
        Custom(probe("Probe"), [32], "float64", attrs={"odd": value})


def test_nul_bytes_in_attribute_names_and_strings_are_refused():
    with pytest.raises(ValueError, match=r"attribute name 'i\\x00j' holds a NUL byte"):
        Custom(probe("Probe"), [32], "float64", attrs={"i\0j": 1})
    with pytest.raises(ValueError, match="attribute 's': the string holds a NUL byte"):
        Custom(probe("Probe"), [32], "float64", attrs={"s": "hel\0lo"})


def test_the_core_binding_checks_attributes_too():
    # dlarray._core.AotOp, called without Custom's Python checks, refuses the same values.
    impls = [(1, load_library(compile_source(str(KERNELS / "probe_ops.cc"))), "Probe")]
    spec = [((32,), np.dtype("float64"))]

    def make(attrs):
        return dlarray._core.AotOp("p", impls, -1, [], 1, spec, attrs)

    make([("i", 3), ("s", "ok"), ("l", [1, 2]), ("f", [0.5, 1])])
    with pytest.raises(OverflowError, match="attribute 'i'.*int64"):
        make([("i", 2**70)])
    with pytest.raises(OverflowError, match="attribute 'l'.*int64"):
        make([("l", [1, -2**70])])
    with pytest.raises(OverflowError, match="attribute 'f'.*int64"):
        make([("f", [0.5, 2**64])])
    with pytest.raises(ValueError, match="attribute 's'.*NUL"):
        make([("s", "a\0b")])
    with pytest.raises(ValueError, match="attribute name 'a\\\\x00b'.*NUL"):
        make([("a\0b", 1)])
    with pytest.raises(TypeError, match="attribute names must be strings"):
        make([(3, 1)])
    with pytest.raises(TypeError, match="attribute 'd' must be a bool, int, float, str"):
        make([("d", {"a": 1})])


def test_good_attributes_still_reach_the_library():
    op = Custom(probe("Probe"), [32], np.float64, attrs={"i": -2**63, "s": "hello"})
    seen = op(dlarray.array(np.ones((2, 3, 4), np.float32) + 8)).asnumpy()
    assert seen[14] == float(-2**63) and seen[17] == ord("h")

