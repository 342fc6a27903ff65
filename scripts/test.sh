#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test. .ci/run calls this.
#   scripts/test.sh [CTEST_ARGUMENTS...]
# 1. scripts/setup.sh, then scripts/build.sh (a first configure here keeps line tables only, -g1: a quarter
#    less compile time than -g, and the -dbgsym package still maps addresses to lines).
# 2. The CUDA build: scripts/setup-torch.sh (PyTorch's torch 2.11.0+cu130 wheel and the test needs, pinned, in
#    .torch-env), then scripts/build-trainer.sh against it into build-cuda/ with the trainer's tests (the
#    command a GPU user runs; there is no GPU here, so it is compiled, linked and tested on the CPU).
# 3. In the background, at the lowest CPU and I/O priority, scripts/checks.sh: the AddressSanitizer+UBSan build
#    with its unit tests and a 2-rank run, every libFuzzer target for RINGMASTER_FUZZ_SECONDS (default 30) s,
#    and the ThreadSanitizer build with its stage. The test suite keeps about one of the two cores busy (its
#    runs wait on sockets, processes and Slurm), so these use the other. Its log: BUILD/checks.log.
# 4. ctest on the main build, one test at a time (each end-to-end test runs 2 trainer ranks; the launcher's
#    and the app's runs of the CUDA trainer find it through RINGMASTER_CUDA_TRAINER), then ctest on
#    build-cuda (the trainer suite against the CUDA build, torch 2.11 as the Python reference); then it waits
#    for the checks and prints their summary (the log's last 150 lines when one failed). The tests that check
#    against real TensorBoard, tensorboardX and torch 2.x find them through RINGMASTER_FRAMEWORK_PYTHON (the
#    environment of step 2; without it they are skipped).
# RINGMASTER_CHECKS=0 skips step 3, RINGMASTER_CUDA_BUILD=0 step 2 and build-cuda's tests. The exit status is
# non-zero when a test or a check failed.
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
cuda_build=${RINGMASTER_CUDA_BUILD_DIR:-$here/build-cuda}
cuda=${RINGMASTER_CUDA_BUILD:-1}
if [ "$cuda" != 0 ]; then
  # A failed CUDA set-up or build fails the run, after the main suite and the checks have run.
  if "$here/scripts/setup-torch.sh" &&
     "$here/scripts/build-trainer.sh" --python "${RINGMASTER_TORCH_ENV:-$here/.torch-env}/bin/python" \
       --build-dir "$cuda_build" --with-tests --no-install; then
    export RINGMASTER_CUDA_TRAINER=$cuda_build/app/ringmaster-trainer
  else
    echo "test: the CUDA build failed; its tests are not run"
    status=1
    cuda=0
  fi
fi
cuda_built=$(date +%s)
# The pinned frameworks (torch 2.x, TensorBoard, Lightning, Accelerate, py-spy) for the tests that check against the
# real things: the environment of step 2, also when an earlier run made it and this one skipped the CUDA build.
framework_python=${RINGMASTER_TORCH_ENV:-$here/.torch-env}/bin/python
if [ -x "$framework_python" ]; then export RINGMASTER_FRAMEWORK_PYTHON=$framework_python; fi

(cd "$build" && ctest --output-on-failure --timeout 900 "$@") || status=$?
if [ "$cuda" != 0 ]; then
  echo "test: the trainer suite against the CUDA build ($cuda_build)"
  (cd "$cuda_build" && ctest --output-on-failure --timeout 900 "$@") || status=$?
fi
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
echo "set-up and build: $((built - start)) s; CUDA set-up and build: $((cuda_built - built)) s; tests: $((tested - cuda_built)) s; checks: $checks; total $(( $(date +%s) - start )) s"
exit $status
