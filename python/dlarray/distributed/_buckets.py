"""Gradient buckets: data-parallel training's all-reduces, started during the backward pass.

The arrays (a model's gradients, in the order the backward pass computes them) are split into
buckets of about ``bucket_mb`` megabytes, as PyTorch's DistributedDataParallel does (25 MB by
default): few enough collectives to keep each one efficient, small enough that the first ones
run while the backward pass still computes the others. ``start(b)`` starts bucket ``b``'s
all-reduce without waiting for it; ``wait()`` waits for every bucket started.

- On a GPU (NCCL) the collectives go on the communicator's side stream, each ordered after the
  kernels already queued on the GPU's stream (an event, not a host wait), so they overlap the
  kernels queued after them; ``wait()`` makes the GPU's stream wait for them, and returns at once.
  Small buckets on GPUs of one host go to the peer-memory kernel instead of NCCL; when every
  bucket does (:meth:`GradientBuckets.recordable`), the starts and the wait may be recorded into
  a CUDA graph with the ops around them (the side stream becomes a branch of the graph).
- On CPU arrays (MPI) each array's all-reduce is an ``MPI_Iallreduce``; ``wait()`` waits for
  them (``MPI_Wait``) on the host. MPI progresses them inside MPI calls, so the overlap depends
  on the MPI library's progress engine.
- OpenCL arrays (staged through the host) are reduced at ``start`` (no overlap).

Every rank must make the same buckets (same arrays, shapes, dtypes, order) and start them in the
same order: the executor's data-parallel mode does, since every rank runs the same plan.
"""

from __future__ import annotations

from typing import Sequence

from .._core import NDArray

DEFAULT_BUCKET_MB = 25.0


def split(sizes: Sequence[int], bucket_bytes: float) -> list[list[int]]:
    """Indices of ``sizes`` (bytes, in order) in consecutive buckets: a bucket closes once it
    holds ``bucket_bytes`` or more, so an array larger than that is a bucket of its own."""
    buckets: list[list[int]] = []
    current: list[int] = []
    held = 0
    for i, size in enumerate(sizes):
        current.append(i)
        held += size
        if held >= bucket_bytes:
            buckets.append(current)
            current, held = [], 0
    if current:
        buckets.append(current)
    return buckets


def check_bucket_mb(bucket_mb):
    """``bucket_mb`` as a float; ValueError/TypeError unless it is a positive number."""
    if isinstance(bucket_mb, bool) or not isinstance(bucket_mb, (int, float)):
        raise TypeError("bucket_mb must be a number of megabytes, got %s"
                        % type(bucket_mb).__name__)
    if not bucket_mb > 0:
        raise ValueError("bucket_mb must be positive, got %r" % (bucket_mb,))
    return float(bucket_mb)


class GradientBuckets:
    """All-reduces ``arrays`` in place over the process group's ranks, bucket by bucket: the
    executor's data-parallel mode (``ad.Executor(..., data_parallel=grads)``) for any arrays.

    ``buckets[b]`` lists bucket ``b``'s arrays (consecutive, about ``bucket_mb`` MB each);
    :meth:`start` starts one bucket without waiting (on a GPU on NCCL's side stream, after the
    work queued so far; on CPU arrays an ``MPI_Iallreduce`` per array), :meth:`wait` waits for
    every bucket started (on a GPU the GPU's stream waits, not the host). Every rank starts the
    same buckets in the same order, and leaves the arrays alone until :meth:`wait`.

    Parameters
    ----------
    arrays : sequence of NDArray
        On this rank's device, in the order they become ready (any dtypes the group's
        collectives take); the same on every rank.
    bucket_mb : float, optional
        Megabytes per bucket (default 25).
    op : str, optional
        The reduction, ``"mean"`` by default (each rank's mean gradient -> the global batch's).

    Raises
    ------
    RuntimeError
        Before ``init_process_group``.
    ValueError, TypeError
        An array on another device, a read-only array, a bad ``bucket_mb`` or ``op``.
    """

    def __init__(self, arrays: Sequence[NDArray], bucket_mb: float = DEFAULT_BUCKET_MB,
                 op: str = "mean") -> None:
        from . import _check_arrays, _check_writable, _op, _require
        self.group = _require()
        self.arrays = list(arrays)
        for i, a in enumerate(self.arrays):
            _check_writable("data-parallel buckets", "arrays[%d]" % i, a)
        _check_arrays(self.group, "data-parallel buckets", *self.arrays)
        self.op, self.code = op, _op(op)
        self.bucket_mb = check_bucket_mb(bucket_mb)
        sizes = [a.nbytes for a in self.arrays]
        self.buckets = [[self.arrays[i] for i in b]
                        for b in split(sizes, self.bucket_mb * 1024 * 1024)]
        self._requests: list[int] = []  # MPI requests started and not waited for
        self._on_side = False  # NCCL: collectives are going to the side stream

    def start(self, index: int, side: bool = True, params=None, scale: float = 0.0) -> None:
        """Starts one bucket's all-reduce; returns without waiting for it.

        Parameters
        ----------
        index : int
            The bucket, in ``[0, len(self))``: ``self.buckets[index]`` lists its arrays.
        side : bool, optional
            On a GPU: on the side stream (the default; the GPU's stream goes on); False, with no
            bucket on the side stream: on the GPU's stream (:meth:`finish`).
        params : list, optional
            The executor's data-parallel mode, where :meth:`recordable`: per array of the
            bucket, the parameter its SGD step updates (or None), which the bucket's peer kernel
            then updates by ``param += mean * scale`` right after the mean (all_reduce_sgd).
        scale : float, optional
            That step's ``-lr``.

        Raises
        ------
        DistributedError
            When the group failed.
        """
        from . import _agree, _run
        group, arrays = self.group, self.buckets[index]
        what = "data-parallel bucket %d" % index
        if group.debug:  # its all-gather is read on the host after the GPU's stream
            if self._on_side:
                self._on_side = False
                group.call(what, "set_stream", False)
            _agree(group, what, arrays, ("op", self.op))
        if group.staged:
            for a in arrays:
                _run(group, what, "all_reduce", (a,), (a,), (self.code,))
        elif group.backend == "mpi":
            for a in arrays:
                self._requests.append(group.call(what, "iall_reduce", a, a, self.code))
        else:
            if side and not self._on_side:
                group.call(what, "set_stream", True)
                self._on_side = True
            if params is None:
                group.call(what, "all_reduce_group", arrays, self.code)
            else:
                group.call(what, "all_reduce_sgd", arrays, list(params), float(scale))

    def wait(self) -> None:
        """Waits for every bucket started: on a GPU the GPU's stream waits (the host does not);
        on MPI the host waits until the results are in the arrays."""
        group = self.group
        if self._on_side:
            self._on_side = False
            group.call("data-parallel wait", "set_stream", False)
        requests, self._requests = self._requests, []
        for r in requests:
            group.call("data-parallel wait", "wait", r)

    def finish(self, index: int, params=None, scale: float = 0.0) -> None:
        """Waits for the buckets started, then all-reduces bucket ``index`` and waits for it too:
        for a last bucket with nothing left to overlap, whose all-reduce then goes on the GPU's
        own stream (no fork to the side stream and join back, which a CUDA graph pays for).

        Parameters
        ----------
        index : int
            The bucket, in ``[0, len(self))``.
        params : list, optional
            As :meth:`start`'s: the parameters its kernel steps (the executor's).
        scale : float, optional
            That step's ``-lr``.

        Raises
        ------
        DistributedError
            When the group failed.
        """
        self.wait()
        self.start(index, False, params, scale)
        self.wait()

    def recordable(self) -> bool:
        """Whether every bucket's all-reduce may be recorded into a CUDA graph, with the ops
        around it: each goes to the peer-memory kernel (``_peer.peer_takes``: GPU ranks on one
        host, small floating buckets), and the group is not in debug mode (whose checks run on
        the host). NCCL's collectives are never recorded."""
        from ._peer import peer_takes
        return not self.group.debug and all(peer_takes(self.group, b, self.op)
                                            for b in self.buckets)

    def __len__(self) -> int:
        """The number of buckets."""
        return len(self.buckets)
