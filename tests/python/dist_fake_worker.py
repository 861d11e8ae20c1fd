"""One rank of a dlarray.distributed process group whose NCCL communicator is a fake on the CPU,
for test_distributed.py: the rendezvous, the watchdog and the failure handling are the real ones.

    RANK=0 WORLD_SIZE=2 MASTER_PORT=... python dist_fake_worker.py SCENARIO

The fake's collectives return at once, except in scenarios where they must wait for a peer:
there they block, like an NCCL kernel waiting for a dead rank, until the communicator is
aborted. Prints "RESULT <json>" lines that the tests read.
"""
import json
import os
import sys
import threading
import time

import numpy as np

import dlarray
import dlarray.distributed as dist
from dlarray.distributed import _group

SCENARIO = sys.argv[1]
RANK = int(os.environ["RANK"])
START = time.monotonic()


def report(**fields):
    fields.setdefault("rank", RANK)
    fields["elapsed"] = round(time.monotonic() - START, 3)
    print("RESULT " + json.dumps(fields), flush=True)


class FakeCommunicator:
    """Stands in for _core.NcclCommunicator."""

    def __init__(self, device_id, world_size, rank):
        self.rank, self.world_size = rank, world_size
        self.aborted = threading.Event()
        self.calls = []
        self.blocking = False

    def init(self, unique_id):
        assert unique_id == b"fake-id-" * 16, unique_id
        self.calls.append("init")
        if SCENARIO == "init_hangs" and self.rank == 1:  # as NCCL waiting for a lost peer
            if not self.aborted.wait(60):
                raise RuntimeError("fake init: still waiting after 60 s")
            raise RuntimeError("fake init: the communicator was aborted")

    def _collective(self, name):
        self.calls.append(name)
        if self.blocking:  # waits for a peer that never comes, as NCCL's kernel would
            if not self.aborted.wait(60):
                raise RuntimeError("fake %s: still waiting after 60 s" % name)
        if self.aborted.is_set():
            raise RuntimeError("fake %s: the communicator was aborted" % name)

    def all_reduce(self, send, recv, op):
        self._collective("all_reduce")

    def all_reduce_group(self, arrays, op):
        self._collective("all_reduce_group:%d" % len(arrays))

    def broadcast(self, send, recv, root):
        self._collective("broadcast")

    def all_gather(self, send, recv):
        self._collective("all_gather")

    def reduce_scatter(self, send, recv, op):
        self._collective("reduce_scatter")

    def async_error(self):
        if SCENARIO == "async_error" and self.rank == 1 and time.monotonic() - START > 1.0:
            raise RuntimeError("ncclRemoteError (fake: a peer's network failed)")

    def pending_seconds(self):
        return 1e6 if SCENARIO == "stuck_collective" and self.rank == 0 else 0.0

    def abort(self):
        self.calls.append("abort")
        self.aborted.set()

    def finalize(self):
        self.calls.append("finalize")

    def destroy(self):
        self.calls.append("destroy")


comms = []


def new_communicator(device_id, world_size, rank):
    comms.append(FakeCommunicator(device_id, world_size, rank))
    return comms[-1]


_group._check_device = lambda ctx: None
_group._backend_for = lambda ctx: "nccl"  # the fake stands in for NCCL on cpu arrays
_group._open_nccl = lambda: ("fake", "0.0.0")
_group._new_communicator = new_communicator
_group._unique_id = lambda: b"fake-id-" * 16


def wait_for_failure():
    """Blocks in a collective until a peer's failure aborts it; reports what was raised."""
    comms[0].blocking = True
    x = dlarray.empty((4,), dlarray.cpu())
    try:
        dist.all_reduce(x)
    except dist.DistributedError as e:
        report(error=str(e), kind=type(e).__name__, calls=comms[0].calls)
        raise SystemExit(5)
    report(error=None)


def main():
    dist.init_process_group(device=dlarray.cpu())
    if SCENARIO == "ok":
        x = dlarray.array(np.arange(6, dtype=np.float32), dlarray.cpu())
        dist.all_reduce(x, op="mean")
        dist.all_reduce_coalesced([x, x], op="max")
        dist.broadcast(x, src=1)
        gathered = dist.all_gather(x)
        scattered = dist.reduce_scatter(gathered)
        dist.barrier()
        dist.host_barrier(timeout=10)
        errors = []
        for call in (lambda: dist.all_reduce(x, op="median"),
                     lambda: dist.broadcast(x, src=5),
                     lambda: dist.reduce_scatter(dlarray.empty((3,), dlarray.cpu())),
                     lambda: dist.all_gather(x, out=dlarray.empty((5,), dlarray.cpu())),
                     lambda: dist.init_process_group()):
            try:
                call()
            except (ValueError, RuntimeError) as e:
                errors.append("%s: %s" % (type(e).__name__, e))
        dist.destroy_process_group()
        report(shapes=[list(gathered.shape), list(scattered.shape)], errors=errors,
               calls=comms[0].calls, initialized=dist.is_initialized())
    elif SCENARIO in ("peer_exits", "peer_raises", "rank0_exits"):
        quitter = 0 if SCENARIO == "rank0_exits" else 1
        if RANK == quitter:
            time.sleep(0.5)
            if SCENARIO == "peer_raises":
                raise ValueError("boom on rank %d" % RANK)
            os._exit(7)
        wait_for_failure()
    elif SCENARIO in ("async_error", "stuck_collective", "init_hangs"):
        wait_for_failure()
    elif SCENARIO == "exit_grace":
        if RANK == 1:
            time.sleep(0.5)
            os._exit(7)
        time.sleep(60)  # no collective: the watchdog must end this process itself
        report(error="still alive")
    elif SCENARIO == "exit_without_destroy":
        report(ok=True)  # the group is left at exit: atexit waits for every rank, then frees
    else:
        raise SystemExit("unknown scenario " + SCENARIO)


if __name__ == "__main__":
    main()
