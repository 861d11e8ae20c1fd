#!/usr/bin/env python3
"""CPU ranks: dlarray.distributed.all_reduce (MPI, through the CPU plugin) against mpi4py's
``Allreduce`` on NumPy arrays, in the same processes and the same MPI library.

    mpirun -n 2 --oversubscribe python bench/mpi_allreduce.py [--json FILE]
    python -m dlarray.distributed.run --device cpu --nproc-per-node 2 bench/mpi_allreduce.py

Sizes 1 KB to 256 MB of float32, sum, in place for both (MPI_IN_PLACE). Each size runs
--repeats rounds; a round times a batch of calls of ours, then of mpi4py's, each batch between
barriers (so both see the same machine state), and the table gives the medians (bus bandwidth,
NCCL's measure: bytes / time x 2 (n - 1) / n) and ours / mpi4py (target >= 0.9). Needs mpi4py
(``pip install mpi4py``); without it the script says so and exits 0.
"""

import argparse
import json
import statistics
import sys
import time

try:
    from mpi4py import MPI  # first: it initialises MPI, and dlarray then uses the same
except ImportError:
    MPI = None

import numpy as np  # noqa: E402

import dlarray  # noqa: E402
import dlarray.distributed as dist  # noqa: E402

SIZES = [1 << k for k in range(10, 29, 2)]  # 1 KB, 4 KB, ... 256 MB


def label(nbytes):
    for unit, shift in (("GB", 30), ("MB", 20), ("KB", 10)):
        if nbytes >= 1 << shift:
            return "%d %s" % (nbytes >> shift, unit)
    return "%d B" % nbytes


def calls_for(nbytes):
    """Calls per batch: about 20 ms of traffic at a few GB/s, at least 3."""
    return max(3, min(2000, (64 << 20) // max(nbytes, 1) * 2 // 8 + 3))


def timed(fn, calls, comm):
    comm.Barrier()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="rounds per size (median)")
    parser.add_argument("--max-bytes", type=int, default=SIZES[-1])
    parser.add_argument("--json", help="save the table here (rank 0)")
    args = parser.parse_args(argv)
    if MPI is None:
        print("bench/mpi_allreduce.py: mpi4py is not installed (pip install mpi4py); skipped")
        return 0
    comm = MPI.COMM_WORLD
    dist.init_process_group(device=dlarray.cpu())
    rank, world = dist.get_rank(), dist.get_world_size()
    bus = 2.0 * (world - 1) / world
    rows = []
    for nbytes in [s for s in SIZES if s <= args.max_bytes]:
        ours = dlarray.array(np.zeros(nbytes // 4, np.float32), dlarray.cpu(), dtype="float32")
        theirs = np.zeros(nbytes // 4, np.float32)
        calls = calls_for(nbytes)
        for _ in range(2):  # warm up both (connections, pages)
            dist.all_reduce(ours)
            comm.Allreduce(MPI.IN_PLACE, theirs)
        t_ours, t_theirs = [], []
        for _ in range(args.repeats):
            t_ours.append(timed(lambda: dist.all_reduce(ours), calls, comm))
            t_theirs.append(timed(lambda: comm.Allreduce(MPI.IN_PLACE, theirs), calls, comm))
        a, b = statistics.median(t_ours), statistics.median(t_theirs)
        rows.append({"bytes": nbytes, "dlarray_us": a * 1e6, "mpi4py_us": b * 1e6,
                     "dlarray_GBps": nbytes * bus / a / 1e9, "mpi4py_GBps": nbytes * bus / b / 1e9,
                     "ratio": b / a})
        del ours, theirs
    if rank == 0:
        name, version = dist.mpi_library()
        print("all_reduce (sum, float32, in place), %d ranks, %s, median of %d rounds"
              % (world, version, args.repeats))
        print("%8s  %12s  %12s  %12s  %12s  %6s" % ("size", "dlarray us", "mpi4py us",
                                                  "dlarray GB/s", "mpi4py GB/s", "ratio"))
        for r in rows:
            print("%8s  %12.1f  %12.1f  %12.3f  %12.3f  %6.2f"
                  % (label(r["bytes"]), r["dlarray_us"], r["mpi4py_us"], r["dlarray_GBps"],
                     r["mpi4py_GBps"], r["ratio"]))
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"library": [name, version], "ranks": world, "rows": rows}, f,
                          indent=1)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
