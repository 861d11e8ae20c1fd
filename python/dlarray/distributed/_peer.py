"""The peer-memory all-reduce's Python side: its settings from the environment (the ranks agree
on them at init, in the CUDA plugin), which path the all-reduces took, and the benchmarks'
switch. The path itself: backends/cuda/peer_allreduce.h."""

import os

# All-reduces of at most this many bytes (a call's arrays together) take the peer-memory path
# where every rank is on this host and reaches every peer's GPU (CUDA IPC; one kernel reads
# every rank's buffer over NVLink: a launch, a barrier and the reads, about 5-10 us for 1 MB
# against NCCL's 40 us); larger ones go to NCCL, whose ring wins once bandwidth dominates.
# The crossover is for bench/distributed.py's table on 2 GPUs (peer vs nccl columns) to set;
# 4 MB is the estimate for NVLink (two 4 MB halves per rank are allocated). Tune with
# DLARRAY_PEER_ALLREDUCE_MAX_BYTES; DLARRAY_PEER_ALLREDUCE=0 turns the path off.
PEER_ALLREDUCE_MAX_BYTES = 4 << 20


def peer_config(environ=None):
    """The peer all-reduce's settings for this rank from the environment.

    Returns
    -------
    tuple of (bool, int)
        Whether it is enabled (``DLARRAY_PEER_ALLREDUCE``, 1 by default; off as well where
        ``NCCL_P2P_DISABLE`` forbids peer access) and its byte limit
        (``DLARRAY_PEER_ALLREDUCE_MAX_BYTES``, default :data:`PEER_ALLREDUCE_MAX_BYTES`; 0 is
        off). The ranks agree at init: the path is used only where every rank has it on, with
        the smallest limit.

    Raises
    ------
    ValueError
        For a value that is not 0/1, or not a byte count.
    """
    environ = os.environ if environ is None else environ
    switch = environ.get("DLARRAY_PEER_ALLREDUCE", "").strip()
    if switch not in ("", "0", "1"):
        raise ValueError("DLARRAY_PEER_ALLREDUCE must be 0 (off) or 1 (on), got %r" % switch)
    text = environ.get("DLARRAY_PEER_ALLREDUCE_MAX_BYTES", "").strip()
    max_bytes = PEER_ALLREDUCE_MAX_BYTES
    if text:
        try:
            max_bytes = int(text)
        except ValueError:
            max_bytes = -1
        if max_bytes < 0:
            raise ValueError("DLARRAY_PEER_ALLREDUCE_MAX_BYTES must be a byte count (an integer "
                             ">= 0), got %r" % text)
    p2p_off = environ.get("NCCL_P2P_DISABLE", "").strip() not in ("", "0")
    return switch != "0" and not p2p_off and max_bytes > 0, max_bytes


def collective_stats() -> dict:
    """Which path this rank's all-reduces took (GPU groups; zeros on MPI).

    Returns
    -------
    dict
        ``peer_all_reduce``: calls through peer memory (one kernel over CUDA IPC mappings, for
        small arrays on one host; :data:`PEER_ALLREDUCE_MAX_BYTES`),
        ``nccl_all_reduce``: calls that went to NCCL (a group of arrays counts once; barriers
        are all-reduces too), ``peer_enabled``: whether the ranks set the peer path up at init,
        ``peer_max_bytes``: its agreed byte limit.

    Raises
    ------
    RuntimeError
        Before :func:`init_process_group`.
    """
    from . import _require
    group = _require()
    stats = getattr(group.comm, "peer_stats", None) if group.backend == "nccl" else None
    peer, nccl, enabled, max_bytes = stats() if stats is not None else (0, 0, False, 0)
    return {"peer_all_reduce": peer, "nccl_all_reduce": nccl, "peer_enabled": bool(enabled),
            "peer_max_bytes": max_bytes}


def _use_peer_all_reduce(enabled: bool) -> None:
    """For benchmarks: switches this rank's use of the peer all-reduce set up at init on or off
    (off: NCCL serves every all-reduce). Every rank must switch between the same collectives."""
    from . import _require
    group = _require()
    configure = getattr(group.comm, "configure_peer", None) if group.backend == "nccl" else None
    if configure is not None:
        group.call("switching the peer all-reduce", "configure_peer", bool(enabled),
                   group.peer[1], group.timeout)


# What the peer kernel takes (backends/cuda/peer_allreduce.cc, Supports and TryAllReduce): the
# dtypes, and at most this many arrays a call.
_PEER_FLOATS = frozenset(("float16", "bfloat16", "float32", "float64"))
_PEER_INTS = frozenset(("int8", "int32", "int64", "uint8", "uint32", "uint64"))
_PEER_MAX_ARRAYS = 64


def peer_takes(group, arrays, op: str) -> bool:
    """Whether one all-reduce of ``arrays`` (a data-parallel bucket: same arrays on every rank)
    goes to the peer-memory kernel on this group: set up by every rank and switched on, one
    dtype the kernel takes with ``op`` (``mean`` on floating dtypes only), at most 64 arrays
    and the agreed byte limit in all. Such a call may be recorded into a CUDA graph; NCCL's may
    not (the CUDA plugin refuses)."""
    if group.backend != "nccl" or group.staged or not arrays or len(arrays) > _PEER_MAX_ARRAYS:
        return False
    stats = getattr(group.comm, "peer_stats", None)
    if stats is None:
        return False
    _calls, _nccl, enabled, max_bytes = stats()
    dtypes = {str(a.dtype) for a in arrays}
    if not enabled or len(dtypes) != 1 or sum(a.nbytes for a in arrays) > max_bytes:
        return False
    dtype = dtypes.pop()
    return dtype in _PEER_FLOATS or (op not in ("mean", "avg") and dtype in _PEER_INTS)
