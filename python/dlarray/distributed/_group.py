"""The process group: a rendezvous, a communicator (NCCL for GPUs, MPI for CPU arrays), and the
watchdog that keeps a failure from turning into a hang.

When any rank fails (its process ends, it raises, NCCL reports an error, or a collective waits
longer than the timeout), every rank's watchdog aborts its NCCL communicator at once, so GPU
waits return; every later collective raises :class:`DistributedError` with the reason. An MPI
call cannot be interrupted: a rank waiting inside one when the group fails prints the reason
and exits with code 1 at once. A process
still running ``DLARRAY_DIST_EXIT_GRACE`` seconds after that (default 30) is ended with exit
code 1, so that nothing keeps waiting for a peer that is gone.
"""

import os
import socket
import sys
import threading
import time

from .. import _core
from . import _mpi, _nccl
from .rendezvous import DistributedError, Rendezvous

_WATCH_SECONDS = 0.5   # how often the watchdog asks NCCL for asynchronous errors

# Seams for the tests, which run the group's logic on the CPU with a fake communicator.
def _open_nccl():
    return _nccl.load()


def _new_communicator(device_id, world_size, rank):
    return _core.NcclCommunicator(device_id, world_size, rank)


def _unique_id():
    return _core.nccl_unique_id()


def _backend_for(ctx):
    """"nccl" for GPUs; "mpi" for CPU arrays and devices staged through the host (OpenCL)."""
    return "nccl" if ctx.device_type == _GPU else "mpi"


def _open_mpi():
    return _mpi.load()


def _new_mpi_communicator(world_size, rank):
    return _core.MpiCommunicator(world_size, rank)


_GPU, _CPU, _OPENCL = 2, 1, 4


def _check_device(ctx):
    """Raises unless ctx is a usable GPU, the CPU, or an OpenCL device."""
    if ctx.device_type in (_CPU, _OPENCL):
        if ctx.device_type == _OPENCL and ctx not in _core.devices():
            raise RuntimeError("%r does not exist: this process sees %d OpenCL device(s)"
                               % (ctx, _core.device_count(_OPENCL)))
        return
    if ctx.device_type != _GPU:
        raise ValueError("dlarray.distributed runs on GPUs (NCCL) and CPU arrays (MPI): "
                         "device must be a gpu, cpu or opencl context, got %r" % (ctx,))
    if ctx in _core.devices():
        return
    count = _core.device_count(2)
    if count == 0:
        cuda = next((p for p in _core.plugins() if p["name"] == "cuda"), None)
        why = ("the CUDA plugin is not built" if cuda is None
               else "cuda plugin %s: %s" % (cuda["status"], cuda["reason"]))
        raise RuntimeError("dlarray.distributed needs a GPU (NCCL runs through the CUDA plugin), "
                           "and there is none: %s (for CPU arrays through MPI pass "
                           "device=dlarray.cpu() or set DLARRAY_DIST_DEVICE=cpu)" % why)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    raise RuntimeError(
        "cuda(%d) does not exist: this process sees %d GPU(s)%s (the device comes from "
        "LOCAL_RANK, or init_process_group(device=...))"
        % (ctx.device_id, count,
           "" if visible is None else ", CUDA_VISIBLE_DEVICES=%r" % visible))


def _own_address():
    """This host's address for the other ranks: its name's, unless that is a loopback address
    (Debian maps the host name to 127.0.1.1) while the MPI job spans other hosts; then the
    address of the interface of the default route (a UDP connect sends nothing)."""
    try:
        addr = socket.gethostbyname(socket.gethostname())
    except OSError:
        addr = "127.0.0.1"
    local, size = (os.environ.get("OMPI_COMM_WORLD_LOCAL_SIZE"),
                   os.environ.get("OMPI_COMM_WORLD_SIZE"))
    if not addr.startswith("127.") or (local is not None and local == size):
        return addr
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: only a route lookup
            return probe.getsockname()[0]
    except OSError:
        return addr


class ProcessGroup:
    """One rank's membership: rank, world size, device, rendezvous, communicator, watchdog."""

    def __init__(self, rank, world_size, device, timeout, exit_grace):
        self.rank, self.world_size, self.device = rank, world_size, device
        self.backend = _backend_for(device)
        self.debug = False  # DLARRAY_DIST_DEBUG: ranks compare each collective's arguments
        self.direct = False  # neither debug nor staged: collectives need none of _run's work
        self.staged = device.device_type == _OPENCL  # collectives on host copies
        self.host_only = device.device_type == _CPU and self.backend == "mpi"
        # all_reduce's common case in one C++ call (MpiCommunicator.fast_all_reduce), set by
        # init_process_group where it applies; None once the group failed or was destroyed.
        self.fast_all_reduce = None
        self.timeout, self.exit_grace = timeout, exit_grace
        self.failure = None
        self.comm = None
        self.peer = (False, 0)  # the peer all-reduce's (enabled, max_bytes): _peer.peer_config()
        self.rendezvous = None
        self.destroyed = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._watchdog = None
        self._barrier_array = None

    # -- failures ------------------------------------------------------------------------

    def on_failure(self, reason):
        """A rank failed (this one or another): abort NCCL, remember why, arm the exit timer."""
        with self._lock:
            if self.failure is not None or self.destroyed:
                return
            self.failure = reason
            self.fast_all_reduce = None  # later calls go through call(), which raises
        print("dlarray.distributed: rank %d: %s; aborting the %s communicator"
              % (self.rank, reason, self.backend.upper()), file=sys.stderr, flush=True)
        busy = False
        if self.backend == "mpi":
            _mpi.mark_failed()
        if self.comm is not None:
            try:
                busy = self.comm.abort() is True
            except Exception as e:  # noqa: BLE001 - the abort is best effort; the reason stands
                print("dlarray.distributed: rank %d: abort failed: %s" % (self.rank, e),
                      file=sys.stderr, flush=True)
        if busy:  # MPI: a call is waiting for a peer and cannot be stopped
            print("dlarray.distributed: rank %d: an MPI call is still waiting for the failed "
                  "rank(s) and cannot be interrupted; exiting with code 1" % self.rank,
                  file=sys.stderr, flush=True)
            try:
                sys.stdout.flush()
            finally:
                os._exit(1)
        if self.exit_grace >= 0:
            threading.Thread(target=self._exit_later, daemon=True,
                             name="dlarray-exit-%d" % self.rank).start()

    def fail(self, reason):
        """This rank fails: every rank hears ``reason``, this one included."""
        if self.rendezvous is not None:
            self.rendezvous.report_failure(reason)
        else:
            self.on_failure("rank %d failed: %s" % (self.rank, reason))

    def _exit_later(self):
        deadline = time.monotonic() + self.exit_grace
        while time.monotonic() < deadline:
            if self.destroyed:
                return
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
        if self.destroyed:
            return
        print("dlarray.distributed: rank %d: still running %g s after the process group failed "
              "(%s); exiting with code 1 (DLARRAY_DIST_EXIT_GRACE)"
              % (self.rank, self.exit_grace, self.failure), file=sys.stderr, flush=True)
        try:
            sys.stdout.flush()
        finally:
            os._exit(1)

    def check(self):
        """Raises DistributedError when the group has failed."""
        if self.failure is not None:
            raise DistributedError(self.failure)
        if self.destroyed:
            raise DistributedError("the process group was destroyed")

    def call(self, what, method, *args):
        """Runs comm.<method>(*args); communicator failures fail the whole group, argument
        errors do not."""
        if self.failure is not None or self.destroyed:
            self.check()
        try:
            return getattr(self.comm, method)(*args)
        except (ValueError, TypeError):
            raise
        except RuntimeError as e:
            raise self.failed(what, e) from e

    def failed(self, what, error):
        """The DistributedError to raise for a communicator's RuntimeError in ``what``; fails the
        group first (every rank hears it) unless it has failed already."""
        if self.failure is None:
            self.fail("%s failed: %s" % (what, error))
        return DistributedError(self.failure or str(error))

    # -- life ----------------------------------------------------------------------------

    def start(self, host, port, address_given=True):
        """Rendezvous and communicator; abortable by the rendezvous's failure reports."""
        if self.backend == "mpi":
            self._start_mpi(host, port, address_given)
        else:
            self._start_nccl(host, port)
        self.check()
        self._watchdog = threading.Thread(target=self._watch, daemon=True,
                                          name="dlarray-watchdog-%d" % self.rank)
        self._watchdog.start()

    def _init_comm(self, what, payload):
        """comm.init(payload) within the timeout; a failure fails the group."""
        limit = threading.Timer(self.timeout, self.fail, args=(
            "%s did not complete within %g s (DLARRAY_DIST_TIMEOUT)" % (what, self.timeout),))
        limit.daemon = True
        limit.start()
        try:
            self.comm.init(payload)
        except RuntimeError as e:
            if self.failure is not None:
                raise DistributedError(self.failure) from e
            self.fail("%s failed: %s" % (what, e))
            raise DistributedError(self.failure or str(e)) from e
        finally:
            limit.cancel()

    def _start_mpi(self, host, port, address_given):
        """One MPI job holding every rank (mpirun -n WORLD_SIZE): its world is the group, and
        the rendezvous (for liveness) meets at rank 0's address, sent over MPI unless given.
        Several jobs (the launcher's nodes): the rendezvous first, carrying rank 0's MPI port,
        through which the jobs join."""
        _job_rank, job_size = _core.mpi_world()
        if job_size > self.world_size or self.world_size % job_size:
            raise ValueError("world_size is %d but MPI_COMM_WORLD has %d ranks (mpirun -n / srun "
                             "-n), which do not make whole jobs of it: start as many ranks as "
                             "WORLD_SIZE says" % (self.world_size, job_size))
        self.comm = _new_mpi_communicator(self.world_size, self.rank)
        if job_size == self.world_size:
            self._init_comm("MPI init", b"")
            if not address_given:
                host, port = self._share_address()
            self.rendezvous = Rendezvous(self.rank, self.world_size, host, port, self.timeout,
                                         on_failure=self.on_failure)
            self.rendezvous.join(b"")
            return
        self.rendezvous = Rendezvous(self.rank, self.world_size, host, port, self.timeout,
                                     on_failure=self.on_failure)
        payload = self.rendezvous.join(_core.mpi_open_port if self.rank == 0 else b"")
        self._init_comm("joining the MPI jobs", payload)

    def _share_address(self):
        """Rank 0's address and a free port, broadcast over MPI (no MASTER_ADDR needed)."""
        import numpy as np
        from .. import ndarray
        text = b""
        if self.rank == 0:
            addr = _own_address()
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("", 0))
                text = ("%s %d" % (addr, s.getsockname()[1])).encode()
        buf = np.zeros(256, np.uint8)
        buf[:len(text)] = np.frombuffer(text, np.uint8)
        shared = ndarray.array(buf, _core.DLContext(0, _CPU), dtype="uint8")
        self.comm.broadcast(shared, shared, 0)
        addr, number = bytes(shared.asnumpy()).rstrip(b"\0").decode().split()
        return addr, int(number)

    def _start_nccl(self, host, port):
        self.comm = _new_communicator(self.device.device_id, self.world_size, self.rank)
        configure = getattr(self.comm, "configure_peer", None)  # the tests' fakes may lack it
        if configure is not None:
            configure(self.peer[0], self.peer[1], self.timeout)
        self.rendezvous = Rendezvous(self.rank, self.world_size, host, port, self.timeout,
                                     on_failure=self.on_failure)
        uid = self.rendezvous.join(_unique_id if self.rank == 0 else b"")
        # Every rank is alive and about to join: NCCL gets the same timeout to finish.
        self._init_comm("NCCL init", uid)

    def _watch(self):
        while not self._stop.wait(_WATCH_SECONDS):
            if self.failure is not None:
                return
            try:
                self.comm.async_error()
                waiting = self.comm.pending_seconds()
            except RuntimeError as e:
                if self.failure is None and not self._stop.is_set():
                    self.fail("NCCL reported an asynchronous error: %s" % e)
                return
            if waiting > self.timeout:
                self.fail("a collective has waited %.0f s for the other ranks (more than "
                          "DLARRAY_DIST_TIMEOUT=%g s): a rank skipped it, or is stuck"
                          % (waiting, self.timeout))
                return

    def barrier_array(self):
        """A one-element array on the group's device, for device barriers."""
        if self._barrier_array is None:
            self._barrier_array = _core.empty((1,), self.device)
        return self._barrier_array

    def destroy(self, graceful=True):
        """Ends the group: waits for every rank (unless failed or not graceful), then frees."""
        error = None
        try:
            if graceful and self.failure is None:
                _core.synchronize(self.device)
                self.rendezvous.barrier("destroy_process_group", final=True)
                self.comm.finalize()
        except (RuntimeError, OSError) as e:
            error = e
        finally:
            with self._lock:
                self.destroyed = True
                self.fast_all_reduce = None
            self._stop.set()
            if self._watchdog is not None and self._watchdog is not threading.current_thread():
                self._watchdog.join(timeout=2.0)
            if self.comm is not None:
                try:
                    self.comm.destroy()
                except RuntimeError as e:
                    error = error or e
            if self.rendezvous is not None:
                self.rendezvous.close()
            self._barrier_array = None
        if error is not None and self.failure is None:
            raise DistributedError("destroy_process_group failed on rank %d: %s"
                                   % (self.rank, error)) from error
