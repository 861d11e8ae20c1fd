"""Issue 23's fused products: ``dlarray.linear`` (``relu(x @ w + bias)``) and
``dlarray.linear_weight_grad`` (``x^T @ dy`` with ``dy.sum(0)``) against NumPy on every device
and float dtype (the composite of matrix_multiply and the elementwise ops where the backend has
no native kernel; cuBLASLt with an epilogue on CUDA), at shapes crossing tile sizes, empty
ones, without a bias; errors that name the argument; the op table's rows; and the Executor's
dense-layer patterns: an MNIST-shaped MLP trained with them equals the unfused run, and
graph_stats() counts the products."""
import os
import subprocess
import sys

import numpy as np
import pytest

import dlarray
from dlarray import _linear_api
from dlarray import autodiff as ad
from dlarray.autodiff import _fusion_products

DTYPES = ["float32", "float64", "float16"] + (["bfloat16"] if hasattr(dlarray, "bfloat16")
                                              else [])
# relative to the sum of the magnitudes of a result's terms
TOL = {"float64": 1e-12, "float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2}
SHAPES = [(1, 1, 1), (3, 17, 129), (129, 3, 17), (17, 129, 1000), (1000, 129, 3),
          (1000, 17, 129), (129, 1000, 17)]
EMPTY = [(0, 5, 3), (4, 0, 3), (4, 5, 0)]
GPU = dlarray.gpu(0)
needs_gpu = pytest.mark.skipif(GPU not in dlarray.devices(),
                               reason="no usable GPU: the cuBLASLt kernels need one")


def _np_dtype(name):
    return np.dtype(dlarray.bfloat16) if name == "bfloat16" else np.dtype(name)


def _data(rng, shape, dtype):
    """Values exactly representable in the dtype (rounded there), as float64 and on host."""
    v = rng.standard_normal(shape).astype(_np_dtype(dtype))
    return v.astype(np.float64), v


def _dev(v, ctx):
    return dlarray.array(v, ctx, v.dtype)


def _close(got, want, scale, dtype):
    np.testing.assert_array_less(np.abs(got.astype(np.float64) - want),
                                 TOL[dtype] * (scale + 1e-30) + 1e-300)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,k,n", SHAPES + EMPTY, ids=lambda v: str(v))
@pytest.mark.parametrize("bias,relu", [(True, True), (True, False), (False, True),
                                       (False, False)], ids=["bias_relu", "bias", "relu",
                                                             "plain"])
def test_linear_matches_numpy(ctx, rng, dtype, m, k, n, bias, relu):
    x64, x = _data(rng, (m, k), dtype)
    w64, w = _data(rng, (k, n), dtype)
    b64, b = _data(rng, (n,), dtype)
    want = x64 @ w64 + (b64 if bias else 0)
    scale = np.abs(x64) @ np.abs(w64) + (np.abs(b64) if bias else 0)
    if relu:
        want = np.maximum(want, 0)
    out = dlarray.linear(_dev(x, ctx), _dev(w, ctx), _dev(b, ctx) if bias else None, relu=relu)
    assert out.shape == (m, n) and out.dtype == x.dtype and out.ctx == ctx
    _close(out.asnumpy(), want, scale, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,k,n", SHAPES + EMPTY, ids=lambda v: str(v))
def test_linear_weight_grad_matches_numpy(ctx, rng, dtype, m, k, n):
    x64, x = _data(rng, (m, k), dtype)
    dy64, dy = _data(rng, (m, n), dtype)
    dw, db = dlarray.linear_weight_grad(_dev(x, ctx), _dev(dy, ctx))
    assert dw.shape == (k, n) and db.shape == (n,) and dw.dtype == db.dtype == x.dtype
    _close(dw.asnumpy(), x64.T @ dy64, np.abs(x64.T) @ np.abs(dy64), dtype)
    _close(db.asnumpy(), dy64.sum(0), np.abs(dy64).sum(0), dtype)


def test_outputs_given_are_written(ctx, rng):
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((5, 4), (4, 3), (3,)))
    out = dlarray.empty((5, 3), ctx)
    assert dlarray.linear(_dev(x, ctx), _dev(w, ctx), _dev(b, ctx), out=out) is out
    np.testing.assert_allclose(out.asnumpy(), x @ w + b, rtol=1e-5, atol=1e-5)
    dw, db = dlarray.empty((5, 3), ctx), dlarray.empty((3,), ctx)
    got = dlarray.linear_weight_grad(_dev(x, ctx), _dev(x @ w, ctx), dw=dlarray.empty((4, 3), ctx),
                                     dbias=db)
    assert got[1] is db
    np.testing.assert_allclose(db.asnumpy(), (x @ w).sum(0), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="dw must be an NDArray of shape"):
        dlarray.linear_weight_grad(_dev(x, ctx), _dev(x @ w, ctx), dw=dw)


def test_errors_name_the_argument():
    cpu = dlarray.cpu(0)
    x, w, b = (dlarray.array(np.ones(s, np.float32), cpu) for s in ((5, 4), (4, 3), (3,)))
    with pytest.raises(ValueError, match=r"bias must have shape \(3,\)"):
        dlarray.linear(x, w, dlarray.array(np.ones(4, np.float32), cpu))
    with pytest.raises(ValueError, match="bias must be 1-D"):
        dlarray.linear(x, w, dlarray.array(np.ones((1, 3), np.float32), cpu))
    with pytest.raises(ValueError, match="x has 4 columns, w has 5 rows"):
        dlarray.linear(x, dlarray.array(np.ones((5, 3), np.float32), cpu))
    with pytest.raises(ValueError, match="w must be 2-D"):
        dlarray.linear(x, b)
    with pytest.raises(TypeError, match="x must be an NDArray"):
        dlarray.linear(np.ones((5, 4)), w)
    with pytest.raises(TypeError, match="bias is float64"):
        dlarray.linear(x, w, dlarray.array(np.ones(3), cpu, np.float64))
    with pytest.raises(TypeError, match="must be float32, float16, bfloat16 or float64"):
        i = dlarray.array(np.ones((5, 4), np.int32), cpu, np.int32)
        dlarray.linear(i, dlarray.array(np.ones((4, 3), np.int32), cpu, np.int32))
    with pytest.raises(TypeError, match="relu must be True or False"):
        dlarray.linear(x, w, b, relu=1)
    with pytest.raises(ValueError, match="out must be an NDArray of shape"):
        dlarray.linear(x, w, b, out=dlarray.empty((3, 5), cpu))
    with pytest.raises(ValueError, match="x has 5 rows, dy has 4"):
        dlarray.linear_weight_grad(x, dlarray.array(np.ones((4, 3), np.float32), cpu))
    with pytest.raises(ValueError, match="dy must be 2-D"):
        dlarray.linear_weight_grad(x, b)


def test_op_rows():
    info = dlarray.ops.op_info("linear")
    assert info["input_names"] == ["x", "w", "bias"] and info["attr_names"] == ["relu"]
    assert info["dtypes"] == ["float32", "float16", "bfloat16", "float64"]
    info = dlarray.ops.op_info("linear_weight_grad")
    assert info["output_names"] == ["dw", "dbias"] and info["num_outputs"] == 2
    (dw, _), (db, _) = dlarray.ops.infer_outputs("linear_weight_grad", [(7, 5), (7, 3)],
                                                 [np.dtype(np.float32)] * 2, [])
    assert tuple(dw) == (5, 3) and tuple(db) == (3,)
    with pytest.raises(ValueError, match="bias must be 1-D of 3 elements"):
        dlarray.ops.infer_outputs("linear", [(7, 5), (5, 3), (4,)], [np.dtype(np.float32)] * 3,
                                  [0.0])
    assert "cpu" not in info["devices"]  # optional: the CPU runs the composite


def _fake_native(monkeypatch):
    """A "native" linear on the CPU (it runs the composite, after checking that it gets its
    arguments in the op's call order, relu a bool) and a linear_weight_grad that cannot run
    (as cuBLASLt without an algorithm): the dispatch's plumbing, without a GPU. Returns the
    list of native calls made."""
    calls = []
    order = dlarray.ops.op_info("linear")["call_order"]

    def linear(*args):
        named = dict(zip(order, args))
        assert isinstance(named["relu"], bool), named
        calls.append("linear")
        _linear_api.linear_composite(named["x"], named["w"], named["bias"], named["relu"],
                                     named["out"])

    def weight_grad(*args):
        calls.append("linear_weight_grad")
        raise RuntimeError("cuBLASLt has no algorithm for this product (test)")
    monkeypatch.setattr(_linear_api, "has_kernel", lambda op, ctx: True)
    monkeypatch.setattr(_fusion_products, "has_kernel", lambda op, ctx: True)
    monkeypatch.setattr(dlarray.ops, "linear", linear, raising=False)
    monkeypatch.setattr(dlarray.ops, "linear_weight_grad", weight_grad, raising=False)
    monkeypatch.setattr(_linear_api, "_NATIVE_FAILED", {})
    return calls


def test_native_dispatch_and_fallback(monkeypatch, rng):
    calls = _fake_native(monkeypatch)
    cpu = dlarray.cpu(0)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((6, 5), (5, 4), (4,)))
    got = dlarray.linear(_dev(x, cpu), _dev(w, cpu), _dev(b, cpu), relu=True)
    np.testing.assert_allclose(got.asnumpy(), np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-6)
    dlarray.linear(_dev(x, cpu), _dev(w, cpu))  # no bias: the composite, never the kernel
    assert calls == ["linear"]
    for _ in range(2):  # the failure is remembered: the kernel is not tried again
        dw, db = dlarray.linear_weight_grad(_dev(x, cpu), _dev(x @ w, cpu))
        np.testing.assert_allclose(dw.asnumpy(), x.T @ (x @ w), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(db.asnumpy(), (x @ w).sum(0), rtol=1e-5, atol=1e-5)
    assert calls == ["linear", "linear_weight_grad"]
    failures = _linear_api.native_failures()
    assert len(failures) == 1 and "no algorithm" in failures[0], failures
    dlarray.linear(_dev(x[:0], cpu), _dev(w, cpu), _dev(b, cpu))  # empty: the composite
    assert calls == ["linear", "linear_weight_grad"]


LAYERS = (784, 256, 100, 10)


def _mlp():
    """mnist.py's MLP (784-256-100-10, relu), its loss, gradients and SGD update node."""
    x, y_ = ad.Variable("x"), ad.Variable("y_")
    params, h = [], x
    for i, _ in enumerate(LAYERS[1:], start=1):
        w, b = ad.Variable("W%d" % i), ad.Variable("b%d" % i)
        product = ad.matmul_op(h, w)
        h = product + ad.broadcastto_op(b, product)
        if i < len(LAYERS) - 1:
            h = ad.relu_op(h)
        params += [w, b]
    loss = ad.softmaxcrossentropy_op(h, y_)
    grads = ad.gradients(loss, params)
    return x, y_, params, [loss] + grads + [ad.sgd_update_op(params, grads, 0.05)]


def _train(ctx, steps, batch, **kwargs):
    """Losses and gradients of each step, the final weights and the executor."""
    x, y_, params, evals = _mlp()
    rng = np.random.default_rng(4)
    values = []
    for n_in, n_out in zip(LAYERS, LAYERS[1:]):
        values += [(rng.standard_normal((n_in, n_out)) * np.sqrt(2 / n_in)).astype(np.float32),
                   (rng.standard_normal(n_out) * 0.1).astype(np.float32)]
    weights = [dlarray.array(v, ctx) for v in values]
    feed = dict(zip(params, weights))
    executor = ad.Executor(evals, ctx, **kwargs)
    history = []
    for _ in range(steps):
        feed[x] = rng.random((batch, LAYERS[0]), dtype=np.float32)
        feed[y_] = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
        out = executor.run(feed, convert_to_numpy_ret_vals=True)
        history.append(out[:-1])
    return history, [w.asnumpy() for w in weights], executor


def _compare(got, want, rtol, atol):
    for step_got, step_want in zip(got[0], want[0]):
        for g, w in zip(step_got, step_want):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def test_executor_mlp_patterns_equal_unfused_on_cpu(monkeypatch):
    """The patterns forced on the CPU (the composites run them): the products' rewrites
    (relu_gradient reading the relu's output, two outputs of one call) give the unfused run's
    values over several SGD steps."""
    monkeypatch.setattr(_fusion_products, "FORCE", True)
    cpu = dlarray.cpu(0)
    fused = _train(cpu, 4, 100)
    plain = _train(cpu, 4, 100, fuse=False)
    _compare(fused, plain, 1e-6, 1e-7)
    stats = fused[2].graph_stats()
    assert stats["fused_products"] == 6, stats  # 3 layers forward, 3 weight gradients
    assert sum("relu" in line for line in stats["products"]) == 2, stats
    assert all(line.endswith("(composite)") for line in stats["products"]), stats
    assert plain[2].graph_stats()["fused_products"] == 0
    losses = [h[0][0] for h in fused[0]]
    assert np.isfinite(losses).all()


def test_executor_products_run_native_where_they_can(monkeypatch):
    """With "native" kernels (_fake_native): the forward products run natively, the weight
    gradients fall back to their composite; the values stay the unfused run's."""
    calls = _fake_native(monkeypatch)
    cpu = dlarray.cpu(0)
    fused = _train(cpu, 3, 50)
    plain = _train(cpu, 3, 50, fuse=False)
    _compare(fused, plain, 1e-6, 1e-7)
    lines = fused[2].graph_stats()["products"]
    assert sorted(line.split("(")[0] + line.split()[-1] for line in lines) == (
        ["linear(native)"] * 3 + ["linear_weight_grad(composite)"] * 3), lines
    assert calls.count("linear_weight_grad") == 3  # once per shape, then remembered


def test_executor_keeps_cpu_chains_without_native_products(rng):
    """Without native kernels (the CPU) the executor keeps today's elementwise chains."""
    x, y_, params, evals = _mlp()
    executor = ad.Executor(evals[:1], dlarray.cpu(0))
    feed = {x: rng.random((3, 784), dtype=np.float32), y_: np.eye(10, dtype=np.float32)[:3]}
    feed.update({p: rng.standard_normal(s).astype(np.float32) for p, s in zip(
        params, [(784, 256), (256,), (256, 100), (100,), (100, 10), (10,)])})
    executor.run(feed)
    stats = executor.graph_stats()
    assert stats["fused_products"] == 0 and stats["fused_kernels"] >= 3, stats


@needs_gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_native_equals_composite(rng, dtype):
    """The cuBLASLt kernels (float32 must run natively) against the composite on the GPU."""
    m, k, n = 1000, 784, 256
    _, x = _data(rng, (m, k), dtype)
    _, w = _data(rng, (k, n), dtype)
    _, b = _data(rng, (n,), dtype)
    gx, gw, gb = (_dev(v, GPU) for v in (x, w, b))
    before = len(_linear_api.native_failures())
    for relu in (False, True):
        got = dlarray.linear(gx, gw, gb, relu=relu).asnumpy().astype(np.float64)
        want = _linear_api.linear_composite(gx, gw, gb, relu, dlarray.empty((m, n), GPU,
                                                                            x.dtype))
        scale = np.abs(x.astype(np.float64)) @ np.abs(w.astype(np.float64)) + np.abs(
            b.astype(np.float64))
        _close(got, want.asnumpy().astype(np.float64), 2 * scale, dtype)
    dw, db = dlarray.linear_weight_grad(gx, _dev(x[:, :n], GPU))
    want_dw = dlarray.empty((k, n), GPU, x.dtype)
    want_db = dlarray.empty((n,), GPU, x.dtype)
    _linear_api.linear_weight_grad_composite(gx, _dev(x[:, :n], GPU), want_dw, want_db)
    x64 = x.astype(np.float64)
    _close(dw.asnumpy(), want_dw.asnumpy().astype(np.float64), 2 * np.abs(x64.T) @ np.abs(
        x64[:, :n]), dtype)
    _close(db.asnumpy(), want_db.asnumpy().astype(np.float64), 2 * np.abs(x64[:, :n]).sum(0),
           dtype)
    failures = _linear_api.native_failures()[before:]
    print("native failures (the composite ran):", failures or "none")
    if dtype == "float32":
        assert not failures, failures


@needs_gpu
def test_cuda_executor_mlp_products_equal_unfused():
    """The MNIST MLP on the GPU with cuBLASLt products against fuse=False (another GEMM
    kernel: float32 rounding), several steps with the CUDA graph replayed; graph_stats()
    shows the 6 products, all run by the CUDA kernels (10 logits make 40-byte rows, which
    cuBLASLt's epilogues may refuse: the plugin's unfused kernels then run them, as they run
    any product they were timed faster for)."""
    fused = _train(GPU, 5, 1000)
    plain = _train(GPU, 5, 1000, fuse=False)
    _compare(fused, plain, 2e-4, 2e-5)
    stats = fused[2].graph_stats()
    print("products:", stats["products"], _linear_api.native_failures())
    print("\n".join(_linear_api.native_choices(GPU)))
    assert stats["fused_products"] == 6, stats
    assert all(line.endswith("(native)") for line in stats["products"]), stats
    assert stats["replays"] >= 3, stats


@needs_gpu
def test_cuda_without_cublaslt_runs_the_composite():
    """No libcublasLt (DLARRAY_CUBLASLT naming a missing file): the same results, no error."""
    code = (
        "import numpy as np, dlarray\n"
        "g = dlarray.gpu(0)\n"
        "x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5\n"
        "w = np.ones((4, 2), np.float32)\n"
        "b = np.array([1, -30], np.float32)\n"
        "out = dlarray.linear(dlarray.array(x, g), dlarray.array(w, g), dlarray.array(b, g),"
        " relu=True)\n"
        "np.testing.assert_array_equal(out.asnumpy(), np.maximum(x @ w + b, 0))\n"
        "from dlarray import _linear_api\n"
        "assert 'cuBLASLt is not available' in _linear_api.native_failures()[0]\n"
        "print('ok')\n")
    env = dict(os.environ, DLARRAY_CUBLASLT="/nonexistent/libcublasLt.so")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "ok" in done.stdout, done.stdout + done.stderr
