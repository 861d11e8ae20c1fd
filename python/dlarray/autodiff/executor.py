"""The Executor of dlarray.autodiff: NumPy reference, or planned runs on a dlarray device."""

from __future__ import annotations

import collections
from typing import Any, Iterable, Literal, Mapping, Optional, Union, overload

import numpy as np
import numpy.typing as npt

import dlarray

from .._core import DLContext, NDArray
from .graph import Node
from .gradients import _topo_sort, find_topo_sort
from .ops import placeholder_op
from .optim import SGDUpdateOp, is_update

# What a feed dict maps a node to.
_Value = Union[npt.NDArray[Any], NDArray]


class Executor:
    """Evaluates the nodes of ``eval_node_list`` for the values of a feed dict.

    Parameters
    ----------
    eval_node_list : iterable of Node
        The nodes :meth:`run` returns the values of, in this order.
    ctx : DLContext, optional
        The device to compute on; None computes with NumPy (the reference).
    cuda_graph : bool, optional
        On a GPU: record each plan's ops once as a CUDA graph and replay it (one launch per
        run instead of one per op). True by default; False runs the ops one by one.
    fuse : bool, optional
        On a device: run each chain of elementwise nodes (bias + relu, a relu-gradient mask
        times a gradient, ...) as one generated kernel (``dlarray.fuse``'s code generator),
        built when the plan is made, and an ``sgd_update_op`` as one multi-tensor kernel for
        all its parameters. On a device whose plugin has the native ``linear`` and
        ``linear_weight_grad`` ops (CUDA: cuBLASLt epilogues), a dense layer's product, bias
        add and relu run as one product, and a weight gradient with its bias gradient as
        another (see ``dlarray.autodiff._fusion_products``). True by default; False runs
        every node's op (the update: two ops per parameter).
    data_parallel : sequence of Node, optional
        Data-parallel training over ``dlarray.distributed``'s process group (initialised, on
        ``ctx``): these evaluated nodes (the gradients) are averaged over the ranks in every
        run, in buckets of about ``bucket_mb`` MB, each bucket's all-reduce started as soon as
        the backward pass has computed (and last read) its gradients, overlapping the rest;
        ``run`` returns them averaged (on a GPU queued before anything queued after ``run``;
        the host does not wait). On a GPU the plan's CUDA graph is cut into segments at the
        buckets' starts: the collectives run between segment launches, never inside a graph.
        See ``dlarray.autodiff._data_parallel``.
    bucket_mb : float, optional
        Megabytes per gradient bucket in data-parallel mode (default 25, as PyTorch's DDP).

    Raises
    ------
    TypeError
        When an element of ``eval_node_list`` is not a Node, or ``cuda_graph`` or ``fuse`` is
        not a bool.
    ValueError
        When a ``data_parallel`` node is not evaluated, ``bucket_mb`` is not positive, or two
        ``sgd_update_op`` nodes update one parameter.

    An ``sgd_update_op`` node (``dlarray.autodiff.sgd_update_op``) evaluated with the loss makes
    ``run`` do forward, backward and the SGD update of the parameters' fed arrays, in place and
    after every other node; its value in the result is None.

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

    On a GPU (``cuda_graph=True``), the second run of a plan records its ops as a CUDA graph and
    later runs replay it: fed values are copied into the graph's buffers first, on the same
    stream (an NDArray fed as the same object on every run, such as a weight, is read where it
    is, without a copy). New feed shapes get a plan and a graph of their own. Plans whose ops
    are not all device ops (Python custom ops), or whose recording fails, run op by op.
    ``graph_stats()`` says what happened.

    Examples
    --------
    >>> import numpy as np
    >>> import dlarray
    >>> from dlarray import autodiff as ad
    >>> x = ad.Variable("x")
    >>> y = ad.relu_op(x) * 2
    >>> grad_x, = ad.gradients(y, [x])
    >>> executor = ad.Executor([y, grad_x], ctx=dlarray.cpu(0))
    >>> y_val, grad_val = executor.run({x: np.array([-1.0, 3.0])},
    ...                                convert_to_numpy_ret_vals=True)
    >>> y_val, grad_val
    (array([0., 6.], dtype=float32), array([0., 2.], dtype=float32))
    """

    def __init__(self, eval_node_list: Iterable[Node], ctx: Optional[DLContext] = None,
                 cuda_graph: bool = True, fuse: bool = True,
                 data_parallel: Optional[Iterable[Node]] = None,
                 bucket_mb: float = 25.0) -> None:
        for name, flag in (("cuda_graph", cuda_graph), ("fuse", fuse)):
            if not isinstance(flag, bool):
                raise TypeError("%s must be True or False, got %s" % (name, type(flag).__name__))
        self.cuda_graph, self.fuse = cuda_graph, fuse
        eval_node_list = list(eval_node_list)
        for node in eval_node_list:
            if not isinstance(node, Node):
                raise TypeError("Executor evaluates Nodes, got %s" % type(node).__name__)
        self.eval_node_list = eval_node_list
        self.ctx = ctx
        self.data_parallel, self.bucket_mb = None, bucket_mb
        if data_parallel is not None:  # the data-parallel mode's hook (_data_parallel.py)
            from . import _data_parallel
            self.data_parallel, self.bucket_mb = _data_parallel.configure(
                data_parallel, bucket_mb, eval_node_list, ctx)
        self.topo_order = find_topo_sort(eval_node_list)
        self._graph = set(self.topo_order)
        updated = [p for n in self.topo_order if is_update(n) for p in SGDUpdateOp.pairs(n)[0]]
        if len(set(updated)) != len(updated):
            raise ValueError("two sgd_update_op nodes update one parameter: give each "
                             "parameter to one update")
        self._plans = {}

    # The values' type follows the flag: NumPy arrays when it is True; else NDArrays on a device
    # and NumPy arrays with ctx=None, which only the executor knows at run time (hence Any).
    @overload
    def run(self, feed_dict: Mapping[Node, _Value],
            convert_to_numpy_ret_vals: Literal[True]) -> list[npt.NDArray[Any]]: ...

    @overload
    def run(self, feed_dict: Mapping[Node, _Value],
            convert_to_numpy_ret_vals: bool = False) -> list[Any]: ...

    def run(self, feed_dict: Mapping[Node, _Value],
            convert_to_numpy_ret_vals: bool = False) -> list[Any]:
        """Evaluates the nodes for the values fed.

        Parameters
        ----------
        feed_dict : dict
            ``{node: value}``: a value for every placeholder the nodes depend on (and for any
            other node, which then is not computed). Values are NumPy arrays, or NDArrays on
            the executor's device.
        convert_to_numpy_ret_vals : bool, optional
            On a device: return NumPy copies instead of the executor's own NDArrays.

        Returns
        -------
        list
            The values of ``eval_node_list``, in its order: NumPy arrays with ``ctx=None``
            or ``convert_to_numpy_ret_vals``, else NDArrays that the next ``run`` overwrites.

        Raises
        ------
        ValueError
            When a placeholder has no value, a fed node is not in this graph, a fed NDArray
            is on another device, or the shapes fed do not fit the ops (the message names the
            node and the shapes).
        TypeError
            When a key is not a Node, or a value is neither a NumPy array nor an NDArray (or
            an NDArray is fed to the NumPy executor).
        """
        key = self._feed_key(feed_dict)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._make_plan(dict(key))
        values = plan.run(feed_dict)
        if convert_to_numpy_ret_vals and self.ctx is not None:
            return [None if value is None else value.asnumpy() for value in values]
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
            if is_update(node):
                raise ValueError("feed_dict node '%s': an sgd_update_op node has no value to "
                                 "feed" % node.name)
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
        # The updates last: every other node reads the parameters before they change.
        order = [n for n in order if not is_update(n)] + [n for n in order if is_update(n)]
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
        plan = _DevicePlan(self.eval_node_list, order, shapes, fed_shapes, self.ctx,
                           self.cuda_graph, self.fuse)
        if self.data_parallel is not None:
            from . import _data_parallel
            plan.buckets = _data_parallel.attach(plan, self.data_parallel, self.bucket_mb)
        return plan

    def graph_stats(self) -> dict[str, Any]:
        """What CUDA graphs did for this executor's plans.

        Returns
        -------
        dict
            ``captures`` (graphs recorded), ``replays`` (runs that launched a graph),
            ``eager_runs`` (runs op by op), ``segments`` (per plan that replays graphs: how
            many graphs a replay launches; more than 1 for a data-parallel plan, whose
            collectives run between them) and ``notes`` (why plans run op by op, one line
            per plan that does); what fusion did over the plans: ``fused_kernels`` (chains run
            as one kernel), ``fused_nodes`` (the nodes they compute) and ``fused`` (per chain:
            its expression over its inputs x0, x1 ... and how it runs, "cpp", "cuda",
            "opencl" or "interpreter"); ``fused_products`` (a dense layer's product with its
            bias add and relu, or a weight gradient with its bias gradient, run as one
            ``dlarray.linear`` / ``dlarray.linear_weight_grad``: one cuBLASLt product on CUDA)
            and ``products`` (per product: the op over its inputs and how it ran, "native" or
            "composite", the unfused ops, where the native kernel could not run it);
            ``multi_tensor_kernels`` (the launches of the
            ``sgd_update_op`` nodes' multi-tensor kernels in a run, up to 64 parameters each,
            summed over the plans) and ``multi_tensor_params`` (the parameters they update; the
            others, all of them with ``fuse=False``, run two ops each); ``updates_in_all_reduce``
            (data-parallel plans whose buckets go to the peer all-reduce: the parameters that
            its kernels update right after their gradients' mean, instead of the update ops).
        """
        stats: dict[str, Any] = {"captures": 0, "replays": 0, "eager_runs": 0, "segments": [],
                                 "notes": [],
                                 "fused_kernels": 0, "fused_nodes": 0, "fused": [],
                                 "fused_products": 0, "products": [],
                                 "multi_tensor_kernels": 0, "multi_tensor_params": 0,
                                 "updates_in_all_reduce": 0}
        for plan in self._plans.values():
            in_all_reduce = getattr(plan, "updates_in_all_reduce", 0)
            stats["updates_in_all_reduce"] += in_all_reduce
            for update in (getattr(plan, "updates", {}).values() if not in_all_reduce else ()):
                stats["multi_tensor_kernels"] += update.kernels
                stats["multi_tensor_params"] += update.fused_params
            for group in getattr(plan, "groups", {}).values():
                if hasattr(group, "outputs"):  # a fused product (_fusion_products)
                    stats["fused_products"] += 1
                    stats["products"].append("%s (%s)" % (group.text, group.backend))
                    continue
                stats["fused_kernels"] += 1
                stats["fused_nodes"] += len(group.members)
                stats["fused"].append("%s (%s)" % (group.text, group.backend))
            graph = getattr(plan, "graph", None)
            if graph is None:
                continue
            stats["captures"] += graph.captures
            stats["replays"] += graph.replays
            stats["eager_runs"] += graph.eager_runs
            if graph.segments:
                stats["segments"].append(graph.segments)
            if graph.note:
                stats["notes"].append(graph.note)
        return stats


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
    An ``sgd_update_op`` node (last in the order) has no buffer: its call updates the fed
    arrays of its parameters (``inplace``), which are always read where they are.
    """

    def __init__(self, eval_nodes, order, shapes, fed, ctx, cuda_graph=False, fuse=False):
        self.eval_nodes = eval_nodes
        self.ctx = ctx
        self.bound = {node: None for node in order if node in fed}
        self.slots = {node: [] for node in self.bound}
        self.staging = {}
        self.arrays = {}
        self.calls = []
        self.groups = {}  # root -> a fused chain (_fusion.Group) or product (_fusion_products)
        self.reads = {}  # node -> the inputs it reads instead of node.inputs (fused products)
        self.updates = {}  # sgd_update_op node -> its _fuse_multi.Update
        self.inplace = set()  # the fed parameters that the updates write
        # functions of calls that never go into a CUDA graph: the graph is cut there (segments)
        self.eager = frozenset()
        ops = [node.op for node in order if node not in fed]
        if fuse:  # a chain's members have no buffer or call of their own: its root runs it
            from . import _fusion
            self.groups, self.reads = _fusion.fused_groups(order, fed, eval_nodes, shapes, ctx)
            folded = {n for g in self.groups.values() for n in g.members if n is not g.root}
            order = [node for node in order if node not in folded]
        inputs_of = {node: self.groups[node].inputs if node in self.groups
                     else self.reads.get(node, node.inputs) for node in order}
        # fed nodes read as float32 whatever is fed -> who reads them so (for the message)
        self.float32_feeds = {i: "a fused %s" % ("product" if hasattr(g, "outputs") else "chain")
                              for g in self.groups.values() for i in g.inputs if i in fed}
        last_use = {}
        for i, node in enumerate(order):
            for inp in inputs_of[node]:
                last_use[inp] = i
        for node in eval_nodes:
            last_use[node] = len(order)
        free = collections.defaultdict(list)
        pooled = set()
        for i, node in enumerate(order):
            if node in fed:
                continue
            if is_update(node):
                self._add_update(node, fed, shapes, fuse)
                continue
            shape = shapes[node]
            if node.op.constant:
                out = self.arrays[node] = dlarray.empty(shape, ctx)
                fn, args = node.op.kernel(node, [], out)
                fn(*args)
                continue
            group = self.groups.get(node)
            dying = [inp for inp in dict.fromkeys(inputs_of[node])
                     if inp in pooled and last_use[inp] == i]
            # A fused kernel reads its inputs through restrict pointers: never in place.
            inplace = node.op.inplace and group is None
            reusable = [inp for inp in dying if inplace and shapes[inp] == shape]
            # the nodes whose buffers the call writes (a fused product may write two)
            outputs = getattr(group, "outputs", None) or [node]
            if reusable:
                outs = [self.arrays[reusable[0]]]
                dying.remove(reusable[0])
            else:
                outs = [free[shapes[o]].pop() if free[shapes[o]] else dlarray.empty(shapes[o], ctx)
                        for o in outputs]
            for inp in dying:
                free[shapes[inp]].append(self.arrays[inp])
            for o, out in zip(outputs, outs):
                self.arrays[o] = out
                pooled.add(o)
            inputs = [_FeedSlot(inp) if inp in fed else self.arrays[inp]
                      for inp in inputs_of[node]]
            if group is not None:
                fn, args = group.run, inputs + outs
            else:
                fn, args = node.op.kernel(node, inputs, out)
            self._add_call(fn, args)
        self.owned = {id(array) for array in self.arrays.values()}
        self.graph = None
        if cuda_graph and dlarray.is_gpu_ctx(ctx):
            from ._cuda_graph import GraphRunner
            self.graph = GraphRunner(self, ops)

    def _add_call(self, fn, args):
        for j, arg in enumerate(args):
            if isinstance(arg, _FeedSlot):
                self.slots[arg.node].append((args, j))
        self.calls.append((fn, args))

    def _add_update(self, node, fed, shapes, fuse):
        """The call of an sgd_update_op node: one multi-tensor kernel per 64 parameters (two
        ops per parameter without ``fuse``), prepared now."""
        from .. import _fuse_multi
        params, grads = SGDUpdateOp.pairs(node)
        update = self.updates[node] = _fuse_multi.Update(
            [shapes[p] for p in params], np.float32, self.ctx, node.const_attr, fuse)
        self.inplace.update(params)
        for i in node.inputs:
            if i in fed:
                self.float32_feeds.setdefault(i, "sgd_update_op")
        count = len(params)

        def call(*arrays):
            update(arrays[:count], arrays[count:])
        self._add_call(call, [_FeedSlot(i) if i in fed else self.arrays[i] for i in node.inputs])

    def check_inplace(self, feed_dict):
        """Refuses feeds of updated parameters that would not be updated where the caller
        sees them (a NumPy array or the executor's own array, copied into a buffer), or that
        the update cannot write (a view; one array for two parameters)."""
        seen = {}
        for node in self.inplace:
            value = feed_dict[node]
            if isinstance(value, np.ndarray) or id(value) in self.owned:
                raise ValueError("feed for node '%s': sgd_update_op updates it in place, so feed "
                                 "an NDArray of your own on %s (not a NumPy array, nor an array "
                                 "the executor returned)" % (node.name, self.ctx))
            if not value.is_contiguous:
                raise ValueError("feed for node '%s': sgd_update_op updates it in place and "
                                 "needs a contiguous NDArray, got a strided view" % node.name)
            other = seen.setdefault(id(value), node)
            if other is not node:
                raise ValueError("feed for nodes '%s' and '%s': one NDArray for two parameters "
                                 "of sgd_update_op" % (other.name, node.name))

    def bind(self, node, array):
        """Makes the plan's calls read ``array`` for the fed ``node``."""
        if array is not self.bound[node]:
            reader = self.float32_feeds.get(node)
            if reader is not None and array.dtype != np.float32:
                raise TypeError("feed for node '%s': %s reads it as float32, got %s (feed "
                                "float32, or make the Executor with fuse=False)"
                                % (node.name, reader, array.dtype))
            for args, j in self.slots[node]:
                args[j] = array
            self.bound[node] = array

    def stage(self, node, value):
        """Copies a fed value into the plan's own buffer for ``node`` (made at first use)."""
        array = self.staging.get(node)
        if array is None:
            array = self.staging[node] = dlarray.empty(value.shape, self.ctx)
        array[:] = value
        return array

    def run(self, feed_dict):
        if self.inplace:
            self.check_inplace(feed_dict)
        if self.graph is not None:
            self.graph.run(feed_dict)
        else:
            for node, value in feed_dict.items():
                if node not in self.bound:
                    continue
                if isinstance(value, np.ndarray) or id(value) in self.owned:
                    self.bind(node, self.stage(node, value))
                else:
                    self.bind(node, value)
            for fn, args in self.calls:
                fn(*args)
        return [self.bound[node] if node in self.bound else self.arrays.get(node)
                for node in self.eval_nodes]
