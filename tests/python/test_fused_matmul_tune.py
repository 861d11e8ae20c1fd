"""How the CUDA plugin runs the fused products (backends/cuda/cublaslt_tune.cc): timed at the
first call of a shape, the fastest of cuBLASLt's algorithms and the unfused cuBLAS product with
a bias (+ relu) or column-sum kernel; untimed during a CUDA graph recording (timed at the next
call outside one); DLARRAY_CUBLASLT_TUNE=0 (the heuristic's first) and =unfused (the unfused
kernels, equal to the composite bit for bit). Each choice is listed by
``_linear_api.native_choices``. The environment's modes run in subprocesses (the plugin reads
the variable once)."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import dlarray
from dlarray import _linear_api

GPU = dlarray.gpu(0)
needs_gpu = pytest.mark.skipif(GPU not in dlarray.devices(),
                               reason="no usable GPU: the cuBLASLt kernels need one")
# The MNIST MLP's layers (batch, in, out), and odd ones: a 1-element product, rows of 3, 17
# and 129 elements (no 16-byte multiple: cuBLASLt's epilogues may refuse them), k past a tile
MLP = [(1000, 784, 256), (1000, 256, 100), (1000, 100, 10)]
ODD = [(1, 1, 1), (3, 17, 129), (129, 3, 17), (1000, 129, 3)]
# relative to the sum of the magnitudes of a result's terms
TOL = {"float64": 1e-12, "float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2}
# a choice's line: "<problem>: FUSED; ..." or "<problem>: UNFUSED; ..." (timed) or
# "<problem>: FUSED, untimed (why); ..." (see Line in cublaslt_tune.cc)
LINE = re.compile(r"^(linear|linear_weight_grad) m=(\d+) n=(\d+) k=(\d+) (\w+).*: "
                  r"(FUSED|UNFUSED)(;|, untimed \(([^)]*)\);)")


def test_no_choices_off_cuda():
    assert _linear_api.native_choices(dlarray.cpu(0)) == []


def _choices():
    """{(op, m, n, k, dtype): (path, why untimed or None)} of the GPU's choice lines."""
    out = {}
    for line in _linear_api.native_choices(GPU):
        match = LINE.match(line)
        assert match, line
        op, m, n, k, dtype, path, _, why = match.groups()
        out[(op, int(m), int(n), int(k), dtype)] = (path, why)
    return out


def _close(got, want, scale, dtype):
    np.testing.assert_array_less(np.abs(got.astype(np.float64) - want),
                                 TOL[dtype] * (scale + 1e-30) + 1e-300)


def _check_products(rng, shapes, dtype="float32"):
    """linear (with and without relu) and linear_weight_grad at ``shapes`` on the GPU against
    NumPy; each result twice (a choice is kept: the same bits)."""
    for m, k, n in shapes:
        x = rng.standard_normal((m, k)).astype(dtype)
        w = rng.standard_normal((k, n)).astype(dtype)
        b = rng.standard_normal(n).astype(dtype)
        gx, gw, gb = (dlarray.array(v, GPU) for v in (x, w, b))
        x64, w64, b64 = (v.astype(np.float64) for v in (x, w, b))
        scale = np.abs(x64) @ np.abs(w64) + np.abs(b64)
        for relu in (False, True):
            got = dlarray.linear(gx, gw, gb, relu=relu).asnumpy()
            want = x64 @ w64 + b64
            _close(got, np.maximum(want, 0) if relu else want, scale, dtype)
            np.testing.assert_array_equal(dlarray.linear(gx, gw, gb, relu=relu).asnumpy(), got)
        dy = rng.standard_normal((m, n)).astype(dtype)
        dw, db = dlarray.linear_weight_grad(gx, dlarray.array(dy, GPU))
        dy64 = dy.astype(np.float64)
        _close(dw.asnumpy(), x64.T @ dy64, np.abs(x64.T) @ np.abs(dy64), dtype)
        _close(db.asnumpy(), dy64.sum(0), np.abs(dy64).sum(0), dtype)


@needs_gpu
def test_cuda_products_are_timed_and_listed(rng):
    """Default mode: every product seen has a timed choice (fused or not), and results match
    NumPy whatever was chosen."""
    _check_products(rng, MLP + ODD)
    choices = _choices()
    for line in _linear_api.native_choices(GPU):
        print(line)
    for m, k, n in MLP + ODD:
        # cuBLASLt's column-major view: linear's D is out^T (n x m); the weight gradient's
        # dw^T (n x k) sums over m
        for key in (("linear", n, m, k, "float32"), ("linear_weight_grad", n, k, m, "float32")):
            assert key in choices, (key, choices)
            assert choices[key][1] is None, (key, choices[key])  # timed
    # the MLP's first layer: the fused and unfused times are both listed
    first = [line for line in _linear_api.native_choices(GPU)
             if line.startswith("linear m=256 n=1000 k=784 float32")]
    assert first and all(re.search(r"fused [\d.]+ us", line) and re.search(
        r"unfused [\d.]+ us", line) for line in first), first


def _run(code, **env):
    """Runs ``code`` in a fresh Python with ``env`` added; its stdout (it must print 'ok')."""
    done = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, **env),
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and "ok" in done.stdout.splitlines(), done.stdout + done.stderr
    return done.stdout


PRELUDE = (
    "import numpy as np, dlarray\n"
    "from dlarray import _linear_api\n"
    "g = dlarray.gpu(0)\n"
    "rng = np.random.default_rng(0)\n"
    "def arrays(m, k, n, dtype):\n"
    "    dt = np.dtype(dlarray.bfloat16) if dtype == 'bfloat16' else np.dtype(dtype)\n"
    "    vals = [rng.standard_normal(s).astype(dt) for s in ((m, k), (k, n), (n,), (m, n))]\n"
    "    return [dlarray.array(v, g, dt) for v in vals]\n")


@needs_gpu
def test_cuda_unfused_mode_equals_the_composite():
    """DLARRAY_CUBLASLT_TUNE=unfused: the plugin's unfused kernels (cuBLAS's product, then the
    bias and relu in one kernel; reduce_sum_axis_zero for the bias gradient) give the
    composite's results bit for bit, for every dtype and odd shape."""
    code = PRELUDE + (
        "dtypes = ['float32', 'float64', 'float16'] + (['bfloat16'] if hasattr(dlarray, "
        "'bfloat16') else [])\n"
        "for dtype in dtypes:\n"
        "    for m, k, n in %r:\n"
        "        x, w, b, dy = arrays(m, k, n, dtype)\n"
        "        for relu in (False, True):\n"
        "            got = dlarray.linear(x, w, b, relu=relu)\n"
        "            want = _linear_api.linear_composite(x, w, b, relu, dlarray.empty((m, n), g, "
        "x.dtype))\n"
        "            assert got.asnumpy().tobytes() == want.asnumpy().tobytes(), (dtype, m, k, n)\n"
        "        dw, db = dlarray.linear_weight_grad(x, dy)\n"
        "        want_dw, want_db = dlarray.empty(dw.shape, g, x.dtype), dlarray.empty(db.shape, "
        "g, x.dtype)\n"
        "        _linear_api.linear_weight_grad_composite(x, dy, want_dw, want_db)\n"
        "        assert dw.asnumpy().tobytes() == want_dw.asnumpy().tobytes(), (dtype, m, k, n)\n"
        "        assert db.asnumpy().tobytes() == want_db.asnumpy().tobytes(), (dtype, m, k, n)\n"
        "lines = _linear_api.native_choices(g)\n"
        "assert lines and all(': UNFUSED, untimed (DLARRAY_CUBLASLT_TUNE=unfused)' in l "
        "for l in lines), lines\n"
        "assert not _linear_api.native_failures(), _linear_api.native_failures()\n"
        "print('ok')\n") % (MLP + ODD,)
    _run(code, DLARRAY_CUBLASLT_TUNE="unfused")


@needs_gpu
def test_cuda_tune_off_takes_the_heuristics_first():
    """DLARRAY_CUBLASLT_TUNE=0: untimed choices (the heuristic's first where it has one),
    results as NumPy's."""
    code = PRELUDE + (
        "x, w, b, dy = arrays(1000, 784, 256, 'float32')\n"
        "out = dlarray.linear(x, w, b, relu=True).asnumpy()\n"
        "want = np.maximum(x.asnumpy().astype(np.float64) @ w.asnumpy() + b.asnumpy(), 0)\n"
        "np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-3)\n"
        "lines = _linear_api.native_choices(g)\n"
        "assert len(lines) == 1 and ': FUSED, untimed (DLARRAY_CUBLASLT_TUNE=0); the "
        "heuristic' in lines[0], lines\n"
        "print('ok')\n")
    _run(code, DLARRAY_CUBLASLT_TUNE="0")


@needs_gpu
def test_cuda_bad_tune_value_raises():
    code = PRELUDE + (
        "x, w, b, dy = arrays(8, 8, 8, 'float32')\n"
        "try:\n"
        "    dlarray.linear(x, w, b)\n"
        "except ValueError as e:\n"
        "    assert \"DLARRAY_CUBLASLT_TUNE='sometimes'\" in str(e), e\n"
        "    print('ok')\n")
    _run(code, DLARRAY_CUBLASLT_TUNE="sometimes")


@needs_gpu
def test_cuda_product_first_seen_while_recording():
    """A shape first seen inside a CUDA graph recording runs untimed there (the replay gives
    the right values) and is timed at its next call outside the recording."""
    code = PRELUDE + (
        "from dlarray import autodiff as ad\n"
        "x, w, b, dy = arrays(64, 48, 32, 'float32')\n"
        "dlarray.linear(x, w, b)  # another shape first: the handle, the workspace\n"
        "x, w, b, dy = arrays(200, 96, 40, 'float32')\n"
        "out = dlarray.empty((200, 40), g)\n"
        "graph = ad.record_cuda_graph(lambda: dlarray.linear(x, w, b, relu=True, out=out), g)\n"
        "line = [l for l in _linear_api.native_choices(g) if l.startswith('linear m=40 n=200')]\n"
        "assert len(line) == 1 and 'untimed (first seen during a CUDA graph recording)' in "
        "line[0], line\n"
        "graph.launch()\n"
        "want = np.maximum(x.asnumpy().astype(np.float64) @ w.asnumpy() + b.asnumpy(), 0)\n"
        "np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-4, atol=1e-4)\n"
        "dlarray.linear(x, w, b, relu=True, out=out)\n"
        "np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-4, atol=1e-4)\n"
        "line = [l for l in _linear_api.native_choices(g) if l.startswith('linear m=40 n=200')]\n"
        "assert len(line) == 1 and 'untimed' not in line[0] and ' us' in line[0], line\n"
        "graph.launch()  # the recorded algorithm still runs\n"
        "np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-4, atol=1e-4)\n"
        "print('ok')\n")
    _run(code)


@needs_gpu
def test_cuda_executor_step_replays_timed_choices():
    """The MNIST MLP's executor in a fresh process: its first run is op by op, so every
    product its recorded graph runs was timed before the recording."""
    code = (
        "import sys\n"
        "sys.path.insert(0, %r)\n"
        "import dlarray\n"
        "from dlarray import _linear_api\n"
        "from test_fused_matmul import _train\n"
        "stats = _train(dlarray.gpu(0), 5, 1000)[2].graph_stats()\n"
        "assert stats['fused_products'] == 6 and stats['replays'] >= 3, stats\n"
        "lines = _linear_api.native_choices(dlarray.gpu(0))\n"
        "print('\\n'.join(lines))\n"
        "assert len(lines) >= 6 and not any('untimed' in l for l in lines), lines\n"
        "print('ok')\n") % os.path.dirname(os.path.abspath(__file__))
    print(_run(code))


def test_lines_parse():
    """The pattern the tests read the plugin's lines with."""
    assert LINE.match("linear m=256 n=1000 k=784 float32 RELU_BIAS align 256/256/256: FUSED; "
                      "fused 5.10 us (heuristic result 3 of 16; its first 6.20 us), unfused "
                      "5.80 us").groups()[:6] == ("linear", "256", "1000", "784", "float32",
                                                 "FUSED")
    match = LINE.match("linear_weight_grad m=10 n=100 k=1000 float16 BGRADA B^T align "
                       "256/256/256: UNFUSED, untimed (DLARRAY_CUBLASLT_TUNE=unfused); "
                       "cuBLASLt algorithms: 4")
    assert match.group(6) == "UNFUSED" and match.group(8) == "DLARRAY_CUBLASLT_TUNE=unfused"
