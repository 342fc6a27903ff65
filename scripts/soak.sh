#!/bin/sh
# Soak test, on demand (never in CI): scripts/soak.sh [MINUTES] (default 10).
# For MINUTES it loops, in one long-lived supervisor process (tests/tools/soak.cpp, ringmaster-soak):
# a run that completes, a graceful stop, a rank killed with SIGKILL and its resume, and ringmaster-launch
# stopped with SIGTERM, killed with SIGKILL and resumed. One line per cycle: the outcome, the soak's
# ringmaster-launch and ringmaster-trainer processes still alive (0 expected), and the supervisor's
# resident memory, file descriptors and threads. Exits 1 when a cycle left a stray process or ended in
# the wrong state.
# It uses the build tree's programs (BUILD_DIR, default build/; ringmaster-soak is built there if
# missing), else the installed ringmaster-launch and ringmaster-trainer; RINGMASTER_LAUNCH and
# RINGMASTER_TRAINER choose others.
set -eu
minutes=${1:-10}
case $minutes in
  ''|*[!0-9.]*) echo "usage: scripts/soak.sh [MINUTES]" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$here/build}
if [ ! -d "$build" ]; then
  echo "scripts/soak.sh: no build folder $build: run scripts/build.sh (or set BUILD_DIR)" >&2
  exit 2
fi
soak=$build/tests/ringmaster-soak
if [ ! -x "$soak" ]; then
  cmake --build "$build" --target ringmaster-soak ringmaster-launch ringmaster-trainer
fi
pick() { # NAME: the build tree's, else the installed one
  if [ -x "$build/app/$1" ]; then echo "$build/app/$1"; else command -v "$1" || true; fi
}
launch=${RINGMASTER_LAUNCH:-$(pick ringmaster-launch)}
trainer=${RINGMASTER_TRAINER:-$(pick ringmaster-trainer)}
if [ -z "$launch" ] || [ -z "$trainer" ]; then
  echo "scripts/soak.sh: no ringmaster-launch or ringmaster-trainer (build them, or install the package)" >&2
  exit 2
fi
# Decoded data shared with the build's tests rather than a new cache in the home folder.
if [ -z "${RINGMASTER_DATA_CACHE:-}" ] && [ -d "$build/data-cache" ]; then export RINGMASTER_DATA_CACHE="$build/data-cache"; fi
exec "$soak" --minutes "$minutes" --launch "$launch" --trainer "$trainer"
