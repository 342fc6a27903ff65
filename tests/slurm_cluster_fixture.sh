#!/bin/sh
# The ctest fixture "slurm_cluster" around scripts/slurm-local.sh (tests/CMakeLists.txt). The tests
# labelled slurm start the one-node cluster themselves when they need it; this makes a ctest run leave
# behind no slurmctld or slurmd that it started:
#   before STATE_FILE   notes whether the cluster already runs (setup: runs before the first such test)
#   after STATE_FILE    stops it (slurm-local.sh --stop) unless it was running before (cleanup: after the last)
# Where slurm-local.sh cannot run (not root, Slurm not installed) both say so and succeed.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
local_slurm="$here/scripts/slurm-local.sh"
say() { echo "slurm_cluster_fixture: $*"; }
[ $# -eq 2 ] || { echo "usage: $0 before|after STATE_FILE" >&2; exit 2; }
state=$2
case "$1" in
  before)
    "$local_slurm" --status >/dev/null 2>&1
    case $? in
      0) echo running >"$state"; say "the one-node Slurm runs already: it is left running after the tests" ;;
      *) echo stopped >"$state"; say "the one-node Slurm is not running: it is stopped after the tests if they start it" ;;
    esac
    ;;
  after)
    # Without the note (the setup did not run), nothing is known: the cluster is left as it is.
    before=$(cat "$state" 2>/dev/null || echo unknown)
    rm -f "$state"
    if [ "$before" != stopped ]; then say "leaving the one-node Slurm as it is (before the tests: $before)"; exit 0; fi
    "$local_slurm" --status >/dev/null 2>&1
    case $? in
      0) "$local_slurm" --stop || exit 1 ;;
      *) say "no one-node Slurm of scripts/slurm-local.sh is running (or it cannot be asked: not root): nothing to stop" ;;
    esac
    ;;
  *) echo "usage: $0 before|after STATE_FILE" >&2; exit 2 ;;
esac
