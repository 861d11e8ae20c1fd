"""dlarray.distributed's CPU path: MPI, reached through the CPU plugin's "dlarray.mpi.v1"
extension and opened at the first CPU process group (never at import).

The library: ``DLARRAY_MPI_LIBRARY`` alone when set, else Open MPI's ``libmpi.so.40`` on the
loader's path. MPI is initialised then (unless mpi4py or the program did it already) and
finalized at exit, after the process group has ended cleanly; after a failure it is not
(``MPI_Finalize`` waits for every rank, and one is gone).

Who is who: ``RANK``/``WORLD_SIZE``/``LOCAL_RANK`` (the launcher's, torchrun's), else what
``mpirun``/``srun`` tell their processes (:func:`launcher_ranks`).
"""

import atexit
import os

from .. import _core

_state = {"loaded": None, "clean": True, "hooked": False}

# (rank, size, local rank) variables of the launchers that start MPI jobs, first match wins.
LAUNCHER_VARIABLES = (
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),  # Open MPI
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),  # MPICH's hydra, Intel MPI
    ("PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK"),  # PMIx launchers (prterun)
    ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),  # srun
)


def launcher_ranks(environ=None):
    """This process's (rank, world size, local rank) as an MPI launcher set them, or None.

    Parameters
    ----------
    environ : mapping, optional
        The environment (default ``os.environ``).

    Returns
    -------
    tuple of (int, int, int, str) or None
        Rank, size, local rank (the rank when not set) and the rank variable's name.
    """
    env = os.environ if environ is None else environ
    for rank_name, size_name, local_name in LAUNCHER_VARIABLES:
        rank, size = env.get(rank_name, "").strip(), env.get(size_name, "").strip()
        if not rank or not size:
            continue
        try:
            r, s = int(rank), int(size)
            local = int(env.get(local_name, "").strip() or r)
        except ValueError:
            raise ValueError("%s=%r / %s=%r are not integers"
                             % (rank_name, rank, size_name, size)) from None
        return r, s, local, rank_name
    return None


def load():
    """Opens MPI (once per process) and initialises it.

    Returns
    -------
    tuple of (str, str)
        The library's path and its version line, e.g. ``("/usr/lib/.../libmpi.so.40",
        "Open MPI v4.1.4, package: Debian OpenMPI")``.

    Raises
    ------
    RuntimeError
        When MPI was not found (the message says what to install and lists where it looked).
    """
    if _state["loaded"] is None:
        _state["loaded"] = tuple(_core.mpi_load([]))
        if not _state["hooked"]:
            _state["hooked"] = True
            atexit.register(_finalize)
    return _state["loaded"]


def mark_failed():
    """A group on MPI failed: MPI must not be finalized (a peer may never answer)."""
    _state["clean"] = False


def _finalize():
    if _state["loaded"] is not None and _state["clean"]:
        try:
            _core.mpi_finalize()
        except RuntimeError:
            pass
