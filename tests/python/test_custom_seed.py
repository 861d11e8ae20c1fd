"""The seed's own custom_add.cu (seed 002), extracted from the seed at test time, compiled with the
seed's nvcc command and run through dlarray.custom as the seed's test_custom_ops.py does; the
example script; a faulting GPU kernel."""
import json
import os
import re
import shlex
import subprocess
import sys

import numpy as np
import pytest

import dlarray
from aot_util import EXAMPLES, GPUS, KERNELS, ROOT, SEEDS, needs_gpu, needs_nvcc
from dlarray import autodiff as ad
from dlarray.custom import Custom


@pytest.fixture(scope="module", autouse=True)
def shared_cache(aot_cache):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DLARRAY_CACHE_DIR", str(aot_cache))
        yield


def seed_text():
    seeds = sorted(SEEDS.glob("002_*.txt")) if SEEDS.is_dir() else []
    if not seeds:
        pytest.skip("the seeds folder (../shared/seeds/002_*.txt) is not on this machine")
    return seeds[0].read_text(encoding="utf-8")


def extract_custom_add(text):
    """(source of custom_add.cu, the nvcc command in its second line) from the seed's text: from
    the line "// custom_add.cu" to the closing brace of CustomAdd."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "// custom_add.cu")
    code, depth, in_custom = [], 0, False
    for line in lines[start:]:
        code.append(line)
        in_custom = in_custom or 'extern "C" int CustomAdd' in line
        depth += line.count("{") - line.count("}")
        if in_custom and depth == 0 and "}" in line:
            break
    command = code[1].lstrip("/ ").strip()
    assert command.startswith("nvcc ") and "custom_add.cu" in command, command
    return "\n".join(code) + "\n", command


@pytest.fixture(scope="module")
def seed_library(tmp_path_factory):
    """custom_add.so built from the seed's file with the seed's own command."""
    source, command = extract_custom_add(seed_text())
    if not (os.path.exists("/usr/local/cuda/bin/nvcc") or
            subprocess.run(["which", "nvcc"], capture_output=True).returncode == 0):
        pytest.skip("nvcc is not installed")
    folder = tmp_path_factory.mktemp("seed002")
    (folder / "custom_add.cu").write_text(source)
    argv = shlex.split(command)
    if not subprocess.run(["which", argv[0]], capture_output=True).returncode == 0:
        argv[0] = "/usr/local/cuda/bin/nvcc"
    proc = subprocess.run(argv, cwd=folder, capture_output=True, text=True)
    assert proc.returncode == 0, "the seed's command failed: %s\n%s" % (command, proc.stderr)
    return folder


def test_the_seed_file_is_extracted_whole():
    source, command = extract_custom_add(seed_text())
    assert command == "nvcc --shared -Xcompiler -fPIC -o custom_add.so custom_add.cu"
    assert "__global__ void CustomAddKernel" in source
    assert re.search(r'extern "C" int CustomAdd\(int nparam, void \*\*params', source)
    assert source.rstrip().endswith("return 0;\n}")


@needs_nvcc
def test_the_seed_file_compiles_with_the_seeds_command(seed_library):
    library = seed_library / "custom_add.so"
    assert library.is_file()
    op = Custom("%s:CustomAdd" % library, out_shape=[3], out_dtype="float32", func_type="aot")
    assert op.devices == ["cuda"]  # CUDA code: never given host pointers


@needs_gpu
def test_the_seed_program_gives_4_4_4_and_its_bprop_3_2_1(seed_library, monkeypatch):
    monkeypatch.chdir(seed_library)  # the seed's relative path, "./custom_add.so"
    ctx = GPUS[0]
    t1 = dlarray.array([1., 2., 3.], ctx)
    t2 = dlarray.array([3., 2., 1.], ctx)
    custom_add = Custom("./custom_add.so:CustomAdd", out_shape=[t1.shape[0]],
                        out_dtype="float32", func_type="aot")
    np.testing.assert_array_equal(custom_add(t1, t2).asnumpy(), [4, 4, 4])

    add = Custom("./custom_add.so:CustomAdd", out_shape=[3], out_dtype="float32",
                 func_type="aot", bprop=lambda x, y, out, dout: (y,))
    x, y = ad.Variable("x"), ad.Variable("y")
    z = add(x, y)
    res, res_g = ad.Executor([z] + ad.gradients(z, [x]), ctx=ctx).run(
        {x: t1, y: t2}, convert_to_numpy_ret_vals=True)
    np.testing.assert_array_equal(res, [4, 4, 4])
    np.testing.assert_array_equal(res_g, [3, 2, 1])


@needs_gpu
@pytest.mark.parametrize("n", [1, 1023, 1024, 1025, 100003])
def test_the_seed_kernel_matches_numpy(seed_library, n, rng):
    op = Custom("%s:CustomAdd" % (seed_library / "custom_add.so"), lambda a, b: a, "float32")
    a, b = rng.standard_normal((2, n)).astype(np.float32)
    out = op(dlarray.array(a, GPUS[0]), dlarray.array(b, GPUS[0]))
    np.testing.assert_array_equal(out.asnumpy(), a + b)


def test_the_example_script(tmp_path, aot_cache):
    proc = subprocess.run([sys.executable, str(EXAMPLES / "test_custom_ops.py")],
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, DLARRAY_CACHE_DIR=str(aot_cache)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:3] == ["[4. 4. 4.]", "[4. 4. 4.]", "[3. 2. 1.]"]


@needs_gpu
def test_a_faulting_kernel_raises_the_cuda_error_at_the_next_sync(aot_cache):
    """Run in a child: the fault poisons the CUDA context."""
    code = f"""
import json, dlarray
from dlarray.custom import Custom
fault = Custom({str(KERNELS / "fault.cu") + ":Fault"!r}, [4], "float32")
out = dlarray.empty((4,), dlarray.gpu(0))
fault(out=out)  # returns at once: the kernel is queued
try:
    dlarray.synchronize(dlarray.gpu(0))
    err = None
except RuntimeError as e:
    err = str(e)
print(json.dumps({{"err": err}}))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, env=dict(os.environ, DLARRAY_CACHE_DIR=str(aot_cache)))
    assert proc.returncode == 0, proc.stderr
    err = json.loads(proc.stdout.strip().splitlines()[-1])["err"]
    assert err is not None and "cudaErrorIllegalAddress" in err, err


def test_the_readme_example(aot_cache):
    """The README's custom ops example runs as printed (from the repository's root)."""
    text = (ROOT / "README.md").read_text()
    start = text.index("```python", text.index("## Custom ops: AOT kernels")) + len("```python\n")
    code = text[start:text.index("```", start)]
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, cwd=ROOT,
                          env=dict(os.environ, DLARRAY_CACHE_DIR=str(aot_cache)))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("NDArray([4., 4., 4.]")
    assert lines[1].startswith("NDArray([2., 2., 2., 2.]")
    assert "array([2., 2., 2.]" in lines[2] and "array([1., 1., 1.]" in lines[2]
    assert "array([0., 2., 4.]" in lines[3]
