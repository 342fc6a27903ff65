#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test. .ci/run calls this.
#   scripts/test.sh [CTEST_ARGUMENTS...]
# 1. scripts/setup.sh, then scripts/build.sh (a first configure here keeps line tables only, -g1: a quarter
#    less compile time than -g, and the -dbgsym package still maps addresses to lines).
# 2. In the background, at the lowest CPU and I/O priority, scripts/checks.sh: the AddressSanitizer+UBSan build
#    with its unit tests and a 2-rank run, every libFuzzer target for RINGMASTER_FUZZ_SECONDS (default 30) s,
#    and the ThreadSanitizer build with its stage. The test suite keeps about one of the two cores busy (its
#    runs wait on sockets, processes and Slurm), so these use the other one. Its log: BUILD/checks.log.
# 3. ctest on the main build, one test at a time (each end-to-end test runs 2 trainer ranks); then it waits
#    for the checks and prints their summary (the log's last 150 lines when one failed).
# RINGMASTER_CHECKS=0 skips step 2. The exit status is non-zero when a test or a check failed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${RINGMASTER_BUILD_DIR:-$here/build}
start=$(date +%s)
"$here/scripts/setup.sh"
"$here/scripts/build.sh" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
built=$(date +%s)

checks_pid=
checks_log=$build/checks.log
if [ "${RINGMASTER_CHECKS:-1}" != 0 ]; then
  RINGMASTER_BUILD_DIR=$build nice -n 19 ionice -c 3 bash "$here/scripts/checks.sh" "${RINGMASTER_FUZZ_SECONDS:-30}" \
    > "$checks_log" 2>&1 &
  checks_pid=$!
  echo "test: sanitizer and fuzzing checks started in the background (log: $checks_log)"
fi

status=0
(cd "$build" && ctest --output-on-failure --timeout 900 "$@") || status=$?
tested=$(date +%s)

checks=skipped
if [ -n "$checks_pid" ]; then
  checks_status=0
  wait "$checks_pid" || checks_status=$?
  if [ $checks_status -ne 0 ]; then
    echo "test: the sanitizer and fuzzing checks failed; the end of $checks_log:"
    tail -n 150 "$checks_log"
    status=1
  else
    grep -E '^(checks|sanitize|fuzz|ok |FAILED)' "$checks_log" || true
  fi
  checks="$(( $(date +%s) - tested )) s more after the tests"
fi
echo "set-up and build: $((built - start)) s; tests: $((tested - built)) s; checks: $checks; total $(( $(date +%s) - start )) s"
exit $status
