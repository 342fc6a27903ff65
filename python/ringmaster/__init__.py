"""Ringmaster's helper for your own training script (Python standard library only).

    import ringmaster
    ringmaster.log(step, loss=loss.item(), accuracy=acc)   # scalars for the charts and scalars.csv
    if ringmaster.checkpoint_requested():                  # "Checkpoint now" (SIGUSR1) was pressed
        save_checkpoint()

Under Ringmaster (RINGMASTER_SOCKET and RINGMASTER_TOKEN are set by the launcher), rank 0's log()
sends a "scalars" frame over the run's reporting socket (core/protocol/wire.h): the connection, made
at import on rank 0, first says hello with this process's rank, pid and the run's token. Under Slurm,
when rank 0 runs on another node than the supervisor, the socket reaches nothing: the connection then
goes to the TCP endpoint in RINGMASTER_ENDPOINT ("HOST:PORT") instead, where the token is never sent: the
hello and every frame carry an HMAC-SHA256 bound to the supervisor's per-connection nonce (frame_mac.h).
Other ranks' log() does nothing, and
outside Ringmaster everything does nothing, so the same script runs under torchrun unchanged.

log() never blocks training: frames go into a bounded queue (MAX_QUEUED_FRAMES; when it is full the
oldest frame is dropped) that a daemon thread drains over a non-blocking socket. Frames that never
reach the socket (a full queue, a supervisor that is gone) are counted by dropped(). Values that are
not finite numbers, and names that are empty, too long or hold control characters, are skipped, as the
supervisor would drop them. At exit, queued frames get at most EXIT_FLUSH_SECONDS.

checkpoint_requested() returns True once after each SIGUSR1. The handler is installed at import under
Ringmaster (else at the first call), and a handler that was installed before it is still called.
"""

import atexit
import collections
import hashlib
import hmac
import json
import math
import os
import select
import signal
import socket
import threading
import time

__all__ = ["log", "dropped", "flush", "checkpoint_requested", "active"]

# Mirrors of core/protocol/wire.h.
PROTOCOL_VERSION = 1
MAX_FRAME_BYTES = 64 * 1024
MAX_SCALARS_PER_FRAME = 256
MAX_SCALAR_NAME_LENGTH = 128
SOCKET_ENV = "RINGMASTER_SOCKET"
TOKEN_ENV = "RINGMASTER_TOKEN"
ENDPOINT_ENV = "RINGMASTER_ENDPOINT"

MAX_QUEUED_FRAMES = 1000
EXIT_FLUSH_SECONDS = 1.0
_SEND_WAIT_SECONDS = 0.1  # how long the sender thread waits for the socket to take more bytes


def _rank():
    try:
        return int(os.environ.get("RANK", "0"))
    except ValueError:
        return -1


def active():
    """True when log() sends: under Ringmaster, on rank 0."""
    return _under_ringmaster() and _rank() == 0


def _under_ringmaster():
    return bool(os.environ.get(SOCKET_ENV) or os.environ.get(ENDPOINT_ENV))


def _split_endpoint(endpoint):
    """("host", port) from "HOST:PORT" or "[v6]:PORT"; None when malformed."""
    host, _, port = endpoint.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        return (host, int(port)) if host else None
    except ValueError:
        return None


def _connect(path, endpoint):
    """(socket, nonce): the Unix socket when it takes the connection (nonce None), else the TCP endpoint with
    the nonce of the supervisor's challenge, its first line there."""
    if path:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(5.0)
            sock.connect(path)
            return sock, None
        except OSError:
            sock.close()
    address = _split_endpoint(endpoint) if endpoint else None
    if address is None:
        raise OSError("no reachable socket or endpoint")
    sock = socket.create_connection(address, timeout=5.0)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    line = b""
    while not line.endswith(b"\n") and len(line) < MAX_FRAME_BYTES:
        chunk = sock.recv(1)  # within the 5 s timeout; one byte at a time: nothing after the line is taken
        if not chunk:
            break
        line += chunk
    try:
        challenge = json.loads(line)
        nonce = challenge["nonce"] if challenge.get("type") == "challenge" else None
    except (ValueError, TypeError, KeyError):
        nonce = None
    if not isinstance(nonce, str) or not nonce:
        sock.close()
        raise OSError("the endpoint sent no challenge")
    return sock, nonce


def _mac(token, message):
    """HMAC-SHA256 as the supervisor computes it (core/protocol/frame_mac.h)."""
    return hmac.new(token.encode("utf-8"), message.encode("utf-8"), hashlib.sha256).hexdigest()


class _Sender:
    """The connection to the supervisor and the daemon thread that drains the queue into it."""

    def __init__(self, path, token, rank, endpoint=""):
        self.pid = os.getpid()
        self._path = path
        self._endpoint = endpoint
        self._token = token
        self._rank = rank
        self._queue = collections.deque()
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._dropped = 0
        self._in_flight = 0  # frames taken from the queue but not yet fully written
        self._dead = False
        self._thread = threading.Thread(target=self._run, name="ringmaster-sender", daemon=True)
        self._thread.start()

    @staticmethod
    def _encode(frame):
        frame = dict(frame, v=PROTOCOL_VERSION)
        return (json.dumps(frame, separators=(",", ":"), allow_nan=False) + "\n").encode("utf-8")

    def submit(self, frame):
        data = self._encode(frame)
        with self._lock:
            if self._dead or len(data) > MAX_FRAME_BYTES:
                self._dropped += 1
                return
            if len(self._queue) >= MAX_QUEUED_FRAMES:
                self._queue.popleft()
                self._dropped += 1
            self._queue.append(data)
            self._wake.notify()

    def dropped(self):
        with self._lock:
            return self._dropped

    def flush(self, timeout):
        """Waits until every queued frame is written, the connection died, or `timeout` seconds passed."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while (self._queue or self._in_flight) and not self._dead:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._wake.wait(left)
            return not self._queue and not self._in_flight

    def _die(self):
        with self._lock:
            self._dead = True
            self._dropped += len(self._queue) + self._in_flight
            self._queue.clear()
            self._in_flight = 0
            self._wake.notify_all()

    def _run(self):
        try:
            sock, nonce = _connect(self._path, self._endpoint)
            sock.setblocking(False)
        except OSError:
            self._die()
            return
        if nonce is None:
            pending = self._encode({"type": "hello", "rank": self._rank, "pid": self.pid, "token": self._token})
        else:
            # Over TCP the token never crosses the wire: the hello and every frame carry MACs bound to the nonce.
            hello_mac = _mac(self._token, f"ringmaster hello\n{nonce}\n{self._rank}\n{self.pid}")
            pending = self._encode({"type": "hello", "rank": self._rank, "pid": self.pid, "mac": hello_mac})
        sequence = 0
        try:
            while True:
                if not pending:
                    with self._lock:
                        while not self._queue:
                            self._in_flight = 0
                            self._wake.notify_all()
                            self._wake.wait()
                        batch = list(self._queue)
                        self._queue.clear()
                        self._in_flight = len(batch)
                    if nonce is not None:
                        sealed = []
                        for frame in batch:
                            sequence += 1
                            mac = _mac(self._token, f"{nonce}\n{sequence}\n" + frame[:-1].decode("utf-8"))
                            sealed.append(mac.encode("ascii") + b" " + frame)
                        batch = sealed
                    pending = b"".join(batch)
                try:
                    sent = sock.send(pending)
                    pending = pending[sent:]
                except (BlockingIOError, InterruptedError):
                    select.select([], [sock], [], _SEND_WAIT_SECONDS)
        except OSError:
            sock.close()
            self._die()


_sender_lock = threading.Lock()
_sender = None


def _current_sender():
    """The sender of this process (a forked child, e.g. a data-loader worker, gets its own)."""
    global _sender
    with _sender_lock:
        if _sender is None or _sender.pid != os.getpid():
            _sender = _Sender(os.environ.get(SOCKET_ENV, ""), os.environ.get(TOKEN_ENV, ""), _rank(),
                              os.environ.get(ENDPOINT_ENV, ""))
        return _sender


def _scalar_value(value):
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _valid_name(name):
    return 0 < len(name) <= MAX_SCALAR_NAME_LENGTH and not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in name)


def log(step, **scalars):
    """Sends the scalars of `step` (a non-negative integer) to Ringmaster; returns at once.

    Values may be anything float() accepts (numbers, 0-d tensors, NumPy scalars). Does nothing outside
    Ringmaster and on ranks other than 0, without even reading the values."""
    if not active():
        return
    try:
        step_number = int(step)
    except (TypeError, ValueError):
        step_number = -1
    sender = _current_sender()
    if step_number < 0 or step_number != step:
        with sender._lock:
            sender._dropped += 1
        return
    values = {}
    for name, value in scalars.items():
        number = _scalar_value(value)
        if number is not None and _valid_name(name) and len(values) < MAX_SCALARS_PER_FRAME:
            values[name] = number
    if values:
        sender.submit({"type": "scalars", "step": step_number, "values": values})


def dropped():
    """Frames that log() accepted but that never reached the socket (a full queue, no supervisor)."""
    return _sender.dropped() if _sender is not None and _sender.pid == os.getpid() else 0


def flush(timeout=EXIT_FLUSH_SECONDS):
    """Waits up to `timeout` seconds for queued frames to be written; True when none is left."""
    if _sender is None or _sender.pid != os.getpid():
        return True
    return _sender.flush(timeout)


@atexit.register
def _flush_at_exit():
    flush(EXIT_FLUSH_SECONDS)


_checkpoint_flag = threading.Event()
_handler_installed = False
_previous_handler = None


def _on_sigusr1(signum, frame):
    _checkpoint_flag.set()
    if callable(_previous_handler):
        _previous_handler(signum, frame)


def _install_handler():
    global _handler_installed, _previous_handler
    if _handler_installed:
        return
    try:
        previous = signal.signal(signal.SIGUSR1, _on_sigusr1)
    except ValueError:
        return  # not the main thread: try again at the next call from it
    _previous_handler = previous if previous not in (signal.SIG_DFL, signal.SIG_IGN) else None
    _handler_installed = True


def checkpoint_requested():
    """True once after each SIGUSR1 (Ringmaster's "Checkpoint now"); False otherwise."""
    _install_handler()
    if _checkpoint_flag.is_set():
        _checkpoint_flag.clear()
        return True
    return False


if _under_ringmaster():
    # Under Ringmaster, SIGUSR1 must never take the default action (ending the process).
    _install_handler()
if active():
    # Say hello now, while this process is surely alive and known to the supervisor as its rank, rather
    # than at the first log(), which may come just before the script exits.
    _current_sender()
