#!/usr/bin/env bash
# packaging/bash-completion/ringmaster against the built programs: flags come from each program's
# --help (launcher and trainer flags; the launcher offers the trainer's too), ringmaster-runs completes its
# subcommands, the values a flag's --help line names are offered (--device, --format, the trainer's choices).
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
# A flag's values from its --help line, which the trainer's option table writes: choices, booleans, and for the
# launcher the trainer's own flags and values (it passes them on).
[ "$(complete_words ringmaster-trainer --optimizer '')" = "sgd adam adamw" ] || fail "--optimizer: $(complete_words ringmaster-trainer --optimizer '')"
[ "$(complete_words ringmaster-trainer --tf32 '')" = "true false" ] || fail "--tf32: $(complete_words ringmaster-trainer --tf32 '')"
[ "$(complete_words ringmaster-trainer --model ml)" = "mlp" ] || fail "--model ml: $(complete_words ringmaster-trainer --model ml)"
[ "$(complete_words ringmaster-launch --precision '')" = "fp32 bf16 fp16" ] || fail "launch --precision: $(complete_words ringmaster-launch --precision '')"
[ "$(complete_words ringmaster-launch --bucket)" = "--bucket-mb" ] || fail "launch --bucket: $(complete_words ringmaster-launch --bucket)"
# --notify-command takes a program: commands on PATH are offered.
[[ " $(complete_words ringmaster-launch --notify-command ringmaster-lau) " == *" ringmaster-launch "* ]] || fail "--notify-command: $(complete_words ringmaster-launch --notify-command ringmaster-lau)"
[ "$(complete_words ringmaster-launch --notify-c)" = "--notify-command" ] || fail "ringmaster-launch --notify-c: $(complete_words ringmaster-launch --notify-c)"
echo "bash completion test passed"
