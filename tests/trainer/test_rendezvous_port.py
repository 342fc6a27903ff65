"""MASTER_PORT held by another process: rank 0 exits 3 (a relaunch on another port helps, unlike bad
input's 2) with one line naming the port; rank 1 gives up at its rendezvous timeout instead of hanging."""
import socket
import time

from conftest import Ranks

RENDEZVOUS_TIMEOUT_S = 10
EXIT_ADDRESS_IN_USE = 3  # protocol::kTrainerExitAddressInUse


def test_port_in_use_exits_3_on_rank_0_and_rank_1_does_not_hang(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        started = time.monotonic()
        ranks = Ranks(2, ["--model", "linear", "--data", "synthetic", "--threads", "1",
                          "--rendezvous-timeout", str(RENDEZVOUS_TIMEOUT_S)], tmp_path / "run", port=port)
        try:
            code0 = ranks.procs[0].wait(timeout=120)
            rank0_seconds = time.monotonic() - started
            code1 = ranks.procs[1].wait(timeout=RENDEZVOUS_TIMEOUT_S + 60)
            rank1_seconds = time.monotonic() - started
        finally:
            ranks.kill()
    out0, out1 = ranks.output(0), ranks.output(1)
    assert code0 == EXIT_ADDRESS_IN_USE, out0
    errors = [line for line in out0.splitlines() if "[error]" in line]
    assert len(errors) == 1 and f"MASTER_PORT {port} is already in use" in errors[0], out0
    assert rank0_seconds < 60, f"rank 0 took {rank0_seconds:.1f}s"
    # Rank 1 reached a listener that is not a rendezvous store and would wait for its answer forever;
    # it fails (1) once its timeout plus the trainer's 15 s grace are up.
    assert code1 == 1, out1
    assert RENDEZVOUS_TIMEOUT_S <= rank1_seconds < RENDEZVOUS_TIMEOUT_S + 15 + 30, f"rank 1 took {rank1_seconds:.1f}s"
    assert f"rendezvous at 127.0.0.1:{port} got no answer" in out1, out1
    assert not (tmp_path / "run").exists(), "nothing is created when the rendezvous fails"


def listening_addresses(port):
    """The local addresses of the sockets listening on PORT, from /proc/net/tcp and tcp6 (as "a.b.c.d" or v6 hex)."""
    found = []
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        with open(table) as rows:
            next(rows)
            for row in rows:
                fields = row.split()
                local, state = fields[1], fields[3]
                address, port_hex = local.split(":")
                if state != "0A" or int(port_hex, 16) != port:  # 0A: LISTEN
                    continue
                if not v6:
                    found.append(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
                else:
                    raw = b"".join(bytes.fromhex(address[i:i + 8])[::-1] for i in range(0, 32, 8))
                    found.append(socket.inet_ntop(socket.AF_INET6, raw))
    return found


def test_the_store_listens_on_master_addr_only(tmp_path):
    """Issue 22, item 5: LibTorch's TCPStore listens on every interface; rank 0's store listens on MASTER_ADDR's
    address alone (loopback for a run on one machine), so nothing beyond it can reach the rendezvous."""
    for master in ("127.0.0.1", "127.0.0.2"):
        ranks = Ranks(2, ["--model", "linear", "--data", "synthetic", "--synthetic-samples", "100000", "--threads", "1",
                          "--batch-size", "8", "--epochs", "50"], tmp_path / f"run-{master}",
                      extra_env={"MASTER_ADDR": master})
        try:
            deadline = time.monotonic() + 60
            addresses = []
            while not addresses and time.monotonic() < deadline and ranks.procs[0].poll() is None:
                addresses = listening_addresses(ranks.port)
                time.sleep(0.1)
            assert addresses, ranks.output(0)
            assert all(a in (master, "::ffff:" + master) for a in addresses), (master, addresses)
            if master != "127.0.0.1":
                with socket.socket() as probe:  # the same port on another local address reaches nothing
                    probe.settimeout(5)
                    assert probe.connect_ex(("127.0.0.1", ranks.port)) != 0
        finally:
            ranks.kill()
