"""The trainer under plain Slurm: Slurm's host and task lists parsed as Slurm writes them, and the rank
contract (rendezvous address and port, local world size) derived from Slurm's variables alone, the same
on every task. Multi-node steps cannot run on one machine: their environments are written out here as
srun sets them."""
import json
import os
import random
import socket
import subprocess
from pathlib import Path

import pytest

from conftest import TRAINER

PROBE = os.environ.get("RINGMASTER_DIST_ENV_PROBE", "ringmaster-dist-env-probe")
EXIT_USAGE = 2  # protocol::kTrainerExitUsage
PORT_BASE, PORT_SPAN = 15000, 17000  # dist_env.h: kSlurmPortBase, kSlurmPortSpan

# Everything a launcher or an enclosing Slurm job could have put into the test's own environment.
CONTRACT = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "RINGMASTER_SOCKET")


def free_port_in(low, high):
    """A port in [low, high) that nothing listens on now (the kernel's free ports lie above this range)."""
    for port in random.Random().sample(range(low, high), 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    pytest.fail(f"no free port in [{low}, {high})")


def clean_env(extra):
    env = {k: v for k, v in os.environ.items() if k not in CONTRACT and not k.startswith("SLURM_")}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def probe(*args, env=None):
    proc = subprocess.run([PROBE, *args], env=clean_env(env or {}), capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def expand(hostlist):
    code, out, err = probe("hosts", hostlist)
    assert code == 0, err
    return out.split()


def dist_env(env):
    code, out, err = probe("env", env=env)
    assert code == 0, err
    return json.loads(out)


# What srun sets for one task of a 2-node step with 2 tasks per node (as seen on a real Slurm 22.05).
def srun_task(procid, nodeid, localid, job_id=123456, ntasks=4, nodes="node[01-04,07],gpu-a", **extra):
    env = {"SLURM_PROCID": procid, "SLURM_LOCALID": localid, "SLURM_NODEID": nodeid, "SLURM_NTASKS": ntasks,
           "SLURM_JOB_ID": job_id, "SLURM_JOB_NODELIST": nodes, "SLURM_STEP_TASKS_PER_NODE": "2(x2)",
           "SLURM_JOB_NUM_NODES": 2}
    env.update(extra)
    return env


@pytest.mark.parametrize("hostlist, hosts", [
    ("node[01-04,07],gpu-a", ["node01", "node02", "node03", "node04", "node07", "gpu-a"]),
    ("a,b", ["a", "b"]),
    ("vm", ["vm"]),
    ("x[9-11]", ["x9", "x10", "x11"]),
    ("x[09-11]", ["x09", "x10", "x11"]),
    ("x[098-101]", ["x098", "x099", "x100", "x101"]),
    ("rack[1-2]-n[01-02]", ["rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"]),
    ("gpu-a,node[3,1],c.example.org", ["gpu-a", "node3", "node1", "c.example.org"]),
])
def test_host_lists_expand_as_slurm_writes_them(hostlist, hosts):
    assert expand(hostlist) == hosts
    code, out, err = probe("first", hostlist)
    assert (code, out.strip()) == (0, hosts[0]), err


def test_first_host_of_a_huge_list_does_not_expand_it():
    code, out, err = probe("first", "n[000000001-999999999],m")
    assert (code, out.strip()) == (0, "n000000001"), err


@pytest.mark.parametrize("hostlist, reason", [
    ("node[01-", "'[' is never closed"),
    ("node[01-]", "empty or over-long number"),
    ("node[04-01]", "runs backwards"),
    ("node[]", "empty brackets"),
    ("a,,b", "empty host name"),
    ("a,", "empty host name"),
    ("node01]", "']' without a '['"),
    ("n[a-b]", "only numbers and ranges"),
    ("n[1[2]]", "'[' inside brackets"),
    ("node 01", "unexpected character ' '"),
    ("", "the host list is empty"),
])
def test_malformed_host_lists_are_one_line_errors(hostlist, reason):
    for mode in ("hosts", "first"):
        code, out, err = probe(mode, hostlist)
        assert code == EXIT_USAGE and out == "", (mode, out, err)
        assert len(err.strip().splitlines()) == 1 and reason in err, (mode, err)


@pytest.mark.parametrize("text, counts", [("2(x3),1", [2, 2, 2, 1]), ("2,1", [2, 1]), ("4", [4]), ("1(x2),3(x1)", [1, 1, 3])])
def test_task_counts_expand(text, counts):
    code, out, err = probe("tasks", text)
    assert code == 0, err
    assert [int(c) for c in out.split()] == counts


@pytest.mark.parametrize("text", ["", "0", "2(x)", "2(3)", "2(x0)", "x", "2,,1", "2(x3"])
def test_malformed_task_counts_are_errors(text):
    code, out, err = probe("tasks", text)
    assert code == EXIT_USAGE and out == "" and len(err.strip().splitlines()) == 1, err


def test_slurm_alone_gives_first_host_and_a_port_from_the_job_id():
    got = dist_env(srun_task(procid=3, nodeid=1, localid=1))
    assert got["master_addr"] == "node01"
    assert got["master_port"] == PORT_BASE + 123456 % PORT_SPAN == 19456
    assert (got["rank"], got["local_rank"], got["world_size"], got["local_world_size"]) == (3, 1, 4, 2)
    assert "SLURM_JOB_NODELIST" in got["derived_from_slurm"] and "SLURM_JOB_ID" in got["derived_from_slurm"]


def test_every_task_of_a_step_derives_the_same_rendezvous():
    tasks = [srun_task(procid=p, nodeid=p // 2, localid=p % 2) for p in range(4)]
    seen = {(e["master_addr"], e["master_port"]) for e in map(dist_env, tasks)}
    assert seen == {("node01", 19456)}
    # Another job gets another port (in range), and ports stay below Linux's ephemeral range.
    for job_id in (0, 1, 16999, 17000, 4294967295):
        port = dist_env(srun_task(0, 0, 0, job_id=job_id))["master_port"]
        assert port == PORT_BASE + job_id % PORT_SPAN and PORT_BASE <= port < 32768


def test_a_users_master_addr_and_port_win():
    got = dist_env(srun_task(1, 0, 1, MASTER_PORT=29555))
    assert (got["master_addr"], got["master_port"]) == ("node01", 29555)
    got = dist_env(srun_task(1, 0, 1, MASTER_ADDR="10.0.0.7"))
    assert (got["master_addr"], got["master_port"]) == ("10.0.0.7", 19456)
    got = dist_env(srun_task(1, 0, 1, MASTER_ADDR="10.0.0.7", MASTER_PORT=29555))
    assert (got["master_addr"], got["master_port"], got["derived_from_slurm"]) == ("10.0.0.7", 29555, "")


def test_the_steps_node_list_comes_before_the_jobs():
    # A step on part of its allocation: task 0 runs on the step's first node, not the job's.
    got = dist_env(srun_task(0, 0, 0, SLURM_STEP_NODELIST="node[03-04]"))
    assert got["master_addr"] == "node03"


@pytest.mark.parametrize("extra, local_world", [
    ({"SLURM_STEP_TASKS_PER_NODE": "2(x3),1", "SLURM_NODEID": 0}, 2),
    ({"SLURM_STEP_TASKS_PER_NODE": "2(x3),1", "SLURM_NODEID": 3}, 1),
    ({"SLURM_STEP_TASKS_PER_NODE": "2,1", "SLURM_NODEID": 1}, 1),
    ({"SLURM_NTASKS_PER_NODE": "2(x3)"}, 2),          # a bare integer was the old code's only accepted form
    ({"SLURM_NTASKS_PER_NODE": "16"}, 7),             # the allocation's request, larger than this step
    ({"SLURM_JOB_NUM_NODES": 4}, 2),                  # no per-node list: spread over the nodes
    ({"SLURM_JOB_NUM_NODES": 1}, 7),
    ({"LOCAL_WORLD_SIZE": 3, "SLURM_STEP_TASKS_PER_NODE": "2(x3),1"}, 3),
])
def test_local_world_size_from_slurm(extra, local_world):
    env = {"SLURM_PROCID": 0, "SLURM_NTASKS": 7, "MASTER_ADDR": "n1", "MASTER_PORT": 29500}
    env.update(extra)
    assert dist_env(env)["local_world_size"] == local_world


def test_malformed_slurm_variables_are_one_line_errors():
    code, out, err = probe("env", env=srun_task(0, 0, 0, nodes="node[01-"))
    assert code == EXIT_USAGE and len(err.strip().splitlines()) == 1, err
    assert "SLURM_JOB_NODELIST='node[01-' is not a Slurm host list" in err and "MASTER_ADDR" in err, err
    code, out, err = probe("env", env=srun_task(0, 0, 0, SLURM_STEP_TASKS_PER_NODE="2(x"))
    assert code == EXIT_USAGE and "SLURM_STEP_TASKS_PER_NODE='2(x' is not a Slurm task count list" in err, err
    code, out, err = probe("env", env=srun_task(0, 0, 0, job_id="12a"))
    assert code == EXIT_USAGE and "SLURM_JOB_ID='12a'" in err, err


def test_without_slurm_or_master_addr_the_error_is_unchanged():
    code, out, err = probe("env", env={"WORLD_SIZE": 2, "RANK": 0})
    assert code == EXIT_USAGE and "MASTER_ADDR is not set" in err, err


def test_trainer_refuses_a_malformed_node_list_and_creates_nothing(tmp_path):
    env = clean_env(srun_task(0, 0, 0, ntasks=2, nodes="node[01-"))
    proc = subprocess.run([TRAINER, "--data", "synthetic", "--model", "linear", "--out", str(tmp_path / "run")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == EXIT_USAGE, proc.stdout + proc.stderr
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    assert len(lines) == 1 and "SLURM_JOB_NODELIST='node[01-' is not a Slurm host list" in lines[0], lines
    assert not (tmp_path / "run").exists()


def test_two_trainers_with_only_slurm_variables_train_together(tmp_path):
    """What srun gives two tasks on one node, without srun: both find rank 0 and finish."""
    port = free_port_in(PORT_BASE, PORT_BASE + PORT_SPAN)
    job_id = port - PORT_BASE
    out = tmp_path / "run"
    procs = []
    for rank in range(2):
        env = clean_env({"SLURM_PROCID": rank, "SLURM_LOCALID": rank, "SLURM_NODEID": 0, "SLURM_NTASKS": 2,
                         "SLURM_JOB_ID": job_id, "SLURM_JOB_NODELIST": "localhost", "SLURM_STEP_TASKS_PER_NODE": 2,
                         "SLURM_JOB_NUM_NODES": 1})
        log = open(tmp_path / f"rank{rank}.log", "w")
        procs.append(subprocess.Popen([TRAINER, "--data", "synthetic", "--model", "linear", "--threads", "1",
                                       "--synthetic-samples", "256", "--batch-size", "32", "--epochs", "1",
                                       "--out", str(out)], env=env, stdout=log, stderr=subprocess.STDOUT))
    try:
        codes = [p.wait(timeout=240) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    logs = [(tmp_path / f"rank{r}.log").read_text() for r in range(2)]
    assert codes == [0, 0], logs
    assert f"MASTER_PORT {port} = 15000 + SLURM_JOB_ID % 17000" in logs[0], logs[0]
    assert "rank 1/2" in logs[1], logs[1]
    assert Path(out, "metrics.csv").read_text().count("\n") >= 2
