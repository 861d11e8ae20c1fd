"""Reverse-mode automatic differentiation over dlarray, with the dlsys API.

Build a graph from ``Variable`` nodes and the ``*_op`` functions, ask ``gradients`` for
gradient nodes, and evaluate any list of nodes with an ``Executor``::

    x, w, y_ = Variable("x"), Variable("w"), Variable("y_")
    loss = softmaxcrossentropy_op(matmul_op(x, w), y_)
    grad_w, = gradients(loss, [w])
    executor = Executor([loss, grad_w], ctx=dlarray.cpu(0))
    loss_val, grad_w_val = executor.run({x: x_val, w: w_val, y_: y_val})

``Executor(nodes, ctx=None)`` computes with NumPy, in the dtype of the values fed (float64
too): the reference. With a dlarray context it runs the runtime's ops in float32 from a plan
made once per set of feed shapes: every node's shape is inferred, buffers are allocated once
and shared by nodes whose lifetimes do not overlap, and each run is a loop over op calls
bound to their arrays, with no allocation.
"""

import collections
import functools
import numbers

import numpy as np

import dlarray

_MAX_NAME = 60


class Node:
    """A node of the computation graph: ``op`` applied to ``inputs``.

    ``name`` says what the node computes (for messages); ``const_attr`` holds an op's
    constant operand, when it has one. Nodes compare and hash by identity.
    """

    def __init__(self, op, inputs, name, const_attr=None):
        self.op = op
        self.inputs = list(inputs)
        self.name = name
        self.const_attr = const_attr

    def __add__(self, other):
        if isinstance(other, Node):
            return add_op(self, other)
        return add_byconst_op(self, other)

    def __mul__(self, other):
        if isinstance(other, Node):
            return mul_op(self, other)
        return mul_byconst_op(self, other)

    __radd__ = __add__
    __rmul__ = __mul__
    __array_ufunc__ = None  # NumPy scalars and arrays defer to __radd__ / __rmul__

    def __str__(self):
        return self.name

    def __repr__(self):
        return "<Node %s %r>" % (self.op.label, self.name)


def Variable(name):
    """A placeholder node: its value is given to ``Executor.run`` in the feed dict."""
    node = placeholder_op()
    node.name = name
    return node


def _name(template, *parts):
    """A node name from its inputs' names, kept short so deep graphs stay readable."""
    name = template % parts
    if len(name) > _MAX_NAME:
        name = name[: _MAX_NAME - 3] + "..."
    return name


def _error(node, message):
    """A ValueError that names the node and its op."""
    return ValueError("%s node '%s': %s" % (node.op.label, node.name, message))


def _describe(nodes, shapes):
    return ", ".join("'%s' %s" % (n.name, tuple(s)) for n, s in zip(nodes, shapes))


def _check_number(op_label, const):
    if not isinstance(const, numbers.Real):
        raise TypeError("%s: the constant must be a real number, not %s"
                        % (op_label, type(const).__name__))
    return float(const)


def _rows(shape):
    """Rows of an array whose rows run over the last axis (numel / last dim)."""
    return int(np.prod(shape[:-1], dtype=np.int64))


class Op:
    """A kind of node: how to make one, infer its shape, compute it and differentiate it.

    ``compute`` is the NumPy reference and returns a new array; ``kernel`` returns the
    runtime call ``(function, argument list)`` that writes the node's value into ``out``.
    """

    label = "op"
    inplace = False  # the runtime kernel may write its output over an input of equal shape
    constant = False  # the value depends on the input shapes only: computed once per plan

    def infer_shape(self, node, input_shapes):
        """The output shape; raises ValueError naming the node when the inputs do not fit."""
        return tuple(input_shapes[0])

    def compute(self, node, input_vals):
        raise NotImplementedError

    def kernel(self, node, inputs, out):
        raise NotImplementedError

    def gradient(self, node, output_grad):
        """Gradient nodes for each input, given the output's; None means a zero gradient."""
        raise NotImplementedError


def _same_shapes(node, input_shapes):
    if tuple(input_shapes[0]) != tuple(input_shapes[1]):
        raise _error(node, "inputs must have the same shape, got %s"
                     % _describe(node.inputs, input_shapes))
    return tuple(input_shapes[0])


class AddOp(Op):
    label = "add_op"
    inplace = True

    def __call__(self, a, b):
        return Node(self, [a, b], _name("(%s+%s)", a.name, b.name))

    def infer_shape(self, node, input_shapes):
        return _same_shapes(node, input_shapes)

    def compute(self, node, input_vals):
        return input_vals[0] + input_vals[1]

    def kernel(self, node, inputs, out):
        return dlarray.ops.matrix_elementwise_add, [inputs[0], inputs[1], out]

    def gradient(self, node, output_grad):
        return [output_grad, output_grad]


class AddByConstOp(Op):
    label = "add_byconst_op"
    inplace = True

    def __call__(self, a, const):
        const = _check_number(self.label, const)
        return Node(self, [a], _name("(%s+%s)", a.name, const), const)

    def compute(self, node, input_vals):
        return input_vals[0] + node.const_attr

    def kernel(self, node, inputs, out):
        return dlarray.ops.matrix_elementwise_add_by_const, [inputs[0], node.const_attr, out]

    def gradient(self, node, output_grad):
        return [output_grad]


class MulOp(Op):
    label = "mul_op"
    inplace = True

    def __call__(self, a, b):
        return Node(self, [a, b], _name("(%s*%s)", a.name, b.name))

    def infer_shape(self, node, input_shapes):
        return _same_shapes(node, input_shapes)

    def compute(self, node, input_vals):
        return input_vals[0] * input_vals[1]

    def kernel(self, node, inputs, out):
        return dlarray.ops.matrix_elementwise_multiply, [inputs[0], inputs[1], out]

    def gradient(self, node, output_grad):
        a, b = node.inputs
        return [output_grad * b, output_grad * a]


class MulByConstOp(Op):
    label = "mul_byconst_op"
    inplace = True

    def __call__(self, a, const):
        const = _check_number(self.label, const)
        return Node(self, [a], _name("(%s*%s)", a.name, const), const)

    def compute(self, node, input_vals):
        return input_vals[0] * node.const_attr

    def kernel(self, node, inputs, out):
        return (dlarray.ops.matrix_elementwise_multiply_by_const,
                [inputs[0], node.const_attr, out])

    def gradient(self, node, output_grad):
        return [output_grad * node.const_attr]


class MatMulOp(Op):
    label = "matmul_op"

    def __call__(self, a, b, trans_A=False, trans_B=False):
        node = Node(self, [a, b], _name("MatMul(%s,%s,%s,%s)", a.name, b.name, trans_A, trans_B))
        node.matmul_attr_trans_A = bool(trans_A)
        node.matmul_attr_trans_B = bool(trans_B)
        return node

    def infer_shape(self, node, input_shapes):
        a, b = (tuple(s) for s in input_shapes)
        if len(a) != 2 or len(b) != 2:
            raise _error(node, "inputs must be 2-D, got %s" % _describe(node.inputs, input_shapes))
        m, k = a[::-1] if node.matmul_attr_trans_A else a
        k2, n = b[::-1] if node.matmul_attr_trans_B else b
        if k != k2:
            raise _error(node, "inner dimensions differ (%d vs %d), got %s (trans_A=%s, "
                         "trans_B=%s)" % (k, k2, _describe(node.inputs, input_shapes),
                                          node.matmul_attr_trans_A, node.matmul_attr_trans_B))
        return (m, n)

    def compute(self, node, input_vals):
        a, b = input_vals
        return np.matmul(a.T if node.matmul_attr_trans_A else a,
                         b.T if node.matmul_attr_trans_B else b)

    def kernel(self, node, inputs, out):
        return dlarray.ops.matrix_multiply, [inputs[0], node.matmul_attr_trans_A, inputs[1],
                                             node.matmul_attr_trans_B, out]

    def gradient(self, node, output_grad):
        # C = op(A) op(B): d op(A) = G op(B)^T and d op(B) = op(A)^T G, transposed back.
        a, b = node.inputs
        trans_a, trans_b = node.matmul_attr_trans_A, node.matmul_attr_trans_B
        grad_a = (matmul_op(b, output_grad, trans_b, True) if trans_a
                  else matmul_op(output_grad, b, False, not trans_b))
        grad_b = (matmul_op(output_grad, a, True, trans_a) if trans_b
                  else matmul_op(a, output_grad, not trans_a, False))
        return [grad_a, grad_b]


class PlaceholderOp(Op):
    label = "placeholder_op"

    def __call__(self):
        return Node(self, [], "placeholder")

    def gradient(self, node, output_grad):
        return []


class _FillOp(Op):
    """An array of the input's shape, filled with ``value``."""

    constant = True
    value = None

    def __call__(self, a):
        return Node(self, [a], _name("%s(%s)", self.label[:-3], a.name))

    def compute(self, node, input_vals):
        return np.full_like(input_vals[0], self.value)

    def kernel(self, node, inputs, out):
        return dlarray.ops.array_set, [out, self.value]

    def gradient(self, node, output_grad):
        return [None]


class OnesLikeOp(_FillOp):
    label = "oneslike_op"
    value = 1.0


class ZerosLikeOp(_FillOp):
    label = "zeroslike_op"
    value = 0.0


class ReduceSumAxisZeroOp(Op):
    label = "reducesumaxiszero_op"

    def __call__(self, a):
        return Node(self, [a], _name("ReduceSumAxisZero(%s)", a.name))

    def infer_shape(self, node, input_shapes):
        shape = tuple(input_shapes[0])
        return shape[1:] if len(shape) > 1 else (1,)

    def compute(self, node, input_vals):
        a = input_vals[0]
        return a.sum(axis=0) if a.ndim > 1 else a.sum(keepdims=True)

    def kernel(self, node, inputs, out):
        return dlarray.ops.reduce_sum_axis_zero, [inputs[0], out]

    def gradient(self, node, output_grad):
        return [broadcastto_op(output_grad, node.inputs[0])]


class BroadcastToOp(Op):
    """``a`` broadcast (NumPy rules) to the shape of ``b``; ``b``'s value is not read.

    As in dlsys the gradient for ``a`` is ``reducesumaxiszero_op``, which is right for the
    common case of ``a`` of shape (k..) and ``b`` of shape (n, k..).
    """

    label = "broadcastto_op"

    def __call__(self, a, b):
        return Node(self, [a, b], _name("BroadcastTo(%s,%s.shape)", a.name, b.name))

    def infer_shape(self, node, input_shapes):
        src, dst = (tuple(s) for s in input_shapes)
        if len(src) > len(dst) or any(s not in (1, d) for s, d in zip(src[::-1], dst[::-1])):
            raise _error(node, "cannot broadcast '%s' %s to the shape %s of '%s'"
                         % (node.inputs[0].name, src, dst, node.inputs[1].name))
        return dst

    def compute(self, node, input_vals):
        return np.broadcast_to(input_vals[0], input_vals[1].shape)

    def kernel(self, node, inputs, out):
        return dlarray.ops.broadcast_to, [inputs[0], out]

    def gradient(self, node, output_grad):
        return [reducesumaxiszero_op(output_grad), None]


def _log_softmax(y):
    z = y - y.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def softmax_func(y):
    """Numerically stable softmax over the last axis (NumPy)."""
    z = np.exp(y - y.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


class SoftmaxCrossEntropyOp(Op):
    """Mean over rows of ``-sum(y_ * log_softmax(y))``; shape (1,).

    As in dlsys, ``y_`` (the labels) gets a zero gradient.
    """

    label = "softmaxcrossentropy_op"

    def __call__(self, y, y_):
        return Node(self, [y, y_], _name("SoftmaxXEntropy(%s,%s)", y.name, y_.name))

    def infer_shape(self, node, input_shapes):
        _same_shapes(node, input_shapes)
        return (1,)

    def compute(self, node, input_vals):
        y, y_ = input_vals
        loss = -(y_ * _log_softmax(y)).sum(axis=-1)
        return np.reshape(loss.mean(), (1,))

    def kernel(self, node, inputs, out):
        return dlarray.ops.softmax_cross_entropy, [inputs[0], inputs[1], out]

    def gradient(self, node, output_grad):
        y, y_ = node.inputs
        grad = _divbyrows_op(softmax_op(y) + -1 * y_)
        if output_grad.op is not oneslike_op:  # a gradient of ones needs no multiply
            grad = grad * broadcastto_op(output_grad, y)
        return [grad, None]


class SoftmaxOp(Op):
    """Softmax over the last axis. Its gradient is built for 2-D inputs."""

    label = "softmax_op"
    inplace = True

    def __call__(self, a):
        return Node(self, [a], _name("Softmax(%s)", a.name))

    def compute(self, node, input_vals):
        return softmax_func(input_vals[0])

    def kernel(self, node, inputs, out):
        return dlarray.ops.softmax, [inputs[0], out]

    def gradient(self, node, output_grad):
        # dx = s * (g - rowsum(g * s)), the row sums as a product with a column of ones.
        row_sums = matmul_op(output_grad * node, _onescolumn_op(node))
        return [node * (output_grad + -1 * broadcastto_op(row_sums, node))]


class ReluOp(Op):
    label = "relu_op"
    inplace = True

    def __call__(self, a):
        return Node(self, [a], _name("Relu(%s)", a.name))

    def compute(self, node, input_vals):
        return np.maximum(input_vals[0], 0)

    def kernel(self, node, inputs, out):
        return dlarray.ops.relu, [inputs[0], out]

    def gradient(self, node, output_grad):
        return [relu_gradient_op(node.inputs[0], output_grad)]


class ReluGradientOp(Op):
    """``grad * (a > 0)``; the gradient for ``a`` is zero (almost everywhere)."""

    label = "relu_gradient_op"
    inplace = True

    def __call__(self, a, grad):
        return Node(self, [a, grad], _name("ReluGradient(%s,%s)", a.name, grad.name))

    def infer_shape(self, node, input_shapes):
        return _same_shapes(node, input_shapes)

    def compute(self, node, input_vals):
        a, grad = input_vals
        return grad * (a > 0)

    def kernel(self, node, inputs, out):
        return dlarray.ops.relu_gradient, [inputs[0], inputs[1], out]

    def gradient(self, node, output_grad):
        return [None, relu_gradient_op(node.inputs[0], output_grad)]


class _DivByRowsOp(Op):
    """``a`` divided by its number of rows (the mean in softmax cross entropy's gradient)."""

    label = "divbyrows_op"
    inplace = True

    def __call__(self, a):
        return Node(self, [a], _name("DivByRows(%s)", a.name))

    def compute(self, node, input_vals):
        return input_vals[0] * (1.0 / _rows(input_vals[0].shape))

    def kernel(self, node, inputs, out):
        scale = 1.0 / _rows(out.shape)
        return dlarray.ops.matrix_elementwise_multiply_by_const, [inputs[0], scale, out]

    def gradient(self, node, output_grad):
        return [_divbyrows_op(output_grad)]


class _OnesColumnOp(Op):
    """A (n, 1) column of ones for a 2-D input of shape (m, n): a row-sum operand."""

    label = "onescolumn_op"
    constant = True

    def __call__(self, a):
        return Node(self, [a], _name("OnesColumn(%s)", a.name))

    def infer_shape(self, node, input_shapes):
        shape = tuple(input_shapes[0])
        if len(shape) != 2:
            raise _error(node, "the softmax_op gradient needs a 2-D input, got '%s' %s"
                         % (node.inputs[0].name, shape))
        return (shape[1], 1)

    def compute(self, node, input_vals):
        return np.ones((input_vals[0].shape[1], 1), dtype=input_vals[0].dtype)

    def kernel(self, node, inputs, out):
        return dlarray.ops.array_set, [out, 1.0]

    def gradient(self, node, output_grad):
        return [None]


add_op = AddOp()
mul_op = MulOp()
add_byconst_op = AddByConstOp()
mul_byconst_op = MulByConstOp()
matmul_op = MatMulOp()
placeholder_op = PlaceholderOp()
oneslike_op = OnesLikeOp()
zeroslike_op = ZerosLikeOp()
reducesumaxiszero_op = ReduceSumAxisZeroOp()
broadcastto_op = BroadcastToOp()
softmaxcrossentropy_op = SoftmaxCrossEntropyOp()
softmax_op = SoftmaxOp()
relu_op = ReluOp()
relu_gradient_op = ReluGradientOp()
_divbyrows_op = _DivByRowsOp()
_onescolumn_op = _OnesColumnOp()


def _topo_sort(node_list, leaves=()):
    """Depth-first post-order over inputs, not descending below ``leaves``."""
    visited, order = set(), []
    for root in node_list:
        if root in visited:
            continue
        visited.add(root)
        stack = [(root, iter(() if root in leaves else root.inputs))]
        while stack:
            node, inputs = stack[-1]
            for inp in inputs:
                if inp not in visited:
                    visited.add(inp)
                    stack.append((inp, iter(() if inp in leaves else inp.inputs)))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def find_topo_sort(node_list):
    """Every node that ``node_list`` depends on, each after its inputs."""
    return _topo_sort(node_list)


def sum_node_list(node_list):
    """The sum of the nodes (add_op chain)."""
    return functools.reduce(add_op, node_list)


def gradients(output_node, node_list):
    """Gradient nodes of ``output_node`` with respect to each node of ``node_list``.

    A node that ``output_node`` does not depend on gets ``zeroslike_op(node)``.
    """
    grads = {output_node: [oneslike_op(output_node)]}
    node_to_grad = {}
    for node in reversed(find_topo_sort([output_node])):
        if node not in grads:  # only zero gradients reach it
            continue
        grad = node_to_grad[node] = sum_node_list(grads[node])
        for inp, inp_grad in zip(node.inputs, node.op.gradient(node, grad)):
            if inp_grad is not None:
                grads.setdefault(inp, []).append(inp_grad)
    return [node_to_grad[n] if n in node_to_grad else zeroslike_op(n) for n in node_list]


class Executor:
    """Evaluates the nodes of ``eval_node_list`` for the values of a feed dict.

    ``ctx=None`` computes with NumPy; a dlarray context (``dlarray.cpu(0)``,
    ``dlarray.gpu(0)``) runs the runtime's ops on that device. Feed values are NumPy arrays
    (copied into float32 buffers that the executor owns) or NDArrays on ``ctx`` (used as they
    are). Any node of the graph may be fed; what only it depends on is then not evaluated.

    On a device, ``run`` returns the executor's own NDArrays, as dlsys does: the next ``run``
    overwrites them, so copy them (or pass ``convert_to_numpy_ret_vals=True``) to keep them.
    ``run`` does not wait for the device; reading a value (``asnumpy``) does.

    The first run for a set of feed shapes makes a plan: node shapes, buffers, bound op calls.
    Later runs with the same shapes reuse it and allocate nothing; each set of shapes keeps
    its own plan and buffers.
    """

    def __init__(self, eval_node_list, ctx=None):
        eval_node_list = list(eval_node_list)
        for node in eval_node_list:
            if not isinstance(node, Node):
                raise TypeError("Executor evaluates Nodes, got %s" % type(node).__name__)
        self.eval_node_list = eval_node_list
        self.ctx = ctx
        self.topo_order = find_topo_sort(eval_node_list)
        self._graph = set(self.topo_order)
        self._plans = {}

    def run(self, feed_dict, convert_to_numpy_ret_vals=False):
        """Values of ``eval_node_list``, in its order, for the values fed."""
        key = self._feed_key(feed_dict)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._make_plan(dict(key))
        values = plan.run(feed_dict)
        if convert_to_numpy_ret_vals and self.ctx is not None:
            return [value.asnumpy() for value in values]
        return values

    def _feed_key(self, feed_dict):
        """The fed nodes with their shapes, after checking nodes, types and devices."""
        key = []
        for node, value in feed_dict.items():
            if node not in self._graph:
                if not isinstance(node, Node):
                    raise TypeError("feed_dict keys must be Nodes, got %s" % type(node).__name__)
                raise ValueError("feed_dict node '%s' is not in this executor's graph (a node "
                                 "of another graph?)" % node.name)
            if not isinstance(value, np.ndarray):
                self._check_ndarray(node, value)
            key.append((node, tuple(value.shape)))
        return frozenset(key)

    def _check_ndarray(self, node, value):
        if self.ctx is not None and isinstance(value, dlarray.NDArray):
            if value.ctx != self.ctx:
                raise ValueError("feed for node '%s': the NDArray is on %s, the executor runs on "
                                 "%s (copy it with .copyto(ctx))"
                                 % (node.name, value.ctx, self.ctx))
        elif self.ctx is None and isinstance(value, dlarray.NDArray):
            raise TypeError("feed for node '%s': an NDArray on %s, but the executor computes with "
                            "NumPy (ctx=None): feed value.asnumpy()" % (node.name, value.ctx))
        else:
            raise TypeError("feed for node '%s': expected a NumPy array or an NDArray, got %s"
                            % (node.name, type(value).__name__))

    def _make_plan(self, fed_shapes):
        order = _topo_sort(self.eval_node_list, fed_shapes)
        missing = [n.name for n in order if n.op is placeholder_op and n not in fed_shapes]
        if missing:
            raise ValueError("feed_dict has no value for placeholder %s"
                             % ", ".join("'%s'" % name for name in missing))
        shapes = dict(fed_shapes)
        for node in order:
            if node not in shapes:
                shapes[node] = node.op.infer_shape(node, [shapes[i] for i in node.inputs])
        if self.ctx is None:
            return _NumpyPlan(self.eval_node_list, order, fed_shapes)
        return _DevicePlan(self.eval_node_list, order, shapes, fed_shapes, self.ctx)


class _NumpyPlan:
    """The NumPy reference: every run computes each node into a new array."""

    def __init__(self, eval_nodes, order, fed):
        self.eval_nodes = eval_nodes
        self.order = [node for node in order if node not in fed]

    def run(self, feed_dict):
        vals = dict(feed_dict)
        for node in self.order:
            vals[node] = node.op.compute(node, [vals[i] for i in node.inputs])
        return [vals[node] for node in self.eval_nodes]


class _FeedSlot:
    """Stands for a fed node's array in a bound call until ``run`` binds the array."""

    def __init__(self, node):
        self.node = node


class _DevicePlan:
    """Buffers and bound op calls for one set of feed shapes on one device.

    Buffers come from a free list keyed by shape: a node's buffer goes back to it after the
    node's last use in the topological order, and an op that may run in place writes over a
    dying input of its shape. Evaluated nodes keep their buffers; constants are computed once.
    """

    def __init__(self, eval_nodes, order, shapes, fed, ctx):
        self.eval_nodes = eval_nodes
        self.ctx = ctx
        self.bound = {node: None for node in order if node in fed}
        self.slots = {node: [] for node in self.bound}
        self.staging = {}
        self.arrays = {}
        self.calls = []
        last_use = {}
        for i, node in enumerate(order):
            for inp in node.inputs:
                last_use[inp] = i
        for node in eval_nodes:
            last_use[node] = len(order)
        free = collections.defaultdict(list)
        pooled = set()
        for i, node in enumerate(order):
            if node in fed:
                continue
            shape = shapes[node]
            if node.op.constant:
                out = self.arrays[node] = dlarray.empty(shape, ctx)
                fn, args = node.op.kernel(node, [], out)
                fn(*args)
                continue
            dying = [inp for inp in dict.fromkeys(node.inputs)
                     if inp in pooled and last_use[inp] == i]
            reusable = [inp for inp in dying if node.op.inplace and shapes[inp] == shape]
            if reusable:
                out = self.arrays[reusable[0]]
                dying.remove(reusable[0])
            else:
                out = free[shape].pop() if free[shape] else dlarray.empty(shape, ctx)
            for inp in dying:
                free[shapes[inp]].append(self.arrays[inp])
            self.arrays[node] = out
            pooled.add(node)
            inputs = [_FeedSlot(inp) if inp in fed else self.arrays[inp] for inp in node.inputs]
            fn, args = node.op.kernel(node, inputs, out)
            for j, arg in enumerate(args):
                if isinstance(arg, _FeedSlot):
                    self.slots[arg.node].append((args, j))
            self.calls.append((fn, args))
        self.owned = {id(array) for array in self.arrays.values()}

    def run(self, feed_dict):
        for node, value in feed_dict.items():
            if node not in self.bound:
                continue
            if isinstance(value, np.ndarray) or id(value) in self.owned:
                array = self.staging.get(node)
                if array is None:
                    array = self.staging[node] = dlarray.empty(value.shape, self.ctx)
                array[:] = value
            else:
                array = value
            if array is not self.bound[node]:
                for args, j in self.slots[node]:
                    args[j] = array
                self.bound[node] = array
        for fn, args in self.calls:
            fn(*args)
        return [self.bound[node] if node in self.bound else self.arrays[node]
                for node in self.eval_nodes]
