"""TensorBoard event files (core/protocol/tensorboard_records.*, core/trainer/tensorboard_writer.*) against an
independent implementation written here from the published format: CRC-32C (Castagnoli), the TFRecord mask and
framing, and the protobuf encoding of tensorflow.Event / Summary / TensorProto. Python's standard library only
(Debian has no tensorboard package). Files go both ways: the C++ writer's files decode here, files made here
(with unknown fields and value kinds the reader must skip) decode in C++, and damaged or random bytes are
handled as specified without a crash."""
import json
import os
import random
import re
import socket
import struct
import subprocess
import time

import pytest

TOOL = os.environ.get("RINGMASTER_TFRECORD_TOOL", "ringmaster-tfrecord-tool")

# ---- CRC-32C, bit by bit into a table, from the polynomial (reflected 0x82F63B78) ----

def _crc_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


CRC_TABLE = _crc_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = CRC_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data):
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked(crc32c(length))) + data + struct.pack("<I", masked(crc32c(data)))


def unframe(blob):
    """Every record's data, checking both checksums; the blob must hold whole records only."""
    records, pos = [], 0
    while pos < len(blob):
        length_bytes = blob[pos:pos + 8]
        (length,) = struct.unpack("<Q", length_bytes)
        (length_crc,) = struct.unpack("<I", blob[pos + 8:pos + 12])
        assert length_crc == masked(crc32c(length_bytes)), f"length CRC at {pos}"
        data = blob[pos + 12:pos + 12 + length]
        (data_crc,) = struct.unpack("<I", blob[pos + 12 + length:pos + 16 + length])
        assert data_crc == masked(crc32c(data)), f"data CRC at {pos}"
        records.append(data)
        pos += 16 + length
    assert pos == len(blob)
    return records


# ---- protobuf, from https://protobuf.dev/programming-guides/encoding/ ----

VARINT, I64, LEN, I32 = 0, 1, 2, 5


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def pb_varint(field, n):
    return key(field, VARINT) + varint(n)


def pb_double(field, x):
    return key(field, I64) + struct.pack("<d", x)


def pb_float(field, x):
    return key(field, I32) + struct.pack("<f", x)


def pb_bytes(field, data):
    if isinstance(data, str):
        data = data.encode()
    return key(field, LEN) + varint(len(data)) + data


def pb_fields(data):
    """(field, wire type, value) triples; value is an int, or bytes for LEN, I64 and I32."""
    pos, out = 0, []
    while pos < len(data):
        k, pos = read_varint(data, pos)
        field, wire = k >> 3, k & 7
        if wire == VARINT:
            value, pos = read_varint(data, pos)
        elif wire == I64:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == I32:
            value, pos = data[pos:pos + 4], pos + 4
        elif wire == LEN:
            n, pos = read_varint(data, pos)
            value, pos = data[pos:pos + n], pos + n
        else:
            raise ValueError(f"wire type {wire}")
        out.append((field, wire, value))
    assert pos == len(data)
    return out


def read_varint(data, pos):
    shift = result = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, pos


# Field numbers of tensorflow/core/util/event.proto, framework/summary.proto and framework/tensor.proto.
EVENT_WALL_TIME, EVENT_STEP, EVENT_FILE_VERSION, EVENT_SUMMARY = 1, 2, 3, 5
SUMMARY_VALUE = 1
VALUE_TAG, VALUE_SIMPLE, VALUE_IMAGE, VALUE_TENSOR, VALUE_METADATA = 1, 2, 4, 8, 9
TENSOR_DTYPE, TENSOR_SHAPE, TENSOR_CONTENT, TENSOR_FLOAT_VAL, TENSOR_DOUBLE_VAL = 1, 2, 4, 5, 6
SHAPE_DIM, DIM_SIZE = 2, 1
DT_FLOAT, DT_DOUBLE, DT_INT32 = 1, 2, 3


def decode_event(data):
    """Python's reading of an Event as written by the C++ writer: (wall_time, step, file_version, [(tag, value)])."""
    wall_time, step, version, values = 0.0, 0, None, []
    for field, wire, value in pb_fields(data):
        if (field, wire) == (EVENT_WALL_TIME, I64):
            (wall_time,) = struct.unpack("<d", value)
        elif (field, wire) == (EVENT_STEP, VARINT):
            step = value - (1 << 64) if value >= 1 << 63 else value
        elif (field, wire) == (EVENT_FILE_VERSION, LEN):
            version = value.decode()
        elif (field, wire) == (EVENT_SUMMARY, LEN):
            for f, w, v in pb_fields(value):
                assert (f, w) == (SUMMARY_VALUE, LEN)
                fields = {ff: vv for ff, ww, vv in pb_fields(v)}
                values.append((fields[VALUE_TAG].decode(), struct.unpack("<f", fields[VALUE_SIMPLE])[0]))
        else:
            raise AssertionError(f"unexpected field {field} wire {wire}")
    return wall_time, step, version, values


def event(wall_time, step, *values, extra=b""):
    return pb_double(EVENT_WALL_TIME, wall_time) + pb_varint(EVENT_STEP, step) + extra + \
        pb_bytes(EVENT_SUMMARY, b"".join(pb_bytes(SUMMARY_VALUE, v) for v in values))


def simple(tag, x):
    return pb_bytes(VALUE_TAG, tag) + pb_float(VALUE_SIMPLE, x)


def tensor_value(tag, tensor):
    return pb_bytes(VALUE_TAG, tag) + pb_bytes(VALUE_TENSOR, tensor)


def shape(*dims):
    return pb_bytes(TENSOR_SHAPE, b"".join(pb_bytes(SHAPE_DIM, pb_varint(DIM_SIZE, d)) for d in dims))


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


# ---- the C++ side ----

def tool(*args):
    proc = subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
    return proc.stdout


def cpp_read(path):
    """(scalars as (step, tag, value, wall_time), the scan summary) as the C++ reader sees the file."""
    lines = [json.loads(line) for line in tool("read", path).splitlines()]
    assert lines and lines[-1]["kind"] == "scan"
    scalars = [(l["step"], l["tag"], l["value"], l["wall_time"]) for l in lines if l["kind"] == "scalar"]
    return scalars, lines[-1], [l for l in lines if l["kind"] == "file_version"]


def expected_sample():
    """What `ringmaster-tfrecord-tool write` writes (tests/tools/tfrecord_tool.cpp), as float32 values."""
    out = []
    for step in range(1, 4):
        wall = 1.7e9 + step + 0.25
        out += [(step, "loss", f32(1.0 / step), wall), (step, "lr", f32(0.1 * step), wall),
                (step, "samples_per_sec", f32(1000.0 + step), wall)]
    out += [(3, "val_loss", 0.5, 1.7e9 + 3.5), (3, "val_accuracy", 0.875, 1.7e9 + 3.5)]
    return out


# ---- the tests ----

def test_crc32c_published_check_values():
    assert crc32c(b"123456789") == 0xE3069283
    # RFC 3720 (iSCSI), appendix B.4: the CRC-32C of four 32-byte patterns.
    assert crc32c(bytes(32)) == 0x8A9136AA
    assert crc32c(b"\xff" * 32) == 0x62A8AB43
    assert crc32c(bytes(range(32))) == 0x46DD794E
    assert crc32c(bytes(range(31, -1, -1))) == 0x113FDB5C
    assert masked(0) == 0xA282EAD8


def test_cpp_writer_file_decodes_in_python(tmp_path):
    path = tmp_path / "events.out.tfevents.1.test.1"
    before = time.time()
    tool("write", path)
    records = unframe(path.read_bytes())
    events = [decode_event(r) for r in records]
    wall_time, step, version, values = events[0]
    assert version == "brain.Event:2" and values == [] and before - 1 <= wall_time <= time.time() + 1
    got = []
    for wall_time, step, version, values in events[1:]:
        assert version is None and len(values) == 1  # one Event per scalar
        got.append((step, values[0][0], values[0][1], wall_time))
    assert got == expected_sample()
    # And the C++ reader agrees with itself.
    scalars, scan, versions = cpp_read(path)
    assert scalars == expected_sample()
    assert [v["file_version"] for v in versions] == ["brain.Event:2"]
    assert scan["consumed"] == scan["size"] and not scan["framing_lost"]


def test_run_directory_file_name(tmp_path):
    before = int(time.time())
    path = tool("write-run", tmp_path).strip()
    folder, name = os.path.split(path)
    assert folder == str(tmp_path / "tb")
    match = re.fullmatch(r"events\.out\.tfevents\.(\d+)\.(.+)\.(\d+)", name)
    assert match, name
    assert before <= int(match.group(1)) <= time.time() + 1
    assert match.group(2) == socket.gethostname()
    assert cpp_read(path)[0] == expected_sample()


def python_written_events():
    """Records in every form a scalar may take, plus what the reader must skip, and the scalars it must report."""
    unknown_fields = pb_varint(100, 7) + key(101, I64) + bytes(8) + pb_bytes(102, b"\x01\x02") + key(103, I32) + bytes(4)
    records = [
        pb_double(EVENT_WALL_TIME, 10.5) + pb_bytes(EVENT_FILE_VERSION, "brain.Event:2"),
        event(11.0, 1, simple("a/simple", 0.25)),
        # Unknown fields of every wire type at every level, and a Value's metadata.
        event(12.0, 2, unknown_fields + simple("b/unknowns", 1.5) + unknown_fields +
              pb_bytes(VALUE_METADATA, pb_bytes(1, pb_bytes(1, "scalars"))), extra=unknown_fields),
        # One-element tensors: rank 0 float via tensor_content, [1,1] via packed float_val, unpacked float_val,
        # double via double_val and via tensor_content.
        event(13.0, 3, tensor_value("c/content", pb_varint(TENSOR_DTYPE, DT_FLOAT) +
                                    pb_bytes(TENSOR_CONTENT, struct.pack("<f", -2.5)))),
        event(14.0, 4, tensor_value("c/packed", pb_varint(TENSOR_DTYPE, DT_FLOAT) + shape(1, 1) +
                                    pb_bytes(TENSOR_FLOAT_VAL, struct.pack("<f", 3.25)) + unknown_fields)),
        event(15.0, 5, tensor_value("c/unpacked", pb_varint(TENSOR_DTYPE, DT_FLOAT) + shape() +
                                    pb_float(TENSOR_FLOAT_VAL, 4.75))),
        event(16.0, 6, tensor_value("c/double", pb_varint(TENSOR_DTYPE, DT_DOUBLE) + shape(1) +
                                    pb_double(TENSOR_DOUBLE_VAL, 0.1))),
        event(17.0, 7, tensor_value("c/double_content", pb_varint(TENSOR_DTYPE, DT_DOUBLE) +
                                    pb_bytes(TENSOR_CONTENT, struct.pack("<d", 1e-300)))),
        # Not scalars: an image (an unknown Value kind), a 2-element tensor, an int32 tensor, an empty Value;
        # the scalar beside them in the same Summary still counts.
        event(18.0, 8, pb_bytes(VALUE_TAG, "d/image") + pb_bytes(VALUE_IMAGE, pb_varint(1, 2) + pb_bytes(4, b"PNG")),
              tensor_value("d/two", pb_varint(TENSOR_DTYPE, DT_FLOAT) + shape(2) +
                           pb_bytes(TENSOR_FLOAT_VAL, struct.pack("<2f", 1, 2))),
              tensor_value("d/int", pb_varint(TENSOR_DTYPE, DT_INT32) + pb_bytes(TENSOR_CONTENT, b"\x01\0\0\0")),
              pb_bytes(VALUE_TAG, "d/empty"),
              simple("d/kept", 8.0)),
        # An event without a summary (a graph, say) and a large negative step.
        pb_double(EVENT_WALL_TIME, 19.0) + pb_bytes(4, b"graph bytes"),
        event(20.0, -3, simple("e/negative_step", 5.0)),
    ]
    expected = [(1, "a/simple", 0.25, 11.0), (2, "b/unknowns", 1.5, 12.0), (3, "c/content", -2.5, 13.0),
                (4, "c/packed", 3.25, 14.0), (5, "c/unpacked", 4.75, 15.0), (6, "c/double", 0.1, 16.0),
                (7, "c/double_content", 1e-300, 17.0), (8, "d/kept", 8.0, 18.0), (-3, "e/negative_step", 5.0, 20.0)]
    return records, expected


def test_python_written_file_decodes_in_cpp(tmp_path):
    records, expected = python_written_events()
    path = tmp_path / "events.out.tfevents.2.py.2"
    path.write_bytes(b"".join(frame(r) for r in records))
    scalars, scan, versions = cpp_read(path)
    assert scalars == expected
    assert [(v["file_version"], v["wall_time"]) for v in versions] == [("brain.Event:2", 10.5)]
    assert scan == {"kind": "scan", "size": path.stat().st_size, "consumed": path.stat().st_size,
                    "framing_lost": False, "bad_data_records": 0, "undecodable_records": 0, "oversized_records": 0}


def five_records():
    records = [event(100.0 + i, i, simple(f"s/{i}", i * 1.5)) for i in range(5)]
    offsets = [0]
    for r in records:
        offsets.append(offsets[-1] + 16 + len(r))
    return b"".join(frame(r) for r in records), offsets


def test_flipped_data_byte_skips_only_that_record(tmp_path):
    blob, offsets = five_records()
    damaged = bytearray(blob)
    damaged[offsets[2] + 12 + 5] ^= 0x10  # inside record 2's data
    path = tmp_path / "events.out.tfevents.3.x.3"
    path.write_bytes(damaged)
    scalars, scan, _ = cpp_read(path)
    assert [s[0] for s in scalars] == [0, 1, 3, 4]
    assert scan["bad_data_records"] == 1 and not scan["framing_lost"] and scan["consumed"] == len(blob)
    # A flipped data CRC is the same case.
    damaged = bytearray(blob)
    damaged[offsets[1] - 1] ^= 0x01  # record 0's data CRC
    path.write_bytes(damaged)
    scalars, scan, _ = cpp_read(path)
    assert [s[0] for s in scalars] == [1, 2, 3, 4] and scan["bad_data_records"] == 1


def test_truncated_trailing_record_is_not_reported(tmp_path):
    blob, offsets = five_records()
    path = tmp_path / "events.out.tfevents.4.x.4"
    for cut in (offsets[4] + 5, offsets[4] + 12, offsets[5] - 1):  # in the header, after it, before the data CRC
        path.write_bytes(blob[:cut])
        scalars, scan, _ = cpp_read(path)
        assert [s[0] for s in scalars] == [0, 1, 2, 3], cut
        assert scan["consumed"] == offsets[4] and not scan["framing_lost"] and scan["bad_data_records"] == 0


def test_flipped_length_byte_abandons_the_rest(tmp_path):
    blob, offsets = five_records()
    path = tmp_path / "events.out.tfevents.5.x.5"
    for where in (offsets[3], offsets[3] + 8):  # the length itself, and its CRC
        damaged = bytearray(blob)
        damaged[where] ^= 0x01
        path.write_bytes(damaged)
        scalars, scan, _ = cpp_read(path)
        assert [s[0] for s in scalars] == [0, 1, 2], where
        assert scan["framing_lost"] and scan["consumed"] == offsets[3]


def test_garbage_never_crashes(tmp_path):
    rng = random.Random(20261130)
    path = tmp_path / "events.out.tfevents.6.x.6"
    # Random bytes: nothing decodes, the reader just stops.
    for size in (0, 1, 11, 12, 16, 100, 5000):
        path.write_bytes(bytes(rng.getrandbits(8) for _ in range(size)))
        cpp_read(path)
    # Sound framing around damaged protobuf: the decoder itself sees every kind of broken message.
    records, _ = python_written_events()
    payloads = []
    for _ in range(3000):
        data = bytearray(rng.choice(records))
        for _ in range(rng.randint(1, 4)):
            choice = rng.random() if data else 1.0
            if choice < 0.5:
                data[rng.randrange(len(data))] = rng.getrandbits(8)
            elif choice < 0.7:
                del data[rng.randrange(len(data)):]
            elif choice < 0.85:
                data[rng.randrange(len(data)):rng.randrange(len(data))] = b"\xff" * rng.randint(1, 11)
            else:
                data += bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 20)))
        payloads.append(bytes(data))
    payloads += [b"", b"\x08", b"\x80" * 11, b"\x0a\xff\xff\xff\xff\x0f", b"\x2a\x05\x0a\x03\x0a\x01", b"\x00\x00"]
    path.write_bytes(b"".join(frame(p) for p in payloads))
    scalars, scan, _ = cpp_read(path)
    assert scan["consumed"] == scan["size"] and not scan["framing_lost"] and scan["bad_data_records"] == 0
    assert 0 < scan["undecodable_records"] < len(payloads)
    # A sound length CRC on an absurd length is lost framing, not an allocation.
    huge = struct.pack("<Q", 1 << 60)
    path.write_bytes(frame(records[1]) + huge + struct.pack("<I", masked(crc32c(huge))) + bytes(64))
    scalars, scan, _ = cpp_read(path)
    assert len(scalars) == 1 and scan["framing_lost"]


def test_oversized_record_is_stepped_over(tmp_path):
    records, _ = python_written_events()
    big = pb_double(EVENT_WALL_TIME, 1.0) + pb_bytes(4, bytes(4 * 1024 * 1024 + 1))  # over the 4 MiB limit
    path = tmp_path / "events.out.tfevents.7.x.7"
    path.write_bytes(frame(records[1]) + frame(big) + frame(records[3]))
    scalars, scan, _ = cpp_read(path)
    assert [s[1] for s in scalars] == ["a/simple", "c/content"]
    assert scan["oversized_records"] == 1 and scan["consumed"] == scan["size"]
