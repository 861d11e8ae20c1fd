"""CUDA graphs for the executor's GPU plans: record a plan's op calls once, replay them with one
launch (the CUDA plugin's "dlarray.graph.v1" extension, through dlarray._core._graph_*).

A plan's first run is op by op: it warms the device's memory cache with the scratch memory its
ops use, so that the recording rarely allocates (what it must, it allocates outside the
recording: see the CUDA plugin's caching allocator). The second run records the ops (they do not run
while recorded) and launches the graph; later runs copy their fed values into the graph's buffers
on the same stream, then launch it. A fed NDArray that was the same object on the first two runs
(a weight, updated in place between runs) is read where it is; if another object is fed for it
later, that input moves to a buffer of the graph and the plan is recorded again.
A parameter that an ``sgd_update_op`` updates is always read where the caller's array is (its
update is part of the graph); another object fed for it records the graph again.

Segments: a plan may name calls that must run on the host, never inside a graph (``plan.eager``:
the data-parallel mode's bucket starts and wait, which queue NCCL collectives on a side stream).
The plan's calls are then split at them (:func:`split`): each stretch of op calls between two
such calls is a graph of its own, and a run launches the segments in order with the eager calls
between them, all on the GPU's stream (stream-ordered: the host waits for nothing). NCCL inside
a graph hung on 2 H200s (session 10), hence collectives stay out of the graphs.
"""
from __future__ import annotations

import atexit
from typing import Any, Callable, Sequence

import numpy as np

from .. import _core
from .._core import DLContext

_shutdown_registered = False


def _register_shutdown():
    # At interpreter exit graphs are left to the process's end (the driver may already be gone).
    global _shutdown_registered
    if not _shutdown_registered:
        atexit.register(_core._graph_shutdown)
        _shutdown_registered = True


def split(calls: Sequence[tuple], eager) -> list[tuple[bool, list]]:
    """A plan's ``calls`` ((fn, args) pairs, in order) as the steps of a run: ``(True, calls)``
    for each maximal stretch of calls to record as one graph (a segment), ``(False, calls)`` for
    each stretch of calls whose ``fn`` is in ``eager`` (run on the host between segments).
    Every call is in one step, in its order; no step is empty."""
    steps: list[tuple[bool, list]] = []
    for call in calls:
        recorded = call[0] not in eager
        if not steps or steps[-1][0] != recorded:
            steps.append((recorded, []))
        steps[-1][1].append(call)
    return steps


class GraphRunner:
    """Runs one _DevicePlan through CUDA graphs, one per segment (or op by op where it cannot).

    ``plan.eager`` (a set of functions, empty for plans that are one graph) names the calls that
    split the plan into segments; the split is made at the first run, after the data-parallel
    mode has added its calls."""

    def __init__(self, plan, ops):
        self.plan = plan
        self.steps = None  # split(plan.calls, plan.eager), at the first run
        self.graphs = None  # per step: its recorded graph (None for the eager steps)
        self.runs = 0
        self.captures = self.replays = self.eager_runs = 0
        self.note = ""
        self.direct = set()  # fed nodes the graph reads where the caller's NDArray is
        self.staged_always = set()  # fed nodes seen with changing NDArrays: always copied
        self.previous = {}
        unsafe = sorted({type(op).__name__ for op in ops if not getattr(op, "graph_safe", False)})
        if unsafe:
            self.note = ("runs op by op: ops that are not plain device ops (%s) cannot be "
                         "recorded in a CUDA graph" % ", ".join(unsafe))
        else:
            reason = _core._graph_unavailable_reason(plan.ctx)
            if reason:
                self.note = "runs op by op: " + reason
        self.enabled = not self.note
        if self.enabled:
            _register_shutdown()

    @property
    def segments(self) -> int:
        """The graphs a replay launches (0 while op by op, or before the first run)."""
        if not self.enabled or self.steps is None:
            return 0
        return sum(1 for recorded, _calls in self.steps if recorded)

    def _copied(self, node, value):
        plan = self.plan
        return (isinstance(value, np.ndarray) or id(value) in plan.owned
                or node in self.staged_always)

    def _eager(self, fed):
        plan = self.plan
        for node, value in fed.items():
            plan.bind(node, plan.stage(node, value) if self._copied(node, value) else value)
        for fn, args in plan.calls:
            fn(*args)
        self.eager_runs += 1

    def _capture(self, fed):
        """Binds the fed values, then records every segment (nothing runs). Returns the graphs,
        per step."""
        plan, ctx = self.plan, self.plan.ctx
        self.direct = set()
        for node, value in fed.items():
            # an updated parameter is always read (and written) where the caller's array is
            if node in plan.inplace or (not self._copied(node, value)
                                        and self.previous.get(node) is value):
                plan.bind(node, value)
                self.direct.add(node)
            else:
                plan.bind(node, plan.stage(node, value))
        graphs = []
        for recorded, calls in self.steps:
            if not recorded:
                graphs.append(None)
                continue
            _core._graph_begin_capture(ctx)
            try:
                for fn, args in calls:
                    fn(*args)
            except BaseException:
                _core._graph_abort_capture(ctx)
                raise
            graphs.append(_core._graph_end_capture(ctx))
        return graphs

    def run(self, feed_dict):
        plan = self.plan
        fed = {node: value for node, value in feed_dict.items() if node in plan.bound}
        self.runs += 1
        if self.steps is None:
            self.steps = split(plan.calls, plan.eager)
        if not self.enabled or self.runs == 1:
            self._eager(fed)
            self.previous = dict(fed)
            return
        for node in list(self.direct):
            if node in fed and fed[node] is not plan.bound[node]:
                # Another NDArray for an input the graph reads in place: copy it from now on
                # (an updated parameter: record the graph again, on the new array).
                if node not in plan.inplace:
                    self.staged_always.add(node)
                self.graphs = None
        if self.graphs is None:
            try:
                self.graphs = self._capture(fed)
            except (RuntimeError, ValueError) as e:
                self.enabled = False
                self.note = "runs op by op: recording the CUDA graph failed: %s" % e
                self._eager(fed)
                return
            self.captures += 1
        else:
            for node, value in fed.items():
                if node not in self.direct:
                    plan.stage(node, value)  # into the buffer the graphs read
        for graph, (_recorded, calls) in zip(self.graphs, self.steps):
            if graph is not None:
                graph.launch()
            else:  # between segments, on the host: the collectives' calls
                for fn, args in calls:
                    fn(*args)
        self.replays += 1


class RecordedGraph:
    """Device ops recorded once from a GPU's stream, replayed by :meth:`launch`; made by
    :func:`record_cuda_graph`.

    Parameters
    ----------
    graph : dlarray._core._CudaGraph
        The recorded graph.
    ctx : DLContext
        Its GPU.
    """

    def __init__(self, graph: Any, ctx: DLContext) -> None:
        self._graph, self.ctx = graph, ctx

    def launch(self) -> None:
        """Queues one replay on the GPU's stream (does not wait for it)."""
        self._graph.launch()

    @property
    def num_nodes(self) -> int:
        """Operations (kernels, copies) in the graph."""
        return self._graph.num_nodes


def record_cuda_graph(fn: Callable[[], object], ctx: DLContext) -> RecordedGraph:
    """Records the device ops that ``fn()`` queues on ``ctx``'s stream as a CUDA graph.

    While recording, ops are recorded, not run: launch the graph to run them. Replays read and
    write the same arrays as the recorded calls (keep them alive, update them in place). Memory
    the ops need is taken from the device's cache, else allocated outside the recording, and
    kept for the graph's replays; running the same ops once without recording first caches it.
    Nothing may wait for the GPU while recording (``asnumpy``, ``synchronize``, copies with the
    host).

    Parameters
    ----------
    fn : callable
        Called once, with no arguments, while recording.
    ctx : DLContext
        A GPU context.

    Returns
    -------
    RecordedGraph
        With ``launch()`` and ``num_nodes``.

    Raises
    ------
    ValueError
        When ``ctx`` is not a usable GPU, or it is already recording.
    RuntimeError
        When the CUDA plugin offers no graphs, or ``fn`` did something a recording may not do
        (the recording is discarded; the message says what). Exceptions of ``fn`` propagate,
        after the recording is discarded.
    """
    _register_shutdown()
    _core._graph_begin_capture(ctx)
    try:
        fn()
    except BaseException:
        _core._graph_abort_capture(ctx)
        raise
    return RecordedGraph(_core._graph_end_capture(ctx), ctx)
