"""The executor's data-parallel mode: a plan's gradients averaged over the ranks of
dlarray.distributed's process group, bucket by bucket, each bucket started right after the op
that computes its last gradient, all waited for at the end of the run.

The buckets follow the plan's op order (the order the backward pass computes the gradients), so
the first buckets' all-reduces overlap the rest of the backward pass (on a GPU: on NCCL's side
stream; see dlarray.distributed._buckets). Every rank runs the same plan, so every rank starts
the same buckets in the same order.

On a GPU the bucket calls are calls of the plan like its ops, so the plan's CUDA graph records
them too: the fork to NCCL's side stream, the collectives and the join are nodes of the graph,
and a replay is one launch for the whole step, all-reduces included (a launch-bound step such as
MNIST's would otherwise pay the host's time for each collective). Why that is safe next to the
collectives called outside the graph (a loss all-reduce, a weight check's all-gather):

- the NCCL extension records the graph's collectives on a communicator of their own (split at
  init), so no communicator is used both by replays and by eager calls, which NCCL would have to
  order with its graph-mixing machinery (the likeliest cause of the hang of the first attempt:
  the MNIST example with ``--check-sync`` hung after about 400 steps on 2 H200s);
- replays are launched on the GPU's stream, and eager collectives are queued on it (or on the
  side stream, forked from it): the two communicators' kernels run in the order the host queued
  them, the same on every rank, each after the other;
- the watchdog records nothing while a graph is recorded (an event recorded from its thread
  would land in this rank's recording only), and after each replay it is told to time the
  collectives the replay queued (``GradientBuckets.note_queued``), so a rank that dies during a
  replay still fails the others within the timeout;
- whether a plan is recorded is agreed by every rank (``agree_captured``): a rank whose
  recording failed would otherwise run its collectives op by op while the others replay theirs.

With ``debug`` on, each bucket first compares its metadata on the host, which a recording cannot
do: such a plan runs op by op. A plan's ``sgd_update_op`` calls come after the buckets' wait (in
the graph too): the update reads averaged gradients.
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
    if group.debug:
        plan.graph = None  # the metadata check reads on the host: not recordable
    after = {}  # call index -> buckets to start after it
    position = 0
    for b, members in enumerate(buckets.buckets):
        position += len(members)
        after.setdefault(last[ready[position - 1]], []).append(b)
    calls = [(buckets.start, (b,)) for b in after.get(-1, [])]
    for i, call in enumerate(body):
        calls.append(call)
        calls.extend((buckets.start, (b,)) for b in after.get(i, []))
    calls.append((buckets.wait, ()))
    calls.extend(updates)
    plan.calls = calls
    if plan.graph is not None:
        plan.graph.hooks = GraphHooks(group, buckets)
    return buckets


class GraphHooks:
    """What a data-parallel plan's CUDA graph runner does besides recording and launching
    (``_cuda_graph.GraphRunner.hooks``)."""

    def __init__(self, group, buckets):
        self.group, self.buckets = group, buckets

    def agree(self, recorded):
        """Whether every rank recorded the plan's graph (``recorded``: this rank did), by an
        all-reduce of the flags on the group's GPU, read on the host (once per recording). A
        recording that failed on one rank discards the others': every rank then runs the plan
        op by op, its collectives called the same way on every rank."""
        import numpy as np
        from .. import distributed, ndarray
        flag = ndarray.array(np.array([int(recorded)], np.int32), self.group.device,
                             dtype="int32")
        self.group.call("data-parallel graph agreement", "all_reduce", flag, flag,
                        distributed._op("min"))
        return bool(flag.asnumpy()[0])

    def before_launch(self):
        """Raises DistributedError once the group failed: its communicators are aborted, and
        a replay would run collectives on freed NCCL resources."""
        self.group.check()

    def after_launch(self):
        """The watchdog times the collectives the launch queued."""
        self.buckets.note_queued()
