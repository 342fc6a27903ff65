#!/usr/bin/env bash
# The sanitizer builds of issue 13, each in a build folder of its own, with clang-14 (scripts/setup.sh installs it):
#   scripts/sanitize.sh asan   AddressSanitizer + UndefinedBehaviorSanitizer: the unit tests, then one short 2-rank run
#                              of ringmaster-launch with an instrumented trainer
#   scripts/sanitize.sh tsan   ThreadSanitizer: the supervisor's tests and 2-rank trainer runs (reporter thread,
#                              shared-memory all-reduce with its overlapped communication thread)
#   scripts/sanitize.sh        both
#   scripts/sanitize.sh asan --no-gui   builds and tests no widget code (scripts/checks.sh in CI: the core libraries, the
#                              trainer, the launcher, their unit tests and the fuzz targets; a third of the build less)
# RINGMASTER_ASAN_BUILD_DIR and RINGMASTER_TSAN_BUILD_DIR override the folders (default build-fuzz, build-tsan): the
# ASan folder is configured as scripts/fuzz.sh configures its own (ASan + UBSan + libFuzzer's coverage), so one build
# serves both.
# LibTorch, Qt and the system libraries are not instrumented: what is found inside them is suppressed in
# tests/sanitizers/*.supp, each line with its reason. Anything found in Ringmaster's own code fails the run.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-all}
scope=${2:-}
usage="usage: scripts/sanitize.sh [asan [--no-gui]|tsan|all]"
case "$what" in asan|tsan|all) ;; *) echo "$usage" >&2; exit 2 ;; esac
case "$scope" in ""|--no-gui) ;; *) echo "$usage" >&2; exit 2 ;; esac
[ -z "$scope" ] || [ "$what" = asan ] || { echo "$usage" >&2; exit 2; }
supp=$here/tests/sanitizers

configure() { # folder, sanitizers, extra cmake arguments...
  local dir=$1 sanitizers=$2; shift 2
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S "$here" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14 \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
      "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DRINGMASTER_SANITIZE="$sanitizers" "$@" > /dev/null
  fi
}

# Every process the tests start inherits these: a finding stops that process with a report on its stderr
# (a rank's report lands in its rank log, and the run fails).
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=0:strict_string_checks=1"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp"
export TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1:print_suppressions=0"

# One 2-rank run of ringmaster-launch on the embedded default; fails on a failed run or on any report in its files.
two_rank_run() { # launcher, trainer, label
  local launcher=$1 trainer=$2 label=$3 out status=0
  out=$(mktemp -d)
  "$launcher" --trainer "$trainer" --output-root "$out/runs" --nproc 2 --threads 1 --max-steps 40 \
    --eval-batch-size 5000 > "$out/launch.log" 2>&1 || status=$?
  local reports="ERROR: (Address|Leak|Thread)Sanitizer|WARNING: ThreadSanitizer|runtime error:|Sanitizer: CHECK failed"
  if [ $status -ne 0 ] || grep -rqE "$reports" "$out"; then
    echo "sanitize: the 2-rank run under $label failed (exit $status):" >&2
    grep -rhE -A30 "$reports" "$out" | head -150 >&2 || tail -30 "$out/launch.log" >&2
    return 1
  fi
  echo "sanitize: 2-rank run under $label: $(tail -1 "$out/launch.log")"
  rm -rf "$out"
}

# The unit tests: every Qt Test and script test that does not launch full training runs (those run under the
# normal build; here one 2-rank run stands for them).
asan_tests_exclude="package|slurm|trainer\.|python\.|cli\.|tst_launch|tst_run_supervisor|tst_main_window|tst_resume_run|tst_script_form|fault|gui_session"

# --no-gui: the unit tests of the supervisor, the runs library and the fuzz replays, and only what they need.
asan_no_gui_targets="ringmaster-launch ringmaster-trainer ringmaster-fuzz-targets fake-nvml tst_frame_decoder tst_report_frame
  tst_job_spec tst_failure_verdict tst_gpu_placement tst_metric_server tst_metric_line_parser tst_scalar_recorder
  tst_test_metric_pattern tst_tensorboard_follower tst_rank_process tst_run_record tst_run_export tst_job_diff"
asan_no_gui_tests="^(supervisor\.tst_(frame_decoder|report_frame|job_spec|failure_verdict|gpu_placement|metric_server|metric_line_parser|scalar_recorder|test_metric_pattern|tensorboard_follower|rank_process)|runs\.tst_(run_record|run_export|job_diff)|fuzz\.replay\..*)$"

run_asan() {
  local dir=${RINGMASTER_ASAN_BUILD_DIR:-${RINGMASTER_FUZZ_BUILD_DIR:-$here/build-fuzz}} start=$(date +%s)
  configure "$dir" address,undefined -DRINGMASTER_FUZZ=ON
  if [ "$scope" = --no-gui ]; then
    # shellcheck disable=SC2086
    cmake --build "$dir" --target $asan_no_gui_targets -- -j 2
  else
    cmake --build "$dir" -- -j 2
  fi
  local built=$(date +%s)
  if [ "$scope" = --no-gui ]; then
    (cd "$dir" && ctest --output-on-failure -R "$asan_no_gui_tests")
  else
    (cd "$dir" && ctest --output-on-failure -E "$asan_tests_exclude")
  fi
  two_rank_run "$dir/app/ringmaster-launch" "$dir/app/ringmaster-trainer" "AddressSanitizer + UBSan"
  echo "sanitize asan: build $((built - start)) s, tests $(( $(date +%s) - built )) s"
}

# ThreadSanitizer of LLVM 14 cannot follow Qt 6.4's QProcess: Qt starts children with clone(CLONE_PIDFD) and
# TSan's clone interceptor stops with "CHECK failed: tsan_rtl.cpp:234". So the supervisor is checked through
# its tests that start no process, and the 2-rank run uses the normal build's launcher with the instrumented trainer
# (its threads: the reporter's sender and heartbeat, the overlapped all-reduce, the shared-memory path).
tsan_metric_server_functions="tokenWithoutBeingTheRankIsRejected tcpEndpointTakesTheTokenOnly helloMustNameTheConnectingPid
  scalarsFramesAreCheckedValueByValue silentConnectionIsDroppedAfterTheHelloDeadline"
run_tsan() {
  local dir=${RINGMASTER_TSAN_BUILD_DIR:-$here/build-tsan} start=$(date +%s)
  local launcher=${RINGMASTER_BUILD_DIR:-$here/build}/app/ringmaster-launch
  [ -x "$launcher" ] || { echo "sanitize tsan: $launcher not built: run scripts/build.sh first" >&2; exit 2; }
  configure "$dir" thread
  cmake --build "$dir" --target ringmaster-trainer ringmaster-grad-sync-probe tst_metric_server -- -j 2
  local built=$(date +%s) f
  for f in $tsan_metric_server_functions; do
    QT_QPA_PLATFORM=offscreen "$dir/tests/supervisor/tst_metric_server" "$f" -silent
  done
  # The heartbeat-timing test measures wall time, which TSan stretches several-fold: not a thread check.
  (cd "$dir" && PYTEST_ADDOPTS="-k 'not heartbeats_keep_coming_during_a_long_step'" \
     ctest --output-on-failure -R "^trainer\.(reporter|shm_allreduce)$")
  two_rank_run "$launcher" "$dir/app/ringmaster-trainer" "ThreadSanitizer (trainer)"
  echo "sanitize tsan: build $((built - start)) s, tests $(( $(date +%s) - built )) s"
}

case "$what" in
  asan) run_asan ;;
  tsan) run_tsan ;;
  all) run_asan; run_tsan ;;
esac
