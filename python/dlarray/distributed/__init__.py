"""Collectives across processes: on GPUs through NCCL (one process per GPU), on CPU arrays through
MPI (one process per CPU rank), on one host or several.

    # python -m dlarray.distributed.run --nproc-per-node 2 train.py
    import dlarray, dlarray.distributed as dist
    dist.init_process_group()                 # RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/PORT
    x = dlarray.array(grad, dist.get_device())
    dist.all_reduce(x, op="mean")             # in place, on the GPU's stream, asynchronous
    dist.destroy_process_group()

CPU arrays (and OpenCL arrays, staged through the host) go through MPI instead: the CPU plugin's
"dlarray.mpi.v1" extension opens Open MPI's libmpi.so.40 at the first CPU group (see
:func:`mpi_library`); ``mpirun -n N python train.py`` and ``srun`` work as they are (ranks from
``OMPI_COMM_WORLD_*``, ``PMI_*``, ``SLURM_*``), and ``python -m dlarray.distributed.run --device
cpu`` starts them through mpirun. The device is ``device=``, else ``DLARRAY_DIST_DEVICE``, else
the GPU ``LOCAL_RANK`` when this process sees a GPU, else the CPU. MPI collectives return when
this rank's part is done.

NCCL is reached through the CUDA plugin (the "dlarray.nccl.v1" device extension) and opened at
:func:`init_process_group` (or :func:`nccl_library`): from ``DLARRAY_NCCL_LIBRARY`` when set,
else the nvidia-nccl wheel, the loader's path, the CUDA toolkit. Without a GPU or without NCCL
the calls raise a RuntimeError that says so (and where NCCL was looked for); importing this
module never fails.

Collectives run on the stream of the group's GPU, after the ops already queued there, and
return without waiting, like every other op; ``dlarray.synchronize(device)`` or ``asnumpy()``
waits. A failure of any rank ends the group on every rank with :class:`DistributedError`
within the timeouts documented in the README ("Several GPUs and hosts").
"""

from __future__ import annotations

import atexit
import os
import sys
import zlib
from typing import Optional, Sequence

from .. import _core
from .._core import DLContext, NDArray
from . import _group, _mpi, _nccl, _peer
from ._buckets import GradientBuckets
from ._peer import _use_peer_all_reduce, collective_stats  # noqa: F401 - the benches switch
from .rendezvous import DistributedError, RendezvousTimeout

__all__ = [
    "DistributedError", "GradientBuckets", "RendezvousTimeout", "all_gather", "all_reduce",
    "all_reduce_coalesced", "barrier", "broadcast", "collective_stats", "destroy_process_group",
    "get_device",
    "get_rank", "get_world_size", "host_barrier", "init_process_group", "is_initialized",
    "mpi_library", "nccl_library", "reduce_scatter",
]

DEFAULT_TIMEOUT = 300.0
DEFAULT_EXIT_GRACE = 30.0
DEFAULT_MASTER_ADDR = "127.0.0.1"
DEFAULT_MASTER_PORT = 29500

_OPS = {"sum": 0, "prod": 1, "max": 2, "min": 3, "mean": 4, "avg": 4}
_DEVICES = {"cpu": 1, "gpu": 2, "cuda": 2, "opencl": 4}
_DEBUG_BYTES = 256  # each rank's description of a collective in debug mode

_group_state = None
_hooks_installed = False
_exiting_with_exception = None


def _env_int(name, value, what):
    if value is not None:
        given = value
    else:
        given = os.environ.get(name)
        if given is None or given.strip() == "":
            return None
    try:
        return int(given)
    except (TypeError, ValueError):
        source = "%s=%r" % (name, given) if value is None else "%s %r" % (what, given)
        raise ValueError("%s must be an integer, got %s" % (what, source)) from None


def _env_float(name, value, default):
    if value is not None:
        return float(value)
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        return float(text)
    except ValueError:
        raise ValueError("%s must be a number of seconds, got %r" % (name, text)) from None


def init_process_group(rank: Optional[int] = None, world_size: Optional[int] = None, *,
                       master_addr: Optional[str] = None, master_port: Optional[int] = None,
                       device: Optional[DLContext] = None, timeout: Optional[float] = None) -> None:
    """Joins this process to a group of ``world_size`` processes, one GPU (or CPU rank) each.

    Arguments not given come from the environment that ``python -m dlarray.distributed.run``
    (or torchrun) sets: ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK`` (the GPU), ``MASTER_ADDR``
    (default 127.0.0.1), ``MASTER_PORT`` (default 29500); without ``RANK``/``WORLD_SIZE``,
    from ``mpirun``'s or ``srun``'s (``OMPI_COMM_WORLD_*``, ``PMI_*``, ``PMIX_*``,
    ``SLURM_*``). Rank 0 listens on that port; the others connect, receive the NCCL unique id
    (or the MPI port joining several MPI jobs), and every rank creates its communicator. One MPI
    job holding every rank needs no ``MASTER_ADDR``: rank 0 sends its address over MPI.

    Parameters
    ----------
    rank : int, optional
        This process's rank in ``[0, world_size)``; default ``RANK``.
    world_size : int, optional
        Number of processes; default ``WORLD_SIZE``.
    master_addr : str, optional
        Rank 0's host; default ``MASTER_ADDR`` or 127.0.0.1.
    master_port : int, optional
        Rank 0's port; default ``MASTER_PORT`` or 29500.
    device : DLContext, optional
        This rank's GPU (NCCL), or ``dlarray.cpu()`` / an OpenCL device (MPI); default
        ``DLARRAY_DIST_DEVICE``, else ``dlarray.gpu(LOCAL_RANK)`` when this process sees a GPU,
        else ``dlarray.cpu()`` (``LOCAL_RANK`` defaults to rank).
    timeout : float, optional
        Seconds the rendezvous, barriers, :func:`destroy_process_group` and each collective
        may wait for the other ranks; default ``DLARRAY_DIST_TIMEOUT`` or 300.

    Raises
    ------
    ValueError
        For a bad rank, world size, port or device (missing ones name the variable to set), or a
        world size the MPI job's ranks do not make up.
    RuntimeError
        When there is no GPU, the GPU does not exist, or NCCL (MPI for CPU arrays) was not
        found (it says where it looked); also when a group is already initialised.
    RendezvousTimeout
        When the ranks did not all join within the timeout (names the missing ranks).
    DistributedError
        When another rank failed meanwhile, or NCCL could not create the communicator.
    """
    global _group_state
    if _group_state is not None:
        raise RuntimeError("dlarray.distributed is already initialised (rank %d of %d): call "
                           "destroy_process_group() first" % (_group_state.rank,
                                                              _group_state.world_size))
    world_size = _env_int("WORLD_SIZE", world_size, "world_size")
    rank = _env_int("RANK", rank, "rank")
    launched = _mpi.launcher_ranks()  # mpirun / srun: they say who is who
    if launched is not None and (rank is None or world_size is None):
        rank = launched[0] if rank is None else rank
        world_size = launched[1] if world_size is None else world_size
    if world_size is None or rank is None:
        missing = [n for n, v in (("rank", rank), ("world_size", world_size)) if v is None]
        raise ValueError("init_process_group: %s not given and %s not set: start the script "
                         "with python -m dlarray.distributed.run, or pass them"
                         % (" and ".join(missing),
                            " and ".join(n.upper() for n in missing)))
    if world_size < 1:
        raise ValueError("world_size must be at least 1, got %d" % world_size)
    if not 0 <= rank < world_size:
        raise ValueError("rank must be in [0, %d), got %d" % (world_size, rank))
    local_rank = _env_int("LOCAL_RANK", None, "LOCAL_RANK")
    if local_rank is None:
        local_rank = launched[2] if launched is not None else rank
    address_given = bool(master_addr or os.environ.get("MASTER_ADDR") or master_port
                         or os.environ.get("MASTER_PORT"))
    host = master_addr or os.environ.get("MASTER_ADDR") or DEFAULT_MASTER_ADDR
    port = _env_int("MASTER_PORT", master_port, "master_port")
    port = DEFAULT_MASTER_PORT if port is None else port
    if not 0 < port < 65536:
        raise ValueError("master_port must be in [1, 65535], got %d" % port)
    timeout = _env_float("DLARRAY_DIST_TIMEOUT", timeout, DEFAULT_TIMEOUT)
    if timeout <= 0:
        raise ValueError("timeout must be positive, got %g" % timeout)
    exit_grace = _env_float("DLARRAY_DIST_EXIT_GRACE", None, DEFAULT_EXIT_GRACE)
    if device is None:
        device = _default_device(local_rank)
    elif not isinstance(device, _core.DLContext):
        raise TypeError("device must be a DLContext such as dlarray.gpu(0), got %s"
                        % type(device).__name__)
    # Everything that can fail alone fails before any other rank waits for this one.
    _group._check_device(device)
    peer = (False, 0)
    if _group._backend_for(device) == "mpi":
        _group._open_mpi()
    else:
        peer = _peer.peer_config()
        _group._open_nccl()
    group = _group.ProcessGroup(rank, world_size, device, timeout, exit_grace)
    group.peer = peer
    group.debug = os.environ.get("DLARRAY_DIST_DEBUG", "").strip() not in ("", "0")
    group.direct = not group.debug and not group.staged  # no check, no host copies: _run's work
    try:
        group.start(host, port, address_given)
    except BaseException:
        group.destroy(graceful=False)
        raise
    if group.direct and group.host_only:
        group.fast_all_reduce = group.comm.fast_all_reduce(_OPS)
    _group_state = group
    _install_hooks()


def _default_device(local_rank):
    """DLARRAY_DIST_DEVICE's device, else the GPU local_rank when there is a GPU, else the CPU."""
    name = os.environ.get("DLARRAY_DIST_DEVICE", "").strip().lower()
    if name:
        if name not in _DEVICES:
            raise ValueError("DLARRAY_DIST_DEVICE must be one of %s, got %r"
                             % (", ".join(sorted(_DEVICES)), name))
        kind = _DEVICES[name]
    else:
        kind = 2 if _core.device_count(2) > 0 else 1
    return _core.DLContext(0 if kind == 1 else local_rank, kind)


def _run(group, what, method, inputs, outputs, args=(), describe=(), as_list=False):
    """Runs comm.<method>(*inputs, *outputs, *args) through the group (the outputs as one list
    with as_list). A device whose collectives go through the host (OpenCL) gets host copies, and
    its outputs are copied back. In debug mode (DLARRAY_DIST_DEBUG) the ranks first compare what
    each passes (``describe``: a (name, value) pair that must agree besides the arrays)."""
    if group.debug:
        _agree(group, what, list(inputs) + list(outputs), describe)
    if group.staged:
        host, copies = _core.DLContext(0, 1), {}
        for a in (*inputs, *outputs):  # an array both read and written is copied once
            if id(a) not in copies:
                copies[id(a)] = a.copyto(host)
        staged_in = [copies[id(a)] for a in inputs]
        staged_out = [copies[id(a)] for a in outputs]
    else:
        staged_in, staged_out = inputs, outputs
    if as_list:
        group.call(what, method, list(staged_out), *args)
    else:
        group.call(what, method, *staged_in, *staged_out, *args)
    if group.staged:
        for a, h in zip(outputs, staged_out):
            h.copyto(a)


def _agree(group, what, arrays, describe):
    """Debug mode: every rank sends a description of its call (dtypes, shapes, op) to every
    other; a difference raises ValueError on every rank, naming each rank's call. Costs one
    all-gather of 256 bytes per rank and a wait, per collective."""
    import numpy as np
    from .. import ndarray
    text = "%s %s%s" % (what, ", ".join("%s%s" % (a.dtype, tuple(a.shape)) for a in arrays),
                        " %s %s" % describe if describe else "")
    data = text.encode()
    if len(data) > _DEBUG_BYTES:
        data = data[:_DEBUG_BYTES - 12] + b" #%08x" % zlib.crc32(data)
    mine = np.zeros(_DEBUG_BYTES, np.uint8)
    mine[:len(data)] = np.frombuffer(data, np.uint8)
    where = _core.DLContext(0, 1) if group.staged else group.device
    send = ndarray.array(mine, where, dtype="uint8")
    recv = _core.empty((group.world_size * _DEBUG_BYTES,), where, "uint8")
    group.call(what + " (debug check)", "all_gather", send, recv)
    rows = recv.asnumpy().reshape(group.world_size, _DEBUG_BYTES)
    if (rows == rows[0]).all():
        return
    calls = ["rank %d: %s" % (r, bytes(rows[r]).rstrip(b"\0").decode(errors="replace"))
             for r in range(group.world_size)]
    raise ValueError("%s: the ranks called it differently (DLARRAY_DIST_DEBUG): %s"
                     % (what, "; ".join(calls)))


def _require():
    if _group_state is None:
        raise RuntimeError("dlarray.distributed is not initialised: call init_process_group()")
    return _group_state


def _check_arrays(group, what, *arrays):
    for a in arrays:
        if not isinstance(a, _core.NDArray):
            raise TypeError("%s: expected an NDArray, got %s" % (what, type(a).__name__))
        # A CPU group's communicator checks itself that arrays are in host memory (the device
        # property costs a microsecond, as much as a small MPI all-reduce).
        if not group.host_only and a.ctx != group.device:
            raise ValueError("%s: the array is on %r but this rank's process group uses %r"
                             % (what, a.ctx, group.device))


def _check_writable(what, name, a):
    # Checked before the group is looked at: a collective writes straight into the array.
    if isinstance(a, _core.NDArray) and a.readonly:
        raise ValueError("%s: %s is read-only (it shares the memory of a read-only source) "
                         "and the collective writes into it: pass a writable array"
                         % (what, name))


def _op(op):
    try:
        return _OPS[op]
    except (KeyError, TypeError):
        raise ValueError("op must be one of %s, got %r"
                         % (", ".join(sorted(set(_OPS) - {"avg"})), op)) from None


def is_initialized() -> bool:
    """Whether this process is in a process group."""
    return _group_state is not None


def get_rank() -> int:
    """This process's rank (raises RuntimeError before :func:`init_process_group`)."""
    return _require().rank


def get_world_size() -> int:
    """The number of processes in the group (raises RuntimeError before init)."""
    return _require().world_size


def get_device() -> DLContext:
    """This rank's device (its GPU, or the CPU), a DLContext (raises RuntimeError before init)."""
    return _require().device


def nccl_library() -> tuple[str, str]:
    """The NCCL library dlarray uses, opening it if needed.

    Returns
    -------
    tuple of (str, str)
        Its path and version, e.g. ``("/usr/lib/x86_64-linux-gnu/libnccl.so.2", "2.28.9")``.

    Raises
    ------
    RuntimeError
        Without a GPU, or when NCCL was not found (the message lists where it looked).
    """
    return _nccl.load()


def mpi_library() -> tuple[str, str]:
    """The MPI library dlarray uses for CPU arrays, opening it (and initialising MPI) if needed.

    Returns
    -------
    tuple of (str, str)
        Its path and version line, e.g. ``("/usr/lib/x86_64-linux-gnu/libmpi.so.40",
        "Open MPI v4.1.4, package: Debian OpenMPI, ...")``.

    Raises
    ------
    RuntimeError
        When MPI was not found (the message says what to install and where it looked).
    """
    return _mpi.load()


def all_reduce(array: NDArray, op: str = "sum") -> NDArray:
    """Reduces ``array`` over the ranks, in place: every rank ends with the same result.

    Parameters
    ----------
    array : NDArray
        On this rank's device; same shape and dtype on every rank.
    op : str
        ``"sum"``, ``"mean"``, ``"max"``, ``"min"`` or ``"prod"``.

    Returns
    -------
    NDArray
        ``array`` (on a GPU queued on its stream, not waited for; on MPI done).

    Raises
    ------
    ValueError, TypeError
        Wrong device, unknown op, unsupported dtype, a read-only array.
    DistributedError
        When the group failed.
    """
    group = _group_state
    fast = group.fast_all_reduce if group is not None else None
    if fast is not None:  # a CPU group: one C++ call checks what the lines below do, and runs it
        try:
            if fast(array, op):
                return array
        except (ValueError, TypeError):
            raise
        except RuntimeError as e:
            raise group.failed("all_reduce", e) from e
    _check_writable("all_reduce", "array", array)
    group = _require()
    _check_arrays(group, "all_reduce", array)
    code = _op(op)
    if group.direct:  # the common case, a few microseconds sooner on the GPU's stream
        group.call("all_reduce", "all_reduce", array, array, code)
    else:
        _run(group, "all_reduce", "all_reduce", (array,), (array,), (code,), ("op", op))
    return array


def all_reduce_coalesced(arrays: Sequence[NDArray], op: str = "sum") -> list[NDArray]:
    """All-reduces several arrays in place in one NCCL group: one launch instead of one per
    array (what data-parallel training does with its gradients).

    Parameters
    ----------
    arrays : sequence of NDArray
        On this rank's device; the same list, in the same order, on every rank.
    op : str
        As in :func:`all_reduce`.

    Returns
    -------
    list of NDArray
        ``arrays``.

    Raises
    ------
    ValueError, TypeError, DistributedError
        As :func:`all_reduce`.
    """
    arrays = list(arrays)
    for i, a in enumerate(arrays):
        _check_writable("all_reduce_coalesced", "arrays[%d]" % i, a)
    group = _require()
    _check_arrays(group, "all_reduce_coalesced", *arrays)
    code = _op(op)
    if arrays:
        _run(group, "all_reduce_coalesced", "all_reduce_group", (), arrays, (code,),
             ("op", op), as_list=True)
    return arrays


def broadcast(array: NDArray, src: int = 0) -> NDArray:
    """Copies rank ``src``'s ``array`` into ``array`` on every rank, in place.

    Parameters
    ----------
    array : NDArray
        On this rank's device; same shape and dtype on every rank.
    src : int
        The rank whose data is sent.

    Returns
    -------
    NDArray
        ``array``.

    Raises
    ------
    ValueError, TypeError, DistributedError
        As :func:`all_reduce`; ValueError for ``src`` outside the group.
    """
    _check_writable("broadcast", "array", array)
    group = _require()
    _check_arrays(group, "broadcast", array)
    if not isinstance(src, int) or not 0 <= src < group.world_size:
        raise ValueError("broadcast: src must be a rank in [0, %d), got %r"
                         % (group.world_size, src))
    _run(group, "broadcast", "broadcast", (array,), (array,), (src,), ("src", src))
    return array


def all_gather(array: NDArray, out: Optional[NDArray] = None) -> NDArray:
    """Concatenates every rank's ``array`` along axis 0, in rank order, on every rank.

    Parameters
    ----------
    array : NDArray
        On this rank's device; same shape and dtype on every rank. A 0-d array counts as one row.
    out : NDArray, optional
        Shape ``(world_size * array.shape[0], *array.shape[1:])``; made when not given.

    Returns
    -------
    NDArray
        ``out``.

    Raises
    ------
    ValueError, TypeError, DistributedError
        As :func:`all_reduce`; ValueError when ``out`` has the wrong shape.
    """
    _check_writable("all_gather", "out", out)
    group = _require()
    _check_arrays(group, "all_gather", array)
    shape = tuple(array.shape) or (1,)
    want = (group.world_size * shape[0],) + shape[1:]
    if out is None:
        out = _core.empty(want, group.device, array.dtype)
    else:
        _check_arrays(group, "all_gather", out)
        if tuple(out.shape) != want:
            raise ValueError("all_gather: out has shape %s but %d ranks of %s need %s"
                             % (tuple(out.shape), group.world_size, tuple(array.shape), want))
    _run(group, "all_gather", "all_gather", (array,), (out,))
    return out


def reduce_scatter(array: NDArray, op: str = "sum",
                   out: Optional[NDArray] = None) -> NDArray:
    """Reduces ``array`` over the ranks and gives rank r the r-th of ``world_size`` equal
    parts along axis 0.

    Parameters
    ----------
    array : NDArray
        On this rank's device; ``array.shape[0]`` divisible by the world size.
    op : str
        As in :func:`all_reduce`.
    out : NDArray, optional
        Shape ``(array.shape[0] // world_size, *array.shape[1:])``; made when not given.

    Returns
    -------
    NDArray
        ``out``.

    Raises
    ------
    ValueError, TypeError, DistributedError
        As :func:`all_reduce`; ValueError when axis 0 does not split evenly or ``out`` has
        the wrong shape.
    """
    _check_writable("reduce_scatter", "out", out)
    group = _require()
    _check_arrays(group, "reduce_scatter", array)
    code = _op(op)
    shape = tuple(array.shape)
    if not shape or shape[0] % group.world_size:
        raise ValueError("reduce_scatter: axis 0 of shape %s does not split into %d equal parts"
                         % (shape, group.world_size))
    want = (shape[0] // group.world_size,) + shape[1:]
    if out is None:
        out = _core.empty(want, group.device, array.dtype)
    else:
        _check_arrays(group, "reduce_scatter", out)
        if tuple(out.shape) != want:
            raise ValueError("reduce_scatter: out has shape %s, expected %s"
                             % (tuple(out.shape), want))
    _run(group, "reduce_scatter", "reduce_scatter", (array,), (out,), (code,), ("op", op))
    return out


def barrier() -> None:
    """Waits until every rank has reached this point and this rank's GPU has finished the work
    queued before it (an all-reduce on the GPU, then a wait).

    Raises
    ------
    DistributedError
        When the group failed, also while waiting.
    """
    group = _require()
    if group.backend == "mpi":
        group.call("barrier", "barrier")
        return
    flag = group.barrier_array()
    group.call("barrier", "all_reduce", flag, flag, _OPS["sum"])
    try:
        _core.synchronize(group.device)
    except RuntimeError as e:
        group.check()
        raise DistributedError("barrier: %s" % e) from e
    group.check()  # a peer failure aborts the all-reduce: the wait returns, the failure stays


def host_barrier(timeout: Optional[float] = None) -> None:
    """Waits until every rank has called ``host_barrier``, over the rendezvous's TCP connections:
    no GPU work, nothing queued is waited for (e.g. to keep the other ranks idle while one
    measures something alone).

    Parameters
    ----------
    timeout : float, optional
        Seconds to wait (default: the group's timeout).

    Raises
    ------
    RendezvousTimeout
        When not every rank arrived in time (the group then fails on every rank).
    DistributedError
        When the group failed.
    """
    group = _require()
    group.check()
    group.rendezvous.barrier("host_barrier", timeout=timeout)


def destroy_process_group() -> None:
    """Leaves the group: waits for this GPU's queued work and for every rank to get here, then
    frees the communicator. After a failure it only frees (and does not raise).

    Raises
    ------
    DistributedError
        When the other ranks did not all arrive within the timeout.
    """
    global _group_state
    group, _group_state = _group_state, None
    if group is not None:
        group.destroy(graceful=True)


def _install_hooks():
    """Reports an uncaught exception to the other ranks at once; ends the group at exit."""
    global _hooks_installed
    if _hooks_installed:
        return
    _hooks_installed = True
    previous = sys.excepthook

    def excepthook(kind, value, tb):
        global _exiting_with_exception
        _exiting_with_exception = "%s: %s" % (kind.__name__, value)
        group = _group_state
        if group is not None and group.failure is None:
            group.fail("uncaught %s" % _exiting_with_exception)
        previous(kind, value, tb)

    sys.excepthook = excepthook
    atexit.register(_at_exit)


def _at_exit():
    global _group_state
    group, _group_state = _group_state, None
    if group is None:
        return
    try:
        group.destroy(graceful=_exiting_with_exception is None)
    except DistributedError as e:
        print("dlarray.distributed: rank %d at exit: %s" % (group.rank, e), file=sys.stderr)
