"""Helpers for driving real ringmaster-trainer processes (no mocks)."""
import csv
import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import torch
from torch import nn

TRAINER = os.environ.get("RINGMASTER_TRAINER", "ringmaster-trainer")
DEFAULT_TIMEOUT = 240


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Ranks:
    """A group of trainer processes started with the torchrun environment contract."""

    def __init__(self, world, args, out, extra_env=None, port=None, log_dir=None):
        self.world = world
        self.out = Path(out)
        self.port = port or free_port()
        self.procs = []
        self.logs = []
        for rank in range(world):
            env = dict(os.environ)
            env.update({"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(world),
                        "LOCAL_WORLD_SIZE": str(world), "MASTER_ADDR": "127.0.0.1",
                        "MASTER_PORT": str(self.port)})
            env.pop("RINGMASTER_SOCKET", None)
            env.update(extra_env or {})
            log = open(Path(log_dir or self.out.parent) / f"{self.out.name}-rank{rank}.log", "w+")
            self.logs.append(log)
            self.procs.append(subprocess.Popen([TRAINER, "--out", str(self.out), *args], env=env,
                                               stdout=log, stderr=subprocess.STDOUT))

    def wait(self, timeout=DEFAULT_TIMEOUT):
        deadline = time.monotonic() + timeout
        codes = []
        try:
            for proc in self.procs:
                codes.append(proc.wait(timeout=max(0.1, deadline - time.monotonic())))
        finally:
            self.kill()
        return codes

    def output(self, rank):
        self.logs[rank].flush()
        return Path(self.logs[rank].name).read_text()

    def kill(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def run_ranks(world, args, out, **kwargs):
    ranks = Ranks(world, args, out, **kwargs)
    codes = ranks.wait()
    return codes, [ranks.output(r) for r in range(world)]


def run_single(args, env=None, timeout=120):
    """One process, no launcher variables unless given; returns (code, stdout+stderr)."""
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    full_env.update(env or {})
    proc = subprocess.run([TRAINER, *args], env=full_env, capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout + proc.stderr


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def read_json(path):
    return json.loads(Path(path).read_text())


def wait_until(predicate, timeout, what):
    """Polls a condition (not a fixed sleep); fails the test with `what` when it never holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out after {timeout}s waiting for {what}")


def metric_rows(run_dir):
    path = Path(run_dir) / "metrics.csv"
    if not path.exists():
        return 0
    return max(0, len(path.read_text().splitlines()) - 1)


def digest(output):
    for line in output.splitlines():
        if "parameter_digest=" in line:
            return line.rsplit("parameter_digest=", 1)[1].strip()
    return None


class FakeSupervisor:
    """A supervisor's reporting socket (core/protocol/wire.h): accepts connections on a Unix socket and
    records each newline-delimited JSON frame with its arrival time. With read=False it takes the hello
    and then never reads again, like a supervisor that stopped draining its socket. With tcp=True it
    listens on 127.0.0.1 instead (the endpoint a rank on another Slurm node uses), sends the challenge,
    checks the hello's and every frame's MAC (mac_failures counts the bad ones), and env() offers a
    socket path where nothing listens first, as a rank on another node finds it."""

    def __init__(self, directory, read=True, token="test-token", tcp=False):
        import threading
        self.path = str(Path(directory) / "supervisor.sock")
        self.token = token
        self.read = read
        self.tcp = tcp
        self.frames = []  # (time.monotonic(), dict)
        self.wire = b""   # every byte received, as the network carried it
        self.mac_failures = 0
        self._lock = threading.Lock()
        if tcp:
            self._server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self._server.bind(("127.0.0.1", 0))
            self.endpoint = "127.0.0.1:%d" % self._server.getsockname()[1]
        else:
            self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._server.bind(self.path)
        self._server.listen(8)
        self._connections = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def env(self):
        if self.tcp:
            return {"RINGMASTER_SOCKET": self.path, "RINGMASTER_ENDPOINT": self.endpoint, "RINGMASTER_TOKEN": self.token}
        return {"RINGMASTER_SOCKET": self.path, "RINGMASTER_TOKEN": self.token}

    def _accept(self):
        import threading
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            self._connections.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        import hashlib
        import hmac
        buffer = b""
        nonce = None
        sequence = 0
        if self.tcp:
            # The endpoint's challenge (wire.h); the MACs below are checked with Python's own hmac, independently
            # of core/protocol/frame_mac.cpp.
            nonce = os.urandom(16).hex()
            conn.sendall(json.dumps({"v": 1, "type": "challenge", "nonce": nonce}).encode() + b"\n")
        mac = lambda message: hmac.new(self.token.encode(), message.encode(), hashlib.sha256).hexdigest()
        while True:
            try:
                chunk = conn.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            self.wire += chunk
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if nonce is not None and sequence > 0:
                    given, line = line.split(b" ", 1)
                    if given.decode() != mac(f"{nonce}\n{sequence}\n{line.decode()}"):
                        self.mac_failures += 1
                    sequence += 1
                frame = json.loads(line)
                if nonce is not None and sequence == 0:
                    expected = mac(f"ringmaster hello\n{nonce}\n{frame.get('rank')}\n{frame.get('pid')}")
                    if frame.get("mac") != expected:
                        self.mac_failures += 1
                    sequence = 1
                with self._lock:
                    self.frames.append((time.monotonic(), frame))
                if not self.read and frame.get("type") == "hello":
                    return  # keep the connection open, never read again

    def received(self, frame_type=None):
        with self._lock:
            return [(t, f) for t, f in self.frames if frame_type is None or f.get("type") == frame_type]

    def close(self):
        self._server.close()
        for conn in self._connections:
            conn.close()


class Mlp(nn.Module):
    """Python's twin of the trainer's mlp (flatten, fc1 = Linear(features, 256), ReLU, fc2 = Linear(256,
    outputs)), for the tests that load its model.pt."""
    def __init__(self, features, outputs):
        super().__init__()
        self.fc1 = nn.Linear(features, 256)
        self.fc2 = nn.Linear(256, outputs)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))
