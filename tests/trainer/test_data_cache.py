"""The per-machine data cache (core/trainer/data/shared_cache.h), driven through ringmaster-cache-probe in
real processes: a cache is built once and then reused, racing processes build it exactly once, a damaged
file is rebuilt (never trusted, never a crash), a failed build or an unwritable folder leaves nothing
behind, the fingerprint follows the source's files and the options, and two processes that map one cache
hold one copy of its pages (PSS)."""
import json
import os
import select
import struct
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

PROBE = os.environ.get("RINGMASTER_CACHE_PROBE", "ringmaster-cache-probe")
FINGERPRINT = "0123456789abcdef0123456789abcdef"
IMAGE_BYTES = 28 * 28
PAGE = 4096
PREFIX = 24  # magic, version, zero, header length
MEMORY_SAMPLES = 134_000  # ~105 MB of uint8 images
EXIT_FAILURE, EXIT_USAGE = 1, 2


def run_probe(directory, *args, fingerprint=FINGERPRINT, timeout=180):
    return subprocess.run([PROBE, str(directory), fingerprint, *args], capture_output=True, text=True,
                          timeout=timeout)


def probe_ok(directory, *args, **kwargs):
    proc = run_probe(directory, *args, **kwargs)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def expected_sum(samples):
    """The probe's weighted sum of its pattern, computed here from the pattern's definition."""
    i = np.arange(samples * IMAGE_BYTES, dtype=np.int64)
    pixels = (7 * i + i // 4096) % 251
    j = np.arange(samples, dtype=np.int64)
    return int((pixels * (i % 1000 + 1)).sum()) + int(((j % 10) * (j + 1)).sum())


def cache_file(directory):
    return Path(directory) / f"{FINGERPRINT}.rmdata"


def debris(directory):
    return sorted(p.name for p in Path(directory).iterdir() if ".tmp" in p.name)


def read_header(path):
    raw = Path(path).read_bytes()
    magic, version, _, length = struct.unpack("<8sIIQ", raw[:PREFIX])
    return raw, magic, version, json.loads(raw[PREFIX:PREFIX + length])


def test_first_call_builds_and_later_calls_reuse(tmp_path):
    directory = tmp_path / "a" / "b" / "cache"  # mkdir -p
    first = probe_ok(directory, "--n", "300")
    assert first["built"] is True
    assert first["sum"] == expected_sum(300)
    assert first["shape"] == [300, 1, 28, 28] and first["dtype"] == "Byte"
    assert first["classNames"] == ["even", "odd"] and first["description"] == "probe pattern (300 images)"
    assert first["path"] == str(cache_file(directory))
    assert (directory.stat().st_mode & 0o777) == 0o700 and ((tmp_path / "a").stat().st_mode & 0o777) == 0o700

    # The file is what the format says: the tensors page-aligned at their offsets, the length as stated.
    raw, magic, version, header = read_header(cache_file(directory))
    assert magic == b"RMDATA\r\n" and version == 1
    assert header["fileBytes"] == len(raw) and header["fingerprint"] == FINGERPRINT
    inputs, targets = header["inputs"], header["targets"]
    assert inputs["offset"] % PAGE == 0 and targets["offset"] % PAGE == 0
    assert inputs["dtype"] == "uint8" and targets["dtype"] == "int64" and targets["shape"] == [300]
    i = np.arange(300 * IMAGE_BYTES, dtype=np.int64)
    stored = np.frombuffer(raw, dtype=np.uint8, count=inputs["bytes"], offset=inputs["offset"])
    assert np.array_equal(stored, ((7 * i + i // 4096) % 251).astype(np.uint8))
    stored_targets = np.frombuffer(raw, dtype=np.int64, count=300, offset=targets["offset"])
    assert np.array_equal(stored_targets, np.arange(300) % 10)

    for _ in range(2):
        again = probe_ok(directory, "--n", "300")
        assert again["built"] is False and again["sum"] == first["sum"]
    assert debris(directory) == []


def test_racing_processes_build_exactly_once(tmp_path):
    procs = [subprocess.Popen([PROBE, str(tmp_path), FINGERPRINT, "--n", "500", "--build-delay-ms", "1500"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, out + err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert sorted(r["built"] for r in results) == [False, False, True], results
    assert {r["sum"] for r in results} == {expected_sum(500)}
    assert debris(tmp_path) == []


def damage(path, how):
    raw = bytearray(path.read_bytes())
    _, _, _, header = read_header(path)
    if how == "truncated-half":
        raw = raw[:len(raw) // 2]
    elif how == "truncated-to-prefix":
        raw = raw[:10]
    elif how == "empty":
        raw = b""
    elif how == "appended":
        raw += b"\0" * PAGE
    elif how == "magic":
        raw[:8] = b"NOTCACHE"
    elif how == "version":
        raw[8:12] = struct.pack("<I", 99)
    elif how == "header-length":
        raw[16:24] = struct.pack("<Q", 1 << 40)
    elif how == "header-json":
        raw[PREFIX:PREFIX + 5] = b"{{{{{"
    elif how == "payload-byte":
        raw[header["inputs"]["offset"] + 1234] ^= 0xFF
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize("how", ["truncated-half", "truncated-to-prefix", "empty", "appended", "magic", "version",
                                 "header-length", "header-json", "payload-byte"])
def test_damaged_file_is_rebuilt(tmp_path, how):
    assert probe_ok(tmp_path, "--n", "400")["built"] is True
    damage(cache_file(tmp_path), how)
    proc = run_probe(tmp_path, "--n", "400")
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stdout}{proc.stderr}"
    rebuilt = json.loads(proc.stdout.strip().splitlines()[-1])
    assert rebuilt["built"] is True and rebuilt["sum"] == expected_sum(400)
    if how != "empty":
        log = proc.stdout + proc.stderr  # spdlog's default logger writes to stdout
        assert "unusable" in log and "rebuilding" in log, log
    assert probe_ok(tmp_path, "--n", "400")["built"] is False
    assert debris(tmp_path) == []


def test_failed_build_leaves_nothing_and_the_next_call_builds(tmp_path):
    proc = run_probe(tmp_path, "--n", "200", "--fail-build")
    assert proc.returncode == EXIT_USAGE, proc.stdout + proc.stderr
    assert proc.stderr.strip() == "error: --data: the probe was told to fail while building"
    assert debris(tmp_path) == [] and not cache_file(tmp_path).exists()
    after = probe_ok(tmp_path, "--n", "200")
    assert after["built"] is True and after["sum"] == expected_sum(200)


def test_folder_under_a_file_is_an_io_error_and_creates_nothing(tmp_path):
    blocker = tmp_path / "plain-file"
    blocker.write_text("not a folder")
    directory = blocker / "sub" / "cache"
    proc = run_probe(directory, "--n", "50")
    assert proc.returncode == EXIT_FAILURE, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(directory) in lines[0] and "Not a directory" in lines[0], proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain-file"]


def test_read_only_folder_is_an_io_error(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes into a 0500 folder regardless (the folder-under-a-file test covers the error)")
    directory = tmp_path / "locked"
    directory.mkdir(mode=0o500)
    proc = run_probe(directory, "--n", "50")
    assert proc.returncode == EXIT_FAILURE and str(directory) in proc.stderr, proc.stdout + proc.stderr
    assert list(directory.iterdir()) == []


def test_full_disk_is_an_io_error_without_a_temp_file(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4M", "tmpfs", str(disk)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        proc = run_probe(disk, "--n", "20000")  # ~16 MB
        assert proc.returncode == EXIT_FAILURE, proc.stdout + proc.stderr
        assert str(cache_file(disk)) in proc.stderr and "No space left on device" in proc.stderr, proc.stderr
        assert debris(disk) == [] and not cache_file(disk).exists()
        assert probe_ok(disk, "--n", "100")["built"] is True  # space for a small one: it works
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fingerprint(path, options="imagefolder;28x28"):
    proc = subprocess.run([PROBE, "fingerprint", str(path), options], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.strip()


def test_fingerprint_follows_files_and_options(tmp_path):
    source = tmp_path / "images"
    (source / "cat").mkdir(parents=True)
    (source / "dog").mkdir()
    for name in ["cat/1.png", "cat/2.png", "dog/1.png"]:
        (source / name).write_bytes(b"x" * 10)
    picture = source / "cat" / "2.png"
    original = fingerprint(source)
    assert len(original) == 32 and int(original, 16) >= 0
    assert fingerprint(source) == original  # stable

    stamp = picture.stat()
    os.utime(picture, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1))  # touched: one nanosecond later
    touched = fingerprint(source)
    os.utime(picture, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert touched != original and fingerprint(source) == original  # the time decides, nothing else

    with open(picture, "ab") as f:
        f.write(b"y")
    os.utime(picture, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # same time, one byte longer
    grown = fingerprint(source)
    assert grown not in (original, touched)

    (source / "dog" / "2.png").write_bytes(b"x")
    added = fingerprint(source)
    assert added not in (original, touched, grown)
    assert fingerprint(source, "imagefolder;32x32") != added
    assert fingerprint(source, "imagefolder;28x28") == added

    single = tmp_path / "data.pt"
    single.write_bytes(b"z" * 5)
    alone = fingerprint(single, "tensor")
    assert fingerprint(single, "tensor") == alone and alone != fingerprint(single, "tensor;v2")
    os.utime(single, ns=(1, 2))
    assert fingerprint(single, "tensor") != alone


def read_json_line(proc, timeout):
    """The probe's JSON line, read with a deadline (a probe that hangs fails the test, not the run). Reads
    the pipe's bytes itself: a buffered readline() would keep a second line (the JSON after a log line)
    in Python's buffer, where select() cannot see it."""
    deadline = time.monotonic() + timeout
    pending = b""
    fd = proc.stdout.fileno()
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            chunk = os.read(fd, 65536)
            assert chunk, f"probe {proc.pid} exited {proc.poll()} without its line"
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                if line.startswith(b"{"):  # not a log line
                    return json.loads(line)
    pytest.fail(f"probe {proc.pid} printed nothing within {timeout}s")


def pss_kb(pid, path=None, field="Pss:"):
    """Proportional set size of a process (smaps_rollup; `field` "Pss_Anon:" for its private anonymous
    memory) or of its mappings of one file (smaps)."""
    if path is None:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        return sum(int(line.split()[1]) for line in text.splitlines() if line.startswith(field))
    total, current = 0, None
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and len(fields) >= 5:  # a mapping's first line: range perms offset dev inode [path]
            current = fields[5] if len(fields) > 5 else None
        elif fields[0] == "Pss:" and current == str(path):
            total += int(fields[1])
    return total


def test_two_processes_share_one_copy(tmp_path):
    built = probe_ok(tmp_path, "--n", str(MEMORY_SAMPLES))
    path = built["path"]
    file_mb = Path(path).stat().st_size / 2**20
    holders = []
    try:
        def hold(samples=MEMORY_SAMPLES, fingerprint=FINGERPRINT):
            proc = subprocess.Popen([PROBE, str(tmp_path), fingerprint, "--n", str(samples), "--hold-ms", "120000"],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            holders.append(proc)
            line = read_json_line(proc, 120)
            assert fingerprint != FINGERPRINT or (line["built"] is False and line["sum"] == built["sum"])
            return proc.pid

        # A LibTorch process's own private memory, with a dataset of ten images: the baseline.
        baseline_anon = pss_kb(hold(10, "f" * 32), field="Pss_Anon:") / 1024
        first = hold()
        alone_file, alone_total = pss_kb(first, path) / 1024, pss_kb(first) / 1024
        second = hold()
        both_file = (pss_kb(first, path) + pss_kb(second, path)) / 1024
        both_total = (pss_kb(first) + pss_kb(second)) / 1024
        anon = [pss_kb(pid, field="Pss_Anon:") / 1024 for pid in (first, second)]
    finally:
        for proc in holders:
            proc.kill()
            proc.wait()
    print(f"cache file {file_mb:.1f} MB; PSS of its mapping: one process {alone_file:.1f} MB, two processes "
          f"together {both_file:.1f} MB ({both_file / alone_file:.2f}x); whole-process PSS: one {alone_total:.1f} MB, "
          f"two together {both_total:.1f} MB ({both_total / alone_total:.2f}x); private anonymous memory "
          f"{anon[0]:.1f} and {anon[1]:.1f} MB, {baseline_anon:.1f} MB with ten images")
    assert alone_file > 0.9 * file_mb  # the probe read every page
    assert both_file <= 1.3 * alone_file
    # Neither process holds a private copy of the data: beyond LibTorch's own, less than a quarter of it.
    assert all(a - baseline_anon < 0.25 * file_mb for a in anon), anon


def test_a_cache_file_of_another_user_is_not_trusted(tmp_path):
    """Issue 22, item 6: in a shared cache folder a file another user wrote (or that others may write) is never
    trusted, however valid it looks: its checksum guards against damage, not against someone writing other data.
    It is rebuilt and replaced; the data the probe gets is the source's."""
    if os.geteuid() != 0:
        pytest.skip("needs root: gives a cache file to another user")
    directory = tmp_path / "shared"
    assert probe_ok(directory, "--n", "200")["built"] is True
    os.chown(cache_file(directory), 65534, 65534)  # nobody
    rebuilt = probe_ok(directory, "--n", "200")
    assert rebuilt["built"] is True and rebuilt["sum"] == expected_sum(200)
    assert cache_file(directory).stat().st_uid == os.geteuid()
    os.chmod(cache_file(directory), 0o666)         # anyone may change it
    again = probe_ok(directory, "--n", "200")
    assert again["built"] is True and again["sum"] == expected_sum(200)
    assert probe_ok(directory, "--n", "200")["built"] is False  # its own, private file: reused
