#!/usr/bin/env bash
# Installs everything Ringmaster needs from Debian's packages and fetches QCustomPlot's source package.
# Idempotent: a second run installs nothing and re-uses the unpacked QCustomPlot.
# Usage: scripts/setup.sh            (as root, or through sudo)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: not root and no sudo: run this script as root" >&2; exit 1; }
  sudo_cmd=(sudo)
fi

packages=(
  build-essential cmake ninja-build pkg-config dpkg-dev
  qt6-base-dev libgl-dev
  # ringmaster-runs plot --out FILE.svg
  qt6-svg-dev
  libtorch-dev libgloo-dev python3-torch python3-pytest zlib1g-dev
  # Debian points libblas.so.3 at the reference BLAS; OpenBLAS (OpenMP build, so torch's thread
  # count governs it) makes the cnn's linear layers ~4x faster.
  libopenblas0-openmp
  libspdlog-dev nlohmann-json3-dev
  # Checkpoint CRC checks (and run bundles): libarchive reads and writes zip and tar.
  libarchive-dev
  # HMAC-SHA256 of the TCP reporting endpoint (core/protocol/frame_mac.h); libarchive links Nettle already.
  nettle-dev
  # The trainer decodes image folders with the system's libpng and libjpeg-turbo.
  libpng-dev libjpeg62-turbo-dev
  dataset-fashion-mnist
  xvfb xauth
  # Tests: the desktop entry is checked with desktop-file-validate, its MIME type's XML with xmllint,
  # update-mime-database and GIO (tests/ui/test_desktop_entry.sh).
  desktop-file-utils libxml2-utils shared-mime-info libglib2.0-bin
  # The Debian package (scripts/package.sh): manual pages from --help (help2man) and from the job file's and
  # the run directory's Markdown (lowdown), lintian, AppStream metainfo check.
  help2man lowdown lintian appstream
  # The CUDA build's isolated Python environment (scripts/setup-torch.sh).
  python3-venv
  # Tests: the data-reader test writes PNG and JPEG images with PIL.
  python3-pil
  # Tests: a one-node Slurm (scripts/slurm-local.sh) for the srun and --slurm tests.
  slurm-wlm munge
  # Tests: the app's desktop notifications over a private session bus (dbus-run-session).
  dbus-daemon dbus-bin
  # Every thread's stack of a hung run's ranks, before they are killed (core/supervisor/stack_dumps.h).
  gdb
  # Fuzzing (scripts/fuzz.sh): clang with libFuzzer and the sanitizer runtimes.
  clang-14 libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

# QCustomPlot's Qt 6 build needs its source package: a deb-src entry for this release's main, on the
# mirror the machine already uses (scripts/deb-src-entry.sh derives it from the configured sources).
# Rewritten when the derived entry changes (e.g. an older set-up's hard-coded mirror).
src_list=/etc/apt/sources.list.d/ringmaster-deb-src.sources
need_update=0
src_entry=$("$here/scripts/deb-src-entry.sh") || exit 1
if [ ! -f "$src_list" ] || [ "$(cat "$src_list")" != "$src_entry" ]; then
  printf '%s\n' "$src_entry" | "${sudo_cmd[@]}" tee "$src_list" >/dev/null
  need_update=1
fi

if [ ${#missing[@]} -gt 0 ] || [ "$need_update" -eq 1 ]; then
  "${sudo_cmd[@]}" apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    > /tmp/ringmaster-apt.log 2>&1 || { tail -n 30 /tmp/ringmaster-apt.log >&2; exit 1; }
fi

# QCustomPlot 2.1.0 from Debian's source package; dpkg-source -x applies Debian's patch that makes it
# compile against Qt 6 (the unpatched header fails in moc). Unpacked into a git-ignored folder.
qcp_version=2.1.0+dfsg1-3.1
qcp_orig_sha256=b633167e3d4352ea5aa66bb7d51f7db43b82558cdab9231823ae8af338ab22d4
third=$here/third_party
qcp_dir=$third/qcustomplot
if [ ! -f "$qcp_dir/qcustomplot.cpp" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && apt-get source --download-only -qq "qcustomplot=$qcp_version")
  orig=$(ls "$work"/qcustomplot_*.orig.tar.* | head -n 1)
  echo "$qcp_orig_sha256  $orig" | sha256sum -c --quiet - || {
    echo "setup: checksum mismatch for $orig: refusing to build QCustomPlot from it" >&2; exit 1; }
  (cd "$work" && dpkg-source --no-check -x qcustomplot_*.dsc src >/dev/null)
  mkdir -p "$third"
  rm -rf "$qcp_dir"
  mkdir -p "$qcp_dir"
  cp "$work/src/qcustomplot.cpp" "$work/src/qcustomplot.h" "$qcp_dir/"
  cp "$work/src/GPL.txt" "$qcp_dir/" 2>/dev/null || true
  echo "setup: QCustomPlot $qcp_version unpacked into $qcp_dir"
fi
echo "setup: all dependencies present"
