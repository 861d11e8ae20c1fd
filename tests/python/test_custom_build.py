"""dlarray.custom: auto-compilation and its cache, prebuilt libraries (loaded once, reloaded when
changed, their device found from their code), DLARRAY_AOT_ALLOWED_DIRS, and the public header."""
import os
import subprocess

import numpy as np
import pytest

import dlarray
from aot_util import EXAMPLES, KERNELS, needs_nvcc
from dlarray import custom
from dlarray.custom import CompileError, Custom

CPU = dlarray.cpu(0)
NVCC_STRICT = ["-Xcompiler", "-fPIC,-Wall,-Wextra,-Wshadow", "--Werror", "all-warnings",
               "-std=c++17"]
RETURNS = """
#include <cstdint>
#include "value.h"
extern "C" int Value(int, void** params, int*, int64_t**, const char**, void*, void*) {
  static_cast<float*>(params[0])[0] = VALUE;
  return 0;
}
"""


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DLARRAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DLARRAY_AOT_ALLOWED_DIRS", raising=False)


def value_source(folder, value):
    (folder / "value.h").write_text("#define VALUE %s\n" % value)
    source = folder / "value.cc"
    source.write_text(RETURNS)
    return source


def run_value(source, **kwargs):
    out = dlarray.empty((1,), CPU)
    Custom("%s:Value" % source, [1], "float32", **kwargs)(out=out)
    return float(out.asnumpy()[0])


def test_compiled_once_then_cached(tmp_path):
    source = value_source(tmp_path, 5)
    first = custom.compile_source(source)
    stamp = first.stat().st_mtime_ns
    assert custom.compile_source(source) == first and first.stat().st_mtime_ns == stamp
    assert first.is_relative_to(tmp_path / "cache" / "aot")
    assert run_value(source) == 5


def test_an_edited_header_rebuilds(tmp_path):
    source = value_source(tmp_path, 5)
    assert run_value(source) == 5
    (tmp_path / "value.h").write_text("#define VALUE 6\n")
    assert run_value(source) == 6


def test_flags_can_be_replaced(tmp_path):
    source = value_source(tmp_path, "EXTRA")
    (tmp_path / "value.h").write_text(
        "#ifndef EXTRA\n#define EXTRA 1\n#endif\n#define VALUE EXTRA\n")
    flags = custom.default_flags(".cc")
    assert flags == ["-shared", "-fPIC", "-O3", "-std=c++17"]
    assert run_value(source) == 1
    assert run_value(source, compile_flags=flags + ["-DEXTRA=9"]) == 9


def test_a_corrupt_cached_library_is_rebuilt(tmp_path):
    source = value_source(tmp_path, 4)
    library = custom.compile_source(source)
    library.write_bytes(library.read_bytes()[:100])  # truncated
    assert custom.compile_source(source) == library
    assert run_value(source) == 4


def test_compile_errors_carry_the_compilers_message(tmp_path):
    source = tmp_path / "broken.cc"
    source.write_text("extern \"C\" int Broken() { return undefined_name; }\n")
    with pytest.raises(CompileError) as err:
        Custom("%s:Broken" % source, [1])
    message = str(err.value)
    assert "broken.cc does not compile" in message and "undefined_name" in message
    assert "-shared -fPIC -O3" in message  # the command line


@needs_nvcc
def test_cuda_source_compile_errors(tmp_path):
    source = tmp_path / "broken.cu"
    source.write_text("__global__ void k() { no_such_thing(); }\n")
    with pytest.raises(CompileError, match="no_such_thing"):
        custom.compile_source(source)


def test_a_library_is_loaded_once(tmp_path):
    library = custom.compile_source(value_source(tmp_path, 3))
    assert custom.load_library(library) is custom.load_library(str(library))


def test_a_changed_library_is_loaded_again(tmp_path):
    target = tmp_path / "lib" / "value.so"
    target.parent.mkdir()
    for value in (1, 2):
        folder = tmp_path / str(value)
        folder.mkdir()
        built = custom.compile_source(value_source(folder, value))
        staged = tmp_path / "staged.so"
        staged.write_bytes(built.read_bytes())
        os.replace(staged, target)  # a new file at the same path, as a linker writes it
        out = dlarray.empty((1,), CPU)
        Custom("%s:Value" % target, [1], "float32")(out=out)
        assert out.asnumpy()[0] == value


def test_prebuilt_cpu_library(tmp_path):
    library = tmp_path / "add.so"
    subprocess.run(["g++", "-shared", "-fPIC", "-O2", "-I", str(custom.include_dir()),
                    "-o", str(library), str(EXAMPLES / "custom_add.cc")], check=True)
    add = Custom("%s:CustomAdd" % library, lambda a, b: a)
    assert add.devices == ["cpu"]
    x = dlarray.array([1.0, 2.0], CPU)
    np.testing.assert_array_equal(add(x, x).asnumpy(), [2, 4])


@needs_nvcc
def test_prebuilt_cuda_library_serves_gpus(tmp_path):
    library = tmp_path / "add_cuda.so"
    proc = subprocess.run(["nvcc", "--shared", *NVCC_STRICT, "-I", str(custom.include_dir()),
                           "-o", str(library), str(EXAMPLES / "custom_add.cu")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    add = Custom("%s:CustomAdd" % library, lambda a, b: a)
    assert add.devices == ["cuda"]
    x = dlarray.array([1.0], CPU)
    with pytest.raises(ValueError, match="has no implementation for arrays on cpu"):
        add(x, x)  # host pointers never reach a CUDA kernel


def test_allowed_dirs(tmp_path, monkeypatch):
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    source = value_source(outside, 8)
    library = custom.compile_source(source)
    monkeypatch.setenv("DLARRAY_AOT_ALLOWED_DIRS", "%s:%s" % (tmp_path / "nowhere", inside))
    with pytest.raises(PermissionError, match="outside DLARRAY_AOT_ALLOWED_DIRS"):
        Custom("%s:Value" % source, [1], "float32")
    with pytest.raises(PermissionError, match="outside DLARRAY_AOT_ALLOWED_DIRS"):
        custom.load_library(library)
    (inside / "link.so").symlink_to(library)  # symlinks are resolved
    with pytest.raises(PermissionError, match="link.so .*value.so.* is outside"):
        Custom("%s:Value" % (inside / "link.so"), [1], "float32")
    (inside / "value.so").write_bytes(library.read_bytes())
    out = dlarray.empty((1,), CPU)
    Custom("%s:Value" % (inside / "value.so"), [1], "float32")(out=out)
    assert out.asnumpy()[0] == 8
    monkeypatch.setenv("DLARRAY_AOT_ALLOWED_DIRS", str(outside))
    assert run_value(source) == 8
    monkeypatch.setenv("DLARRAY_AOT_ALLOWED_DIRS", "")  # empty: no restriction
    assert run_value(source) == 8


@pytest.mark.parametrize("compiler,flags", [("cc", ["-x", "c", "-std=c99"]),
                                            ("g++", ["-x", "c++", "-std=c++17"])])
def test_the_header_is_clean_c_and_cpp(tmp_path, compiler, flags):
    """dlarray/aot.h compiles without warnings as C99 and C++ (the installed copy)."""
    source = tmp_path / "use_header.txt"
    source.write_text('#include "dlarray/aot.h"\n'
                      "int Use(void* extra) {\n"
                      "  DLArrayAotExtra* e = DLArrayAotExtraOf(extra);\n"
                      '  return (int)DLArrayAotAttrInt(e, "n", 1)'
                      ' + (int)DLArrayAotAttrFloat(e, "f", 0)'
                      ' + (DLArrayAotAttrString(e, "s", 0) != 0);\n}\n')
    include = custom.include_dir()
    assert (include / "dlarray" / "aot.h").is_file()
    proc = subprocess.run([compiler, *flags, "-Wall", "-Wextra", "-Wpedantic", "-Werror",
                           "-fsyntax-only", "-I", str(include), str(source)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_the_extra_struct_layout_is_versioned():
    """The header's struct starts with struct_size, magic and version, like the plugin ABI."""
    header = (custom.include_dir() / "dlarray" / "aot.h").read_text()
    start = header.index("typedef struct DLArrayAotExtra {")
    fields = [line.split()[1] for line in header[start:].splitlines()[1:4]]
    assert fields == ["struct_size;", "magic;", "version;"]
    assert "#define DLARRAY_AOT_VERSION 1" in header


def test_kernels_compile_without_warnings(tmp_path):
    for source in [EXAMPLES / "custom_add.cc", EXAMPLES / "bias_add.cc",
                   EXAMPLES / "scaled_reduce.cc", KERNELS / "probe_ops.cc"]:
        proc = subprocess.run(["g++", *custom.default_flags(".cc"), "-Wall", "-Wextra",
                               "-Wpedantic", "-Wshadow", "-Werror", "-I",
                               str(custom.include_dir()), "-o",
                               str(tmp_path / (source.stem + ".so")), str(source)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


@needs_nvcc
def test_cuda_kernels_compile_without_warnings(tmp_path):
    """(custom_add.cu is built with the same flags by test_prebuilt_cuda_library_serves_gpus.)"""
    sources = [EXAMPLES / "bias_add.cu", EXAMPLES / "scaled_reduce.cu", KERNELS / "fault.cu"]
    proc = subprocess.run(["nvcc", "-c", *NVCC_STRICT, "-I", str(custom.include_dir()),
                           *map(str, sources)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_missing_compiler_is_explained(tmp_path, monkeypatch):
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    with pytest.raises(CompileError, match="cannot run .*no-such-compiler"):
        custom.compile_source(value_source(tmp_path, 1))
    assert os.environ["CXX"].endswith("no-such-compiler")
