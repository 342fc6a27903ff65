#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test (ctest). .ci/run calls this.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
start=$(date +%s)
"$here/scripts/setup.sh"
"$here/scripts/build.sh"
built=$(date +%s)
cd "${RINGMASTER_BUILD_DIR:-$here/build}"
# One test at a time: each end-to-end test runs 2 trainer ranks, which fill the 2 cores.
status=0
ctest --output-on-failure --timeout 900 "$@" || status=$?
echo "set-up and build: $((built - start)) s; tests: $(( $(date +%s) - built )) s"
exit $status
