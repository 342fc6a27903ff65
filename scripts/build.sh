#!/usr/bin/env bash
# Configures (once) and builds Ringmaster into build/. Used by run.sh and test.sh.
# RINGMASTER_BUILD_DIR overrides the folder; extra arguments go to cmake's configure step.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${RINGMASTER_BUILD_DIR:-$here/build}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$here" -B "$build" -G Ninja "$@"
fi
# Two compile jobs: one LibTorch or QCustomPlot TU takes ~1.1 GB and there are 2 cores.
cmake --build "$build" -- -j 2
