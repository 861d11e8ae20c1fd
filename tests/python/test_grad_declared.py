"""Autodiff nodes made from declared gradients (issue 20): the dlsys node makers are DeclaredOps,
the gradient language's attributes and conditions (matrix_multiply's four declarations), the
shape-giving argument (reduce_sum_axis_zero's gradient), against NumPy on odd shapes, on the
NumPy executor and every device's."""
import inspect

import numpy as np
import pytest

import dlarray
from dlarray import autodiff as ad
from dlarray.autodiff.ops import DeclaredOp

CONTEXTS = [None] + list(dlarray.devices())
IDS = [repr(c) for c in CONTEXTS]


def test_dlsys_nodes_come_from_declarations():
    for op in (ad.matmul_op, ad.reducesumaxiszero_op, ad.broadcastto_op, ad.add_op,
               ad.softmax_op, ad.softmaxcrossentropy_op):
        assert isinstance(op, DeclaredOp), op
    assert ad.matmul_op.name == "matrix_multiply"
    assert ad.broadcastto_op.name == "broadcast_to"
    # the dlsys spelling, defaults and help
    assert str(inspect.signature(ad.matmul_op)).startswith("(a, b, trans_A=False, trans_B=False)")
    assert "op(a) @ op(b)" in ad.matmul_op.__doc__
    assert str(inspect.signature(ad.broadcastto_op)).startswith("(x, like)")


def test_matmul_gradient_declarations():
    grads = dlarray.ops.op_info("matrix_multiply")["gradients"]
    by_case = {(g["input"], g["when"]): g for g in grads}
    assert set(by_case) == {(0, ("trans_a", False)), (0, ("trans_a", True)),
                            (1, ("trans_b", False)), (1, ("trans_b", True))}
    g = by_case[(0, ("trans_a", False))]
    assert g["args"] == [("output_grad", 0), ("input", 1)]
    assert g["attrs"] == {"trans_a": ("value", 0.0), "trans_b": ("not", "trans_b")}
    assert by_case[(1, ("trans_b", True))]["attrs"] == {"trans_a": ("value", 1.0),
                                                        "trans_b": ("attr", "trans_a")}
    doc = dlarray.ops.matrix_multiply.__doc__
    assert "Gradient of a where not trans_a: matrix_multiply(dout, b, trans_a=0, " \
           "trans_b=not trans_b)." in doc
    # the shape-giving argument: broadcast_to takes x's shape from x
    g, = dlarray.ops.op_info("reduce_sum_axis_zero")["gradients"]
    assert g["op"] == "broadcast_to" and g["args"] == [("output_grad", 0), ("input", 0)]
    assert not dlarray.ops.op_info("broadcast_to")["infers_shape"]
    assert dlarray.ops.op_info("matrix_multiply")["infers_shape"]


def test_matmul_keywords():
    a, b = ad.Variable("a"), ad.Variable("b")
    for node in (ad.matmul_op(a, b, True, False), ad.matmul_op(a, b, trans_A=True),
                 ad.matmul_op(a, b, trans_a=1)):
        assert node.attrs == (True, False)
    with pytest.raises(TypeError, match="given twice"):
        ad.matmul_op(a, b, True, trans_A=True)
    with pytest.raises(TypeError, match="unknown \\['trans_c'\\]"):
        ad.matmul_op(a, b, trans_c=True)
    with pytest.raises(TypeError, match="input 'b' must be a graph Node"):
        ad.matmul_op(a, np.ones(3))


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
@pytest.mark.parametrize("trans_a, trans_b", [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (7, 33, 5), (65, 3, 130)], ids=str)
def test_matmul_gradients_odd_shapes(exec_ctx, rng, trans_a, trans_b, m, k, n):
    """The declared gradients against their matrix-calculus values in float64 NumPy."""
    a_val = rng.standard_normal((k, m) if trans_a else (m, k))
    b_val = rng.standard_normal((n, k) if trans_b else (k, n))
    g_val = rng.standard_normal((m, n))
    a, b, g = ad.Variable("a"), ad.Variable("b"), ad.Variable("g")
    y = ad.matmul_op(a, b, trans_a, trans_b)
    loss = ad.reducesumaxiszero_op(ad.reducesumaxiszero_op(y * g))
    got = ad.Executor([y] + ad.gradients(loss, [a, b]), ctx=exec_ctx).run(
        {a: a_val, b: b_val, g: g_val}, convert_to_numpy_ret_vals=True)
    op_a = a_val.T if trans_a else a_val
    op_b = b_val.T if trans_b else b_val
    grad_op_a, grad_op_b = g_val @ op_b.T, op_a.T @ g_val
    rtol, atol = (1e-10, 1e-10) if exec_ctx is None else (1e-4, 1e-4 * np.sqrt(k + n + m))
    np.testing.assert_allclose(got[0], op_a @ op_b, rtol=rtol, atol=atol)
    np.testing.assert_allclose(got[1], grad_op_a.T if trans_a else grad_op_a, rtol=rtol, atol=atol)
    np.testing.assert_allclose(got[2], grad_op_b.T if trans_b else grad_op_b, rtol=rtol, atol=atol)


def sum_all(node, ndim):
    """A (1,) node summing every element of ``node`` (of ``ndim`` dimensions)."""
    for _ in range(max(ndim, 1)):
        node = ad.reducesumaxiszero_op(node)
    return node


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
@pytest.mark.parametrize("shape", [(1,), (5,), (1, 1), (3, 257), (2, 3, 4)], ids=str)
def test_reduce_and_broadcast_gradients(exec_ctx, rng, shape):
    """reduce_sum_axis_zero's declared gradient (a broadcast back to x) and broadcast_to's (a
    reduce), on 1-element arrays and rows crossing a block size."""
    x, w, like, w2 = ad.Variable("x"), ad.Variable("w"), ad.Variable("like"), ad.Variable("w2")
    sum_shape = shape[1:] if len(shape) > 1 else (1,)
    feed = {x: rng.standard_normal(shape), w: rng.standard_normal(sum_shape),
            like: np.zeros((4,) + shape), w2: rng.standard_normal((4,) + shape)}
    s, b = ad.reducesumaxiszero_op(x), ad.broadcastto_op(x, like)
    loss = sum_all(s * w, len(sum_shape)) + sum_all(b * w2, len(shape) + 1)
    got = ad.Executor([s, b] + ad.gradients(loss, [x]), ctx=exec_ctx).run(
        feed, convert_to_numpy_ret_vals=True)
    tol = 1e-10 if exec_ctx is None else 1e-5
    x_val = feed[x]
    np.testing.assert_allclose(got[0], x_val.sum(axis=0) if len(shape) > 1 else [x_val.sum()],
                               rtol=tol, atol=tol)
    np.testing.assert_allclose(got[1], np.broadcast_to(x_val, (4,) + shape), rtol=tol, atol=tol)
    expected = np.broadcast_to(feed[w], shape) + feed[w2].sum(axis=0)
    np.testing.assert_allclose(got[2], expected, rtol=10 * tol, atol=10 * tol)


@pytest.mark.parametrize("exec_ctx", CONTEXTS, ids=IDS)
def test_errors_name_the_node(exec_ctx):
    x, w = ad.Variable("x"), ad.Variable("w")
    with pytest.raises(ValueError, match=r"matmul_op node 'MatMul\(x,w,0,1\)': .*inner "
                                         r"dimensions 3 and 4 differ; got 'x' \(2, 3\), "
                                         r"'w' \(2, 4\)"):
        ad.Executor([ad.matmul_op(x, w, False, True)], exec_ctx).run(
            {x: np.ones((2, 3)), w: np.ones((2, 4))})
    y_, y = ad.Variable("y_"), ad.Variable("y")
    with pytest.raises(ValueError, match=r"softmaxcrossentropy_op node .*same shape; got "
                                         r"'y' \(2, 3\), 'y_' \(2, 4\)"):
        ad.Executor([ad.softmaxcrossentropy_op(y, y_)], exec_ctx).run(
            {y: np.ones((2, 3)), y_: np.ones((2, 4))})


def _run_grad31(test_plugin_dir, case, body=""):
    """Loads tests/plugins/grad31_plugin.cc in a fresh process with GRAD31_CASE=case and runs
    ``body`` after it: "loaded" or "refused" and the reason, then what ``body`` prints."""
    import os
    import subprocess
    import sys
    code = ("import dlarray, numpy as np\n"
            "from dlarray import autodiff as ad\n"
            "try:\n"
            "    dlarray.load_plugin(%r)\n"
            "except RuntimeError as e:\n"
            "    print('refused'); print(e)\n"
            "else:\n"
            "    print('loaded')\n" % str(test_plugin_dir / "grad31_plugin.so")
            + "".join("    %s\n" % line for line in body.splitlines()))
    env = dict(os.environ, GRAD31_CASE=str(case))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_plugin_declares_gradient_attrs_and_conditions(test_plugin_dir):
    """grad31_scale's gradient is itself with shift=0, declared once per value of shift (the
    second through "shift=!shift factor=factor"): both give factor * dout."""
    body = """
info = dlarray.ops.op_info("grad31_scale")
print(sorted((g["when"], sorted(g["attrs"].items())) for g in info["gradients"]))
x = ad.Variable("x")
for shift in (False, True):
    y = ad.ops.grad31_scale(x, factor=3.0, shift=shift)
    g, = ad.gradients(ad.reducesumaxiszero_op(y), [x])
    print(g.attrs, ad.Executor([y, g], ctx=dlarray.cpu()).run(
        {x: np.array([1.0, 2.0])}, convert_to_numpy_ret_vals=True)[1].tolist())
"""
    lines = _run_grad31(test_plugin_dir, 0, body)
    assert lines[0] == "loaded", lines
    assert lines[1] == ("[(('shift', False), [('shift', ('value', 0.0))]), "
                        "(('shift', True), [('factor', ('attr', 'factor')), "
                        "('shift', ('not', 'shift'))])]")
    assert lines[2:] == ["(3.0, False) [3.0, 3.0]", "(3.0, False) [3.0, 3.0]"]


@pytest.mark.parametrize("case, reason", [
    (1, "'nope' is not an attribute of grad31_scale"),
    (2, "attrs word 'shift' is not name=value"),
    (3, "'!' applies to attribute names"),
    (4, "'nope' is not an attribute of grad31_scale"),
    (5, "input declared twice"),
    (6, "input declared twice"),
])
def test_bad_gradient_declarations_are_refused_by_name(test_plugin_dir, case, reason):
    lines = _run_grad31(test_plugin_dir, case)
    assert lines[0] == "refused" and "declare_op(grad31_scale): gradient 1" in lines[1], lines
    assert reason in lines[1], lines
