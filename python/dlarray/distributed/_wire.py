"""The rendezvous's wire: TCP connections carrying length-prefixed JSON messages (a 4-byte
big-endian length, then a JSON object with a ``type``), with keepalive so that a vanished host
is noticed."""

import json
import selectors
import socket
import struct
import threading
import time

MAX_MESSAGE = 1 << 20
SEND_SECONDS = 30.0  # a send that cannot go out within this counts as a lost peer


def keepalive(sock):
    """Detects a vanished peer host within about 25 s (10 s idle, then 3 probes 5 s apart)."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in (("TCP_KEEPIDLE", 10), ("TCP_KEEPINTVL", 5), ("TCP_KEEPCNT", 3)):
        if hasattr(socket, name):
            sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Connection:
    """One TCP connection carrying length-prefixed JSON messages."""

    def __init__(self, sock, label):
        self.sock, self.label = sock, label
        self.rank, self.who = None, label
        self._send_lock = threading.Lock()
        self._buffer = b""
        self._inbox = []
        sock.settimeout(SEND_SECONDS)
        keepalive(sock)

    def send(self, message):
        data = json.dumps(message).encode()
        with self._send_lock:
            self.sock.sendall(struct.pack(">I", len(data)) + data)

    def try_send(self, message):
        """Sends, ignoring a connection that is already gone."""
        try:
            self.send(message)
        except OSError:
            pass

    def _parse(self):
        while len(self._buffer) >= 4:
            (n,) = struct.unpack(">I", self._buffer[:4])
            if n > MAX_MESSAGE:
                raise ValueError("message of %d bytes from %s" % (n, self.label))
            if len(self._buffer) < 4 + n:
                break
            body, self._buffer = self._buffer[4:4 + n], self._buffer[4 + n:]
            message = json.loads(body.decode())
            if not isinstance(message, dict):
                raise ValueError("malformed message from %s" % self.label)
            self._inbox.append(message)

    def _receive(self):
        """Reads what is available (the socket is readable); False at end of stream or on a
        broken connection."""
        try:
            chunk = self.sock.recv(65536)
        except (BlockingIOError, InterruptedError, socket.timeout):
            return True
        except OSError:
            return False
        if not chunk:
            return False
        self._buffer += chunk
        self._parse()
        return True

    def feed(self):
        """The messages that arrived (the socket is readable), or None at end of stream."""
        alive = self._receive()
        messages, self._inbox = self._inbox, []
        return messages if alive or messages else None

    def take(self):
        """Messages already received and not yet handed out."""
        messages, self._inbox = self._inbox, []
        return messages

    def read(self, deadline):
        """The next message, waiting until ``deadline`` (time.monotonic); None at end of stream.
        Raises socket.timeout when none came in time."""
        while not self._inbox:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise socket.timeout("no message from %s" % self.label)
            with selectors.DefaultSelector() as sel:
                sel.register(self.sock, selectors.EVENT_READ)
                if not sel.select(min(remaining, 1.0)):
                    continue
            if not self._receive() and not self._inbox:
                return None
        return self._inbox.pop(0)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def is_loopback(host):
    try:
        infos = socket.getaddrinfo(host, None)
    except socket.gaierror:
        return False
    return bool(infos) and all(
        i[4][0].startswith("127.") or i[4][0] == "::1" for i in infos)
