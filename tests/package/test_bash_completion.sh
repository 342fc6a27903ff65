#!/usr/bin/env bash
# packaging/bash-completion/ringmaster against the built programs: flags come from each program's
# --help (launcher and trainer flags), ringmaster-runs completes its subcommands, values of --device
# and --format are offered.
# Usage: tests/package/test_bash_completion.sh APP_DIR   (the folder with the built programs)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
export PATH="$1:$PATH"
source "$here/packaging/bash-completion/ringmaster"
fail() { echo "FAIL: $*"; exit 1; }
complete_words() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _ringmaster; echo "${COMPREPLY[*]}"; }

[ "$(complete_words ringmaster-launch --max-r)" = "--max-restarts" ] || fail "ringmaster-launch --max-r: $(complete_words ringmaster-launch --max-r)"
[ "$(complete_words ringmaster-trainer --lr-s)" = "--lr-schedule --lr-step-size" ] || fail "ringmaster-trainer --lr-s: $(complete_words ringmaster-trainer --lr-s)"
[ "$(complete_words ringmaster-runs ex)" = "export" ] || fail "ringmaster-runs ex: $(complete_words ringmaster-runs ex)"
[ "$(complete_words ringmaster-launch --device '')" = "cpu cuda" ] || fail "--device: $(complete_words ringmaster-launch --device '')"
[ "$(complete_words ringmaster-runs export run --format '')" = "csv json" ] || fail "--format: $(complete_words ringmaster-runs export run --format '')"
# --notify-command takes a program: commands on PATH are offered.
[[ " $(complete_words ringmaster-launch --notify-command ringmaster-lau) " == *" ringmaster-launch "* ]] || fail "--notify-command: $(complete_words ringmaster-launch --notify-command ringmaster-lau)"
[ "$(complete_words ringmaster-launch --notify-c)" = "--notify-command" ] || fail "ringmaster-launch --notify-c: $(complete_words ringmaster-launch --notify-c)"
echo "bash completion test passed"
