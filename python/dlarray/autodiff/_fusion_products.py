"""The Executor's fused products: a dense layer's nodes run as ``dlarray.linear`` and
``dlarray.linear_weight_grad`` (one cuBLASLt product with an epilogue on CUDA), on a device
whose plugin has those ops' native kernels.

Forward: ``matrix_multiply(h, w)`` (no transposes), ``broadcast_to(b, product)`` with ``b`` of
shape (n,), their ``matrix_elementwise_add`` and, when the sum's only other readers are
``relu_gradient`` nodes (the backward), its ``relu``: one ``linear(h, w, b, relu)`` node. The
sum is then never written: each ``relu_gradient(sum, g)`` reads the relu's output instead,
which gives the same values (``relu(s) > 0`` exactly where ``s > 0``, NaN and -0.0 included).

Backward: ``matrix_multiply(h, d, trans_a=1)`` (a weight's gradient) and
``reduce_sum_axis_zero(d)`` (its bias's) of one ``d``: one ``linear_weight_grad(h, d)`` with
two outputs, run where the first of the two was.

A product whose native kernel cannot run (no cuBLASLt) runs its composite, the ops it replaced
(``dlarray._linear_api``); ``graph_stats()`` says which ran. (The CUDA kernel itself runs a
product cuBLASLt has no algorithm for, or one its unfused kernels run faster, unfused:
``_linear_api.native_choices``.)
"""
from __future__ import annotations

import collections

from .. import _linear_api
from .._kernels import has_kernel
from .ops import DeclaredOp

# None: fuse products where the device's plugin has the native ops; True: everywhere (the
# composites then run them; tests check the patterns on the CPU so); False: nowhere (tests of
# the elementwise chains that compare with the unfused run bit for bit).
FORCE = None


class Product:
    """One fused product: ``root`` (the node whose position it runs at), ``members`` (the
    nodes it computes), ``inputs``, ``outputs`` (the nodes whose buffers it writes, in the
    op's order), ``text``, ``run`` and ``backend`` ("native" or "composite" once run)."""

    __slots__ = ("root", "members", "inputs", "outputs", "text", "run", "backend")


def _is(node, name: str) -> bool:
    return isinstance(node.op, DeclaredOp) and node.op.name == name


def _users(order: list) -> dict:
    users = collections.defaultdict(list)
    for node in order:
        for i in node.inputs:
            users[i].append(node)
    return users


def _linear(s, users, keep, shapes, position):
    """(members, inputs, relu node or None, {relu_gradient node: its new inputs}) of the
    forward pattern whose sum is ``s``, or None."""
    p, bcast = s.inputs
    if _is(bcast, "matrix_multiply"):
        p, bcast = bcast, p
    if not (_is(p, "matrix_multiply") and _is(bcast, "broadcast_to") and not any(p.attrs)
            and bcast.inputs[1] is p and len(shapes[p]) == 2
            and tuple(shapes[bcast.inputs[0]]) == (shapes[p][1],)):
        return None
    if p in keep or bcast in keep or users[bcast] != [s] \
            or any(u is not s and u is not bcast for u in users[p]):
        return None
    members, relu, reads = [p, bcast, s], None, {}
    relus = [u for u in users[s] if _is(u, "relu")]
    others = [u for u in users[s] if u not in relus]
    if len(relus) == 1 and s not in keep and relus[0] not in keep and all(
            _is(u, "relu_gradient") and u.inputs[1] is not s
            and position.get(u, float("inf")) > position[relus[0]] for u in others):
        relu = relus[0]
        members.append(relu)
        reads = {u: [relu, u.inputs[1]] for u in others}
    elif len(users[s]) == 0 and s not in keep:
        return None  # nothing reads it
    return members, [p.inputs[0], p.inputs[1], bcast.inputs[0]], relu, reads


def _weight_grad(node, users, keep, shapes, position, taken):
    """The reduce_sum_axis_zero node that pairs with weight-gradient product ``node``, or
    None."""
    if not (_is(node, "matrix_multiply") and tuple(node.attrs) == (True, False)):
        return None
    h, d = node.inputs
    if len(shapes[d]) != 2:
        return None
    for r in users[d]:
        if (_is(r, "reduce_sum_axis_zero") and r not in taken and r not in keep
                and tuple(shapes[r]) == (shapes[d][1],)):
            first = min(position[node], position[r])
            # both run at the first's position: every input must be ready there
            if position.get(h, -1) < first and position.get(d, -1) < first:
                return r
    return None


def find_products(order: list, fed, eval_nodes: list, shapes: dict, ctx) -> tuple:
    """({root: Product}, {node: the inputs it reads instead of node.inputs}) for ``ctx``."""
    native = {op: has_kernel(op, ctx) if FORCE is None else FORCE
              for op in ("linear", "linear_weight_grad")}
    users = _users(order)
    keep = set(fed)  # fed nodes are not computed; (evaluated ones are kept below)
    evaluated = set(eval_nodes)
    position = {n: k for k, n in enumerate(order) if n not in fed}
    products, reads, taken = {}, {}, set()
    for node in order:
        if node in fed or node in taken:
            continue
        if native["linear"] and _is(node, "matrix_elementwise_add"):
            found = _linear(node, users, keep | evaluated, shapes, position)
            if found is not None and not taken.intersection(found[0]):
                members, inputs, relu, rereads = found
                product = _make(members, inputs, [members[-1]], relu is not None, "linear",
                                shapes)
                products[product.root] = product
                reads.update(rereads)
                taken.update(members)
        elif native["linear_weight_grad"]:
            r = _weight_grad(node, users, keep, shapes, position, taken)
            if r is not None and node not in taken:
                first, second = sorted((node, r), key=position.__getitem__)
                product = _make([first, second], list(node.inputs), [node, r], False,
                                "linear_weight_grad", shapes)
                products[first] = product
                taken.update((node, r))
    return products, reads


def _make(members, inputs, outputs, relu, op, shapes) -> Product:
    product = Product()
    product.root, product.members, product.inputs = members[-1], members, inputs
    product.outputs = outputs
    product.backend = "not run"
    names = ",".join(i.name if len(i.name) < 12 else "x%d" % k for k, i in enumerate(inputs))
    operands = ", ".join("x".join(map(str, shapes[i])) for i in inputs[:2])
    product.text = "%s(%s%s) [%s]" % (op, names, ",relu" if relu else "", operands)
    if op == "linear":
        def run(h, w, b, out):
            native = _linear_api._native("linear", [h, w, b], [h, w, b, bool(relu), out])
            if not native:
                _linear_api.linear_composite(h, w, b, relu, out)
            product.backend = "native" if native else "composite"
    else:
        product.root = members[0]

        def run(h, d, dw, db):
            native = _linear_api._native("linear_weight_grad", [h, d], [h, d, dw, db])
            if not native:
                _linear_api.linear_weight_grad_composite(h, d, dw, db)
            product.backend = "native" if native else "composite"
    product.run = run
    return product
