#!/usr/bin/env bash
# A Slurm on localhost, for the tests (Debian's slurm-wlm and munge).
#
#   scripts/slurm-local.sh start DIR [NODES]
#                                      installs the packages when missing, writes DIR/slurm.conf
#                                      from this machine's real CPUs and memory, starts munged,
#                                      slurmctld and slurmd, and waits until the nodes are idle;
#                                      prints the SLURM_CONF path on its last line. NODES > 1
#                                      (default 1) starts one slurmd per node (`slurmd -N`), all
#                                      on this machine, named HOST-1 ... HOST-N: jobs over
#                                      several nodes then run for real, sharing its cores.
#   scripts/slurm-local.sh stop DIR    stops the daemons it started, by their pid files.
#
# Exit 77: the packages are missing and cannot be installed (tests skip on it, saying so).
# The daemons run as the calling user (SlurmUser, SlurmdUser): no root is needed once the
# packages are there.
#
# Everything (state, spool, logs, pids, munge key and socket) lives under DIR. Jobs are read back
# with `sacct -c` from the job-completion log (no accounting database is needed).
set -euo pipefail
# Daemons and admin tools live in sbin, which an unprivileged user's PATH often lacks.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
cmd=${1:?usage: slurm-local.sh start|stop DIR [NODES]}
dir=${2:?usage: slurm-local.sh start|stop DIR [NODES]}
nodes=${3:-1}

install_packages() {
  "$(dirname "$0")/ensure-packages.sh" slurmctld=slurm-wlm slurmd=slurm-wlm munged=munge
}

stop() {
  for f in "$dir"/run/slurmd*.pid "$dir"/run/slurmctld.pid "$dir"/munge/munged.pid; do
    if [ -s "$f" ]; then
      kill "$(cat "$f")" 2>/dev/null || true
    fi
  done
  sleep 0.5
}

case "$cmd" in
start)
  install_packages
  dir=$(mkdir -p "$dir" && cd "$dir" && pwd)
  mkdir -p "$dir"/{state,spool,log,run,munge}
  chmod 700 "$dir/munge"
  head -c 1024 /dev/urandom > "$dir/munge/munge.key"
  chmod 400 "$dir/munge/munge.key"
  munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/seed"
  # A daemon that fails to start leaves none behind.
  trap 'stop; exit 1' ERR
  host=$(hostname -s)
  node=$(slurmd -C | head -n 1 | sed -E 's/RealMemory=([0-9]+)/RealMemory=\1/')
  mem=$(echo "$node" | sed -E 's/.*RealMemory=([0-9]+).*/\1/')
  node=$(echo "$node" | sed -E "s/RealMemory=[0-9]+/RealMemory=$((mem * 9 / 10))/")
  base=$(( 20000 + ($$ % 20000) ))
  if [ "$nodes" -gt 1 ]; then
    spool="$dir/spool/%n" pidfile="$dir/run/slurmd-%n.pid" slurmdlog="$dir/log/slurmd-%n.log"
    lines=""
    for i in $(seq 1 "$nodes"); do
      mkdir -p "$dir/spool/$host-$i"
      lines="$lines$(echo "$node" | sed -E "s/^NodeName=[^ ]+/NodeName=$host-$i NodeHostname=$host Port=$((base + 1 + i))/") State=UNKNOWN
"
    done
    node=$lines
  else
    spool="$dir/spool" pidfile="$dir/run/slurmd.pid" slurmdlog="$dir/log/slurmd.log"
    node="$node State=UNKNOWN"
  fi
  cat > "$dir/slurm.conf" <<CONF
ClusterName=jouleplan-test
SlurmctldHost=$host
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$pidfile
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$slurmdlog
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.txt
JobAcctGatherType=jobacct_gather/linux
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
$node
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF="$dir/slurm.conf"
  slurmctld
  if [ "$nodes" -gt 1 ]; then
    for i in $(seq 1 "$nodes"); do slurmd -N "$host-$i"; done
  else
    slurmd
  fi
  for _ in $(seq 1 60); do
    if [ "$(sinfo -h -N -o %T 2>/dev/null | grep -c '^idle')" -ge "$nodes" ]; then
      echo "$SLURM_CONF"
      exit 0
    fi
    sleep 0.5
  done
  echo "slurm-local: the node did not become idle; logs in $dir/log" >&2
  tail -n 20 "$dir"/log/*.log >&2 || true
  stop
  exit 1
  ;;
stop)
  stop
  ;;
*)
  echo "usage: slurm-local.sh start|stop DIR" >&2
  exit 2
  ;;
esac
