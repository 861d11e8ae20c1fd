"""dlarray.cpp_extension: plugins built from sources at run time, cached, loaded, with their ops
as attributes, their gradients in autodiff, and clear errors when a compiler fails or is missing."""
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import dlarray
from dlarray import autodiff as ad
from dlarray import cpp_extension

pytestmark = pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None,
                                reason="no C++ compiler on this machine")

# A complete op plugin in one string: cube(x) = x^3, differentiated by cube_grad(x, dy) = 3x^2 dy.
CUBE = textwrap.dedent("""
    #include "dlarray/plugin.h"

    namespace {
    const float* In(const dlarray::KernelContext& c, int i) {
      return static_cast<const float*>(c.inputs[i]->data);
    }
    float* Out(const dlarray::KernelContext& c) { return static_cast<float*>(c.outputs[0]->data); }

    void Cube(const dlarray::KernelContext& c) {
      const float* x = In(c, 0);
      float* y = Out(c);
      for (int64_t i = 0, n = dlarray::NumElements(c.outputs[0]); i < n; ++i) y[i] = x[i] * x[i] * x[i];
    }
    void CubeGrad(const dlarray::KernelContext& c) {
      const float* x = In(c, 0);
      const float* dy = In(c, 1);
      float* dx = Out(c);
      for (int64_t i = 0, n = dlarray::NumElements(c.outputs[0]); i < n; ++i) dx[i] = 3 * x[i] * x[i] * dy[i];
    }
    void Register(dlarray::Registry* r) {
      using dlarray::GradArg;
      dlarray::OpSchema cube;
      cube.name = "NAME";
      cube.doc = "y = x ** 3";
      cube.gradients = {{0, "NAME_grad", {GradArg::Input(0), GradArg::OutputGrad(0)}}};
      r->declare_op(cube);
      dlarray::OpSchema grad;
      grad.name = "NAME_grad";
      grad.num_inputs = 2;
      grad.input_names = {"x", "dy"};
      r->declare_op(grad);
      r->register_kernel("NAME", kDLArrayCPU, &Cube);
      r->register_kernel("NAME_grad", kDLArrayCPU, &CubeGrad);
    #ifdef DLARRAY_EXTENSION_WITH_CUDA
      RegisterCuda(r);
    #endif
    }
    }  // namespace

    DLARRAY_DEFINE_PLUGIN("NAME", 0, nullptr, &Register)
    """)

CUDA_PART = textwrap.dedent("""
    #include "dlarray/plugin.h"
    __global__ void CubeKernel(const float* x, float* y, int64_t n) {
      int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
      if (i < n) y[i] = x[i] * x[i] * x[i];
    }
    void CubeCuda(const dlarray::KernelContext& c) {
      const int64_t n = dlarray::NumElements(c.outputs[0]);
      CubeKernel<<<(n + 255) / 256, 256, 0, static_cast<cudaStream_t>(c.stream)>>>(
          static_cast<const float*>(c.inputs[0]->data), static_cast<float*>(c.outputs[0]->data), n);
    }
    void RegisterCuda(dlarray::Registry* r) { r->register_kernel("NAME", kDLArrayCUDA, &CubeCuda); }
    """)


def source(name, cuda=False):
    text = CUBE.replace("NAME", name)
    if cuda:  # the registration calls a function of the .cu file
        text = text.replace("namespace {", "void RegisterCuda(dlarray::Registry* r);\nnamespace {", 1)
    return text


@pytest.fixture(autouse=True)
def cache_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("DLARRAY_CACHE_DIR", str(tmp_path / "cache"))


def test_load_inline_builds_loads_and_exposes_the_ops(rng):
    ext = cpp_extension.load_inline("cube_a", source("cube_a"))
    assert ext.built and ext.build_seconds > 0 and ext.ops == ["cube_a", "cube_a_grad"]
    assert "cube_a" in dir(ext) and "y = x ** 3" in ext.cube_a.__doc__
    x = rng.standard_normal((33, 65)).astype(np.float32)
    np.testing.assert_allclose(ext.cube_a(dlarray.array(x)).asnumpy(), x ** 3, rtol=1e-6)
    np.testing.assert_allclose(ext.cube_a(x=dlarray.array(x)).asnumpy(), x ** 3, rtol=1e-6)
    with pytest.raises(AttributeError, match="has no op 'nope'"):
        ext.nope
    # Its declared gradient drives autodiff.
    v = ad.Variable("v")
    loss = ad.reducesumaxiszero_op(ad.ops.cube_a(v))
    g, = ad.gradients(loss, [v])
    xv = rng.standard_normal(7).astype(np.float32)
    grad = ad.Executor([g], ctx=dlarray.cpu()).run({v: xv}, convert_to_numpy_ret_vals=True)[0]
    np.testing.assert_allclose(grad, 3 * xv ** 2, rtol=1e-5)


def test_second_load_comes_from_the_cache_without_compiling(tmp_path):
    src = tmp_path / "cube_b.cc"
    src.write_text(source("cube_b"))
    first = cpp_extension.load("cube_b", [src])
    assert first.built
    code = ("import dlarray.cpp_extension as c, json;"
            f"e = c.load('cube_b', [{str(src)!r}]); print(json.dumps([e.built, str(e.path)]))")
    env = dict(os.environ, CXX="/nonexistent-compiler-proves-no-build")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "no C++ compiler" in out.stderr  # the compiler is in the key
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == '[false, "%s"]' % first.path


def test_changed_flags_or_sources_build_a_new_entry(tmp_path):
    a = cpp_extension.load_inline("cube_c", source("cube_c"))
    code = ("import dlarray.cpp_extension as c, sys;"
            "e = c.load_inline('cube_c', sys.stdin.read(), extra_cflags=['-O1']);"
            "print(e.built, e.path)")
    out = subprocess.run([sys.executable, "-c", code], input=source("cube_c"), text=True,
                         capture_output=True, check=True).stdout.split()
    assert out[0] == "True" and out[1] != str(a.path)
    # In this process the ops of the first build stay: a changed build is refused, clearly.
    with pytest.raises(RuntimeError, match="already loaded in this process from another build"):
        cpp_extension.load_inline("cube_c", source("cube_c"), extra_cflags=["-O1"])


def test_a_corrupt_cached_library_is_rebuilt(tmp_path):
    src = tmp_path / "cube_d.cc"
    src.write_text(source("cube_d"))
    # Built and loaded in other processes: truncating a library this process has mapped would
    # crash it (SIGBUS), which is what the cache's atomic renames prevent in real use.
    code = ("import dlarray.cpp_extension as c;"
            f"e = c.load('cube_d', [{str(src)!r}]); print(e.built, e.path)")
    built, path = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout.split()
    assert built == "True"
    pathlib.Path(path).write_bytes(pathlib.Path(path).read_bytes()[:1000])  # truncated on disk
    built, again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  check=True).stdout.split()
    assert built == "True" and again == path


def test_compiler_errors_carry_the_compiler_message():
    bad = source("cube_e").replace("return static_cast<const float*>", "retrun static_cast<const float*>")
    with pytest.raises(cpp_extension.BuildError, match=r"(?s)building failed.*retrun"):
        cpp_extension.load_inline("cube_e", bad)


def test_a_missing_entry_point_is_explained():
    with pytest.raises(cpp_extension.BuildError, match="DLARRAY_DEFINE_PLUGIN"):
        cpp_extension.load_inline("no_entry", "int f() { return 1; }")


def test_missing_compiler_says_which_and_how(monkeypatch):
    monkeypatch.setenv("CXX", "/no/such/c++")
    with pytest.raises(cpp_extension.BuildError, match=r"no C\+\+ compiler.*CXX"):
        cpp_extension.load_inline("cube_f", source("cube_f"))


def test_bad_arguments():
    with pytest.raises(ValueError, match="identifier"):
        cpp_extension.load("not a name", ["x.cc"])
    with pytest.raises(FileNotFoundError, match="no source file"):
        cpp_extension.load("cube_g", ["/no/such/file.cc"])
    with pytest.raises(ValueError, match="no sources"):
        cpp_extension.load_inline("cube_h", [])


def test_cuda_sources_without_nvcc_are_skipped_with_a_warning(monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.setenv("DLARRAY_NVCC", "/no/nvcc")
    if shutil.which("nvcc"):
        pytest.skip("nvcc is in /usr/bin here")
    with pytest.warns(RuntimeWarning, match="no nvcc found.*CPU kernels"):
        ext = cpp_extension.load_inline("cube_i", source("cube_i", cuda=True),
                                        cuda_sources=CUDA_PART.replace("NAME", "cube_i"))
    assert dlarray.ops.op_info("cube_i")["devices"] == ["cpu"]
    np.testing.assert_allclose(ext.cube_i(dlarray.array([2.0])).asnumpy(), [8.0])


@pytest.mark.skipif(cpp_extension._nvcc() is None, reason="no nvcc on this machine")
def test_cuda_sources_are_compiled_with_nvcc(rng):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ext = cpp_extension.load_inline("cube_j", source("cube_j", cuda=True),
                                        cuda_sources=CUDA_PART.replace("NAME", "cube_j"))
    assert dlarray.ops.op_info("cube_j")["devices"] == ["cpu", "cuda"]
    for ctx in dlarray.devices():
        if repr(ctx).rsplit("(", 1)[0] not in ("cpu", "cuda"):  # e.g. OpenCL: no kernel here
            continue
        x = rng.standard_normal(1000).astype(np.float32)
        np.testing.assert_allclose(ext.cube_j(dlarray.array(x, ctx)).asnumpy(), x ** 3, rtol=1e-6)


def test_parallel_processes_build_once(tmp_path):
    src = tmp_path / "cube_k.cc"
    src.write_text(source("cube_k"))
    code = ("import dlarray.cpp_extension as c;"
            f"e = c.load('cube_k', [{str(src)!r}]); print(int(e.built))")
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    built = [int(p.communicate()[0].strip() or -1) for p in procs]
    assert all(p.returncode == 0 for p in procs) and sorted(built) == [0, 0, 1]


def test_cache_dir_defaults_to_home(monkeypatch, tmp_path):
    monkeypatch.delenv("DLARRAY_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ext = cpp_extension.load_inline("cube_l", source("cube_l"))
    assert pathlib.Path(tmp_path / "home" / ".cache" / "dlarray") in ext.path.parents


EXAMPLE_C = pathlib.Path(__file__).resolve().parents[2] / "examples" / "custom_op_c" / "axpby.c"


@pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None,
                    reason="no C compiler on this machine")
def test_a_plugin_written_in_c_builds_and_runs(rng):
    # One load per process (a loaded extension cannot be replaced), every dtype and size in it.
    ext = cpp_extension.load("axpby_c", [EXAMPLE_C])
    assert ext.ops == ["axpby"] and "written in C" in ext.axpby.__doc__
    for dtype in (np.float32, np.float64):
        for shape in ((0,), (1,), (7, 13), (1025, 3)):
            x = rng.standard_normal(shape).astype(dtype)
            y = rng.standard_normal(shape).astype(dtype)
            out = ext.axpby(dlarray.array(x, dtype=dtype), dlarray.array(y, dtype=dtype),
                            alpha=2.5, beta=-0.5)
            assert out.dtype == dtype and out.shape == shape
            np.testing.assert_allclose(out.asnumpy(), dtype(2.5) * x + dtype(-0.5) * y,
                                       rtol=1e-6 if dtype == np.float32 else 1e-14)
    with pytest.raises(TypeError):  # int32 is not among the declared dtypes
        ext.axpby(dlarray.array(np.ones(3, np.int32), dtype=np.int32),
                  dlarray.array(np.ones(3, np.int32), dtype=np.int32), alpha=1.0, beta=1.0)


def test_sources_that_are_not_c_cpp_or_cuda_are_refused(tmp_path):
    text = tmp_path / "kernel.txt"
    text.write_text("int x;\n")
    with pytest.raises(ValueError, match=r"neither C \(\.c\), C\+\+ .* nor CUDA"):
        cpp_extension.load("txt_source", [text])
