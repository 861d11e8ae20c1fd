"""The executor's data-parallel mode: a plan's gradients averaged over the ranks of
dlarray.distributed's process group, bucket by bucket, each bucket started right after the op
that computes its last gradient, all waited for at the end of the run.

The buckets follow the plan's op order (the order the backward pass computes the gradients), so
the first buckets' all-reduces overlap the rest of the backward pass (on a GPU: on NCCL's side
stream; see dlarray.distributed._buckets). Every rank runs the same plan, so every rank starts
the same buckets in the same order.

On a GPU, when every bucket's all-reduce goes to the peer-memory kernel (small buckets, GPUs of
one host: ``GradientBuckets.recordable``), the starts and the wait are recorded into the plan's
CUDA graph like its ops: one launch a step, the all-reduces a branch of the graph on the side
stream. Otherwise the plan's graph is cut into segments at the buckets' starts and wait
(``plan.eager``; dlarray.autodiff._cuda_graph.split): a replay launches each stretch of op calls
as a graph of its own and starts the buckets' NCCL collectives between the launches, on the
host, stream-ordered as op by op. NCCL never is inside a graph: recording it in the plan's graph
was tried, and on 2 H200s the MNIST example with ``--check-sync`` (an eager all_gather after
each replay) hung after about 400 steps, cause not found. A plan's ``sgd_update_op`` calls come
after the buckets' wait: the update reads averaged gradients, after the GPU's stream has waited
for the all-reduces.
"""

from __future__ import annotations


def configure(nodes, bucket_mb, eval_node_list, ctx):
    """The Executor's checked arguments: (the nodes to average, as a list; bucket_mb)."""
    from ..distributed._buckets import check_bucket_mb
    from .graph import Node
    bucket_mb = check_bucket_mb(bucket_mb)
    if ctx is None:
        raise ValueError("data_parallel needs a device ctx (the NumPy executor has no process "
                         "group)")
    if isinstance(nodes, Node):
        nodes = [nodes]
    try:
        nodes = list(nodes)
    except TypeError:
        raise TypeError("data_parallel must be the list of nodes to average over the ranks "
                        "(the gradients), got %s" % type(nodes).__name__) from None
    evaluated = set(eval_node_list)
    for node in nodes:
        if not isinstance(node, Node):
            raise TypeError("data_parallel lists Nodes, got %s" % type(node).__name__)
        if node not in evaluated:
            raise ValueError("data_parallel node '%s' is not one of the executor's "
                             "eval_node_list: only evaluated nodes can be averaged" % node.name)
    if len(set(nodes)) != len(nodes):
        raise ValueError("data_parallel lists a node twice")
    return nodes, bucket_mb


def attach(plan, nodes, bucket_mb):
    """Adds the buckets' start calls to ``plan.calls`` and the wait at the end. A bucket starts
    after the last call that writes or reads any of its arrays: a later op that read a gradient
    while its all-reduce runs would see it half averaged. Where the buckets' kernels make the
    SGD steps (_fused_updates), a bucket also starts after the last call reading its
    parameters, and the plan's update calls go."""
    from .. import distributed
    from ..distributed._buckets import GradientBuckets
    group = distributed._require()
    if plan.ctx != group.device:
        raise ValueError("data_parallel: the executor runs on %r but this rank's process group "
                         "uses %r" % (plan.ctx, group.device))
    fed = [n.name for n in nodes if n not in plan.arrays]
    if fed:
        raise ValueError("data_parallel: node %s is fed, not computed by the executor"
                         % ", ".join("'%s'" % name for name in fed))
    arrays = {id(plan.arrays[n]): plan.arrays[n] for n in nodes}
    # The sgd_update_op calls (the plan's last) read the gradients after they are averaged.
    body = plan.calls[:len(plan.calls) - len(plan.updates)]
    updates = plan.calls[len(body):]
    last = dict.fromkeys(arrays, -1)  # -1: ready before the first call (a constant)
    for i, (_fn, args) in enumerate(body):
        for arg in args:
            if id(arg) in last:
                last[id(arg)] = i
    ready = sorted(arrays, key=lambda k: last[k])
    buckets = GradientBuckets([arrays[k] for k in ready], bucket_mb, op="mean")
    recordable = buckets.recordable()
    # NCCL's collectives run between the graph's segments; the peer kernel's are recorded
    plan.eager = frozenset() if recordable else frozenset(
        (buckets.start, buckets.wait, buckets.finish))
    steps = _fused_updates(plan, buckets, updates) if recordable else None
    if steps is not None:  # each bucket's kernel updates its parameters: no update calls
        updates = []
        plan.updates_in_all_reduce = sum(p is not None for p in steps[2].values())
    starts = {}  # call index -> the buckets to start after it, with their calls' arguments
    for b, members in enumerate(buckets.buckets):
        after = max(last[id(a)] for a in members)
        args = [b, True]
        if steps is not None:  # its parameters change in its kernel: after their last reader
            readers, scale, params = steps
            mine = [params[id(a)] for a in members]
            after = max([after] + [readers.get(id(p), -1) for p in mine if p is not None])
            args += [_bound_list(plan, mine), scale]
        starts.setdefault(after, []).append(args)
    # A last bucket ready after the last op has nothing to overlap: it is all-reduced on the
    # GPU's stream after the others' wait (buckets.finish), not forked to the side stream.
    final = starts[len(body) - 1].pop() if body and starts.get(len(body) - 1) else None
    calls = [(buckets.start, args) for args in starts.get(-1, [])]
    for i, call in enumerate(body):
        calls.append(call)
        calls.extend((buckets.start, args) for args in starts.get(i, []))
    if final is None:
        calls.append((buckets.wait, ()))
    else:
        calls.append((buckets.finish, [final[0]] + final[2:]))
    calls.extend(updates)
    plan.calls = calls
    return buckets


def _fused_updates(plan, buckets, updates):
    """Whether the buckets' kernels can make the plan's SGD steps too (the peer all-reduce's
    all_reduce_sgd: the step right after each bucket's mean, on the side stream, instead of the
    update calls after the wait): every updated parameter's gradient is in a bucket, one
    learning rate, float32 or float64, and the CUDA plugin has the call. Returns None, or
    (the last body call reading each parameter, by id of its slot or array; the step's scale,
    -lr; the parameter by id of each bucket array, None for a gradient without one)."""
    from .optim import SGDUpdateOp
    comm = buckets.group.comm
    if not updates or not getattr(comm, "has_all_reduce_sgd", lambda: False)():
        return None
    if any(str(a.dtype) not in ("float32", "float64") for a in buckets.arrays):
        return None
    params = {id(a): None for a in buckets.arrays}
    scales = set()
    for node, update in plan.updates.items():
        pairs = SGDUpdateOp.pairs(node)
        count = len(pairs[0])
        call = next(((fn, args) for fn, args in updates if len(args) == 2 * count
                     and all(plan.arrays.get(g) is args[count + k]
                             for k, g in enumerate(pairs[1]))), None)
        if call is None:
            return None
        for param, grad in zip(call[1][:count], call[1][count:]):
            if id(grad) not in params or params[id(grad)] is not None:
                return None
            params[id(grad)] = param
        scales.add(update.scale)
    if len(scales) != 1:
        return None
    readers = {}  # id(slot or array) of each parameter -> its last reader in the body
    wanted = {id(p) for p in params.values() if p is not None}
    nodes = {p.node: id(p) for p in params.values() if hasattr(p, "node")}
    body = plan.calls[:len(plan.calls) - len(updates)]
    for i, (_fn, args) in enumerate(body):
        for arg in args:
            if id(arg) in wanted:
                readers[id(arg)] = i
            elif getattr(arg, "node", None) in nodes:  # another slot of the same fed node
                readers[nodes[arg.node]] = i
    return readers, scales.pop(), params


def _bound_list(plan, items):
    """``items`` as a list whose fed-node slots the plan binds like its calls' arguments."""
    items = list(items)
    for j, item in enumerate(items):
        node = getattr(item, "node", None)
        if node is not None and node in plan.slots:
            plan.slots[node].append((items, j))
    return items
