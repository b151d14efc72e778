#!/usr/bin/env bash
# netns-cluster.sh: a small cluster of "hosts" on this one machine, for the
# multi-host tests of issue 11 (one implementation, used by the vitest helper
# packages/launcher/test/cluster/cluster.ts and by people alike).
#
#   scripts/netns-cluster.sh up     [--id ID] [--hosts N] [--same-name] [--json]
#   scripts/netns-cluster.sh down   [--id ID]
#   scripts/netns-cluster.sh status [--id ID]
#   scripts/netns-cluster.sh exec   [--id ID] HOST [--] COMMAND [ARG...]
#   scripts/netns-cluster.sh link-down|link-up [--id ID] HOST
#   scripts/netns-cluster.sh pids   [--id ID] HOST
#   scripts/netns-cluster.sh list | prune
#
# What `up` builds, for cluster id ID (default "dev") and hosts th1..thN:
#   - a "switch" network namespace tsmpi-ID-sw holding a Linux bridge br0;
#   - per host a network namespace tsmpi-ID-thK. Its veth pair is created INSIDE
#     the switch namespace (swK on the bridge, peer moved into the host namespace
#     and renamed eth0 there), so nothing is ever created, renamed or moved in
#     the root namespace and the machine's own interfaces are never touched;
#   - addresses from 198.18.0.0/15 (RFC 2544's benchmarking range): one /24 per
#     cluster id, host K at .K; lo up in every host;
#   - per host a long-lived "holder" process (sleep) in the host's network
#     namespace plus its own UTS namespace (host name thK) and mount namespace,
#     where /etc/hosts is a per-host file that maps the host's own name to
#     127.0.1.1 as Debian does (a launcher that trusts name resolution breaks,
#     which issue 11 section 3 forbids) and the other hosts to their addresses;
#     with --same-name every host's UTS name is "node" instead (as on clusters
#     whose machines share one name): ssh_config, /etc/hosts and known_hosts
#     keep the th1..thN aliases and addresses, so only os.hostname() collides;
#   - per host an sshd bound to the host's address, entered into the holder's
#     namespaces, with its own host key; root's key is the cluster's client key.
# Everything else (sshd configs, host keys, client key, authorized_keys,
# known_hosts, ssh_config, logs, pid files, cluster.json) lives in the state
# directory ${TSMPI_CLUSTER_STATE:-/tmp}/tsmpi-cluster-ID, which `down` removes;
# its file `ssh` is an executable wrapper for `ssh -F .../ssh_config` (for
# launchers whose remote-shell option takes no arguments, like MPICH's Hydra).
# /root/.ssh and /etc/ssh are never read or written. The only thing made
# outside that directory is /run/sshd (sshd's privilege-separation directory,
# an empty directory Debian's own sshd service creates too) when missing.
#
# `down` kills the processes inside this id's namespaces (they were all started
# into them by this script or by a test), deletes the namespaces (the bridge and
# veths go with the switch namespace) and removes the state directory. It only
# touches names with this id's prefix, and is idempotent; `up` first runs `down`
# for the same id, so a stale cluster from a crashed run is cleaned.
#
# `list` shows every cluster id with namespaces or a state directory here;
# `prune` takes down those whose owner (the process that ran `up` with
# TSMPI_CLUSTER_OWNER=PID in its environment, as the test helper does) is gone:
# clusters left by a test run that was killed before its afterAll.
#
# Commands run on a host with `exec` (nsenter into the holder: network, UTS and
# mount namespaces; cwd and environment are kept), or with ssh:
#   ssh -F /tmp/tsmpi-cluster-ID/ssh_config th2 hostname
# ssh only works from inside a cluster host (e.g. under `exec th1`): the root
# namespace has no route to the cluster, by design.
set -euo pipefail

prog=netns-cluster.sh
die() { echo "$prog: $*" >&2; exit 2; }

usage() { sed -n '6,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

[ $# -ge 1 ] || { usage >&2; exit 2; }
cmd=$1; shift
id=${TSMPI_CLUSTER_ID:-dev}
hosts=3
json=0
same_name=0
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --id) id=${2:?--id needs a value}; shift 2 ;;
    --hosts) hosts=${2:?--hosts needs a value}; shift 2 ;;
    --json) json=1; shift ;;
    --same-name) same_name=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; args+=("$@"); break ;;
    *) args+=("$1"); shift
       # exec: everything after HOST is the command, options included
       if [ "$cmd" = exec ] && [ ${#args[@]} -eq 1 ]; then
         [ "${1:-}" = -- ] && shift
         args+=("$@"); break
       fi ;;
  esac
done
[[ "$id" =~ ^[a-z0-9]{1,12}$ ]] || die "--id must be 1-12 lower-case letters or digits (got '$id')"
[[ "$hosts" =~ ^[1-9][0-9]?$ ]] && [ "$hosts" -le 50 ] || die "--hosts must be 1..50 (got '$hosts')"

prefix="tsmpi-$id-"
sw="${prefix}sw"
state="${TSMPI_CLUSTER_STATE:-/tmp}/tsmpi-cluster-$id"

# One /24 per id inside 198.18.0.0/15 (512 of them), chosen from a hash of the
# id. Two clusters never share a bridge, so even a hash collision is harmless.
h=$(printf '%s' "$id" | cksum | awk '{ print $1 % 512 }')
net="198.$((18 + h / 256)).$((h % 256))"

need_root() {
  [ "$(id -u)" -eq 0 ] || die "must run as root (network namespaces); try: sudo $0 $cmd --id $id"
  local t
  for t in ip nsenter unshare ssh ssh-keygen /usr/sbin/sshd; do
    command -v "$t" >/dev/null 2>&1 || die "'$t' not found; install it with: apt-get install -y openssh-server openssh-client iproute2 util-linux"
  done
}

host_index() { # thK -> K, checked against the cluster on disk
  local n=${1#th}
  [[ "$1" =~ ^th[1-9][0-9]?$ ]] || die "host must be th1..thN (got '$1')"
  [ -f "$state/hosts" ] || die "cluster '$id' is not up (no $state); run: $0 up --id $id"
  [ "$n" -le "$(cat "$state/hosts")" ] || die "cluster '$id' has only $(cat "$state/hosts") hosts (got '$1')"
  echo "$n"
}

holder_pid() { # thK -> pid of the holder, checked to be alive and in thK's namespace
  local pid
  pid=$(cat "$state/th$1.holder.pid" 2>/dev/null) || die "no holder for th$1 in $state; run: $0 up --id $id"
  kill -0 "$pid" 2>/dev/null || die "the holder of th$1 (pid $pid) is gone; run: $0 up --id $id"
  echo "$pid"
}

# The UTS host name of host K: thK, or "node" for every host with --same-name.
uts_name() { if [ $same_name -eq 1 ]; then echo node; else echo "th$1"; fi; }

our_namespaces() { ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E "^${prefix}(sw|th[0-9]+)\$" || true; }

cluster_down() {
  local ns pids pass
  for ns in $(our_namespaces); do
    # Every process in our namespaces was put there by this script or by a test
    # that entered them: TERM, then KILL what is left.
    for pass in TERM KILL; do
      pids=$(ip netns pids "$ns" 2>/dev/null || true)
      [ -n "$pids" ] || break
      # shellcheck disable=SC2086
      kill -s "$pass" $pids 2>/dev/null || true
      for _ in 1 2 3 4 5 6 7 8 9 10; do
        [ -z "$(ip netns pids "$ns" 2>/dev/null || true)" ] && break
        sleep 0.1
      done
    done
  done
  # Holders are in the host namespaces already; this catches one whose
  # namespace was deleted by hand.
  local f
  for f in "$state"/*.pid; do
    [ -f "$f" ] || continue
    kill -KILL "$(cat "$f")" 2>/dev/null || true
  done
  for ns in $(our_namespaces); do
    [ "$ns" = "$sw" ] && continue
    ip netns del "$ns" 2>/dev/null || true
  done
  ip netns del "$sw" 2>/dev/null || true
  rm -rf "$state"
}

cluster_up() {
  cluster_down
  mkdir -p "$state"
  chmod 700 "$state"
  echo "$hosts" >"$state/hosts"
  [ $same_name -eq 0 ] || : >"$state/same-name"
  [ -z "${TSMPI_CLUSTER_OWNER:-}" ] || echo "$TSMPI_CLUSTER_OWNER" >"$state/owner"
  mkdir -p /run/sshd && chmod 755 /run/sshd

  ip netns add "$sw"
  ip -n "$sw" link set lo up
  ip -n "$sw" link add br0 type bridge
  ip -n "$sw" link set br0 up

  ssh-keygen -q -t ed25519 -N '' -C "tsmpi-cluster-$id" -f "$state/id_ed25519"
  cp "$state/id_ed25519.pub" "$state/authorized_keys"
  : >"$state/known_hosts"
  {
    echo "# tsmpi namespace cluster '$id': use with ssh -F $state/ssh_config"
    local k
    for ((k = 1; k <= hosts; k++)); do
      printf 'Host th%d\n  HostName %s.%d\n' "$k" "$net" "$k"
    done
    cat <<EOF
Host *
  User root
  IdentityFile $state/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $state/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 5
  LogLevel ERROR
EOF
  } >"$state/ssh_config"
  # For remote-shell options that take one executable and no arguments
  # (MPICH Hydra's -launcher-exec): ssh with the cluster's config.
  printf '#!/bin/sh\nexec ssh -F %s "$@"\n' "$state/ssh_config" >"$state/ssh"
  chmod 755 "$state/ssh"

  local k addr ns uts
  for ((k = 1; k <= hosts; k++)); do
    addr="$net.$k"
    ns="${prefix}th$k"
    uts=$(uts_name "$k")
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    # The pair is born in the switch namespace; one end moves to the host.
    ip -n "$sw" link add "sw$k" type veth peer name "h$k"
    ip -n "$sw" link set "sw$k" master br0
    ip -n "$sw" link set "sw$k" up
    ip -n "$sw" link set "h$k" netns "$ns"
    ip -n "$ns" link set "h$k" name eth0
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up

    {
      echo "127.0.0.1 localhost"
      echo "127.0.1.1 $uts"
      local j
      for ((j = 1; j <= hosts; j++)); do [ "$j" -eq "$k" ] || echo "$net.$j th$j"; done
      echo "::1 localhost ip6-localhost ip6-loopback"
    } >"$state/th$k.etc-hosts"

    # The holder: network namespace from ip netns exec, then its own UTS and
    # mount namespaces (mounts from the root propagate in, not out).
    setsid ip netns exec "$ns" unshare --uts --mount --propagation slave \
      sh -c 'hostname "$1" && mount --bind "$2" /etc/hosts && exec sleep infinity' holder "$uts" "$state/th$k.etc-hosts" \
      </dev/null >/dev/null 2>"$state/th$k.holder.log" &
    echo $! >"$state/th$k.holder.pid"

    ssh-keygen -q -t ed25519 -N '' -C "th$k" -f "$state/th$k.host_key"
    echo "th$k,$addr $(cut -d' ' -f1,2 "$state/th$k.host_key.pub")" >>"$state/known_hosts"
    cat >"$state/th$k.sshd_config" <<EOF
ListenAddress $addr
Port 22
HostKey $state/th$k.host_key
PidFile $state/th$k.sshd.pid
AuthorizedKeysFile $state/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
MaxStartups 100:30:200
Subsystem sftp internal-sftp
EOF
  done

  # Wait for each holder to have its host name and /etc/hosts, then start sshd in it.
  local pid ok
  for ((k = 1; k <= hosts; k++)); do
    pid=$(cat "$state/th$k.holder.pid")
    uts=$(uts_name "$k")
    ok=0
    for _ in $(seq 1 100); do
      if [ "$(nsenter -t "$pid" -u hostname 2>/dev/null)" = "$uts" ] &&
         nsenter -t "$pid" -m grep -q "^127.0.1.1 $uts\$" /etc/hosts 2>/dev/null; then
        ok=1; break
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    [ $ok -eq 1 ] || { cat "$state/th$k.holder.log" >&2; cluster_down; die "the holder of th$k did not come up"; }
    setsid nsenter -t "$pid" -n -u -m /usr/sbin/sshd -D -e -f "$state/th$k.sshd_config" \
      </dev/null >/dev/null 2>"$state/th$k.sshd.log" &
    echo $! >"$state/th$k.sshd.listener.pid"
  done
  # ... and for each sshd to listen.
  for ((k = 1; k <= hosts; k++)); do
    pid=$(cat "$state/th$k.holder.pid")
    ok=0
    for _ in $(seq 1 200); do
      if nsenter -t "$pid" -n ss -Hltn "src $net.$k:22" 2>/dev/null | grep -q LISTEN; then ok=1; break; fi
      sleep 0.05
    done
    [ $ok -eq 1 ] || { cat "$state/th$k.sshd.log" >&2; cluster_down; die "the sshd of th$k did not start (log above)"; }
  done

  {
    printf '{"id":"%s","stateDir":"%s","switchNamespace":"%s","sshConfig":"%s","sshWrapper":"%s","subnet":"%s.0/24","hosts":[' \
      "$id" "$state" "$sw" "$state/ssh_config" "$state/ssh" "$net"
    for ((k = 1; k <= hosts; k++)); do
      printf '%s{"name":"th%d","hostName":"%s","address":"%s.%d","namespace":"%sth%d","holderPid":%d,"sshdPid":%d}' \
        "$([ "$k" -gt 1 ] && echo ,)" "$k" "$(uts_name "$k")" "$net" "$k" "$prefix" "$k" \
        "$(cat "$state/th$k.holder.pid")" "$(cat "$state/th$k.sshd.listener.pid")"
    done
    echo ']}'
  } >"$state/cluster.json"

  if [ $json -eq 1 ]; then
    cat "$state/cluster.json"
  else
    echo "cluster '$id' is up: $hosts host(s) on $net.0/24, state in $state"
    for ((k = 1; k <= hosts; k++)); do echo "  th$k  $net.$k  namespace ${prefix}th$k  host name $(uts_name "$k")"; done
    echo "run on a host:  $0 exec --id $id th1 -- COMMAND"
    echo "ssh (from a host): ssh -F $state/ssh_config th2 hostname   (or $state/ssh th2 hostname)"
    echo "tear down:      $0 down --id $id"
  fi
}

cluster_status() {
  local ns
  ns=$(our_namespaces)
  if [ -z "$ns" ] && [ ! -d "$state" ]; then echo "cluster '$id': down"; return 3; fi
  echo "cluster '$id': namespaces: $(echo "$ns" | tr '\n' ' ')"
  [ -f "$state/hosts" ] || { echo "  (no state directory $state: stale; run: $0 down --id $id)"; return 1; }
  local k pid alive
  for ((k = 1; k <= $(cat "$state/hosts"); k++)); do
    pid=$(cat "$state/th$k.holder.pid" 2>/dev/null || echo 0)
    alive=down
    kill -0 "$pid" 2>/dev/null && alive="holder $pid"
    pid=$(cat "$state/th$k.sshd.listener.pid" 2>/dev/null || echo 0)
    kill -0 "$pid" 2>/dev/null && alive+=", sshd $pid"
    echo "  th$k $net.$k $alive, link $(ip -n "$sw" -br link show "sw$k" 2>/dev/null | awk '{ print $2 }')"
  done
}

all_ids() { # every cluster id with a namespace or a state directory
  {
    ip netns list 2>/dev/null | awk '{ print $1 }' | sed -n 's/^tsmpi-\([a-z0-9]\{1,12\}\)-\(sw\|th[0-9]\{1,2\}\)$/\1/p'
    for d in "${TSMPI_CLUSTER_STATE:-/tmp}"/tsmpi-cluster-*; do [ -d "$d" ] && echo "${d##*/tsmpi-cluster-}"; done
  } | sort -u
}

case "$cmd" in
  list)
    for i in $(all_ids); do
      d="${TSMPI_CLUSTER_STATE:-/tmp}/tsmpi-cluster-$i"
      echo "$i hosts=$(cat "$d/hosts" 2>/dev/null || echo '?') owner=$(cat "$d/owner" 2>/dev/null || echo -)"
    done ;;
  prune)
    need_root
    for i in $(all_ids); do
      d="${TSMPI_CLUSTER_STATE:-/tmp}/tsmpi-cluster-$i"
      [ -f "$d/owner" ] || continue
      o=$(cat "$d/owner")
      kill -0 "$o" 2>/dev/null && continue
      echo "$prog: taking down cluster '$i' (its owner, pid $o, is gone)" >&2
      "$0" down --id "$i"
    done ;;
  up)
    need_root
    # A step that fails half-way (set -e) must not leave half a cluster.
    trap 'st=$?; [ $st -eq 0 ] || { echo "$prog: up failed, removing what it built" >&2; cluster_down; }' EXIT
    cluster_up
    trap - EXIT ;;
  down) need_root; cluster_down ;;
  status) need_root; cluster_status ;;
  exec)
    [ ${#args[@]} -ge 2 ] || die "usage: $0 exec [--id ID] HOST [--] COMMAND [ARG...]"
    k=$(host_index "${args[0]}")
    pid=$(holder_pid "$k")
    exec nsenter -t "$pid" -n -u -m --wd="$PWD" -- "${args[@]:1}" ;;
  link-down|link-up)
    [ ${#args[@]} -eq 1 ] || die "usage: $0 $cmd [--id ID] HOST"
    k=$(host_index "${args[0]}")
    ip -n "$sw" link set "sw$k" "${cmd#link-}" ;;
  pids)
    # Processes in the host's network namespace other than its holder and the
    # listening sshd (per-connection sshd children do count).
    [ ${#args[@]} -eq 1 ] || die "usage: $0 pids [--id ID] HOST"
    k=$(host_index "${args[0]}")
    keep=" $(cat "$state/th$k.holder.pid" 2>/dev/null) $(cat "$state/th$k.sshd.listener.pid" 2>/dev/null) "
    for p in $(ip netns pids "${prefix}th$k" 2>/dev/null); do
      case "$keep" in *" $p "*) ;; *) echo "$p" ;; esac
    done ;;
  *) usage >&2; die "unknown command '$cmd'" ;;
esac
