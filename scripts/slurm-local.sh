#!/usr/bin/env bash
# Starts a one-node Slurm cluster on this machine (munged, slurmctld, slurmd, partition "debug") for the
# Slurm tests, without systemd; --stop stops it. Idempotent: what runs already is left running, and the
# config is rewritten only when this machine's resources changed. Installs nothing: scripts/setup.sh
# installs slurm-wlm and munge. Never touches a slurm.conf that this script did not write.
# --status says whether its slurmctld and slurmd run (the ctest fixture tests/slurm_cluster_fixture.sh
# uses it to stop, after the tests, only a cluster that was not running before them).
# Usage: scripts/slurm-local.sh [--stop | --status]      (as root)
# Exit: 0 the node is idle (or, with --stop, everything stopped; with --status, both daemons run); 3 with
# --status, they do not; 77 this machine cannot run it (not root, Slurm not installed); 1 it was tried and
# failed (one line says why and which log to read); 2 bad usage.
set -euo pipefail

readonly conf=/etc/slurm/slurm.conf
readonly marker="# Written by Ringmaster's scripts/slurm-local.sh: a one-node cluster for tests."
readonly state_dir=/var/lib/slurm/slurmctld
readonly spool_dir=/var/lib/slurm/slurmd
readonly log_dir=/var/log/slurm
readonly ctld_pid=/run/slurmctld.pid
readonly slurmd_pid=/run/slurmd.pid
readonly munge_pid=/run/munge/munged.pid
readonly partition=debug
readonly start_deadline_s=60
# RealMemory a little below what slurmd measures, so the node is never drained for "low RealMemory".
readonly memory_percent=95

say() { echo "slurm-local: $*"; }
fail() { echo "slurm-local: $*" >&2; exit 1; }
cannot() { echo "slurm-local: $*" >&2; exit 77; }

[ "$(id -u)" -eq 0 ] || cannot "needs root (it starts munged, slurmctld and slurmd): run it as root"
for tool in munged mungekey munge unmunge slurmctld slurmd sinfo scontrol; do
  command -v "$tool" >/dev/null || cannot "'$tool' is not installed: run scripts/setup.sh (it installs slurm-wlm and munge)"
done

host=$(hostname -s)

ours() { [ -f "$conf" ] && head -n 1 "$conf" | grep -qxF "$marker"; }
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
munge_works() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }
node_state() { sinfo -h -n "$host" -p "$partition" -o %T 2>/dev/null | head -n 1; }

# Polls a command until it succeeds or the deadline passes: returns 1 then.
wait_for() {
  local seconds=$1; shift
  local deadline=$((SECONDS + seconds))
  until "$@"; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

stop_daemon() { # pidfile name
  alive "$1" || return 0
  local pid; pid=$(cat "$1")
  kill "$pid"
  wait_for 30 bash -c "! kill -0 $pid 2>/dev/null" || fail "$2 (pid $pid) did not stop within 30 s"
  say "stopped $2 (pid $pid)"
}

if [ "${1:-}" = "--status" ]; then
  if alive "$ctld_pid" && alive "$slurmd_pid"; then say "slurmctld and slurmd are running"; exit 0; fi
  say "slurmctld and slurmd are not both running"
  exit 3
fi
if [ "${1:-}" = "--stop" ]; then
  [ -f "$conf" ] && ! ours && fail "$conf was not written by this script: not stopping that cluster"
  stop_daemon "$slurmd_pid" slurmd
  stop_daemon "$ctld_pid" slurmctld
  stop_daemon "$munge_pid" munged
  exit 0
fi
if [ $# -ne 0 ]; then echo "slurm-local: unknown argument '$1' (usage: scripts/slurm-local.sh [--stop | --status])" >&2; exit 2; fi

[ -f "$conf" ] && ! ours && fail "$conf exists and was not written by this script: not replacing it (move it away to use this one-node cluster)"

# munge: a key, its run folder, the daemon as the munge user.
if ! munge_works; then
  if [ ! -s /etc/munge/munge.key ]; then
    mungekey -c >/dev/null || fail "mungekey -c could not write /etc/munge/munge.key"
    chown munge:munge /etc/munge/munge.key
  fi
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
  alive "$munge_pid" || su -s /bin/sh munge -c /usr/sbin/munged || fail "munged did not start: see /var/log/munge/munged.log"
  wait_for 15 munge_works || fail "munge -n | unmunge does not succeed: see /var/log/munge/munged.log"
  say "munged is running"
fi

# slurm.conf from what slurmd measures here (CPUs, sockets, cores, threads, memory).
node_line=$(slurmd -C | head -n 1)
[[ $node_line == NodeName=* ]] || fail "slurmd -C did not describe this node (got: $node_line)"
memory=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node_line")
node_line=$(sed "s/RealMemory=[0-9]*/RealMemory=$((memory * memory_percent / 100))/" <<<"$node_line")
wanted=$(cat <<CONF
$marker
ClusterName=ringmaster-local
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
StateSaveLocation=$state_dir
SlurmdSpoolDir=$spool_dir
SlurmctldPidFile=$ctld_pid
SlurmdPidFile=$slurmd_pid
SlurmctldLogFile=$log_dir/slurmctld.log
SlurmdLogFile=$log_dir/slurmd.log
$node_line
PartitionName=$partition Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
)
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$wanted" ]; then
  # A changed node description needs both daemons restarted to take effect.
  stop_daemon "$slurmd_pid" slurmd
  stop_daemon "$ctld_pid" slurmctld
  mkdir -p "$(dirname "$conf")"
  printf '%s\n' "$wanted" >"$conf.tmp"
  mv "$conf.tmp" "$conf"
  say "wrote $conf ($node_line)"
fi
mkdir -p "$state_dir" "$spool_dir" "$log_dir"

if ! alive "$ctld_pid"; then
  slurmctld || fail "slurmctld did not start: see $log_dir/slurmctld.log"
  say "started slurmctld"
fi
wait_for 30 bash -c "scontrol ping 2>/dev/null | grep -q UP" || fail "slurmctld does not answer scontrol ping: see $log_dir/slurmctld.log"
if ! alive "$slurmd_pid"; then
  slurmd || fail "slurmd did not start: see $log_dir/slurmd.log"
  say "started slurmd"
fi

node_ready() { [[ $(node_state) =~ ^(idle|mixed|allocated|completing)$ ]]; }
if ! wait_for 10 node_ready; then
  # A node that was down or drained when the daemons last stopped comes back only when told.
  scontrol update NodeName="$host" State=RESUME >/dev/null 2>&1 || true
  wait_for "$start_deadline_s" node_ready ||
    fail "node $host is '$(node_state)', not idle, after ${start_deadline_s} s: see $log_dir/slurmd.log and $log_dir/slurmctld.log"
fi
say "node $host is $(node_state) in partition $partition"
