"""What ``python -m dlarray.distributed.run --device cpu`` runs under mpirun: turns the MPI job's
rank into the group's (``RANK = GROUP_RANK * LOCAL_WORLD_SIZE + OMPI_COMM_WORLD_RANK``, and
``LOCAL_RANK``), then runs the script or module as ``__main__``, so the script sees the same
variables as a GPU rank does."""

import os
import runpy
import sys

from ._mpi import launcher_ranks


def main(argv):
    if len(argv) < 2 or argv[0] not in ("-m", "-s"):
        raise SystemExit("usage: python -m dlarray.distributed._mpi_child -m MODULE|-s SCRIPT ...")
    launched = launcher_ranks()
    if launched is None:
        raise SystemExit("dlarray.distributed._mpi_child runs under mpirun (no "
                         "OMPI_COMM_WORLD_RANK)")
    local, _size, local_rank, _name = launched
    per_node = int(os.environ["LOCAL_WORLD_SIZE"])
    os.environ["RANK"] = str(int(os.environ["GROUP_RANK"]) * per_node + local)
    os.environ["LOCAL_RANK"] = str(local_rank)
    kind, target, args = argv[0], argv[1], argv[2:]
    sys.argv = [target] + args
    if kind == "-m":
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
        runpy.run_path(target, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
