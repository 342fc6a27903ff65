#!/usr/bin/env python3
"""Fails when an #include crosses a floor of the house the wrong way (docs/development.md, Layout).

    scripts/check-floors.py [--root DIR]

The floors, bottom up: core/protocol (plain C++: no Qt, no LibTorch); core/trainer (LibTorch, never Qt) beside
core/supervisor (Qt Core/Network, never widgets or LibTorch) and core/runs (Qt Core, never widgets, LibTorch or the
supervisor); then ui/charts (the charts library: never the rest of the GUI), ui (widgets, never LibTorch or the
trainer) and cli (the terminal front ends, never LibTorch or
the trainer); app/ only wires main()s and is not checked. Every quoted include of a project file is written from
the one include root (core's floors by name: "protocol/wire.h", "supervisor/job_spec.h"; the GUI and the terminal
programs from the source root: "ui/form/job_form.h", "cli/launch_command.h"), so its floor is in its name and is
compared with the including file's; a project file included any other way (beside the file, by a shorter name) is
reported with its rooted spelling. Each <system> include is checked against the libraries that floor may not see. One line per
crossing (FILE:LINE: what it includes and why it may not), exit 1; exit 0 when the house is in order.
"""
import argparse
import re
import sys
from pathlib import Path

SOURCE_SUFFIXES = {".h", ".hpp", ".cpp", ".cc"}
FLOORS = ("core/protocol", "core/trainer", "core/supervisor", "core/runs", "ui/charts", "ui", "cli")
# Which floors each floor may include (itself always).
MAY_INCLUDE = {
    "core/protocol": set(),
    "core/trainer": {"core/protocol"},
    "core/supervisor": {"core/protocol"},
    "core/runs": {"core/protocol"},
    "ui/charts": {"core/protocol", "core/supervisor", "core/runs"},
    "ui": {"core/protocol", "core/supervisor", "core/runs", "ui/charts"},
    "cli": {"core/protocol", "core/supervisor", "core/runs", "ui/charts", "ui"},
}
QT = re.compile(r"^(Q[A-Za-z]+|Qt[A-Za-z]*/.*|qcustomplot\.h)$")
WIDGETS = re.compile(r"^(QtWidgets/.*|QtGui/.*|QtSvg/.*|Q(Widget|MainWindow|Dialog|Label|PushButton|Layout|"
                     r"[HV]BoxLayout|GridLayout|FormLayout|Application|Painter|Pixmap|Image|Icon|Color|Font|"
                     r"Action|Menu|ToolBar|TabWidget|TableView|TreeView|LineEdit|ComboBox|CheckBox|SpinBox|"
                     r"Splitter|ScrollArea|MessageBox|FileDialog|StatusBar)\b.*)$")
TORCH = re.compile(r"^(torch|ATen|c10|caffe2|cuda|cuda_runtime|nccl)[/.].*")
FORBIDDEN_SYSTEM = {
    "core/protocol": [(QT, "Qt"), (TORCH, "LibTorch")],
    "core/trainer": [(QT, "Qt")],
    "core/supervisor": [(WIDGETS, "Qt widgets"), (TORCH, "LibTorch")],
    "core/runs": [(WIDGETS, "Qt widgets"), (TORCH, "LibTorch")],
    "ui/charts": [(TORCH, "LibTorch")],
    "ui": [(TORCH, "LibTorch")],
    "cli": [(TORCH, "LibTorch")],
}
# The include root: core's floors by their names ("protocol/wire.h", "trainer/data/idx.h"), the GUI and the terminal
# programs from the source root ("ui/form/job_form.h", "cli/launch_command.h").
CORE_FLOORS = ("protocol", "trainer", "supervisor", "runs")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def floor_of(relative: str):
    for floor in FLOORS:
        if relative == floor or relative.startswith(floor + "/"):
            return floor
    return None


def rooted_target(root: Path, name: str):
    """The file a rooted include names ("protocol/wire.h" under core/, "ui/form/job_form.h" under the source root),
    or None when the name is not rooted or names no file."""
    first = name.split("/", 1)[0]
    base = root / "core" if first in CORE_FLOORS else root if first in ("ui", "cli") else None
    if base is None or "/" not in name or not (base / name).is_file():
        return None
    return (base / name).resolve()


def rooted_name(root: Path, target: Path) -> str:
    relative = target.relative_to(root).as_posix()
    return relative[len("core/"):] if relative.startswith("core/") else relative


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(Path(__file__).resolve().parent.parent))
    root = Path(parser.parse_args().root).resolve()
    files = sorted({p for floor in FLOORS for p in (root / floor).rglob("*") if p.suffix in SOURCE_SUFFIXES and p.is_file()})
    by_suffix = {}
    for path in files:
        parts = path.relative_to(root).parts
        for i in range(len(parts)):
            by_suffix.setdefault("/".join(parts[i:]), []).append(path)
    crossings = []
    for path in files:
        relative = path.relative_to(root).as_posix()
        floor = floor_of(relative)
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            kind, name = match.groups()
            where = f"{relative}:{number}"
            if kind == "<":
                for pattern, what in FORBIDDEN_SYSTEM[floor]:
                    if pattern.match(name):
                        crossings.append(f"{where}: <{name}> is {what}, which {floor} may not use")
                continue
            target = rooted_target(root, name)
            if target is None:
                # Not a rooted name: fine only when it is no project file at all (generated, moc, a test's own).
                beside = (path.parent / name).resolve()
                found = [beside] if beside.is_file() else by_suffix.get(name.lstrip("./"), [])
                if found:
                    crossings.append(f'{where}: "{name}" is a project file: write it from the include root, as '
                                     f'"{rooted_name(root, found[0])}"')
                continue
            target_floor = floor_of(target.relative_to(root).as_posix())
            if target_floor != floor and target_floor not in MAY_INCLUDE[floor]:
                crossings.append(f'{where}: "{name}" is in {target_floor}, which {floor} may not include')
    for crossing in crossings:
        print(crossing)
    if crossings:
        print(f"check-floors: {len(crossings)} include(s) cross a floor the wrong way (docs/development.md, Layout)")
        return 1
    print(f"check-floors: {len(files)} files, every include on its floor or below")
    return 0


if __name__ == "__main__":
    sys.exit(main())
