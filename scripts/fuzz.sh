#!/usr/bin/env bash
# Fuzzes every reader of outside input (tests/fuzz/fuzz_*.cpp) with libFuzzer under AddressSanitizer and
# UndefinedBehaviorSanitizer: configures and builds the fuzz build (clang-14, RINGMASTER_FUZZ=ON) in a build
# folder of its own, then replays each target's saved crashes (tests/fuzz/regressions/NAME/) and runs it for
# SECONDS on a copy of its seed corpus (tests/fuzz/corpus/NAME/), memory bounded (-rss_limit_mb=2048
# -malloc_limit_mb=1024), leaks found by LeakSanitizer (tests/fuzz/lsan.supp names LibTorch's own).
# Prints per target: executions, coverage (cov: edges, ft: features), exec/s and seconds. Exits non-zero
# naming each target that crashed, leaked, timed out or broke a property, and its artifact (the input), to be
# minimised (fuzz_NAME -minimize_crash=1 ARTIFACT) and added to tests/fuzz/regressions/NAME/ with the fix.
#
# Usage: scripts/fuzz.sh [-j JOBS] [SECONDS_PER_TARGET] [TARGET...]      (default 60 s, every target, -j 2)
#   RINGMASTER_FUZZ_BUILD_DIR   the build folder (default build-fuzz)
#   RINGMASTER_FUZZ_OUT         where corpora, logs and artifacts go (default BUILD/fuzz-out/DATE-TIME)
#   RINGMASTER_BUILD_LOCK       a lock file the build step holds (flock), where builds share a machine
#   RINGMASTER_FUZZ_ARGS        more libFuzzer flags for every target (e.g. -max_len=65536)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

jobs=2
if [ "${1:-}" = "-j" ]; then jobs=$2; shift 2; elif [[ "${1:-}" == -j* ]]; then jobs=${1#-j}; shift; fi
seconds=${1:-60}
[ $# -gt 0 ] && shift
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz: SECONDS_PER_TARGET must be a whole number, got '$seconds'" >&2; exit 2; }
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: -j needs a positive number, got '$jobs'" >&2; exit 2; }

build=${RINGMASTER_FUZZ_BUILD_DIR:-$here/build-fuzz}
cxx=${RINGMASTER_FUZZ_CXX:-clang++-14}
cc=${RINGMASTER_FUZZ_CC:-clang-14}
command -v "$cxx" >/dev/null || { echo "fuzz: $cxx not found: install clang-14 and libclang-rt-14-dev (scripts/setup.sh)" >&2; exit 2; }

# Configure once (again only when the folder is not a fuzz build); the flags are those of docs/testing.md's Fuzzing.
if [ ! -f "$build/build.ninja" ] || ! grep -q '^RINGMASTER_FUZZ:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
  cmake -S "$here" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" \
    -DRINGMASTER_SANITIZE=address,undefined -DRINGMASTER_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "${launcher[@]}" >/dev/null
fi
lock=()
if [ -n "${RINGMASTER_BUILD_LOCK:-}" ]; then lock=(flock "$RINGMASTER_BUILD_LOCK"); fi
build_start=$(date +%s)
"${lock[@]}" cmake --build "$build" --target ringmaster-fuzz-targets -- -j 2
echo "fuzz: build $(( $(date +%s) - build_start )) s"

mapfile -t all < "$build/fuzz-targets.txt"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
for name in "${targets[@]}"; do
  printf '%s\n' "${all[@]}" | grep -qx "$name" || { echo "fuzz: no target '$name' (targets: ${all[*]})" >&2; exit 2; }
done

out=${RINGMASTER_FUZZ_OUT:-$build/fuzz-out/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/artifacts" "$out/logs" "$out/corpus"
echo "fuzz: ${#targets[@]} targets, $seconds s each, $jobs at a time; corpora, logs and artifacts in $out"

# UB stops the program (-fno-sanitize-recover); leaks are found by LeakSanitizer after the run of each input.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0:handle_abort=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ -f "$here/tests/fuzz/lsan.supp" ]; then export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$here/tests/fuzz/lsan.supp:print_suppressions=0}; fi

run_target() {
  local name=$1 corpus=$out/corpus/$1 log=$out/logs/$1.log
  rm -rf "$corpus"; mkdir -p "$corpus"
  cp -r "$here/tests/fuzz/corpus/$name/." "$corpus/" 2>/dev/null || true
  local dict=()
  [ -f "$here/tests/fuzz/$name.dict" ] && dict=(-dict="$here/tests/fuzz/$name.dict")
  local start=$(date +%s) status=0
  # The saved crashes first, once each (not fuzzed: a large one would slow every mutation down).
  if [ -d "$here/tests/fuzz/regressions/$name" ]; then
    "$build/tests/fuzz/fuzz_$name" -runs=0 -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=30 \
      -artifact_prefix="$out/artifacts/$name-regression-" "$here/tests/fuzz/regressions/$name" > "$log" 2>&1 || status=$?
  fi
  # shellcheck disable=SC2086
  [ "$status" -ne 0 ] || "$build/tests/fuzz/fuzz_$name" -max_total_time="$seconds" -rss_limit_mb=2048 \
    -malloc_limit_mb=1024 -timeout=30 -print_final_stats=1 -artifact_prefix="$out/artifacts/$name-" "${dict[@]}" \
    ${RINGMASTER_FUZZ_ARGS:-} "$corpus" >> "$log" 2>&1 || status=$?
  local took=$(( $(date +%s) - start ))
  local runs cov ft rate
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  local artifact
  artifact=$(ls -t "$out/artifacts/$name-"* 2>/dev/null | head -n 1 || true)
  if [ "$status" -ne 0 ] || [ -n "$artifact" ]; then
    local what
    what=$(grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|fuzz check failed|==ERROR|terminate called|uncaught exception' "$log" || true)
    printf 'FAILED %-14s after %4s s: %s\n    artifact: %s\n    log: %s\n' "$name" "$took" "${what:-exit status $status}" \
      "${artifact:-none}" "$log"
    return 1
  fi
  printf 'ok     %-14s %9s execs  cov %5s  ft %6s  %6s exec/s  %4s s\n' "$name" "${runs:-?}" "${cov:-?}" "${ft:-?}" "${rate:-?}" "$took"
}

for name in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  ( status=0; run_target "$name" > "$out/logs/$name.summary" || status=$?; echo "$status" > "$out/logs/$name.status" ) &
done
wait
failed=()
for name in "${targets[@]}"; do
  cat "$out/logs/$name.summary"
  [ "$(cat "$out/logs/$name.status" 2>/dev/null)" = 0 ] || failed+=("$name")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]} (artifacts in $out/artifacts)" >&2
  exit 1
fi
echo "fuzz: every target ran $seconds s without a finding"
