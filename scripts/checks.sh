#!/usr/bin/env bash
# The checks of issue 13 that need builds of their own, one after the other: the AddressSanitizer+UBSan build
# of everything but the widgets, with its unit tests and a 2-rank run (scripts/sanitize.sh asan --no-gui), a
# bounded run of every libFuzzer target on that same build (scripts/fuzz.sh), and, with RINGMASTER_CHECKS_TSAN=1,
# the ThreadSanitizer build with its stage (scripts/sanitize.sh tsan: a second build of the trainer, which the
# CI run has no time for).
# Every stage runs even when an earlier one failed (the fuzz targets build themselves); the last lines sum up
# each stage's time and result, and the exit status is 1 when any failed.
#
# scripts/test.sh runs this in the background at the lowest CPU priority while the main test suite runs: the
# suite keeps about one of the two cores busy, and this uses the other. Needs scripts/build.sh's build (the
# TSan stage runs the normal launcher).
#
# Usage: scripts/checks.sh [FUZZ_SECONDS_PER_TARGET]      (default 30)
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-30}
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "checks: FUZZ_SECONDS_PER_TARGET must be a whole number, got '$seconds'" >&2; exit 2; }

summary=()
failed=0
stage() { # name, command...
  local name=$1 start status=0
  shift
  start=$(date +%s)
  echo "checks: === $name ==="
  "$@" || status=$?
  local took=$(( $(date +%s) - start ))
  if [ $status -eq 0 ]; then
    summary+=("checks: $name passed in $took s")
  else
    summary+=("checks: $name FAILED (exit $status) after $took s")
    failed=1
  fi
}

stage "AddressSanitizer + UBSan (build, unit tests without widgets, 2-rank run)" "$here/scripts/sanitize.sh" asan --no-gui
stage "libFuzzer, every target for $seconds s" "$here/scripts/fuzz.sh" -j 2 "$seconds"
if [ "${RINGMASTER_CHECKS_TSAN:-0}" = 1 ]; then
  stage "ThreadSanitizer (build, supervisor, reporter, shared-memory all-reduce, 2-rank run)" "$here/scripts/sanitize.sh" tsan
fi

printf '%s\n' "${summary[@]}"
exit $failed
