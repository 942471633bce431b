# Sourced by scripts/test.sh: installs Slurm and munge from the Debian
# packages once per machine, starts a real two-node Slurm cluster on
# 127.0.0.1 (one slurmctld, a slurmd for each of the nodes n1 and n2, and a
# munged of its own) over a temporary directory, and exports what the Slurm
# tests need:
#
#   HONE_TEST_SLURM            1
#   SLURM_CONF                 the cluster's slurm.conf, so that srun, sbatch,
#   HONE_TEST_SLURM_CONF       squeue... run by the tests talk to this cluster
#   HONE_TEST_SLURM_PARTITION  the partition of both nodes (debug)
#   HONE_TEST_SLURM_URGENT     a partition of both nodes whose jobs preempt
#                              debug's (urgent): a job there that needs a
#                              node cancels the debug jobs on it (PREEMPTED)
#   HONE_TEST_SLURM_NODES      the node names, "n1 n2"
#   HONE_TEST_SLURM_NODECTL    a script that takes a node down and brings it
#                              back: `NODECTL stop n2` stops the node's slurmd
#                              (its running jobs go on, as when the daemon
#                              alone dies), `NODECTL kill n2` kills the
#                              slurmd and every process of the node's jobs
#                              (the node itself died), `NODECTL start n2`
#                              starts the slurmd again and waits until the
#                              node answers, `NODECTL resume n2` returns a
#                              down or drained node to service
#   HONE_TEST_SLURM_LOCK       a file the tests flock: shared while they use
#                              the cluster, exclusive while one takes a node
#                              down, preempts its jobs or needs every CPU
#                              free; they wait for it in turn, holding the
#                              file beside it, LOCK.queue (internal/slurmtest)
#
# Besides what a cluster needs to run jobs, slurm.conf sets up the faults
# the tests cause:
#
#   - memory limits enforced without cgroups (the daemons run in this
#     machine's namespaces, with proctrack/linuxproc and task/none):
#     jobacct_gather/linux samples every step's processes each second
#     (JobAcctGatherFrequency=task=1) and OverMemoryKill kills a step whose
#     memory exceeds its --mem. Slurm 22.05 then calls the job FAILED,
#     signal 9 (srun exits 137), not OUT_OF_MEMORY, which only cgroups
#     report; slurmstepd says "exceeded memory limit" in its stderr.
#   - preemption: PreemptType=preempt/partition_prio with
#     PreemptMode=CANCEL, debug at PriorityTier=1 and urgent at 10, so
#     `sbatch -p urgent -w n2 --exclusive` ends the debug jobs on n2,
#     PREEMPTED (SIGTERM, then SIGKILL after KillWait).
#
# Everything the cluster writes (state, spool, pid and log files, munge's
# socket) stays in that directory, and the ports are free ones, so two runs
# on one machine do not collide; the cluster's munged is its own, on its own
# socket, so no other munged is used or stopped. Every daemon is stopped by
# its pid when the sourcing script exits, also on failure, after the
# S3 server's stop if scripts/s3server.sh set one (source this file after
# hone_s3_start). A cluster whose script was killed before it could stop it
# is stopped, by the pids in its directory, when the next one starts.
#
# Not root, no apt-get, or daemons that do not come up: it says so loudly
# and exports nothing: the Slurm tests then skip, loudly too.

hone_slurm_partition=debug
hone_slurm_urgent=urgent
hone_slurm_nodes="n1 n2"
hone_slurm_tools="slurmctld slurmd srun sbatch squeue scontrol scancel sinfo munged"

hone_slurm_loud() {
  echo "########################################################################" >&2
  echo "## SLURM TEST CLUSTER NOT AVAILABLE: $*" >&2
  echo "## The Slurm tests against a real cluster will SKIP." >&2
  echo "########################################################################" >&2
}

# hone_slurm_port_free PORT: whether nothing listens on the TCP port PORT
# (the Slurm daemons listen on every address).
hone_slurm_port_free() {
  if command -v ss >/dev/null 2>&1; then
    [ -z "$(ss -Htln "sport = :$1" 2>/dev/null)" ]
    return
  fi
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# hone_slurm_port PREFERRED: PREFERRED if it is free, else a free port
# below the range the kernel takes the ports of outgoing connections from
# (so that none of those takes it before the daemon binds it).
hone_slurm_port() {
  local p=$1 i low=32768 high
  read -r low high 2>/dev/null </proc/sys/net/ipv4/ip_local_port_range
  [ "${low:-0}" -gt 11000 ] 2>/dev/null || low=32768
  for i in $(seq 1 50); do
    if hone_slurm_port_free "$p"; then
      echo "$p"
      return 0
    fi
    p=$((10000 + RANDOM % (low - 10000)))
  done
  echo "$p"
}

# hone_slurm_install: installs slurmctld, slurmd, the client commands and
# munge with apt-get unless they are installed already.
hone_slurm_install() {
  local t missing=
  for t in $hone_slurm_tools runuser; do
    if ! command -v "$t" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$t" ]; then
      missing="$missing $t"
    fi
  done
  [ -z "$missing" ] && return 0
  if ! command -v apt-get >/dev/null 2>&1; then
    hone_slurm_why="missing:$missing, and no apt-get to install them"
    return 1
  fi
  echo "== installing Slurm and munge (Debian packages, once per machine; missing:$missing)"
  local log
  log=$(mktemp "${TMPDIR:-/tmp}/hone-slurm-apt.XXXXXX")
  local pkgs="slurmctld slurmd slurm-client munge"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $pkgs >"$log" 2>&1; then
    if ! { DEBIAN_FRONTEND=noninteractive apt-get update -q &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $pkgs; } >>"$log" 2>&1; then
      tail -n 20 "$log" >&2
      rm -f "$log"
      hone_slurm_why="apt-get install $pkgs failed"
      return 1
    fi
  fi
  rm -f "$log"
}

# hone_slurm_alive PID PATTERN: whether PID runs (and is not a zombie) with
# PATTERN in its command line, so a reused pid is never taken for ours.
hone_slurm_alive() {
  local pid=$1 pat=$2 state
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
  state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)
  [ -n "$state" ] && [ "$state" != Z ] || return 1
  tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$pat"
}

# hone_slurm_kill SIGNAL PATTERN PID...: sends SIGNAL to each PID that is
# still ours (see hone_slurm_alive), then waits up to 5 s for them to end
# (this machine's init reaps orphans up to 2 s late) and kills what is left.
hone_slurm_kill() {
  local sig=$1 pat=$2 pid i left
  shift 2
  for pid in "$@"; do
    hone_slurm_alive "$pid" "$pat" && kill "-$sig" "$pid" 2>/dev/null
  done
  for i in $(seq 1 50); do
    left=
    for pid in "$@"; do
      hone_slurm_alive "$pid" "$pat" && left="$left $pid"
    done
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  for pid in $left; do
    kill -KILL "$pid" 2>/dev/null
  done
  for i in $(seq 1 30); do
    left=
    for pid in "$@"; do
      hone_slurm_alive "$pid" "$pat" && left="$left $pid"
    done
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  return 0
}

# hone_slurm_pidfile FILE: the pid written in FILE, or nothing.
hone_slurm_pidfile() {
  [ -r "$1" ] && tr -dc '0-9' <"$1"
}

# hone_slurm_procs: "PID PPID COMM" for every process, read from /proc
# (a fresh machine may lack ps and pgrep).
hone_slurm_procs() {
  local f line comm
  for f in /proc/[0-9]*/stat; do
    read -r line 2>/dev/null <"$f" || continue
    comm=${line#*(}
    comm=${comm%)*}
    # After the command's ")": state, then the parent's pid.
    set -- ${line##*) }
    echo "${line%% *} $2 $comm"
  done
}

# hone_slurm_job_pids DIR [LOGFILE]: the slurmstepd processes of the cluster
# in DIR (those that hold its log file LOGFILE open, any of its slurmd log
# files without one) and every process under them: the jobs' processes.
hone_slurm_job_pids() {
  local dir=$1 log=${2:-} procs p fd link steps=
  procs=$(hone_slurm_procs)
  for p in $(printf '%s\n' "$procs" | awk '$3 == "slurmstepd" { print $1 }'); do
    for fd in /proc/"$p"/fd/*; do
      link=$(readlink "$fd" 2>/dev/null)
      case "$link" in
      "$dir"/log/slurmd-*)
        if [ -z "$log" ] || [ "$link" = "$log" ]; then
          steps="$steps $p"
          break
        fi
        ;;
      esac
    done
  done
  [ -z "$steps" ] && return 0
  # The processes under the steps: children of a listed pid, to a fixed
  # point.
  printf '%s\n' "$procs" | awk -v roots="$steps" '
    BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) mine[r[i]] = 1 }
    { parent[$1] = $2 }
    END {
      do {
        grew = 0
        for (p in parent) if (!(p in mine) && (parent[p] in mine)) { mine[p] = 1; grew = 1 }
      } while (grew)
      for (p in mine) print p
    }'
}

# hone_slurm_stop_dir DIR: stops the cluster whose files are in DIR by the
# pids it wrote there (checked against their command lines), kills what is
# left of its jobs, and removes DIR.
hone_slurm_stop_dir() {
  local dir=$1 conf="$1/slurm.conf" n pids= jobs
  [ -d "$dir" ] || return 0
  for n in $hone_slurm_nodes; do
    pids="$pids $(hone_slurm_pidfile "$dir/run/slurmd-$n.pid")"
  done
  pids="$pids $(cat "$dir/run/started" 2>/dev/null)"
  # slurmd first, so the jobs' processes are not started anew.
  hone_slurm_kill TERM "$conf" $pids
  jobs=$(hone_slurm_job_pids "$dir")
  if [ -n "$jobs" ]; then
    kill -KILL $jobs 2>/dev/null
  fi
  hone_slurm_kill TERM "$conf" "$(hone_slurm_pidfile "$dir/run/slurmctld.pid")"
  hone_slurm_kill TERM "$dir/munge/" "$(hone_slurm_pidfile "$dir/munge/munged.pid")"
  rm -rf "$dir"
}

# hone_slurm_reap: stops the clusters of earlier runs whose sourcing shell
# is gone without stopping them (killed by SIGKILL, say).
hone_slurm_reap() {
  local d owner
  for d in "${TMPDIR:-/tmp}"/hone-slurm.*; do
    [ -d "$d" ] && [ -f "$d/owner" ] || continue
    read -r owner <"$d/owner" || continue
    # owner is "PID STARTTIME": the shell is gone if no process has both.
    if [ "$(hone_slurm_starttime "${owner% *}")" != "${owner#* }" ]; then
      echo "== stopping the Slurm test cluster a killed run left in $d"
      hone_slurm_stop_dir "$d"
    fi
  done
}

# hone_slurm_starttime PID: the start time of PID in clock ticks since boot
# (field 22 of /proc/PID/stat), or nothing.
hone_slurm_starttime() {
  [ -r "/proc/$1/stat" ] && sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20
}

hone_slurm_stop() {
  # The EXIT trap runs this under the sourcing script's set -e: a command
  # that fails in here must not skip the rest (nor the S3 server's stop).
  local flags=$-
  set +e
  if [ -n "${hone_slurm_dir:-}" ]; then
    hone_slurm_stop_dir "$hone_slurm_dir"
    hone_slurm_dir=
  fi
  case $flags in *e*) set -e ;; esac
  return 0
}

# hone_slurm_fail WHY: gives up loudly, stopping what was started.
hone_slurm_fail() {
  if [ -n "${hone_slurm_dir:-}" ]; then
    tail -n 15 "$hone_slurm_dir"/log/*.log "$hone_slurm_dir"/munge/munged.log >&2 2>/dev/null || true
  fi
  hone_slurm_loud "$*"
  hone_slurm_stop
  return 0
}

# hone_slurm_write_conf DIR CTLDPORT PORT1 PORT2: the cluster's slurm.conf.
hone_slurm_write_conf() {
  local dir=$1 host
  host=$(hostname -s)
  cat >"$dir/slurm.conf" <<EOF
ClusterName=local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
JobAcctGatherParams=OverMemoryKill
JobCompType=jobcomp/none
SchedulerParameters=sched_interval=1
MinJobAge=300
KillWait=5
NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=$3 CPUs=2 RealMemory=4000 State=UNKNOWN
NodeName=n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=$4 CPUs=2 RealMemory=4000 State=UNKNOWN
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
PartitionName=$hone_slurm_partition Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP PriorityTier=1
PartitionName=$hone_slurm_urgent Nodes=n1,n2 Default=NO MaxTime=INFINITE State=UP PriorityTier=10
EOF
}

# hone_slurm_write_nodectl DIR: the node control script the tests call.
hone_slurm_write_nodectl() {
  local dir=$1 self
  self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/slurm.sh
  cat >"$dir/nodectl" <<EOF
#!/usr/bin/env bash
# nodectl stop|kill|start|resume NODE: takes a node of the Slurm test
# cluster in $dir down, or brings it back (scripts/slurm.sh).
set -uo pipefail
. '$self'
hone_slurm_nodectl '$dir' "\$@"
EOF
  chmod 755 "$dir/nodectl"
}

# hone_slurm_slurmd DIR NODE: starts NODE's slurmd in the background, in
# DIR, its output in DIR/log and not on the caller's standard streams;
# prints its pid.
hone_slurm_slurmd() {
  (cd "$1" && exec slurmd -D -N "$2" -f "$1/slurm.conf" </dev/null >>"$1/log/slurmd-$2.out" 2>&1) &
  echo $!
}

# hone_slurm_node_state NODE: sinfo's short state of NODE ("idle",
# "down*", "drain"...).
hone_slurm_node_state() {
  sinfo -h -n "$1" -o %t 2>/dev/null | head -n 1
}

# hone_slurm_wait_listen DIR NODE PID: waits until NODE's slurmd, PID, has
# bound its port (or has exited, failing to). 30 s at most.
hone_slurm_wait_listen() {
  local dir=$1 node=$2 pid=$3 port i
  port=$(sed -n "s/^NodeName=$node .* Port=\([0-9]*\) .*/\1/p" "$dir/slurm.conf")
  for i in $(seq 1 300); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      # Listening, unless another process was and ours is exiting.
      sleep 0.1
      hone_slurm_alive "$pid" "$dir/slurm.conf" && return 0
    fi
    if ! hone_slurm_alive "$pid" "$dir/slurm.conf"; then
      tail -n 5 "$dir/log/slurmd-$node.log" >&2
      echo "nodectl: slurmd of $node exited" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "nodectl: slurmd of $node did not listen on port $port within 30 s" >&2
  return 1
}

# hone_slurm_wait_node DIR NODE PID: waits until NODE, whose slurmd is PID,
# answers: slurmctld no longer marks it not responding (*), and it is not
# down (with ReturnToService=2 a node that was down comes back idle once
# its slurmd registers). 30 s at most.
hone_slurm_wait_node() {
  local dir=$1 node=$2 pid=$3 i st=
  for i in $(seq 1 300); do
    if ! hone_slurm_alive "$pid" "$dir/slurm.conf"; then
      tail -n 15 "$dir/log/slurmd-$node.log" >&2
      echo "nodectl: slurmd of $node is not running" >&2
      return 1
    fi
    st=$(hone_slurm_node_state "$node")
    case "$st" in
    "" | *'*' | down*) sleep 0.1 ;;
    *) return 0 ;;
    esac
  done
  echo "nodectl: $node did not answer within 30 s (state: $st)" >&2
  return 1
}

hone_slurm_nodectl() {
  local dir=$1 op=${2:-} node=${3:-} pid st
  export SLURM_CONF="$dir/slurm.conf"
  case " $hone_slurm_nodes " in
  *" $node "*) ;;
  *)
    echo "nodectl: usage: nodectl stop|kill|start|resume NODE (one of: $hone_slurm_nodes)" >&2
    return 2
    ;;
  esac
  pid=$(hone_slurm_pidfile "$dir/run/slurmd-$node.pid")
  case "$op" in
  stop)
    hone_slurm_kill TERM "$SLURM_CONF" "$pid"
    ;;
  kill)
    local jobs
    jobs=$(hone_slurm_job_pids "$dir" "$dir/log/slurmd-$node.log")
    hone_slurm_kill KILL "$SLURM_CONF" "$pid"
    if [ -n "$jobs" ]; then
      kill -KILL $jobs 2>/dev/null
    fi
    ;;
  start)
    if ! hone_slurm_alive "$pid" "$SLURM_CONF"; then
      pid=$(hone_slurm_slurmd "$dir" "$node")
      echo "$pid" >>"$dir/run/started"
      hone_slurm_wait_listen "$dir" "$node" "$pid" || return 1
    fi
    hone_slurm_wait_node "$dir" "$node" "$pid"
    ;;
  resume)
    st=$(hone_slurm_node_state "$node")
    case "$st" in
    down* | drain* | drng* | fail*)
      scontrol update nodename="$node" state=resume || return 1
      ;;
    esac
    hone_slurm_wait_node "$dir" "$node" "$pid"
    ;;
  *)
    echo "nodectl: unknown operation '$op' (stop, kill, start or resume)" >&2
    return 2
    ;;
  esac
}

# hone_slurm_chain_trap: makes the EXIT trap stop the cluster, then run
# what it ran before (the S3 server's stop).
hone_slurm_chain_trap() {
  local prev
  prev=$(trap -p EXIT)
  case "$prev" in
  *hone_slurm_stop*) return 0 ;;
  esac
  if [ -n "$prev" ]; then
    eval "set -- $prev"
    trap "hone_slurm_stop; $3" EXIT
  else
    trap hone_slurm_stop EXIT
  fi
}

hone_slurm_start() {
  # The sourcing script runs with set -e; the start checks every status it
  # cares about itself and always returns 0.
  local flags=$-
  set +e
  hone_slurm_start_cluster
  case $flags in *e*) set -e ;; esac
  return 0
}

hone_slurm_start_cluster() {
  local t0=$SECONDS
  hone_slurm_why=
  if [ "$(id -u)" != 0 ]; then
    hone_slurm_loud "not root (the Slurm daemons and munged run as root and munge)"
    return 0
  fi
  if ! hone_slurm_install; then
    hone_slurm_loud "$hone_slurm_why"
    return 0
  fi
  export PATH="$PATH:/usr/sbin:/sbin"
  if [ ! -s /etc/munge/munge.key ]; then
    if ! mungekey -c -k /etc/munge/munge.key || ! chown munge:munge /etc/munge/munge.key; then
      hone_slurm_loud "no /etc/munge/munge.key, and mungekey -c could not make one"
      return 0
    fi
  fi
  hone_slurm_reap

  # A port found free can still be taken before a daemon binds it: then
  # the cluster starts again on other ports.
  local attempt rc
  for attempt in 1 2 3; do
    hone_slurm_launch
    rc=$?
    [ "$rc" = 0 ] && break
    if [ "$rc" = 2 ] && [ "$attempt" != 3 ]; then
      echo "== a port of the Slurm test cluster was taken while it started; starting it again on other ports"
      hone_slurm_stop
      continue
    fi
    hone_slurm_fail "$hone_slurm_why"
    return 0
  done

  local dir=$hone_slurm_dir conf="$hone_slurm_dir/slurm.conf"
  export HONE_TEST_SLURM=1
  export SLURM_CONF=$conf HONE_TEST_SLURM_CONF=$conf
  export HONE_TEST_SLURM_PARTITION=$hone_slurm_partition
  export HONE_TEST_SLURM_URGENT=$hone_slurm_urgent
  export HONE_TEST_SLURM_NODES=$hone_slurm_nodes
  export HONE_TEST_SLURM_NODECTL="$dir/nodectl"
  export HONE_TEST_SLURM_LOCK="$dir/lock"
  echo "== Slurm test cluster up in $((SECONDS - t0)) s: $hone_slurm_ports (SLURM_CONF=$conf)"
}

# hone_slurm_launch: makes the cluster's directory, starts its daemons and
# waits until both nodes run a job. Returns 0 when they do, else 2 when a
# daemon could not bind its port, else 1, with the reason in
# hone_slurm_why; the caller stops what it started.
hone_slurm_launch() {
  hone_slurm_dir=$(mktemp -d "${TMPDIR:-/tmp}/hone-slurm.XXXXXX")
  hone_slurm_chain_trap
  local dir=$hone_slurm_dir
  local conf="$dir/slurm.conf"
  echo "$$ $(hone_slurm_starttime $$)" >"$dir/owner"
  # munged runs as munge and checks that every directory up to its socket
  # can be searched by all.
  chmod 755 "$dir"
  mkdir -p "$dir/state" "$dir/run" "$dir/log" "$dir/munge" "$dir/spool/n1" "$dir/spool/n2"
  chown munge:munge "$dir/munge"
  chmod 755 "$dir/munge"
  : >"$dir/lock"
  : >"$dir/lock.queue"
  chmod 666 "$dir/lock" "$dir/lock.queue"

  if ! runuser -u munge -- munged --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed" \
    --log-file="$dir/munge/munged.log" --origin=127.0.0.1; then
    hone_slurm_why="munged did not start"
    return 1
  fi

  local ctld n1 n2
  ctld=$(hone_slurm_port 16817)
  n1=$(hone_slurm_port 17001)
  n2=$(hone_slurm_port 17002)
  if [ "$n2" = "$n1" ] || [ "$n2" = "$ctld" ]; then
    n2=$(hone_slurm_port $((n1 + 1)))
  fi
  hone_slurm_write_conf "$dir" "$ctld" "$n1" "$n2"
  hone_slurm_write_nodectl "$dir"

  local pid n started=
  (cd "$dir" && exec slurmctld -D -i -f "$conf" </dev/null >"$dir/log/slurmctld.out" 2>&1) &
  started="$started $!"
  for n in $hone_slurm_nodes; do
    started="$started $(hone_slurm_slurmd "$dir" "$n")"
  done
  echo "$started" >"$dir/run/started"

  # Both nodes idle within about a second; 30 s at most.
  local i st=
  for i in $(seq 1 300); do
    st=$(SLURM_CONF=$conf sinfo -h -o '%N %t' 2>/dev/null | tr '\n' ' ')
    [ "$st" = "n[1-2] idle " ] && break
    for pid in $started; do
      if ! hone_slurm_alive "$pid" "$conf"; then
        hone_slurm_why="a Slurm daemon exited while the cluster started (pid $pid)"
        grep -qs "Address already in use" "$dir"/log/*.log && return 2
        return 1
      fi
    done
    sleep 0.1
  done
  if [ "$st" != "n[1-2] idle " ]; then
    hone_slurm_why="the nodes were not idle within 30 s (sinfo: ${st:-nothing})"
    return 1
  fi
  local out
  out=$(cd "$dir" && SLURM_CONF=$conf timeout 30 srun -N2 hostname 2>&1)
  if [ "$(printf '%s\n' "$out" | grep -c .)" != 2 ]; then
    hone_slurm_why="srun -N2 hostname did not run on both nodes: $out"
    return 1
  fi
  # A daemon that could not bind its port has exited by now, and the
  # commands may have talked to another cluster's daemon on it (every
  # cluster on the machine shares munge's key): this cluster's daemons must
  # all run, and the controller must be this one.
  for pid in $started; do
    if ! hone_slurm_alive "$pid" "$conf"; then
      hone_slurm_why="a Slurm daemon exited while the cluster started (pid $pid)"
      grep -qs "Address already in use" "$dir"/log/*.log && return 2
      return 1
    fi
  done
  out=$(SLURM_CONF=$conf scontrol show config 2>/dev/null | sed -n 's/^SLURM_CONF *= *//p')
  if [ "$out" != "$conf" ]; then
    hone_slurm_why="the controller on 127.0.0.1:$ctld is another cluster's (its SLURM_CONF is ${out:-unknown})"
    return 2
  fi
  hone_slurm_ports="slurmctld on 127.0.0.1:$ctld, nodes n1, n2 on :$n1, :$n2"
  return 0
}
