"""The trainer's dataset readers (core/trainer/data/) through ringmaster-data-probe, against PIL and
PyTorch: image folders (PNG of every colour type, JPEG, resizing), torch.save tensor files and CSV tables,
plus every bad input the readers promise to name. Every file is made here, at test time."""
import json
import os
import struct
import subprocess
import zipfile
import zlib
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from PIL import Image

PROBE = os.environ.get("RINGMASTER_DATA_PROBE", "ringmaster-data-probe")
DTYPES = {"uint8": torch.uint8, "float32": torch.float32, "int64": torch.int64}
HEIGHT, WIDTH = 7, 5  # not square, so a swapped H and W shows


def run_probe(*args):
    proc = subprocess.run([PROBE, *map(str, args)], capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def load(tmp_path, *args):
    """Runs the probe, returns (report, inputs, targets) with the tensors read back from its dump."""
    prefix = tmp_path / "dump"
    code, out, err = run_probe(*args, "--dump", prefix)
    assert code == 0, err
    report = json.loads(out)

    def read(suffix, shape, dtype):
        data = bytearray(Path(f"{prefix}.{suffix}").read_bytes())
        return torch.frombuffer(data, dtype=DTYPES[dtype]).reshape(shape) if data else torch.empty(shape)

    return (report, read("inputs", report["inputs_shape"], report["inputs_dtype"]),
            read("targets", report["targets_shape"], report["targets_dtype"]))


def fails(*args, names=()):
    """The probe exits 2 with one line 'error: ...' that contains every string in `names`."""
    code, out, err = run_probe(*args)
    assert code == 2, f"exit {code}, stdout {out!r}, stderr {err!r}"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --data "), err
    for name in names:
        assert str(name) in lines[0], f"{name!r} not in {lines[0]!r}"
    return lines[0]


# ---- images ----

def random_bytes(count, seed):
    generator = torch.Generator().manual_seed(seed)
    return bytes(torch.randint(0, 256, (count,), dtype=torch.uint8, generator=generator).tolist())


def make_image(path, mode, seed, height=HEIGHT, width=WIDTH, **save):
    channels = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4, "P": 1}[mode]
    image = Image.frombytes(mode, (width, height), random_bytes(width * height * channels, seed))
    if mode == "P":
        image.putpalette(list(random_bytes(256 * 3, seed + 1)))
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, **save)
    return path


def make_png16_grey(path, seed):
    """16-bit grey PNG through PIL's I;16 mode; returns the 16-bit values."""
    values = torch.randint(0, 65536, (HEIGHT * WIDTH,), generator=torch.Generator().manual_seed(seed))
    Image.frombytes("I;16", (WIDTH, HEIGHT), struct.pack(f"<{len(values)}H", *values.tolist())).save(path)
    return values.reshape(1, HEIGHT, WIDTH)


def make_png16_rgba(path, seed):
    """16-bit RGBA PNG written by hand (PIL cannot write one); returns the 16-bit values [4, H, W]."""
    values = torch.randint(0, 65536, (HEIGHT, WIDTH, 4), generator=torch.Generator().manual_seed(seed))
    rows = b"".join(b"\x00" + struct.pack(f">{WIDTH * 4}H", *row.flatten().tolist()) for row in values)

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", WIDTH, HEIGHT, 16, 6, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) +
                     chunk(b"IEND", b""))
    return values.permute(2, 0, 1)


def pil_pixels(path, channels):
    """What PIL decodes, as uint8 [C, H, W]; alpha dropped, grey replicated when C is 3."""
    image = Image.open(path).convert("L" if channels == 1 else "RGB")
    data = bytearray(image.tobytes())
    return torch.frombuffer(data, dtype=torch.uint8).reshape(image.height, image.width, channels).permute(2, 0, 1)


def mixed_folder(root):
    """Classes created out of order; byte order puts 'Mango' before 'apple' before 'zebra'. Returns
    {class: [(file, expected uint8 [3, H, W] or None for PIL's decode)]} in the expected sorted order."""
    expected = {}
    zebra = root / "zebra"
    make_image(zebra / "b.png", "RGB", 1)
    make_image(zebra / "a.PNG", "RGBA", 2)
    make_image(zebra / "9.png", "P", 3)
    make_image(zebra / "10.png", "LA", 4)
    expected["zebra"] = [zebra / n for n in ("10.png", "9.png", "a.PNG", "b.png")]
    apple = root / "apple"
    make_image(apple / "photo.jpg", "RGB", 5, quality=90)
    make_image(apple / "scan.JPEG", "L", 6, quality=75)
    grey16 = make_png16_grey(apple / "deep.png", 7)
    rgba16 = make_png16_rgba(apple / "deep_rgba.png", 8)
    expected["apple"] = [apple / n for n in ("deep.png", "deep_rgba.png", "photo.jpg", "scan.JPEG")]
    mango = root / "Mango"
    make_image(mango / "grey.png", "L", 9)
    expected["Mango"] = [mango / "grey.png"]
    # Ignored: other extensions, hidden files (corrupt, so reading them would fail), hidden folders.
    (zebra / "notes.txt").write_text("not an image")
    (zebra / ".hidden.png").write_bytes(b"garbage")
    (root / ".cache").mkdir()
    (root / "README.md").write_text("a file beside the class folders")
    return expected, {apple / "deep.png": (grey16 >> 8).to(torch.uint8).expand(3, -1, -1),
                      apple / "deep_rgba.png": (rgba16[:3] >> 8).to(torch.uint8)}


def test_image_folder_every_png_kind_and_jpeg(tmp_path):
    expected, sixteen_bit = mixed_folder(tmp_path / "images")
    report, inputs, targets = load(tmp_path, "image-folder", tmp_path / "images")
    classes = sorted(expected)
    assert classes == ["Mango", "apple", "zebra"]
    assert report["classes"] == classes
    files = [f for name in classes for f in expected[name]]
    assert report["inputs_shape"] == [len(files), 3, HEIGHT, WIDTH] and report["inputs_dtype"] == "uint8"
    assert report["targets_dtype"] == "int64"
    assert targets.tolist() == [classes.index(f.parent.name) for f in files]
    for index, path in enumerate(files):
        want = sixteen_bit.get(path, None)
        want = pil_pixels(path, 3) if want is None else want
        if path.suffix.lower() in (".jpg", ".jpeg"):
            # PIL decodes with the same libjpeg-turbo and defaults (ISLOW DCT, fancy upsampling): exact.
            assert torch.equal(inputs[index], want), f"{path}: max diff {(inputs[index].int() - want.int()).abs().max()}"
        else:
            assert torch.equal(inputs[index], want), path
    assert "3 classes" in report["description"]


def test_all_grey_folder_has_one_channel(tmp_path):
    make_image(tmp_path / "d" / "one" / "a.png", "L", 11)
    make_image(tmp_path / "d" / "one" / "b.png", "LA", 12)
    make_image(tmp_path / "d" / "two" / "c.jpg", "L", 13)
    grey16 = make_png16_grey(tmp_path / "d" / "two" / "d.png", 14)
    report, inputs, targets = load(tmp_path, "image-folder", tmp_path / "d")
    assert report["inputs_shape"] == [4, 1, HEIGHT, WIDTH]
    assert targets.tolist() == [0, 0, 1, 1]
    assert torch.equal(inputs[0], pil_pixels(tmp_path / "d" / "one" / "a.png", 1))
    assert torch.equal(inputs[1], pil_pixels(tmp_path / "d" / "one" / "b.png", 1))
    assert torch.equal(inputs[2], pil_pixels(tmp_path / "d" / "two" / "c.jpg", 1))
    assert torch.equal(inputs[3], (grey16 >> 8).to(torch.uint8))


def test_resize_matches_torch_interpolate(tmp_path):
    files = [make_image(tmp_path / "d" / "big" / "a.png", "RGB", 21, height=19, width=13),
             make_image(tmp_path / "d" / "big" / "b.jpg", "RGB", 22, height=9, width=23, quality=95),
             make_image(tmp_path / "d" / "small" / "c.png", "L", 23, height=4, width=3)]
    report, inputs, _ = load(tmp_path, "image-folder", tmp_path / "d", "6,5")
    assert report["inputs_shape"] == [3, 3, 6, 5]
    for index, path in enumerate(files):
        source = pil_pixels(path, 3).float()[None]
        want = F.interpolate(source, size=(6, 5), mode="bilinear", align_corners=False, antialias=True)
        want = want[0].round().clamp(0, 255).to(torch.uint8)
        # Both sides are the same float32 kernel; rounding the last bit may differ by one level.
        assert (inputs[index].int() - want.int()).abs().max() <= 1, path


def test_validation_folder_maps_classes_by_name(tmp_path):
    make_image(tmp_path / "val" / "zebra" / "z.png", "RGB", 31)
    make_image(tmp_path / "val" / "apple" / "a.png", "RGB", 32)
    report, _, targets = load(tmp_path, "image-folder", tmp_path / "val", "--classes", "Mango,apple,zebra")
    assert report["classes"] == ["Mango", "apple", "zebra"]
    assert targets.tolist() == [1, 2]  # apple, zebra in the training split's numbering
    make_image(tmp_path / "val" / "kiwi" / "k.png", "RGB", 33)
    fails("image-folder", tmp_path / "val", "--classes", "Mango,apple,zebra", names=["kiwi", "Mango, apple, zebra"])


def test_bad_image_folders(tmp_path):
    good = make_image(tmp_path / "d" / "a" / "good.png", "RGB", 41)
    truncated = tmp_path / "d" / "a" / "truncated.png"
    truncated.write_bytes(good.read_bytes()[:len(good.read_bytes()) // 2])
    fails("image-folder", tmp_path / "d", names=[truncated, "PNG"])
    truncated.unlink()

    text_jpeg = tmp_path / "d" / "a" / "text.jpg"
    text_jpeg.write_text("this is not a JPEG\n")
    fails("image-folder", tmp_path / "d", names=[text_jpeg, "JPEG"])
    text_jpeg.unlink()
    # A JPEG cut after its header: libjpeg would pad it with grey and only warn; the reader refuses it.
    cut = make_image(tmp_path / "cut" / "a" / "cut.jpg", "RGB", 42, height=40, width=40)
    cut.write_bytes(cut.read_bytes()[:len(cut.read_bytes()) * 2 // 3])
    fails("image-folder", tmp_path / "cut", names=[cut, "Premature end"])
    # Small JPEGs whose frame header claims 16384 x 16384 (fuzz_image's memory peak led to them): a baseline
    # one's data ends at its end-of-image marker, where libjpeg only warned and padded 805 MB of grey; a
    # progressive one had libjpeg allocate 1.6 GB of coefficients first. Both refused, quickly.
    for name, marker, options in (("claims.jpg", b"\xff\xc0", {}), ("claims-progressive.jpg", b"\xff\xc2", {"progressive": True})):
        claims = make_image(tmp_path / "claims" / "a" / name, "RGB", 45, height=8, width=8, **options)
        raw = bytearray(claims.read_bytes())
        frame = raw.find(marker)
        raw[frame + 5:frame + 9] = struct.pack(">HH", 16384, 16384)
        claims.write_bytes(bytes(raw))
        reason = "premature end of data segment" if not options else "Backing store not supported"
        fails("image-folder", tmp_path / "claims", names=[claims, "corrupt JPEG", reason])
        claims.unlink()
    # A PNG with valid checksums whose header claims 16384 x 16384 over a few bytes of data: refused from its
    # header (its rows could not fit in its size even at deflate's best ratio), before any pixel is allocated
    # (it used to allocate and zero 805 MB first).
    claims = make_image(tmp_path / "claims" / "a" / "claims.png", "RGB", 46, height=8, width=8)
    raw = bytearray(claims.read_bytes())
    ihdr = raw.find(b"IHDR")
    raw[ihdr + 4:ihdr + 12] = struct.pack(">II", 16384, 16384)
    raw[ihdr + 17:ihdr + 21] = struct.pack(">I", zlib.crc32(bytes(raw[ihdr:ihdr + 17])))
    claims.write_bytes(bytes(raw))
    fails("image-folder", tmp_path / "claims", names=[claims, "corrupt PNG", "declares 16384x16384",
                                                      f"its {len(raw)} bytes can hold"])
    claims.unlink()

    empty = tmp_path / "d" / "b"
    empty.mkdir()
    (empty / "labels.txt").write_text("no images here")
    fails("image-folder", tmp_path / "d", names=[empty, "no .png, .jpg or .jpeg images"])
    empty_class = empty
    (empty_class / "labels.txt").unlink()
    empty_class.rmdir()

    other = make_image(tmp_path / "d" / "c" / "other.png", "RGB", 43, height=HEIGHT + 1)
    fails("image-folder", tmp_path / "d", names=[other, good, f"{HEIGHT + 1}x{WIDTH}", f"{HEIGHT}x{WIDTH}",
                                                 "--image-size"])
    load(tmp_path, "image-folder", tmp_path / "d", "8,8")  # resizing accepts them

    flat = tmp_path / "flat"
    make_image(flat / "x.png", "RGB", 44)
    fails("image-folder", flat, names=[flat, "no class folders"])


# ---- tensor files ----

def save(path, obj, **kwargs):
    torch.save(obj, path, **kwargs)
    return path


@pytest.mark.parametrize("x_dtype, y", [
    (torch.float32, torch.tensor([0, 3, 1, 2, 2], dtype=torch.int64)),
    (torch.uint8, torch.tensor([1, 0, 1, 0, 4], dtype=torch.int32)),
    (torch.float64, torch.tensor([[0.5, -1.25], [1e-3, 2.0], [3.0, 4.0], [5.5, 6.0], [7.0, -8.0]], dtype=torch.float64)),
    (torch.float32, torch.tensor([0.1, 0.2, 0.3, 0.4, 0.5], dtype=torch.float32)),
    (torch.float32, torch.tensor([9, 8, 7, 6, 5], dtype=torch.uint8)),
])
def test_tensor_file_round_trip(tmp_path, x_dtype, y):
    generator = torch.Generator().manual_seed(5)
    if x_dtype == torch.uint8:
        x = torch.randint(0, 256, (5, 1, 4, 3), dtype=torch.uint8, generator=generator)
    else:
        x = torch.randn(10, 3, 2, generator=generator, dtype=x_dtype)[::2]  # a strided view
    report, inputs, targets = load(tmp_path, "tensor-file", save(tmp_path / "t.pt", {"x": x, "y": y, "note": "extra"}))
    want_x = x if x_dtype == torch.uint8 else x.float()
    want_y = y.long() if not y.is_floating_point() else y.float()
    assert report["inputs_dtype"] == str(want_x.dtype).replace("torch.", "")
    assert report["targets_dtype"] == str(want_y.dtype).replace("torch.", "")
    assert torch.equal(inputs, want_x) and torch.equal(targets, want_y)
    assert report["classes"] == []


def test_bad_tensor_files(tmp_path):
    x = torch.randn(4, 3)
    y = torch.tensor([0, 1, 2, 1])
    text = tmp_path / "text.pt"
    text.write_text("x,y\n1,2\n")
    fails("tensor-file", text, names=[text, "torch.save"])
    fails("tensor-file", save(tmp_path / "no_y.pt", {"x": x}), names=["no_y.pt", '"y"'])
    fails("tensor-file", save(tmp_path / "list.pt", [x, y]), names=["list.pt", "dict"])
    fails("tensor-file", save(tmp_path / "y_list.pt", {"x": x, "y": [0, 1, 2, 1]}), names=["y_list.pt", "not a tensor"])
    fails("tensor-file", save(tmp_path / "length.pt", {"x": x, "y": y[:3]}), names=["length.pt", "4", "3"])
    bad_x = x.clone()
    bad_x[2, 1] = float("nan")
    fails("tensor-file", save(tmp_path / "nan.pt", {"x": bad_x, "y": y}), names=["nan.pt", "NaN"])
    bad_x[2, 1] = float("inf")
    fails("tensor-file", save(tmp_path / "inf.pt", {"x": bad_x, "y": y}), names=["inf.pt", "infinity"])
    fails("tensor-file", save(tmp_path / "negative.pt", {"x": x, "y": torch.tensor([0, 1, -1, 1])}),
          names=["negative.pt", "negative", "-1"])
    fails("tensor-file", save(tmp_path / "empty.pt", {"x": x[:0], "y": y[:0]}), names=["empty.pt", "no samples"])
    fails("tensor-file", save(tmp_path / "legacy.pt", {"x": x, "y": y}, _use_new_zipfile_serialization=False),
          names=["legacy.pt", "legacy", "_use_new_zipfile_serialization=False"])
    fails("tensor-file", tmp_path / "missing.pt", names=["missing.pt", "cannot open"])
    # One flipped byte in a record: LibTorch compares no CRC-32 (x loaded with a wrong value, silently; in
    # data.pkl its unpickler allocated a length read from the damage, found by tests/fuzz), so we do.
    for record in ("data/0", "data.pkl"):
        damaged = save(tmp_path / "damaged.pt", {"x": x, "y": y})
        raw = bytearray(damaged.read_bytes())
        with zipfile.ZipFile(damaged) as archive:
            info = next(i for i in archive.infolist() if i.filename.endswith("/" + record))
        name_length, extra_length = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
        raw[info.header_offset + 30 + name_length + extra_length + 5] ^= 0x40
        damaged.write_bytes(bytes(raw))
        fails("tensor-file", damaged, names=["damaged.pt", "damaged", record, "CRC"])


# ---- CSV tables ----

def write(path, text, newline="\n"):
    path.write_bytes(text.replace("\n", newline).encode())
    return path


def test_csv_string_labels_sorted(tmp_path):
    path = write(tmp_path / "iris.csv", "a,b,species\n5.1,3.5,setosa\n6.3,2.9,virginica\n\n5.8,2.7,versicolor\n"
                                        "4.9,3.0,setosa", newline="\r\n")
    report, inputs, targets = load(tmp_path, "csv", path)
    assert report["classes"] == ["setosa", "versicolor", "virginica"]
    assert targets.tolist() == [0, 2, 1, 0] and report["targets_dtype"] == "int64"
    want = torch.tensor([[5.1, 3.5], [6.3, 2.9], [5.8, 2.7], [4.9, 3.0]], dtype=torch.float32)
    assert torch.equal(inputs, want)


def test_csv_integer_labels_chosen_by_name(tmp_path):
    path = write(tmp_path / "t.csv", "x1,digit,x2\n0.1,3,1e-3\n-2.5e10,0,3.14159265358979\n 7 ,1.0,-0\n")
    report, inputs, targets = load(tmp_path, "csv", path, "digit")
    assert report["classes"] == [] and report["targets_dtype"] == "int64"
    assert targets.tolist() == [3, 0, 1]
    assert torch.equal(inputs, torch.tensor([[float("0.1"), float("1e-3")], [float("-2.5e10"), float("3.14159265358979")],
                                             [7.0, -0.0]], dtype=torch.float32))


def test_csv_float_targets_and_quoted_fields(tmp_path):
    path = write(tmp_path / "q.csv", '"width, cm","note ""quoted""",target\n"1.5",2,0.25\n3,"4",-1.5\n')
    report, inputs, targets = load(tmp_path, "csv", path)
    assert report["targets_dtype"] == "float32" and report["targets_shape"] == [2]
    assert torch.equal(targets, torch.tensor([0.25, -1.5]))
    assert torch.equal(inputs, torch.tensor([[1.5, 2.0], [3.0, 4.0]]))
    path = write(tmp_path / "labels.csv", 'f,label\n1,"a, b"\n2,"say ""hi"""\n3,"two\nlines"\n4,"a, b"\n')
    report, _, targets = load(tmp_path, "csv", path)
    assert report["classes"] == ["a, b", 'say "hi"', "two\nlines"]
    assert targets.tolist() == [0, 1, 2, 0]


def test_csv_validation_labels_map_to_training_classes(tmp_path):
    path = write(tmp_path / "val.csv", "f,label\n1,virginica\n2,setosa\n")
    report, _, targets = load(tmp_path, "csv", path, "--classes", "setosa,versicolor,virginica")
    assert report["classes"] == ["setosa", "versicolor", "virginica"] and targets.tolist() == [2, 0]
    path = write(tmp_path / "val2.csv", "f,label\n1,virginica\n2,daisy\n")
    fails("csv", path, "--classes", "setosa,versicolor,virginica", names=["val2.csv", "line 3", "daisy"])


def test_bad_csv_tables(tmp_path):
    ragged = write(tmp_path / "ragged.csv", "a,b,c,d,label\n1,2,3,4,x\n\n1,2,3,4,y\n1,2,3,x\n")
    fails("csv", ragged, names=[ragged, "line 5 has 4 fields, the header has 5"])
    text = write(tmp_path / "text.csv", "a,b,label\n1,2,x\n1,two,y\n")
    fails("csv", text, names=[text, "line 3", "column b", "two"])
    nan = write(tmp_path / "nan.csv", "a,b,label\n1,nan,x\n")
    fails("csv", nan, names=[nan, "line 2", "column b", "NaN"])
    inf = write(tmp_path / "inf.csv", "a,b,label\n1,2,x\n-inf,2,y\n")
    fails("csv", inf, names=[inf, "line 3", "column a"])
    columns = write(tmp_path / "columns.csv", "alpha,beta,gamma\n1,2,3\n")
    fails("csv", columns, "label", names=[columns, "label", "alpha, beta, gamma"])
    header = write(tmp_path / "header.csv", "a,b,label\n")
    fails("csv", header, names=[header, "no data rows"])
    negative = write(tmp_path / "negative.csv", "a,label\n1,0\n2,-3\n")
    fails("csv", negative, names=[negative, "line 3", "-3"])
    unclosed = write(tmp_path / "unclosed.csv", 'a,label\n1,x\n2,"y\n3,z\n')
    fails("csv", unclosed, names=[unclosed, "line 3", "never closed"])
    fails("csv", write(tmp_path / "empty.csv", ""), names=["empty.csv", "empty"])
