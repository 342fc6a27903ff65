"""Models, checkpoints and .pt files are code, and LibTorch allocates what they say (issue 22, item 4).

LibTorch's zip reader allocates a record at the size the central directory states, and its unpickler a string
at the length its opcode states, before either is checked against the file. Files built with valid CRCs that
claim gigabytes are refused in one line before LibTorch reads them (core/trainer/zip_directory.h), under an
address-space limit that an allocation of what they claim would break. Real files written by torch.save and
torch.jit.save still load, and our reading of the central directory agrees with Python's zipfile.
"""
import os
import pickletools
import resource
import struct
import subprocess
import zipfile
from pathlib import Path

import pytest
import torch

from conftest import run_single

PROBE = os.environ.get("RINGMASTER_DATA_PROBE", "ringmaster-data-probe")
LIMIT_BYTES = 3 << 30   # LibTorch's libraries map about 1 GiB of address space; a 4 GiB claim cannot fit


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def probe(path):
    proc = subprocess.run([PROBE, "tensor-file", str(path)], capture_output=True, text=True, timeout=120,
                          preexec_fn=limited)
    return proc.returncode, proc.stderr.strip()


def rewrite(path, transform):
    """The archive's records again, each through transform(name, bytes), stored as PyTorch stores them."""
    with zipfile.ZipFile(path) as archive:
        records = [(info.filename, archive.read(info)) for info in archive.infolist()]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, data in records:
            archive.writestr(name, transform(name, data))
    return path


def lengthen_first_string(data):
    """data.pkl with its first BINUNICODE claiming 2 GiB - 1 bytes (found by Python's own pickle walker)."""
    at = next(pos for op, arg, pos in pickletools.genops(data) if op.name == "BINUNICODE")
    return data[:at] + b"X\xff\xff\xff\x7f" + data[at + 5:]


def tensor_file(tmp_path, name="data.pt"):
    path = tmp_path / name
    torch.save({"x": torch.randn(6, 3), "y": torch.tensor([0, 1, 2, 1, 0, 2])}, path)
    return path


def test_real_files_pass_and_agree_with_zipfile(tmp_path):
    path = tensor_file(tmp_path)
    code, err = probe(path)
    assert code == 0, err
    # The same records written again by Python's zipfile (no PyTorch alignment padding) load too: our reading of
    # the central directory and local headers agrees with zipfile's.
    copy = tmp_path / "restored.pt"
    copy.write_bytes(path.read_bytes())
    code, err = probe(rewrite(copy, lambda name, data: data))
    assert code == 0, err


def test_a_record_claiming_gigabytes_is_refused(tmp_path):
    path = tensor_file(tmp_path)
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
    # The central directory entry of the tensor's storage: both sizes 4 GiB - 16 (the CRCs stay valid).
    target = next(i for i in infos if i.filename.endswith("data/0"))
    at = raw.find(b"PK\x01\x02")
    while at >= 0:
        name_length = struct.unpack("<H", raw[at + 28:at + 30])[0]
        if raw[at + 46:at + 46 + name_length].decode() == target.filename:
            raw[at + 20:at + 28] = struct.pack("<II", 0xFFFFFFF0, 0xFFFFFFF0)
            break
        at = raw.find(b"PK\x01\x02", at + 4)
    assert at >= 0
    path.write_bytes(bytes(raw))
    code, err = probe(path)
    assert code == 2, err
    assert "data/0" in err and "stored size 4294967280 bytes, more than the file's" in err, err


def test_a_pickle_string_claiming_gigabytes_is_refused(tmp_path):
    path = tensor_file(tmp_path)

    # A string's length says 2 GiB; records and CRCs are consistent again.
    rewrite(path, lambda name, data: lengthen_first_string(data) if name.endswith("data.pkl") else data)
    code, err = probe(path)
    assert code == 2, err
    assert "data.pkl" in err and "a string or bytes of 2147483647 bytes" in err, err


def test_compressed_records_are_checked_too(tmp_path):
    """Deflated records load (torch.jit.save deflates code/*.py and *.debug_pkl); a deflated pickle is inflated to
    be walked, a lie in it refused; another compression method is refused."""
    path = tensor_file(tmp_path)
    with zipfile.ZipFile(path) as archive:
        records = [(info.filename, archive.read(info)) for info in archive.infolist()]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in records:
            archive.writestr(name, data)
    code, err = probe(path)
    assert code == 0, err
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in records:
            archive.writestr(name, lengthen_first_string(data) if name.endswith("data.pkl") else data)
    code, err = probe(path)
    assert code == 2, err
    assert "data.pkl" in err and "a string or bytes of 2147483647 bytes" in err, err
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_BZIP2) as archive:
        for name, data in records:
            archive.writestr(name, data)
    code, err = probe(path)
    assert code == 2, err
    assert "compressed with method 12" in err, err


def test_a_torchscript_model_is_checked_before_it_loads(tmp_path):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(784, 10)

        def forward(self, x):
            return self.fc(x.flatten(1))

    model = tmp_path / "net.pt"
    torch.jit.save(torch.jit.script(Net()), str(model))

    rewrite(model, lambda name, data: lengthen_first_string(data) if name.endswith("/data.pkl") else data)
    code, out = run_single(["--model", str(model), "--validate-only"])
    assert code == 2, out
    assert "not a usable TorchScript file" in out and "a string or bytes of 2147483647 bytes" in out, out


@pytest.mark.parametrize("pickle_bytes, needle", [
    (b"\x80\x02X\xff\xff\xff\x7f", "a string or bytes of 2147483647 bytes"),
    (b"\x80\x02\x8d" + struct.pack("<Q", 1 << 40), "a string or bytes of 1099511627776 bytes"),
    (b"\x80\x02}r\x00\x10\x00\x00.", "memo index 4096"),
    (b"\x80\x02\x95" + struct.pack("<Q", 1 << 33) + b".", "a frame of 8589934592 bytes"),
    (b"\x80\x02}q\x00.", 'has no "x" entry'),   # a well-formed pickle passes the walk
])
def test_pickle_walk(tmp_path, pickle_bytes, needle):
    """Each pickle opcode with a length, through a tensor file's data.pkl."""
    path = tmp_path / "walk.pt"
    torch.save({"x": torch.zeros(2, 1), "y": torch.tensor([0, 1])}, path)
    rewrite(path, lambda name, data: pickle_bytes if name.endswith("data.pkl") else data)
    code, err = probe(path)
    assert code == 2, err
    assert needle in err, err


def central_directory(raw):
    """(offset of the end record, offset and size of the central directory, entry count) of a plain zip."""
    end = raw.rfind(b"PK\x05\x06")
    entries, size, offset = struct.unpack("<HII", raw[end + 10:end + 20])
    return end, offset, size, entries


def test_records_sharing_bytes_are_refused(tmp_path):
    """Two directory entries pointing at one record would let a file's size bound each record, not their sum."""
    path = tensor_file(tmp_path)
    raw = bytearray(path.read_bytes())
    end, offset, size, entries = central_directory(raw)
    at = offset
    while at < offset + size:
        name_length, extra_length, comment_length = struct.unpack("<HHH", raw[at + 28:at + 34])
        name = bytes(raw[at + 46:at + 46 + name_length])
        length = 46 + name_length + extra_length + comment_length
        if name.endswith(b"data/0"):
            twin = bytearray(raw[at:at + length])
            twin[46 + name_length - 1:46 + name_length] = b"9"  # data/9, the same bytes
            break
        at += length
    raw[offset + size:offset + size] = twin
    end += len(twin)
    raw[end + 8:end + 16] = struct.pack("<HHI", entries + 1, entries + 1, size + len(twin))
    if raw[end - 20:end - 16] == b"PK\x06\x07":  # PyTorch's writer adds ZIP64 records: keep them consistent
        zip64 = end - 76
        raw[zip64 + 24:zip64 + 48] = struct.pack("<QQQ", entries + 1, entries + 1, size + len(twin))
        raw[end - 12:end - 4] = struct.pack("<Q", zip64)
    path.write_bytes(bytes(raw))
    code, err = probe(path)
    assert code == 2, err
    assert "overlaps" in err, err


def test_bytes_after_the_end_record_are_refused(tmp_path):
    """LibTorch's reader takes the last end record it finds; one whose comment does not reach the end of the file
    means the directory checked and the one LibTorch reads could differ."""
    path = tensor_file(tmp_path)
    path.write_bytes(path.read_bytes() + b"PK\x05\x06" + bytes(18))  # a second, empty end record
    code, err = probe(path)
    assert code == 2, err
    assert "end of central directory" in err or "records" in err, err
