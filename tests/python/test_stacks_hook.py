"""python/sitecustomize.py, the start-up hook a script's ranks run because the launcher puts the helper module's
folder first on their PYTHONPATH: with RINGMASTER_STACKS_FILE and RINGMASTER_STACKS_SIGNAL set, faulthandler writes
every thread's Python stack into the file on that signal, also while the main thread is blocked in C; without them
nothing is registered or created; either way the next sitecustomize on sys.path (Debian's, a user's) still runs.
Each test runs a real interpreter (Debian's python3)."""
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "trainer"))
from conftest import wait_until  # noqa: E402

PYTHON_DIR = Path(os.environ.get("RINGMASTER_SOURCE_DIR", Path(__file__).resolve().parents[2])) / "python"
INTERPRETER = "/usr/bin/python3"
STACKS_SIGNAL = signal.SIGRTMIN + 2  # what the launcher sends (core/supervisor/script_environment.cpp)

# The main thread blocks inside C (a lock that is never released), a second thread sleeps: neither returns to the
# interpreter's loop, where a Python-level signal handler would run.
STUCK = r"""
import threading, time

def sleeping_helper():
    time.sleep(1000)

def stuck_in_c(lock):
    print("ready", flush=True)
    lock.acquire()

threading.Thread(target=sleeping_helper, daemon=True).start()
lock = threading.Lock()
lock.acquire()
stuck_in_c(lock)
"""


def hook_env(tmp_path, *, stacks=True, extra_path=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("RINGMASTER_STACKS_")}
    env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR)] + ([str(extra_path)] if extra_path else []))
    if stacks:
        env["RINGMASTER_STACKS_FILE"] = str(tmp_path / "rank-0.stacks.txt")
        env["RINGMASTER_STACKS_SIGNAL"] = str(int(STACKS_SIGNAL))
    return env


def caught_signals(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            mask = int(line.split()[1], 16)
            return {number for number in range(1, 65) if mask >> (number - 1) & 1}
    return set()


def test_a_rank_blocked_in_c_writes_every_threads_python_stack_on_the_signal_and_lives_on(tmp_path):
    stacks = tmp_path / "rank-0.stacks.txt"
    proc = subprocess.Popen([INTERPRETER, "-c", STUCK], env=hook_env(tmp_path), stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        # What the launcher checks before it sends the signal.
        assert int(STACKS_SIGNAL) in caught_signals(proc.pid)
        assert stacks.exists() and stacks.read_text() == ""
        os.kill(proc.pid, STACKS_SIGNAL)
        wait_until(lambda: "sleeping_helper" in stacks.read_text() and "stuck_in_c" in stacks.read_text(), 30,
                   "faulthandler's stacks")
        text = stacks.read_text()
        assert text.count("Thread 0x") + text.count("Current thread 0x") == 2, text
        # The main thread printing "ready" (line 8) or in the lock (line 9); the helper in its sleep (line 5).
        assert re.search(r"line [89] in stuck_in_c", text) and "line 5 in sleeping_helper" in text, text
        # A second request appends; the rank is still running after both.
        os.kill(proc.pid, STACKS_SIGNAL)
        wait_until(lambda: stacks.read_text().count("stuck_in_c") == 2, 30, "the second dump")
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_without_the_variables_nothing_is_registered_or_created(tmp_path):
    proc = subprocess.Popen([INTERPRETER, "-c", STUCK], env=hook_env(tmp_path, stacks=False), stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        assert int(STACKS_SIGNAL) not in caught_signals(proc.pid)
        assert list(tmp_path.iterdir()) == []
    finally:
        proc.kill()
        proc.wait()


def test_the_next_sitecustomize_on_the_path_still_runs(tmp_path):
    # A user's own sitecustomize after the helper's folder on PYTHONPATH, and Debian's in the standard library.
    users = tmp_path / "users"
    users.mkdir()
    (users / "sitecustomize.py").write_text("import os\nos.environ['USERS_SITECUSTOMIZE'] = 'ran'\nVALUE = 42\n")
    show = ("import os, sitecustomize; print(os.environ.get('USERS_SITECUSTOMIZE'), sitecustomize.VALUE, "
            "sitecustomize.__file__)")
    out = subprocess.run([INTERPRETER, "-c", show], env=hook_env(tmp_path, extra_path=users), capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert out.stdout.split() == ["ran", "42", str(users / "sitecustomize.py")]

    stdlib = subprocess.run([INTERPRETER, "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
                            capture_output=True, text=True, timeout=60).stdout.strip()
    debians = (Path(stdlib) / "sitecustomize.py").resolve()
    show = "import sitecustomize, os; print(os.path.realpath(sitecustomize.__file__))"
    out = subprocess.run([INTERPRETER, "-c", show], env=hook_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    if debians.exists():
        assert out.stdout.strip() == str(debians)


def test_an_unwritable_file_leaves_the_rank_as_it_was(tmp_path):
    env = hook_env(tmp_path)
    env["RINGMASTER_STACKS_FILE"] = str(tmp_path / "no-such-folder" / "rank-0.stacks.txt")
    out = subprocess.run([INTERPRETER, "-c", "print('fine')"], env=env, capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout, out.stderr) == (0, "fine\n", "")
