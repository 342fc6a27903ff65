"""The trainer's options are declared once (core/protocol/trainer_options.h) and every reader follows that table:
ringmaster-trainer --help has a line for each row with its values, bounds and default, the manual page that
help2man makes from it has each one, a fresh run's job of defaults is what the table says, and flags and job files
are checked by the rows' types, bounds and choices."""
import gzip
import json
import os
import re
import subprocess

import pytest

TRAINER = os.environ["RINGMASTER_TRAINER"]

TABLE = os.environ["RINGMASTER_OPTION_TABLE"]
MAN_PAGE = os.environ.get("RINGMASTER_TRAINER_MAN", "")


def rows():
    return json.loads(subprocess.run([TABLE], capture_output=True, text=True, check=True, timeout=30).stdout)


def trainer(*args, **kwargs):
    return subprocess.run([TRAINER, *args], capture_output=True, text=True, timeout=120, **kwargs)


def help_lines():
    result = trainer("--help")
    assert result.returncode == 0, result.stderr
    return result.stdout


def option_entry(text, flag):
    """The --help entry of FLAG: its first line and the indented lines after it, as one line of words."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.split()[:1] == [flag]:
            entry = [line]
            for more in lines[i + 1:]:
                if not more.startswith(" " * 20):
                    break
                entry.append(more)
            return " ".join(" ".join(entry).split())
    return None


def test_the_table_is_whole():
    table = rows()
    keys = [row["key"] for row in table]
    assert len(keys) == len(set(keys)) >= 47, keys
    for row in table:
        assert row["flag"] == "--" + row["key"].replace("_", "-")
        assert row["label"] and row["help"] and row["group"], row
        if row["type"] == "choice":
            assert row["choices"] and (row["default"] in row["choices"] or row["default"] == ""), row
        if row["type"] in ("integer", "real"):
            assert row["default"] != "", row


def test_every_row_is_in_help_with_its_values_bounds_and_default():
    text = help_lines()
    for row in rows():
        entry = option_entry(text, row["flag"])
        assert entry, f"{row['flag']} is not in --help"
        values = entry.split()[1]
        if row["type"] == "boolean":
            assert values == "true|false", entry
        elif row["type"] == "choice":
            assert values == "|".join(row["choices"]), entry
        else:
            assert values == row["metavar"], entry
        if row["default"]:
            assert f"default {row['default']}" in entry, entry
        bounds = row["bounds"]
        if "low" in bounds and "high" not in bounds:
            word = ">" if bounds["low_open"] else ">="
            assert re.search(rf"\({word} {bounds['low']:g}[;)]", entry), entry
        # The help's first words, as the table has them.
        assert " ".join(row["help"].split()[:4]) in entry, entry


def test_every_row_is_in_the_manual_page():
    if not MAN_PAGE:
        pytest.skip("this build makes no manual pages (help2man missing, or a trainer-only build)")
    with gzip.open(MAN_PAGE, "rt") as f:
        page = f.read().replace("\\-", "-").replace("\\fB", "").replace("\\fR", "").replace("\\fI", "")
    flat = " ".join(page.split())
    for row in rows():
        assert row["flag"] in page, f"{row['flag']} is not in {MAN_PAGE}"
        assert " ".join(row["help"].split()[:4]) in flat, f"{row['flag']}'s help is not in {MAN_PAGE}"


def test_values_are_checked_by_their_rows(tmp_path):
    """Each kind of row refuses a bad value in one line naming the flag, from a flag and from a job file alike."""
    cases = [
        ("--epochs", "0", "--epochs: must be >= 1, got 0"),
        ("--momentum", "1", "--momentum: must be in [0, 1), got 1"),
        ("--lr-gamma", "0", "--lr-gamma: must be in (0, 1], got 0"),
        ("--bucket-mb", "x", "--bucket-mb: 'x' is not a number"),
        ("--threads", "1.5", "--threads: '1.5' is not an integer"),
        ("--optimizer", "lamb", "--optimizer: unknown value 'lamb' (valid: sgd|adam|adamw)"),
        ("--drop-last", "maybe", "--drop-last: 'maybe' is not a boolean (true or false)"),
    ]
    for flag, value, message in cases:
        result = trainer(flag, value, "--validate-only", "--out", str(tmp_path / "run"))
        assert result.returncode == 2, (flag, result.stdout, result.stderr)
        assert result.stderr.strip().splitlines()[-1].endswith(message), (flag, result.stderr)
        job = tmp_path / "job.json"
        job.write_text(json.dumps({"trainer": {flag[2:].replace("-", "_"): value}}))
        result = trainer("--job", str(job), "--validate-only", "--out", str(tmp_path / "run"))
        assert result.returncode == 2, (flag, result.stderr)
        assert f"job file '{job}': {message}" in result.stderr, (flag, result.stderr)


def test_the_defaults_are_the_tables(tmp_path):
    """Left unset, an option has the table's default: --probe reports the model and the synthetic set's size the
    trainer took without being told."""
    table = {row["key"]: row for row in rows()}
    result = trainer("--probe", "--data", "synthetic", "--model", "linear", "--out", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    probe = json.loads(result.stdout.strip().splitlines()[-1])
    assert probe["data"]["train_samples"] == int(table["synthetic_samples"]["default"]), probe
    result = trainer("--probe", "--out", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    probe = json.loads(result.stdout.strip().splitlines()[-1])
    assert probe["model"]["name"] == table["model"]["default"], probe


def test_the_fuzz_dictionary_is_the_tables():
    """tests/fuzz/trainer_job.dict is made from the table (ringmaster-option-table --fuzz-dict), so the fuzzer knows
    every key and value; a row added without it is caught here."""
    made = subprocess.run([TABLE, "--fuzz-dict"], capture_output=True, text=True, check=True, timeout=30).stdout
    path = os.path.join(os.environ["RINGMASTER_SOURCE_DIR"], "tests", "fuzz", "trainer_job.dict")
    with open(path) as f:
        assert f.read() == made, f"{path} is out of date: run ringmaster-option-table --fuzz-dict > {path}"
