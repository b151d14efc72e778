#!/usr/bin/env bash
# A real Slurm on one machine, for tsmpi's tests (issue 12): munged, slurmctld
# and one slurmd per "host", each host a network namespace with its own host
# name (UTS namespace), joined by a bridge in the controller's namespace.
#
#   scripts/slurm-cluster.sh up [--name TAG] [--nodes N] [--cpus C]
#   scripts/slurm-cluster.sh status [--name TAG]
#   scripts/slurm-cluster.sh exec [--name TAG] [--node NODE] -- CMD ARGS...
#   scripts/slurm-cluster.sh env [--name TAG]
#   scripts/slurm-cluster.sh down [--name TAG]
#
# Layout for --name T --nodes 2 --cpus 4 (everything under /tmp/tsmpi-slurm-T):
#
#   netns tsmpi-slurm-T-ctl, host name "slurmctl"      netns tsmpi-slurm-T-n01, host name "n01"
#     br0 198.19.12.1/24  munged, slurmctld  --veth--   veth0 198.19.12.11/24  slurmd -N n01 (CPUs=4)
#     clients: salloc, srun, sbatch, mpiexec --veth--   veth0 198.19.12.12/24  slurmd -N n02 (in netns ...-n02)
#
# Why namespaces: slurmd must bind a non-loopback IPv4 address, and tests must
# not add addresses to the machine's own interfaces. Every device is created
# inside a namespace of ours (the veth pair is made inside the controller's
# namespace and its far end is moved straight into the host's), so nothing is
# ever created in, moved through or changed in the root namespace; since the
# namespaces have no link to the outside, the addresses (198.19.0.0/16,
# RFC 2544 test space) and Slurm's default ports collide with nothing.
# Clients run in the controller's namespace, which plays the login node.
#
# munged runs with its own key, socket, pid, seed and log files in the temp
# dir (slurm.conf points AuthInfo at its socket), so the machine's
# /etc/munge and /run/munge are neither used nor changed.
#
# `down` kills only what `up` started: the daemons by their pid files, then
# every process left in our namespaces (slurmstepd and job tasks), found with
# `ip netns pids`; then it deletes the namespaces and the temp dir. It is
# idempotent. Needs root (namespaces) and Debian's slurm-wlm and munge.
set -euo pipefail

NAME=default
NODES=2
CPUS=4
NODE=
cmd=${1:-}
[ $# -gt 0 ] && shift
while [ $# -gt 0 ]; do
  case "$1" in
    --name|--nodes|--cpus|--node) [ $# -ge 2 ] || { echo "slurm-cluster.sh: $1 needs a value" >&2; exit 2; } ;;
  esac
  case "$1" in
    --name) NAME=$2; shift 2 ;;
    --nodes) NODES=$2; shift 2 ;;
    --cpus) CPUS=$2; shift 2 ;;
    --node) NODE=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "slurm-cluster.sh: unknown argument $1 (see the header of this script)" >&2; exit 2 ;;
  esac
done
[[ $NAME =~ ^[a-z0-9]{1,16}$ ]] || { echo "slurm-cluster.sh: --name must be 1-16 of a-z0-9" >&2; exit 2; }
[[ $NODES =~ ^[1-9]$ ]] || { echo "slurm-cluster.sh: --nodes must be 1-9" >&2; exit 2; }
[[ $CPUS =~ ^[1-9][0-9]?$ ]] || { echo "slurm-cluster.sh: --cpus must be 1-99" >&2; exit 2; }

DIR=/tmp/tsmpi-slurm-$NAME
NS=tsmpi-slurm-$NAME
CTL_NS=$NS-ctl
CONF=$DIR/etc/slurm.conf
SUBNET=198.19.12

# Runs a command in namespace $1 (net + UTS) with SLURM_CONF set.
in_ns() {
  local ns=$1; shift
  local short=${ns#"$NS"-}
  SLURM_CONF=$CONF nsenter --net="/run/netns/$ns" --uts="$DIR/ns/uts-$short" -- "$@"
}

node_names() {
  if [ -f "$DIR/nodes" ]; then cat "$DIR/nodes"; else for i in $(seq 1 "$NODES"); do printf 'n%02d\n' "$i"; done; fi
}

kill_pidfile() {
  local f=$1 pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f" 2>/dev/null || true)
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

# Kills every process inside one of our namespaces (all started by our daemons).
kill_ns_pids() {
  local ns=$1 pids
  [ -e "/run/netns/$ns" ] || return 0
  for sig in TERM KILL; do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] || return 0
    # shellcheck disable=SC2086
    kill -"$sig" $pids 2>/dev/null || true
    for _ in $(seq 1 30); do [ -z "$(ip netns pids "$ns" 2>/dev/null || true)" ] && return 0; sleep 0.1; done
  done
}

down() {
  if [ -d "$DIR" ]; then
    for n in $(node_names); do kill_pidfile "$DIR/run/slurmd-$n.pid"; done
    kill_pidfile "$DIR/run/slurmctld.pid"
    kill_pidfile "$DIR/run/munged.pid"
  fi
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$NS-(ctl|n[0-9]+)\$" || true); do
    kill_ns_pids "$ns"
    ip netns del "$ns" 2>/dev/null || true
  done
  if [ -d "$DIR/ns" ]; then
    for f in "$DIR"/ns/uts-*; do [ -e "$f" ] && { umount "$f" 2>/dev/null || true; }; done
  fi
  rm -rf "$DIR"
}

support() {
  [ "$(id -u)" = 0 ] || { echo "needs root (network and UTS namespaces)"; return 1; }
  for b in slurmctld slurmd munged srun salloc sbatch scancel squeue ip nsenter unshare; do
    command -v "$b" >/dev/null || { echo "$b not installed (apt-get install slurm-wlm munge iproute2)"; return 1; }
  done
  # Namespaces may be refused even to root (e.g. an unprivileged container): try one.
  local probe=tsmpi-slurm-probe-$$
  ip netns add "$probe" 2>/dev/null || { echo "cannot create a network namespace (ip netns add failed)"; return 1; }
  ip netns del "$probe" 2>/dev/null || true
  return 0
}

write_conf() {
  local nodes_csv
  nodes_csv=$(node_names | paste -sd, -)
  cat >"$CONF" <<EOF
# Written by scripts/slurm-cluster.sh for the test cluster "$NAME"; removed by "down".
ClusterName=tsmpi$NAME
SlurmctldHost=slurmctl($SUBNET.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups here: processes are tracked by parentage, tasks are not bound.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
# Nodes may declare more CPUs than the machine has.
SlurmdParameters=config_overrides
ReturnToService=2
MailProg=/bin/true
PlugStackConfig=$DIR/etc/plugstack.conf
TmpFS=$DIR/tmp
KillWait=5
InactiveLimit=0
MinJobAge=30
NodeName=DEFAULT CPUs=$CPUS RealMemory=1000 State=UNKNOWN
EOF
  local i=0
  for n in $(node_names); do
    i=$((i + 1))
    echo "NodeName=$n NodeAddr=$SUBNET.$((10 + i)) NodeHostname=$n" >>"$CONF"
  done
  echo "PartitionName=debug Nodes=$nodes_csv Default=YES MaxTime=INFINITE State=UP" >>"$CONF"
  : >"$DIR/etc/plugstack.conf"
}

wait_idle() {
  local want=$1 got=
  for _ in $(seq 1 120); do
    got=$(in_ns "$CTL_NS" sinfo -h -N -o '%N %T' 2>/dev/null | grep -cE ' (idle|mixed|allocated)$' || true)
    [ "$got" = "$want" ] && return 0
    sleep 0.5
  done
  echo "slurm-cluster.sh: nodes not idle after 60 s; sinfo says:" >&2
  in_ns "$CTL_NS" sinfo -N >&2 || true
  tail -5 "$DIR"/log/*.log >&2 || true
  return 1
}

up() {
  local why
  if ! why=$(support); then echo "slurm-cluster.sh: cannot start Slurm: $why" >&2; exit 3; fi
  if [ -e "$DIR" ]; then echo "slurm-cluster.sh: $DIR exists: the cluster \"$NAME\" is up (run down first)" >&2; exit 1; fi
  trap 'echo "slurm-cluster.sh: up failed; cleaning up" >&2; down' ERR
  mkdir -p "$DIR"/{etc,state,spool,run,log,munge,tmp,ns}
  chmod 700 "$DIR"
  for i in $(seq 1 "$NODES"); do printf 'n%02d\n' "$i"; done >"$DIR/nodes"
  write_conf

  # Namespaces: controller (bridge) and one per node, each with its own host name.
  ip netns add "$CTL_NS"
  touch "$DIR/ns/uts-ctl"
  unshare --uts="$DIR/ns/uts-ctl" hostname slurmctl
  ip -n "$CTL_NS" link set lo up
  ip -n "$CTL_NS" link add br0 type bridge
  ip -n "$CTL_NS" addr add "$SUBNET.1/24" dev br0
  ip -n "$CTL_NS" link set br0 up
  local i=0
  for n in $(node_names); do
    i=$((i + 1))
    ip netns add "$NS-$n"
    touch "$DIR/ns/uts-$n"
    unshare --uts="$DIR/ns/uts-$n" hostname "$n"
    ip -n "$NS-$n" link set lo up
    # Made inside the controller's namespace; the far end goes straight to the node's.
    ip -n "$CTL_NS" link add "v$n" type veth peer name veth0 netns "$NS-$n"
    ip -n "$CTL_NS" link set "v$n" master br0 up
    ip -n "$NS-$n" addr add "$SUBNET.$((10 + i))/24" dev veth0
    ip -n "$NS-$n" link set veth0 up
  done

  # munged with everything of its own in the temp dir.
  dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$DIR/munge/munge.key"
  chmod 700 "$DIR/munge"
  in_ns "$CTL_NS" munged --force --key-file="$DIR/munge/munge.key" --socket="$DIR/munge/munge.socket" \
    --pid-file="$DIR/run/munged.pid" --seed-file="$DIR/munge/munged.seed" --log-file="$DIR/log/munged.log" \
    --origin="$SUBNET.1"

  in_ns "$CTL_NS" slurmctld -f "$CONF"
  for n in $(node_names); do
    in_ns "$NS-$n" slurmd -f "$CONF" -N "$n"
  done
  wait_idle "$NODES"
  trap - ERR
  echo "slurm-cluster.sh: Slurm \"$NAME\" up: $NODES node(s) x $CPUS CPUs; clients: $0 exec --name $NAME -- srun ..."
}

status() {
  if [ ! -d "$DIR" ]; then echo "down"; return 3; fi
  local bad=0
  for f in "$DIR"/run/*.pid; do
    [ -e "$f" ] || continue
    if kill -0 "$(cat "$f")" 2>/dev/null; then echo "$(basename "$f" .pid) running (pid $(cat "$f"))"; else echo "$(basename "$f" .pid) NOT running"; bad=1; fi
  done
  in_ns "$CTL_NS" sinfo -N || bad=1
  return $bad
}

case "$cmd" in
  up) up ;;
  down) down ;;
  status) status ;;
  env) echo "SLURM_CONF=$CONF"; echo "TSMPI_SLURM_DIR=$DIR"; echo "TSMPI_SLURM_CLIENT_NS=$CTL_NS"; echo "TSMPI_SLURM_NODES=$(node_names | paste -sd, -)" ;;
  exec)
    [ -d "$DIR" ] || { echo "slurm-cluster.sh: the cluster \"$NAME\" is not up" >&2; exit 1; }
    if [ -n "$NODE" ]; then in_ns "$NS-$NODE" "$@"; else in_ns "$CTL_NS" "$@"; fi ;;
  support) support ;;
  *) echo "usage: $0 up|down|status|env|exec|support [--name TAG] [--nodes N] [--cpus C] [--node NODE] [-- CMD...]" >&2; exit 2 ;;
esac
