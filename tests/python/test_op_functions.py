"""The functions of dlarray.ops are made from the op table (issue 20, items 1 and 2): one generic
wrapper per declared op, built-in or from a plugin, whose keywords, positional order, optional
outputs, signature and help come from the op's declaration; arguments of the wrong kind are
refused with the argument's name."""
import inspect
from contextlib import nullcontext
import pydoc

import numpy as np
import pytest

import dlarray
import op_examples
from dlarray import ops

DTYPES = [np.float32, np.float16, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
          np.uint16, np.uint32, np.uint64, np.bool_]
SHAPES = [(0,), (1,), (1, 1), (3, 5), (2, 0, 3), (7, 1, 3)]

# Elementwise built-ins and their NumPy forms (f: one input, f2: two, fc: input and a value).
UNARY = {"relu": lambda x: np.maximum(x, 0), "copy": lambda x: x}
BINARY = {"matrix_elementwise_add": np.add, "matrix_elementwise_multiply": np.multiply,
          "matrix_elementwise_divide": np.divide}
BY_CONST = {"matrix_elementwise_add_by_const": lambda x, v: x + v,
            "matrix_elementwise_multiply_by_const": lambda x, v: x * v,
            "matrix_elementwise_divide_by_const": lambda x, v: x / v}


def supported(name, dtype):
    return np.dtype(dtype).name in ops.op_info(name)["dtypes"]


def data(rng, shape, dtype):
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    lo = 1 if np.issubdtype(dtype, np.unsignedinteger) else -4
    return rng.integers(lo, 5, shape).astype(dtype)


def test_every_declared_op_is_a_function_with_its_declared_signature():
    for name in ops.op_names():
        fn = getattr(ops, name)
        info = ops.op_info(name)
        params = inspect.signature(fn).parameters
        assert list(params) == info["call_order"], name
        for out in info["output_names"]:
            assert params[out].default is (None if info["num_inputs"] else params[out].empty)
        for attr, default in zip(info["attr_names"], info["attr_defaults"]):
            assert params[attr].default == (params[attr].empty if default is None else default)
        assert fn.__name__ == name and fn.__module__ == "dlarray.ops"
        assert "Parameters\n----------" in fn.__doc__ and info["doc"] in fn.__doc__
        assert (name + str(inspect.signature(fn))) in pydoc.render_doc(fn, renderer=pydoc.plaintext)
    assert set(ops.__all__) >= {"relu", "matrix_multiply", "compare", "invoke", "op_info"}


def test_the_seed_positional_forms():
    """The dlsys order: matrix_multiply(A, transA, B, transB, C), compare(a, b, out, cmp),
    array_set(arr, value); the schema names are the keywords."""
    assert str(inspect.signature(ops.matrix_multiply)) == "(a, trans_a, b, trans_b, out=None)"
    assert str(inspect.signature(ops.compare)) == "(a, b, out=None, cmp=0)"
    assert str(inspect.signature(ops.array_set)) == "(out, value)"
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = dlarray.array(x)
    c = dlarray.empty((3, 3))
    assert ops.matrix_multiply(a, True, a, False, c) is c
    np.testing.assert_allclose(c.asnumpy(), x.T @ x)
    r = ops.matrix_multiply(b=a, trans_b=True, a=a, trans_a=False)
    np.testing.assert_allclose(r.asnumpy(), x @ x.T)
    out = dlarray.empty((2, 3), dtype=np.bool_)
    ops.compare(a, a, out, 5)
    assert out.asnumpy().all()
    np.testing.assert_array_equal(ops.compare_by_const(a, 2.0, cmp=2).asnumpy(), x < 2)
    np.testing.assert_array_equal(ops.compare(a, a).asnumpy(), np.ones((2, 3), bool))
    assert ops.array_set(c, 2.5) is c and (c.asnumpy() == 2.5).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_outputs_left_out_are_allocated_like_numpy(ctx, rng, shape, dtype):
    x = data(rng, shape, dtype)
    y = data(rng, shape, dtype)
    if dtype not in (np.bool_,):
        y = np.where(y == 0, 1, y).astype(dtype)  # no division by zero
    a, b = dlarray.array(x, ctx, dtype), dlarray.array(y, ctx, dtype)
    cases = [(n, (a,), f(x)) for n, f in UNARY.items()]
    cases += [(n, (a, b), f(x, y)) for n, f in BINARY.items()]
    cases += [(n, (a, 3), f(x, np.array(3, dtype))) for n, f in BY_CONST.items()]
    for name, args, want in cases:
        if not supported(name, dtype):
            continue
        got = getattr(ops, name)(*args)
        assert got.shape == shape and got.dtype == dtype and got.ctx == a.ctx, name
        explicit_none = getattr(ops, name)(*args, None)
        assert explicit_none.shape == shape and explicit_none.dtype == dtype, name
        given = dlarray.empty(shape, ctx, dtype)
        assert getattr(ops, name)(*args, out=given) is given
        tol = 1e-2 if dtype == np.float16 else 1e-6
        for result in (got, given):
            np.testing.assert_allclose(result.asnumpy().astype(np.float64),
                                       want.astype(np.float64), rtol=tol, err_msg=name)


@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (0, 4), (4, 0)])
def test_reductions_and_matmul_infer_their_shapes(ctx, rng, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    a = dlarray.array(x, ctx)
    s = ops.reduce_sum_axis_zero(a)
    np.testing.assert_allclose(s.asnumpy(), x.sum(axis=0), rtol=1e-5, atol=1e-6)
    m = ops.matrix_multiply(a, True, a, False)
    assert m.shape == (shape[1], shape[1])
    np.testing.assert_allclose(m.asnumpy(), x.T @ x, rtol=1e-5, atol=1e-5)
    if x.size:
        loss = ops.softmax_cross_entropy(a, a)
        assert loss.shape == (1,)


def test_outputs_that_cannot_be_inferred_must_be_given():
    a = dlarray.array(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="broadcast_to: the op cannot infer"):
        ops.broadcast_to(a)
    with pytest.raises(ValueError, match="astype: the output's dtype is the caller's choice"):
        ops.astype(a)
    with pytest.raises(TypeError, match=r"array_set\(out, value\): missing .*'out'"):
        ops.array_set(value=1.0)


@pytest.mark.parametrize("bad", [np.ones(3, np.float32), [1.0, 2.0], 3.0, "x", object()])
def test_arguments_that_are_not_arrays_are_named(bad):
    a = dlarray.array(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="relu: output 'out' must be an NDArray, got"):
        ops.relu(a, bad)
    with pytest.raises(TypeError, match="relu: output 'out' must be an NDArray"):
        ops.relu(a, out=bad)
    with pytest.raises(TypeError, match="matrix_elementwise_add: input 'b' must be an NDArray"):
        ops.matrix_elementwise_add(a, bad)


def test_binding_errors_quote_the_signature():
    a = dlarray.array(np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"relu\(x, out=None\): .*unexpected keyword .*'y'"):
        ops.relu(a, y=a)
    with pytest.raises(TypeError, match=r"relu\(x, out=None\): .*multiple values .*'x'"):
        ops.relu(a, x=a)
    with pytest.raises(TypeError, match=r"relu\(x, out=None\): takes 2 positional"):
        ops.relu(a, a, a)
    with pytest.raises(TypeError, match=r"missing a required argument: 'value'"):
        ops.matrix_elementwise_add_by_const(a)
    with pytest.raises(TypeError, match=r"compare: cmp must be an integer, got float"):
        ops.compare(a, a, cmp=1.5)
    with pytest.raises(ValueError, match=r"compare: cmp must be 0"):
        ops.compare(a, a, cmp=9)
    with pytest.raises(TypeError, match=r"attributes \(value\) must be numbers; value is str"):
        ops.matrix_elementwise_add_by_const(a, "1")
    with pytest.raises(ValueError, match="trans_b must be True or False"):
        ops.matrix_multiply(a, False, a, 2)


HOSTILE = [2**70, -2**70, 3.5, "x", (1,), None, object(), np.ones(2)]


@pytest.mark.parametrize("name", sorted(set(ops.__all__) - {"invoke", "op_info", "op_names",
                                                             "infer_outputs"}))
def test_hostile_arguments_are_refused_by_name(name):
    """Each parameter of each built-in, replaced by a value of the wrong kind: a standard
    exception naming the parameter, never a crash or a cast error."""
    fn = getattr(ops, name)
    info = ops.op_info(name)
    valid = {}
    for p in inspect.signature(fn).parameters:
        if p in info["attr_names"]:
            valid[p] = {"bool": False, "int": 0}.get(
                info["attr_types"][info["attr_names"].index(p)], 1.0)
        elif p in info["input_names"] or not info["num_inputs"]:
            valid[p] = op_examples.ones(name, p)
    outputs = [p for p in info["output_names"] if p not in valid]  # left out: allocated
    # an optional op without a CPU kernel (linear: the CPU runs its composite) refuses the
    # valid call for that alone, after the arguments are checked
    no_kernel = "cpu" not in info["devices"]
    try:
        fn(**valid)
    except ValueError:  # an op that cannot allocate its outputs
        valid.update((p, op_examples.ones(name, p)) for p in outputs)
        with pytest.raises(RuntimeError, match="no kernel") if no_kernel else nullcontext():
            fn(**valid)
    except RuntimeError as e:
        assert no_kernel and "no kernel" in str(e), e
    for p in list(valid) + outputs:
        for value in HOSTILE:
            kwargs = dict(valid, **{p: value})
            try:
                fn(**kwargs)
            except RuntimeError as e:
                assert no_kernel and "no kernel" in str(e), (p, e)
            except (TypeError, ValueError, OverflowError) as e:
                assert "Unable to cast" not in str(e)
                assert p in str(e) or (p in info["attr_names"] and "value" in str(e)), (p, e)


def test_elementwise_autodiff_nodes_come_from_the_declarations():
    """add_op, mul_op, the by-const ops, relu_op and relu_gradient_op are DeclaredOps: their
    gradients are the ones op_info lists (checked against finite differences in
    test_autodiff.py), so a new elementwise op needs no node class."""
    from dlarray import autodiff as ad
    from dlarray.autodiff.ops import DeclaredOp
    for node_op, name in [(ad.add_op, "matrix_elementwise_add"), (ad.mul_op,
                          "matrix_elementwise_multiply"), (ad.relu_op, "relu"),
                          (ad.add_byconst_op, "matrix_elementwise_add_by_const"),
                          (ad.mul_byconst_op, "matrix_elementwise_multiply_by_const"),
                          (ad.relu_gradient_op, "relu_gradient")]:
        assert isinstance(node_op, DeclaredOp) and node_op.name == name
        assert ops.op_info(name)["gradients"], name
    x = ad.Variable("x")
    (g,) = ad.gradients(ad.relu_op(x), [x])
    assert g.op is ad.relu_gradient_op
    (g,) = ad.gradients(x * 3.0, [x])
    assert g.op is ad.mul_byconst_op and g.const_attr == 3.0


def _load_schema3(test_plugin_dir, case):
    """Loads tests/plugins/schema3_plugin.cc in a fresh process with SCHEMA3_CASE=case:
    "loaded" or "refused", the reason, then the op's signature when it loaded."""
    import os
    import subprocess
    import sys
    code = ("import inspect, dlarray\n"
            "try:\n"
            "    dlarray.load_plugin(%r)\n"
            "except RuntimeError as e:\n"
            "    print('refused'); print(e)\n"
            "else:\n"
            "    print('loaded'); print(); print(inspect.signature(dlarray.ops.schema3_scale))\n"
            % str(test_plugin_dir / "schema3_plugin.so"))
    env = dict(os.environ, SCHEMA3_CASE=str(case))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


@pytest.mark.parametrize("case,reason", [
    (1, "call_order entry 1 names no input, attribute or output"),
    (2, "call_order names 'x' twice"),
    (3, "'factor' must be given but follows a name that may be left out"),
    (4, "attribute 'shift' has the unknown type 7"),
    (5, "unknown dtype_rule 9"),
    (6, "output_dtype float12 is not an array dtype"),
])
def test_bad_abi3_schemas_are_refused_by_name(test_plugin_dir, case, reason):
    lines = _load_schema3(test_plugin_dir, case)
    assert lines[0] != "loaded" and "declare_op(schema3_scale)" in lines[1], lines
    assert reason in lines[1], lines


def test_a_plugin_declares_what_built_ins_declare(test_plugin_dir):
    """call_order, attribute types and defaults, strided operands and the fill of empty inputs,
    from a plugin: its function takes them exactly as the built-ins do."""
    assert _load_schema3(test_plugin_dir, 0)[2] == "(x, y=None, factor=2.0, shift=False)"
    dlarray.load_plugin(test_plugin_dir / "schema3_plugin.so")
    info = ops.op_info("schema3_scale")
    assert info["call_order"] == ["x", "y", "factor", "shift"]
    assert info["attr_types"] == ["float", "bool"] and info["attr_defaults"] == [2.0, False]
    assert info["accepts_strided"] and info["fills_when_empty"]
    x = np.arange(10, dtype=np.float32)
    a = dlarray.array(x)
    np.testing.assert_array_equal(ops.schema3_scale(a).asnumpy(), x * 2)
    np.testing.assert_array_equal(ops.schema3_scale(a, None, 3, True).asnumpy(), x * 3 + 1)
    strided = a[::3]  # a view the core passes on because the op accepts strided operands
    np.testing.assert_array_equal(ops.schema3_scale(strided, factor=0.5).asnumpy(),
                                  x[::3] * 0.5)
    with pytest.raises(ValueError, match="shift must be True or False"):
        ops.schema3_scale(a, shift=2)
    empty_in, filled = dlarray.empty((0,)), dlarray.empty((0,))
    ops.schema3_scale(empty_in, filled)  # nothing to fill: no error
