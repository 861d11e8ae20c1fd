"""The TCP rendezvous of dlarray.distributed: rank 0 serves, every other rank connects.

Rank 0 listens on ``MASTER_ADDR:MASTER_PORT``; the other ranks connect (retrying until the
timeout), say who they are, and receive rank 0's payload (the NCCL unique id) once all
``world_size`` ranks have joined. The connections then stay open as a liveness channel:

- a rank whose connection closes (its process ended) or whose host stops answering (TCP
  keepalive: about 25 s) is reported to every other rank at once;
- a rank that fails on its own (an exception, an NCCL error) says so through
  :meth:`Rendezvous.report_failure`, and every rank hears it;
- :meth:`Rendezvous.barrier` waits for all ranks on the host (no GPU needed).

Every wait has a timeout: a rendezvous that does not complete raises
:class:`RendezvousTimeout` naming the ranks that never joined. Nothing here needs NCCL or a
GPU, so it is tested on loopback. The same code runs across hosts: give rank 0's address.
"""

import base64
import os
import selectors
import socket
import threading
import time

from ._wire import Connection, is_loopback

__all__ = ["DistributedError", "Rendezvous", "RendezvousTimeout"]

PROTOCOL = "dlarray-rendezvous-1"
_HELLO_SECONDS = 10.0     # a connection must introduce itself within this
_POLL_SECONDS = 0.25      # how often the monitor thread looks at its stop flag


class DistributedError(RuntimeError):
    """A process group failed: a peer exited, NCCL reported an error, a wait timed out.

    Parameters
    ----------
    message : str
        What failed, naming the rank.
    """


class RendezvousTimeout(DistributedError, TimeoutError):
    """A rendezvous or barrier did not complete within its timeout.

    Parameters
    ----------
    message : str
        What was waited for, and (from rank 0) which ranks never came.
    """


class Rendezvous:
    """Meets ``world_size`` ranks at rank 0's ``host:port``, then watches them.

    Parameters
    ----------
    rank, world_size : int
        This process's rank and the number of ranks.
    host : str
        Rank 0's address (``MASTER_ADDR``). Rank 0 listens on it when it is a loopback
        address, else on every interface.
    port : int
        Rank 0's port (``MASTER_PORT``).
    timeout : float
        Seconds that :meth:`join` and each :meth:`barrier` may wait.
    on_failure : callable, optional
        Called once, with the reason, when any rank fails after :meth:`join`: a lost
        connection, a reported failure, a barrier timeout. Runs on the monitor thread (or on
        the thread that called :meth:`report_failure`).
    """

    def __init__(self, rank, world_size, host, port, timeout, on_failure=None):
        if not isinstance(world_size, int) or world_size < 1:
            raise ValueError("world_size must be a positive int, got %r" % (world_size,))
        if not isinstance(rank, int) or not 0 <= rank < world_size:
            raise ValueError("rank must be in [0, %d), got %r" % (world_size, rank))
        if not isinstance(port, int) or not 0 < port < 65536:
            raise ValueError("port must be in [1, 65535], got %r" % (port,))
        if timeout <= 0:
            raise ValueError("timeout must be positive, got %r" % (timeout,))
        self.rank, self.world_size = rank, world_size
        self.host, self.port, self.timeout = host, port, float(timeout)
        self.on_failure = on_failure
        self.failure = None
        self._failure_handled = False
        self._peers = []            # rank 0: one connection per other rank; others: rank 0's
        self._lock = threading.Condition()
        self._arrived = {}          # rank 0: barrier key -> set of ranks
        self._done = set()          # barrier keys completed
        self._barriers = 0
        self._closing = False
        self._stop = threading.Event()
        self._monitor = None

    # -- joining -------------------------------------------------------------------------

    def join(self, payload=b""):
        """Waits until every rank has joined; returns rank 0's payload.

        Parameters
        ----------
        payload : bytes or callable
            Rank 0 only: what every rank receives (a callable is called once all have joined).

        Returns
        -------
        bytes
            Rank 0's payload, on every rank.

        Raises
        ------
        RendezvousTimeout
            When the ranks did not all join within the timeout (the message names the missing
            ranks), or rank 0 could not be reached.
        DistributedError
            When the ranks disagree (world sizes, two processes with one rank) or rank 0
            cannot listen on its port.
        """
        deadline = time.monotonic() + self.timeout
        data = self._serve(payload, deadline) if self.rank == 0 else self._connect(deadline)
        self._monitor = threading.Thread(target=self._watch, daemon=True,
                                         name="dlarray-rendezvous-%d" % self.rank)
        self._monitor.start()
        return data

    def _listen(self):
        try:
            if is_loopback(self.host):
                family = socket.getaddrinfo(self.host, self.port)[0][0]
                return socket.create_server((self.host, self.port), family=family)
            if socket.has_dualstack_ipv6():
                return socket.create_server(("", self.port), family=socket.AF_INET6,
                                            dualstack_ipv6=True)
            return socket.create_server(("", self.port))
        except OSError as e:
            raise DistributedError(
                "rank 0 cannot listen on %s:%d: %s (is another job using MASTER_PORT=%d? "
                "choose another port)" % (self.host, self.port, e.strerror or e, self.port)
            ) from e

    def _serve(self, payload, deadline):
        server = self._listen()
        joined = {}
        try:
            while len(joined) < self.world_size - 1:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    missing = sorted(set(range(1, self.world_size)) - set(joined))
                    reason = ("rendezvous timed out after %g s: rank(s) %s of %d never joined "
                              "rank 0 at %s:%d" % (self.timeout, missing, self.world_size,
                                                   self.host, self.port))
                    for c in joined.values():
                        c.try_send({"type": "abort", "reason": reason, "timeout": True})
                        c.close()
                    raise RendezvousTimeout(reason)
                server.settimeout(min(remaining, 1.0))
                try:
                    sock, address = server.accept()
                except socket.timeout:
                    continue
                conn = Connection(sock, "%s:%d" % address[:2])
                hello = self._hello(conn, min(deadline, time.monotonic() + _HELLO_SECONDS))
                if hello is None:
                    conn.close()
                    continue
                problem = self._check_hello(hello, joined)
                if problem is not None:
                    for c in list(joined.values()) + [conn]:
                        c.try_send({"type": "abort", "reason": problem})
                        c.close()
                    raise DistributedError(problem)
                conn.rank = hello["rank"]
                conn.who = "rank %d (pid %s on %s)" % (conn.rank, hello.get("pid"),
                                                       hello.get("host"))
                joined[conn.rank] = conn
        except BaseException:
            for c in joined.values():
                c.close()
            raise
        finally:
            server.close()
        data = payload() if callable(payload) else payload
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError("the rendezvous payload must be bytes, got %s" % type(data).__name__)
        text = base64.b64encode(bytes(data)).decode()
        self._peers = [joined[r] for r in sorted(joined)]
        for c in self._peers:
            c.send({"type": "welcome", "payload": text, "world_size": self.world_size})
        return bytes(data)

    @staticmethod
    def _hello(conn, deadline):
        try:
            message = conn.read(deadline)
        except (OSError, ValueError):
            return None
        if not message or message.get("type") != "hello" or message.get("protocol") != PROTOCOL:
            return None  # not one of ours: ignore it
        return message

    def _check_hello(self, hello, joined):
        rank, size = hello.get("rank"), hello.get("world_size")
        if size != self.world_size:
            return ("rank %s says world_size is %s but rank 0 has %d: every rank must be started "
                    "with the same WORLD_SIZE" % (rank, size, self.world_size))
        if not isinstance(rank, int) or not 1 <= rank < self.world_size:
            return "a process joined with rank %r, not in [1, %d)" % (rank, self.world_size)
        if rank in joined:
            return ("two processes joined as rank %d (pids %s and %s): every rank must be "
                    "started once" % (rank, joined[rank].who, hello.get("pid")))
        return None

    def _connect(self, deadline):
        address = "%s:%d" % (self.host, self.port)
        delay, last = 0.05, None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RendezvousTimeout(
                    "rank %d could not reach rank 0 at %s within %g s (%s): is rank 0 running, "
                    "and are MASTER_ADDR and MASTER_PORT right?"
                    % (self.rank, address, self.timeout, last or "no answer"))
            try:
                sock = socket.create_connection((self.host, self.port),
                                                timeout=min(remaining, 5.0))
                break
            except OSError as e:
                last = e.strerror or str(e)
                time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
                delay = min(delay * 2, 1.0)
        conn = Connection(sock, "rank 0 at " + address)
        conn.rank, conn.who = 0, "rank 0 at " + address
        try:
            conn.send({"type": "hello", "protocol": PROTOCOL, "rank": self.rank,
                       "world_size": self.world_size, "pid": os.getpid(),
                       "host": socket.gethostname()})
            # Rank 0 reports its own timeout, naming the missing ranks: wait a little longer.
            message = conn.read(deadline + 5.0)
        except socket.timeout:
            conn.close()
            raise RendezvousTimeout(
                "rank %d joined rank 0 at %s, but the rendezvous did not complete within %g s"
                % (self.rank, address, self.timeout)) from None
        except (OSError, ValueError) as e:
            conn.close()
            raise DistributedError("rank %d lost rank 0 at %s during the rendezvous: %s"
                                   % (self.rank, address, e)) from e
        if message is None:
            conn.close()
            raise DistributedError("rank 0 at %s closed the connection during the rendezvous"
                                   % address)
        if message.get("type") == "abort":
            conn.close()
            error = RendezvousTimeout if message.get("timeout") else DistributedError
            raise error(str(message.get("reason")))
        if message.get("type") != "welcome":
            conn.close()
            raise DistributedError("unexpected answer from rank 0: %r" % (message,))
        self._peers = [conn]
        return base64.b64decode(message["payload"])

    # -- after joining -------------------------------------------------------------------

    def barrier(self, name="barrier", timeout=None, final=False):
        """Waits until every rank has called ``barrier`` (the same number of times).

        Parameters
        ----------
        name : str
            Names the barrier in messages.
        timeout : float, optional
            Seconds to wait (default: the rendezvous timeout).
        final : bool
            The last barrier before :meth:`close`: once it completes, closed connections are
            no longer failures.

        Raises
        ------
        RendezvousTimeout
            When not every rank arrived in time (every rank is then told).
        DistributedError
            When a rank failed meanwhile, or before.
        """
        timeout = self.timeout if timeout is None else float(timeout)
        self._barriers += 1
        key = "%s#%d" % (name, self._barriers)
        # Rank 0 knows who is missing: the others give it a second to say so first.
        deadline = time.monotonic() + timeout + (0.0 if self.rank == 0 else 1.0)
        if self.failure is not None:
            raise DistributedError(self.failure)
        if self.rank == 0:
            self._arrive(key, 0, final)
        else:
            try:
                self._peers[0].send({"type": "barrier", "key": key, "final": final})
            except OSError as e:
                self._fail("lost the connection to rank 0 at %s:%d (%s)"
                           % (self.host, self.port, e), tell=False)
        with self._lock:
            while key not in self._done and not self._failure_handled:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._lock.wait(remaining)
            if self.failure is not None:
                raise DistributedError(self.failure)
            if key in self._done:
                return
            missing = ""
            if self.rank == 0:
                absent = sorted(set(range(self.world_size)) - self._arrived.get(key, set()))
                missing = ": rank(s) %s did not arrive" % absent
        reason = "barrier %r timed out after %g s on rank %d%s" % (name, timeout, self.rank,
                                                                  missing)
        self.report_failure(reason)
        raise RendezvousTimeout(reason)

    def _arrive(self, key, rank, final):
        """Rank 0: records an arrival; completes the barrier when all are there."""
        with self._lock:
            arrived = self._arrived.setdefault(key, set())
            arrived.add(rank)
            if len(arrived) < self.world_size:
                return
            del self._arrived[key]
            self._done.add(key)
            if final:
                self._closing = True
            self._lock.notify_all()
        for c in self._peers:
            c.try_send({"type": "barrier_done", "key": key, "final": final})

    def report_failure(self, reason):
        """Tells every rank that this one fails (``reason`` says why); calls on_failure here too.

        Parameters
        ----------
        reason : str
            What went wrong on this rank.
        """
        self._fail("rank %d failed: %s" % (self.rank, reason), tell=True)

    def _fail(self, reason, tell, skip=None):
        with self._lock:
            if self.failure is not None or self._closing:
                return
            self.failure = reason
        try:
            if tell:
                for c in self._peers:
                    if c is not skip:
                        c.try_send({"type": "abort", "reason": reason})
            if self.on_failure is not None:
                self.on_failure(reason)
        finally:
            with self._lock:  # waiters raise once on_failure has acted (e.g. aborted NCCL)
                self._failure_handled = True
                self._lock.notify_all()

    def _watch(self):
        sel = selectors.DefaultSelector()
        for c in self._peers:
            sel.register(c.sock, selectors.EVENT_READ, c)
            for m in c.take():
                self._handle(c, m)
        try:
            while not self._stop.is_set() and sel.get_map():
                for key, _ in sel.select(_POLL_SECONDS):
                    conn = key.data
                    try:
                        messages = conn.feed()
                    except ValueError:
                        messages = None
                    if messages is None:
                        sel.unregister(conn.sock)
                        self._lost(conn)
                        continue
                    for m in messages:
                        self._handle(conn, m)
        finally:
            sel.close()

    def _lost(self, conn):
        if self._stop.is_set():
            return
        if self.rank == 0:
            self._fail("%s exited or lost its connection to rank 0" % conn.who, tell=True,
                       skip=conn)
        else:
            self._fail("lost the connection to rank 0 at %s:%d: rank 0 exited or the network "
                       "failed" % (self.host, self.port), tell=False)

    def _handle(self, conn, message):
        kind = message.get("type")
        if kind == "barrier" and self.rank == 0:
            self._arrive(str(message.get("key")), conn.rank, bool(message.get("final")))
        elif kind == "barrier_done" and self.rank != 0:
            with self._lock:
                self._done.add(str(message.get("key")))
                if message.get("final"):
                    self._closing = True
                self._lock.notify_all()
        elif kind == "abort":
            reason = str(message.get("reason"))
            # Rank 0 passes a rank's failure on to the others.
            self._fail(reason, tell=self.rank == 0, skip=conn)

    def close(self):
        """Stops watching and closes the connections (after a final barrier, or to give up)."""
        with self._lock:
            self._closing = True
        self._stop.set()
        if self._monitor is not None and self._monitor is not threading.current_thread():
            self._monitor.join(timeout=2.0)
        for c in self._peers:
            c.close()
        self._peers = []

    def __repr__(self):
        return "Rendezvous(rank=%d, world_size=%d, %s:%d%s)" % (
            self.rank, self.world_size, self.host, self.port,
            ", failed: %s" % self.failure if self.failure else "")

