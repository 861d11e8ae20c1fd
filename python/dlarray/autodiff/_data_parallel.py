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
    while its all-reduce runs would see it half averaged."""
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
    # NCCL's collectives run between the graph's segments; the peer kernel's are recorded
    plan.eager = frozenset() if buckets.recordable() else frozenset(
        (buckets.start, buckets.wait, buckets.finish))
    after = {}  # call index -> buckets to start after it
    position = 0
    for b, members in enumerate(buckets.buckets):
        position += len(members)
        after.setdefault(last[ready[position - 1]], []).append(b)
    # A last bucket ready after the last op has nothing to overlap: it is all-reduced on the
    # GPU's stream after the others' wait (buckets.finish), not forked to the side stream.
    final = after.get(len(body) - 1, [None])[-1] if body else None
    if final is not None:
        after[len(body) - 1].remove(final)
    calls = [(buckets.start, (b,)) for b in after.get(-1, [])]
    for i, call in enumerate(body):
        calls.append(call)
        calls.extend((buckets.start, (b,)) for b in after.get(i, []))
    calls.append((buckets.wait, ()) if final is None else (buckets.finish, (final,)))
    calls.extend(updates)
    plan.calls = calls
    return buckets
