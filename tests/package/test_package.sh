#!/usr/bin/env bash
# The Debian package end to end, from the existing build folder (no second build): cpack -G DEB,
# lintian with no errors and no warnings (overrides are in the package), the control fields and metainfo
# name from the build's identity (packaging/identity.cmake), `apt-get install ./ringmaster_*.deb`,
# appstreamcli on the installed metainfo, the MIME database and the desktop database knowing
# *.ringmaster.json as application/x-ringmaster-job opened by ringmaster.desktop (shared-mime-info's and
# desktop-file-utils' triggers), the installed programs' --version, the helper module imported by
# Debian's python3, the installed ringmaster-launch running the default job for 30 steps from a
# folder outside the source tree with a fresh HOME, ringmaster-build-trainer refusing bad input and its copy of
# the trainer sources configuring against the pinned CUDA torch, then `apt-get purge` and nothing of it left, the MIME
# type included.
# Needs root (it installs under /usr): exits 77 (ctest: skipped) otherwise, or when already installed.
# Usage: tests/package/test_package.sh BUILD_DIR
set -euo pipefail
build=$1
if [ "$(id -u)" -ne 0 ]; then echo "skipped: installing the package needs root"; exit 77; fi
if dpkg-query -W -f='${Status}' ringmaster 2>/dev/null | grep -q 'installed'; then
  echo "skipped: a ringmaster package is already installed on this machine; not replacing it"; exit 77
fi
for tool in cpack lintian apt-get appstreamcli gio; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (scripts/setup.sh installs it)"; exit 1; }
done

cached() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
appstream_id=$(cached RINGMASTER_APPSTREAM_ID)
maintainer=$(cached RINGMASTER_MAINTAINER)
homepage=$(cached RINGMASTER_HOMEPAGE)
[ -n "$appstream_id" ] && [ -n "$maintainer" ] && [ -n "$homepage" ] || { echo "FAIL: $build/CMakeCache.txt lacks the identity (packaging/identity.cmake)"; exit 1; }
mime_type=application/x-ringmaster-job
mime_glob="50:$mime_type:*.ringmaster.json"
if grep -qxF "$mime_glob" /usr/share/mime/globs2; then
  echo "skipped: /usr/share/mime already knows $mime_type without the package; not testing over it"; exit 77
fi

work=$(mktemp -d /tmp/ringmaster-package-test.XXXXXX)
installed=0
cleanup() {
  if [ "$installed" -eq 1 ]; then DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq ringmaster >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== cpack"
(cd "$build" && rm -f ringmaster_*.deb ringmaster-dbgsym_*.ddeb && cpack -G DEB > "$work/cpack.log" 2>&1) || { tail -n 30 "$work/cpack.log"; exit 1; }
deb=$(ls "$build"/ringmaster_*.deb)
ls "$build"/ringmaster-dbgsym_*.ddeb >/dev/null || { echo "FAIL: no -dbgsym package beside $deb"; exit 1; }
du -h "$deb" "$build"/ringmaster-dbgsym_*.ddeb

echo "== lintian"
lintian --fail-on error,warning --tag-display-limit 0 "$deb" | tee "$work/lintian.txt"
if grep -E '^(E|W): ' "$work/lintian.txt"; then echo "FAIL: lintian errors or warnings above"; exit 1; fi

echo "== contents"
dpkg-deb -c "$deb" > "$work/contents.txt"
for path in ./usr/bin/ringmaster ./usr/bin/ringmaster-launch ./usr/bin/ringmaster-runs ./usr/bin/ringmaster-trainer \
            ./usr/share/man/man1/ringmaster-launch.1.gz ./usr/share/man/man5/ringmaster-job.5.gz \
            ./usr/share/man/man5/ringmaster-run.5.gz ./usr/share/doc/ringmaster/docs/protocol.md.gz ./usr/share/doc/ringmaster/copyright ./usr/share/doc/ringmaster/changelog.gz \
            ./usr/share/bash-completion/completions/ringmaster-launch ./usr/share/icons/hicolor/scalable/apps/ringmaster.svg \
            ./usr/share/icons/hicolor/48x48/apps/ringmaster.png "./usr/share/metainfo/$appstream_id.metainfo.xml" \
            ./usr/lib/python3/dist-packages/ringmaster/__init__.py ./usr/share/applications/ringmaster.desktop \
            ./usr/share/ringmaster/python/sitecustomize.py \
            ./usr/share/mime/packages/ringmaster.xml ./usr/bin/ringmaster-build-trainer \
            ./usr/share/man/man1/ringmaster-build-trainer.1.gz ./usr/share/ringmaster/trainer-source/CMakeLists.txt \
            ./usr/share/ringmaster/trainer-source/core/trainer/trainer.cpp ./usr/share/ringmaster/trainer-source/cmake/RingmasterTorch.cmake; do
  grep -q " $path\( \|$\)" "$work/contents.txt" || { echo "FAIL: $path is not in the package"; exit 1; }
done
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libqt6core6 libtorch; do
  echo "$depends" | grep -q "$lib" || { echo "FAIL: Depends ($depends) lacks $lib"; exit 1; }
done
[ "$(dpkg-deb -f "$deb" Maintainer)" = "$maintainer" ] || { echo "FAIL: Maintainer is '$(dpkg-deb -f "$deb" Maintainer)', the build says '$maintainer'"; exit 1; }
[ "$(dpkg-deb -f "$deb" Homepage)" = "$homepage" ] || { echo "FAIL: Homepage is '$(dpkg-deb -f "$deb" Homepage)', the build says '$homepage'"; exit 1; }

echo "== install"
installed=1
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" > "$work/apt.log" 2>&1 || { tail -n 30 "$work/apt.log"; exit 1; }
dpkg -L ringmaster > "$work/files.txt"
appstreamcli validate --no-net "/usr/share/metainfo/$appstream_id.metainfo.xml"

echo "== MIME type of job files"
# The triggers ran update-mime-database and update-desktop-database: the glob is known, GIO types a job
# file by it, and the desktop database names ringmaster.desktop for the type.
grep -qxF "$mime_glob" /usr/share/mime/globs2 || { tail -n 12 "$work/apt.log"; echo "FAIL: /usr/share/mime/globs2 lacks $mime_glob"; exit 1; }
echo '{}' > "$work/sweep.ringmaster.json"
typed=$(env -i HOME="$work" PATH=/usr/bin:/bin gio info -a standard::content-type "$work/sweep.ringmaster.json" | sed -n 's/^ *standard::content-type: //p')
[ "$typed" = "$mime_type" ] || { echo "FAIL: GIO types sweep.ringmaster.json as '$typed'"; exit 1; }
grep -q "^$mime_type=.*ringmaster.desktop" /usr/share/applications/mimeinfo.cache || { echo "FAIL: mimeinfo.cache has no ringmaster.desktop for $mime_type"; exit 1; }

# A clean environment: a fresh HOME, a folder outside the source and build trees, only /usr/bin on PATH.
home=$work/home; mkdir -p "$home" "$work/outside"
run() { (cd "$work/outside" && env -i HOME="$home" PATH=/usr/bin:/bin LANG=C.UTF-8 "$@"); }
for program in ringmaster ringmaster-launch ringmaster-runs ringmaster-trainer; do
  first=$(run "$program" --version | head -n 1)
  [ "$first" = "$program $(dpkg-deb -f "$deb" Version)" ] || { echo "FAIL: $program --version says '$first'"; exit 1; }
done
run python3 -c 'import ringmaster, sys; assert ringmaster.__file__.startswith("/usr/lib/python3/dist-packages/"), ringmaster.__file__'
# The ranks' start-up hook is only on the ranks' PYTHONPATH: Debian's python3 still runs Debian's sitecustomize.
run python3 -c 'import sitecustomize; assert sitecustomize.__file__.startswith("/usr/lib/python3."), sitecustomize.__file__'

echo "== manual pages"
# Each program's page has EXIT STATUS (from its --help), the section-5 pages are whatis-complete and every page
# formats without a warning.
for page in ringmaster ringmaster-launch ringmaster-runs ringmaster-trainer; do
  zcat "/usr/share/man/man1/$page.1.gz" | grep -q '^\.SH "EXIT STATUS"' || { echo "FAIL: $page(1) has no EXIT STATUS"; exit 1; }
done
zcat /usr/share/man/man1/ringmaster-runs.1.gz | grep -q '^\.SH FILES' || { echo "FAIL: ringmaster-runs(1) has no FILES"; exit 1; }
for page in /usr/share/man/man5/ringmaster-job.5.gz /usr/share/man/man5/ringmaster-run.5.gz; do
  lexgrog "$page" | grep -q ' - ' || { echo "FAIL: $page has no whatis line"; exit 1; }
  warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
  [ -z "$warnings" ] || { echo "FAIL: $page: $warnings"; exit 1; }
done
zcat /usr/share/man/man5/ringmaster-run.5.gz | grep -q 'metrics.csv' || { echo "FAIL: ringmaster-run(5) lacks the run directory"; exit 1; }

echo "== installed ringmaster-build-trainer"
# Bad input is one line; the installed copy of the trainer's sources configures against the pinned CUDA torch
# (scripts/setup-torch.sh's, where it exists: a full build takes minutes and is the CUDA build's own test).
if out=$(run ringmaster-build-trainer --python /bin/false 2>&1); then echo "FAIL: ringmaster-build-trainer accepted /bin/false"; exit 1; fi
[ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q "cannot import torch" || { echo "FAIL: ringmaster-build-trainer said: $out"; exit 1; }
torch_python=$(cd "$(dirname "$0")/../.." && pwd)/.torch-env/bin/python
if [ -x "$torch_python" ]; then
  cmake -S /usr/share/ringmaster/trainer-source -B "$work/trainer-source-build" -DRINGMASTER_TRAINER_ONLY=ON \
    -DRINGMASTER_BUILD_TESTS=OFF -DRINGMASTER_TORCH_PYTHON="$torch_python" > "$work/trainer-source.log" 2>&1 \
    || { tail -n 20 "$work/trainer-source.log"; echo "FAIL: the installed trainer sources do not configure"; exit 1; }
  grep -q "LibTorch has CUDA, building the NCCL backend" "$work/trainer-source.log" || { echo "FAIL: no CUDA in that configure"; exit 1; }
else
  echo "note: $torch_python is missing (scripts/setup-torch.sh): the installed trainer sources were not configured"
fi

echo "== installed ringmaster-launch, 30 steps"
run ringmaster-launch --quiet --max-steps 30 --out "$work/outside/run" || { echo "FAIL: the installed launcher's run failed"; exit 1; }
run python3 - "$work/outside/run" <<'PY'
import json, sys, pathlib
summary = json.loads((pathlib.Path(sys.argv[1]) / "summary.json").read_text())
assert summary.get("status") == "completed", summary
assert summary.get("steps") == 30, summary
PY

echo "== purge"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq ringmaster > "$work/apt.log" 2>&1 || { tail -n 30 "$work/apt.log"; exit 1; }
installed=0
left=0
while read -r f; do
  if [ -f "$f" ] || [ -L "$f" ]; then echo "FAIL: $f is left after purge"; left=1; fi
done < "$work/files.txt"
leftovers=$(find /usr -path '*ringmaster*' 2>/dev/null | head)
[ -z "$leftovers" ] || { echo "FAIL: left under /usr after purge: $leftovers"; left=1; }
if grep -q "$mime_type" /usr/share/mime/globs2 /usr/share/applications/mimeinfo.cache 2>/dev/null; then
  echo "FAIL: the MIME or desktop database still names $mime_type after purge"; left=1
fi
[ "$left" -eq 0 ] || exit 1
echo "package test passed: $deb"
