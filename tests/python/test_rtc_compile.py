"""dlarray.rtc on the compiling side, which needs NVRTC but no GPU: machine code for the asked
architecture, MXNet's decoration of Rtc bodies, the seed's bodies, CuPy-style signatures and name
expressions, generated elementwise code, and compile errors that name the user's own lines."""
import struct

import numpy as np
import pytest

import dlarray
import dlarray.rtc as rtc
from dlarray._rtc_source import FLOAT, INT, POINTER, SCALAR, UINT, UNKNOWN, kernels_in
from rtc_util import ADD, STATUS, needs_nvrtc, rtc_cache, seed_kernels  # noqa: F401

pytestmark = needs_nvrtc


def cubin_arch(code):
    """The sm_ number a cubin was built for (ELF e_flags bits 8..15); None for PTX."""
    if code[:4] != b"\x7fELF":
        return None
    assert struct.unpack_from("<H", code, 18)[0] == 190  # EM_CUDA
    return (struct.unpack_from("<I", code, 48)[0] >> 8) & 0xFF


@pytest.mark.parametrize("arch", [75, 80, 86, 90, "sm_90", "compute_100", 120])
def test_machine_code_for_the_asked_architecture(arch):
    k = rtc.RawKernel(ADD, "add")
    number = int(str(arch).split("_")[-1])
    assert number in STATUS["archs"]
    assert cubin_arch(k.compile(arch=arch)) == number


def test_a_gpu_newer_than_nvrtc_gets_ptx_for_the_newest_architecture_it_knows():
    newest = STATUS["archs"][-1]
    code = rtc.RawKernel(ADD, "add").compile(arch=newest + 100)
    assert cubin_arch(code) is None
    text = code.rstrip(b"\0").decode()
    assert ".target sm_%d" % newest in text and ".entry add" in text


def test_an_architecture_older_than_nvrtc_knows_is_refused():
    with pytest.raises(ValueError, match=r"cannot compile for sm_30: it supports sm_%d"
                       % STATUS["archs"][0]):
        rtc.RawKernel(ADD, "add").compile(arch=30)
    for bad in ("sm_x", "ninety", -5, True):
        with pytest.raises(ValueError, match="compute capability"):
            rtc.RawKernel(ADD, "add").compile(arch=bad)


def test_status_says_what_works():
    s = rtc.status()
    assert s["compile"] == "" and s["nvrtc_version"][0] >= 11
    assert s["nvrtc_library"].endswith(tuple("0123456789")) or "nvrtc" in s["nvrtc_library"]
    assert s["archs"] == sorted(s["archs"]) and 90 in s["archs"]
    assert rtc.is_available() == (s["launch"] == "")


def test_rtc_decorates_the_body_as_mxnet_documents():
    x = dlarray.array(np.zeros((10,), np.float32), dlarray.cpu())
    k = rtc.Rtc("mykernel", [("x", x)], [("y", x)], "y[threadIdx.x] = x[threadIdx.x];")
    assert k.source() == (
        'extern "C" __global__ void mykernel(float *x, float *y) {\n'
        "const int x_ndim = 1;\nconst int x_dims[] = {10};\n"
        "const int y_ndim = 1;\nconst int y_dims[] = {10};\n"
        "y[threadIdx.x] = x[threadIdx.x];\n}\n")
    assert cubin_arch(k.compile(arch=90)) == 90


def test_rtc_pointer_types_follow_the_dtypes():
    a = np.zeros((2, 3), np.float64)
    b = np.zeros((4,), np.int32)
    k = rtc.Rtc("mixed", [("a", a), ("b", b)], [("c", np.zeros((), np.int64))], "c[0] = b[0];")
    head = k.source().splitlines()
    assert head[0] == 'extern "C" __global__ void mixed(double *a, int *b, long long *c) {'
    assert "const int a_dims[] = {2, 3};" in head and "const int c_ndim = 0;" in head
    with pytest.raises(TypeError, match="no C type for dtype complex64"):
        rtc.Rtc("bad", [("a", np.zeros(2, np.complex64))], [], "").source()


@pytest.mark.parametrize("name", ["softmax", "softmax_grad", "reorg", "reorg_grad"])
def test_the_seed_bodies_compile_unchanged(name):
    inputs, outputs, body = seed_kernels()[name]
    shapes = {"softmax": [(100, 10), (100, 10)], "softmax_grad": [(100, 10), (100,), (100, 10)],
              "reorg": [(2, 3, 8, 8), (2, 12, 4, 4)], "reorg_grad": [(2, 12, 4, 4), (2, 3, 8, 8)]}
    arrays = [np.zeros(s, np.float32) for s in shapes[name]]
    k = rtc.Rtc(name, list(zip(inputs, arrays)), list(zip(outputs, arrays[len(inputs):])), body)
    assert body in k.source()
    assert cubin_arch(k.compile(arch=90)) == 90


def test_a_compile_error_names_the_line_of_the_body():
    x = np.zeros((4, 4), np.float32)
    body = "\n  int i = threadIdx.x;\n  float s = x[i] + max_y;\n  y[i] = s;\n"
    k = rtc.Rtc("broken", [("x", x)], [("y", x)], body)
    with pytest.raises(rtc.CompileError) as info:
        k.compile(arch=90)
    message = str(info.value)
    assert "kernel 'broken' does not compile" in message and "sm_90" in message
    assert 'kernel body line 3: error: identifier "max_y" is undefined' in message
    assert "float s = x[i] + max_y;" in message
    assert "NVRTC log:" in message and "broken.cu(" in message  # the log itself
    assert isinstance(info.value, RuntimeError)
    assert info.value.locations[0][0] == "kernel body line 3"
    assert "max_y" in info.value.log and body in info.value.source
    assert "was declared but never referenced" not in info.value.log  # x_ndim and friends


def test_a_missing_semicolon_at_the_end_points_past_the_body():
    x = np.zeros(4, np.float32)
    with pytest.raises(rtc.CompileError, match=r"end of the kernel body .*: error: expected a"):
        rtc.Rtc("nosemi", [("x", x)], [], "x[0] = 1").compile(arch=90)


def test_a_raw_kernel_error_names_its_source_line():
    code = 'extern "C" __global__ void f(float* x) {\n  x[0] = 1;\n  x[1] = undefined_thing;\n}\n'
    with pytest.raises(rtc.CompileError, match=r"line 3: error: identifier \"undefined_thing\""):
        rtc.RawKernel(code, "f").compile(arch=90)


def test_an_elementwise_error_names_the_operation_line():
    k = rtc.ElementwiseKernel("float32 x", "float32 y", "float t = x * 2;\ny = t + q", "twice")
    with pytest.raises(rtc.CompileError) as info:
        k.compile(["float32", "float32"], arch=90)
    assert 'operation line 2: error: identifier "q" is undefined' in str(info.value)
    assert "y = t + q" in str(info.value)
    k = rtc.ElementwiseKernel("float32 x", "float32 y", "y = helper(x)", "pre",
                              preamble="__device__ float helper(float v) { return v * w; }")
    with pytest.raises(rtc.CompileError, match=r"preamble line 1: error: identifier \"w\""):
        k.compile(["float32", "float32"], arch=90)


def test_an_invalid_option_is_a_compile_error_with_nvrtcs_reason():
    with pytest.raises(rtc.CompileError, match="NVRTC_ERROR_INVALID_OPTION"):
        rtc.RawKernel(ADD, "add", options=("--no-such-option",)).compile(arch=90)
    with pytest.raises(TypeError, match="sequence of strings"):
        rtc.RawKernel(ADD, "add", options="-use_fast_math")


def test_options_reach_nvrtc():
    code = 'extern "C" __global__ void f(float* x) {\n#ifdef SCALE\n  x[0] = SCALE;\n#endif\n}\n'
    plain = rtc.RawKernel(code, "f").compile(arch=90)
    defined = rtc.RawKernel(code, "f", options=("-DSCALE=3.0f",)).compile(arch=90)
    assert plain != defined


def test_an_unknown_kernel_name_lists_the_kernels():
    with pytest.raises(ValueError,
                       match=r"no kernel named 'sub' in the source \(it declares: add\)"):
        rtc.RawKernel(ADD, "sub")
    module = rtc.RawModule(code="template <typename T> __global__ void scale(T* x) {}\n" + ADD)
    with pytest.raises(ValueError, match=r"name_expressions=\['scale<float>'\]"):
        module.get_function("scale_f")
    with pytest.raises(TypeError, match="give code or path"):
        rtc.RawModule()


def test_cxx_kernels_and_templates_get_their_symbols():
    code = ("__global__ void plain(float* x) { x[0] = 1; }\n"
            "template <typename T> __global__ void scale(T* x, T a) { x[0] *= a; }\n")
    module = rtc.RawModule(code=code, name_expressions=["scale<float>"])
    assert module.name_expressions == ("scale<float>", "plain")
    module.compile(arch=90)
    program = module._program(90)
    assert program.symbol("plain").startswith("_Z") and "plain" in program.symbol("plain")
    assert program.symbol("scale<float>").startswith("_Z")
    assert module.get_function("scale<float>").name == "scale<float>"


def test_module_from_a_cubin_file(tmp_path):
    cubin = rtc.RawKernel(ADD, "add").compile(arch=90)
    (tmp_path / "add.cubin").write_bytes(cubin)
    module = rtc.RawModule(path=str(tmp_path / "add.cubin"))
    assert module.compile(arch=90) == cubin
    with pytest.raises(ValueError, match=r"\.cubin or \.ptx"):
        rtc.RawModule(path=str(tmp_path / "add.bin"))


SIGNATURES = r"""
// __global__ void commented_out(int x) {}
extern "C" {
__global__ void __launch_bounds__(256) in_block(const float* __restrict__ x, double a,
                                                unsigned long long n, bool flag) {}
}
extern "C" __global__ void arrays(int x[], const unsigned char* bytes, size_t n, long count) {}
__global__ void cxx(short s, unsigned short us, void* anything, int8_t tiny) {}
template <typename T, int N>
__global__ void tmpl(T* x, int n) {}
struct Pair { int a, b; };
extern "C" __global__ void by_value(Pair p, float* y) {}
"""


def test_signatures_are_read_as_cupy_would_type_them():
    k = kernels_in(SIGNATURES)
    assert sorted(k) == ["arrays", "by_value", "cxx", "in_block", "tmpl"]
    params, extern_c = k["in_block"]
    assert extern_c and [p[:3] for p in params] == [
        (POINTER, FLOAT, 32), (SCALAR, FLOAT, 64), (SCALAR, UINT, 64), (SCALAR, UINT, 8)]
    params, extern_c = k["arrays"]
    assert extern_c and [p[:3] for p in params] == [
        (POINTER, INT, 32), (POINTER, UINT, 8), (SCALAR, UINT, 64), (SCALAR, INT, 64)]
    params, extern_c = k["cxx"]
    assert not extern_c and [p[:3] for p in params] == [
        (SCALAR, INT, 16), (SCALAR, UINT, 16), (POINTER, 0, 0), (SCALAR, INT, 8)]
    assert k["tmpl"] == (None, False)
    assert [p[0] for p in k["by_value"][0]] == [UNKNOWN, POINTER]
    assert k["in_block"][0][0][3] == "const float* __restrict__ x"


def test_elementwise_code_for_types_scalars_and_aliasing():
    k = rtc.ElementwiseKernel("T x, raw T table, float32 a", "T y", "y = x * a + table[0]", "ew")
    src = k.source(["float64", "float64", "float32", "float64"], scalars=(False, False, True))
    assert "typedef double T;" in src
    assert "const double* __restrict__ _raw_x" in src and "const double x = _raw_x[i];" in src
    assert "const double* __restrict__ table" in src and "const float a," in src
    assert "double& y = _raw_y[i];" in src and "const int _n" in src
    assert "__restrict__" not in k.source(["float32"] * 4, restrict=False)
    assert "const long long _n" in k.source(["float32"] * 4, index="long long")
    assert cubin_arch(k.compile(["float64", "float64", "float32", "float64"], arch=90)) == 90


def test_elementwise_vector_code_loads_only_what_it_reads():
    k = rtc.ElementwiseKernel("float32 x, raw float32 t", "float32 y, float32 acc",
                              "y = x * t[0]; acc += y", "vec")
    src = k.source(["float32"] * 4, vector=True)
    assert "struct alignas(16) _V4_float { float v[4]; };" in src
    assert "_v_x[_u] = reinterpret_cast<const _V4_float*>(_raw_x)[_j];" in src
    assert "_v_acc[_u] = " in src and "_v_y[_u] = " not in src  # y is written before it is read
    assert "reinterpret_cast<_V4_float*>(_raw_y)[_j] = _v_y[_u];" in src
    assert src.count("y = x * t[0]; acc += y;") == 2  # vectors, then the last n % 4 elements
    assert cubin_arch(k.compile(["float32"] * 4, arch=90)) == 90
    with pytest.raises(rtc.CompileError, match="operation line 1: error: identifier \"oops\""):
        rtc.ElementwiseKernel("float32 x", "float32 y", "y = oops", "bad").compile(
            ["float32"] * 2, arch=90)


@pytest.mark.parametrize("operation,written_first", [
    ("y = x + 1", True), ("y = x == 1", True), ("t = 1; y = t", True), ("y += x", False),
    ("y = y * 2", False), ("if (x > 0) y = x", False), ("y = x > 0 ? x : 0", False),
    ("t = y; y = 1", False), ("x + 1", False), ("yy = 1; y = 2", True)])
def test_which_outputs_the_vector_kernel_need_not_load(operation, written_first):
    from dlarray._rtc_elementwise_code import write_only
    assert write_only(operation, "y") == written_first


@pytest.mark.parametrize("params,message", [
    (("float32", "float32 y"), "cannot read the in parameter 'float32'"),
    (("float32 x, float32 x", "float32 y"), "unique"),
    (("float32 i", "float32 y"), "not i, _ind or _n"),
    (("float32 x", ""), "needs an output"),
])
def test_elementwise_parameters_are_checked(params, message):
    with pytest.raises(ValueError, match=message):
        rtc.ElementwiseKernel(params[0], params[1], "y = x", "k")
