#!/usr/bin/env bash
# Issue 11's cross-host benchmark: on a 2-host namespace cluster
# (scripts/netns-cluster.sh), each MPI launched by its own launcher over ssh,
# with the same hosts and interface:
#   msgrate    neighbor message rate, 1 thread, 2 ranks, one per host    (M messages/s)
#   allreduce  8 MiB allreduce, 4 ranks, 2 per host                       (us per call)
#   launch     a 4-rank 2-host job: mpiexec start to the last rank past MPI_Init (ms)
#
#   packages/bench/reference/cluster-compare.sh [--repeat R] [--impls mpich,openmpi,tsmpi] [--benches msgrate,allreduce,launch]
#                                               [--iterations N] [--timeout S] [--json FILE]
#
# Runs as root (it builds the cluster, id "cmp", and tears it down on exit).
# Runs are interleaved (every benchmark of every implementation, then again) so
# that drift in the machine's load spreads over all. Every launcher starts on
# host th1 and reaches th1 and th2 through the cluster's ssh (th1 too: no fork
# shortcut is asked for, but a launcher may take one for its own host).
#   MPICH  mpirun.mpich -launcher ssh -launcher-exec <cluster ssh wrapper> -hosts th1[:2],th2[:2]
#          -iface eth0 -bind-to none, with MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self UCX_NET_DEVICES=eth0
#          as in compare.sh (Debian 12's MPICH 4.0.2 is ch4:ucx: TCP between every pair of
#          ranks, same-host pairs too, over the host's eth0 address).
#   Open MPI  mpirun.openmpi -H th1[:2],th2[:2] --mca plm_rsh_agent <cluster ssh wrapper> --bind-to none
#          --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0
#          (as compare.sh: TCP between every pair, no shared memory).
#   tsmpi  node_modules/.bin/mpiexec --launcher ssh --launcher-exec 'ssh -F <cluster ssh_config>'
#          --hosts ... --iface eth0 (needs the multi-host launcher of issue 11; see TSMPI ROW below).
# On a shared machine, hold its benchmark lock (flock) while it runs: never two benchmarks at once.
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
build="$here/build"
cluster="$root/scripts/netns-cluster.sh"
cluster_id=cmp

repeat=3
impls=mpich
benches=msgrate,allreduce,launch
iterations=
run_timeout=300
json_file=

die() { echo "cluster-compare.sh: $*" >&2; exit 2; }
usage() { sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=${2:?--repeat needs a value}; shift 2 ;;
    --impls) impls=${2:?--impls needs a value}; shift 2 ;;
    --benches) benches=${2:?--benches needs a value}; shift 2 ;;
    --iterations) iterations=${2:?--iterations needs a value}; shift 2 ;;
    --timeout) run_timeout=${2:?--timeout needs a value}; shift 2 ;;
    --json) json_file=${2:?--json needs a value}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
done
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || die "--repeat must be a positive integer (got '$repeat')"
[[ "$run_timeout" =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive integer (got '$run_timeout')"
[ -z "$iterations" ] || [[ "$iterations" =~ ^[1-9][0-9]*$ ]] || die "--iterations must be a positive integer (got '$iterations')"
for i in ${impls//,/ }; do case "$i" in mpich|openmpi|tsmpi) ;; *) die "--impls takes mpich, openmpi and tsmpi (got '$i')" ;; esac; done
for b in ${benches//,/ }; do case "$b" in msgrate|allreduce|launch) ;; *) die "--benches takes msgrate, allreduce and launch (got '$b')" ;; esac; done
[ "$(id -u)" -eq 0 ] || die "must run as root (it builds a namespace cluster)"
if [ -n "$json_file" ]; then
  case "$json_file" in /*) ;; *) json_file="$PWD/$json_file" ;; esac
fi

# ---- build ------------------------------------------------------------------
cflags=(-O2 -std=c11 -Wno-stringop-overflow)
case ",$impls," in *,mpich,*)
  command -v mpicc.mpich >/dev/null 2>&1 || die "mpicc.mpich not found; install MPICH with: apt-get install -y mpich libmpich-dev"
  mkdir -p "$build"
  for src in msgrate allreduce launch-probe; do
    mpicc.mpich "${cflags[@]}" -o "$build/${src}_mpich" "$here/$src.c" || die "building $src.c with mpicc.mpich failed"
  done ;;
esac
case ",$impls," in *,openmpi,*)
  command -v mpicc.openmpi >/dev/null 2>&1 || die "mpicc.openmpi not found; install Open MPI with: apt-get install -y openmpi-bin libopenmpi-dev"
  mkdir -p "$build"
  for src in msgrate allreduce launch-probe; do
    mpicc.openmpi "${cflags[@]}" -o "$build/${src}_ompi" "$here/$src.c" || die "building $src.c with mpicc.openmpi failed"
  done ;;
esac

# ---- cluster ----------------------------------------------------------------
"$cluster" up --id "$cluster_id" --hosts 2 >/dev/null || die "could not build the namespace cluster (see above)"
data=$(mktemp -d)
trap '"$cluster" down --id "$cluster_id"; rm -rf "$data"' EXIT
state="${TSMPI_CLUSTER_STATE:-/tmp}/tsmpi-cluster-$cluster_id"
ssh_config="$state/ssh_config"
ssh_wrapper="$state/ssh"
iface=eth0

# ---- commands ---------------------------------------------------------------
# cmd IMPL BENCH -> sets the array `argv`: the command run on th1 from the repository root.
cmd() {
  local impl=$1 bench=$2 np hosts prog=() extra=()
  case "$bench" in
    msgrate) np=2; extra=(${iterations:+--iterations "$iterations"}) ;;
    allreduce) np=4; extra=(--size 8388608 ${iterations:+--iterations "$iterations"}) ;;
    launch) np=4 ;;
  esac
  case "$impl" in
    mpich)
      if [ "$np" -eq 2 ]; then hosts=th1,th2; else hosts=th1:2,th2:2; fi
      case "$bench" in launch) prog=("$build/launch-probe_mpich") ;; *) prog=("$build/${bench}_mpich") ;; esac
      argv=(mpirun.mpich -launcher ssh -launcher-exec "$ssh_wrapper" -hosts "$hosts" -iface "$iface"
            -n "$np" -bind-to none -genv MPIR_CVAR_NOLOCAL 1 -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES "$iface"
            "${prog[@]}" "${extra[@]}") ;;
    openmpi)
      if [ "$np" -eq 2 ]; then hosts=th1,th2; else hosts=th1:2,th2:2; fi
      case "$bench" in launch) prog=("$build/launch-probe_ompi") ;; *) prog=("$build/${bench}_ompi") ;; esac
      argv=(mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -H "$hosts" -n "$np"
            --mca plm_rsh_agent "$ssh_wrapper" --mca pml ob1 --mca btl tcp,self
            --mca btl_tcp_if_include "$iface" --mca oob_tcp_if_include "$iface"
            "${prog[@]}" "${extra[@]}") ;;
    tsmpi)
      # ---- TSMPI ROW (pending the multi-host launcher of issue 11) ----------
      # Same hosts, interface and programs as MPICH; run with --impls mpich,tsmpi.
      if [ "$np" -eq 2 ]; then hosts=th1:1,th2:1; else hosts=th1:2,th2:2; fi
      case "$bench" in launch) prog=(packages/bench/reference/launch-probe.ts) ;; *) prog=("packages/bench/src/$bench.ts") ;; esac
      argv=(node_modules/.bin/mpiexec --launcher ssh --launcher-exec "ssh -F $ssh_config" --hosts "$hosts" --iface "$iface"
            -n "$np" "${prog[@]}" "${extra[@]}") ;;
  esac
}

# The result lines (as in compare.sh) -> "metric value" lines.
extract() { # bench start_ns < output
  local bench=$1 start=$2
  case "$bench" in
    msgrate) sed -n 's/^msgrate: \([0-9.][0-9.]*\) M messages\/s.*/msgrate-M-msg-per-s \1/p' ;;
    allreduce) sed -n 's/^allreduce: 8388608-byte mean \([0-9.][0-9.]*\) us.*/allreduce-8MiB-us \1/p' ;; # the mean per call
    launch) awk -v start="$start" -v np=4 '
              /^launch-probe: rank [0-9]+ of [0-9]+ past init at [0-9]+ ns/ { n++; if ($9 > last) last = $9 }
              END { if (n == np) printf "launch-4rank-ms %.1f\n", (last - start) / 1e6 }' ;;
  esac
}

# run_one BENCH: runs `argv` on th1 from the repository root, output in $data/out
# and $data/err; sets `start` (ns, taken on th1 right before exec'ing the
# launcher) and `status`: the exit code, "timeout", or "finalize-killed" when
# the results were complete but the job had not ended grace_s seconds later.
# MPICH 4.0.2 with UCX 1.13 over TCP sometimes never leaves MPI_Finalize on 4
# ranks over 2 hosts (one rank spins in UCX for a peer that already waits in
# the PMI barrier); the figures it printed before are complete and are kept.
# Whatever the run left on the hosts is killed afterwards.
grace_s=15
run_one() {
  local bench=$1 t0 done_at= pid
  (cd "$root" && exec setsid "$cluster" exec --id "$cluster_id" th1 -- \
    sh -c 'echo "start-ns $(date +%s%N)"; exec "$@"' sh "${argv[@]}") >"$data/out" 2>"$data/err" </dev/null &
  pid=$!
  t0=$SECONDS
  status=
  while kill -0 "$pid" 2>/dev/null; do
    if [ $((SECONDS - t0)) -ge "$run_timeout" ]; then status=timeout; break; fi
    if [ -z "$done_at" ] && [ -n "$(extract "$bench" 0 <"$data/out")" ]; then done_at=$SECONDS; fi
    if [ -n "$done_at" ] && [ $((SECONDS - done_at)) -ge "$grace_s" ]; then status=finalize-killed; break; fi
    sleep 0.2
  done
  if [ -n "$status" ]; then
    kill -TERM -- "-$pid" 2>/dev/null
    sleep 1
    kill -KILL -- "-$pid" 2>/dev/null
  fi
  wait "$pid" 2>/dev/null
  local code=$?
  [ -n "$status" ] || status=$code
  local h p
  for h in th1 th2; do
    for p in $("$cluster" pids --id "$cluster_id" "$h" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
  done
  start=$(sed -n 's/^start-ns \([0-9]*\)$/\1/p' "$data/out")
  start=${start:-0}
}

failures=0
finalize_kills=0
: >"$data/metrics"
echo "cluster-compare.sh: ${benches//,/ } on 2 namespaced hosts; ${impls//,/ }; $repeat run(s) each; $(date -u +%Y-%m-%dT%H:%M:%SZ)"
for ((r = 1; r <= repeat; r++)); do
  for bench in ${benches//,/ }; do
    for impl in ${impls//,/ }; do
      cmd "$impl" "$bench"
      run_one "$bench"
      lines=$(extract "$bench" "$start" <"$data/out")
      [ "$status" = finalize-killed ] && finalize_kills=$((finalize_kills + 1))
      if { [ "$status" != 0 ] && [ "$status" != finalize-killed ]; } || [ -z "$lines" ]; then
        failures=$((failures + 1))
        echo "  run $r $bench $impl: FAILED (exit $status)" >&2
        { tail -n 5 "$data/err"; tail -n 5 "$data/out"; } | sed 's/^/    /' >&2
        continue
      fi
      while read -r metric value; do
        grep -qx "$metric" "$data/metrics" || echo "$metric" >>"$data/metrics"
        echo "$value" >>"$data/$impl.$metric"
      done <<<"$lines"
      echo "  run $r $impl: $(echo "$lines" | tr '\n' ' ')$([ "$status" = finalize-killed ] && echo "(killed ${grace_s} s after its results: stuck in MPI_Finalize)")"
    done
  done
done

median() {
  sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo
echo "median of $repeat run(s) (msgrate: higher is better; allreduce, launch: lower is better)"
printf '%-20s' metric
for impl in mpich openmpi tsmpi; do printf '%12s' "$impl"; done
echo
json_results=
while read -r metric; do
  printf '%-20s' "$metric"
  for impl in mpich openmpi tsmpi; do
    f="$data/$impl.$metric"
    if [ -s "$f" ]; then
      m=$(median "$f")
      printf '%12s' "$m"
      json_results+="${json_results:+,}{\"impl\":\"$impl\",\"metric\":\"$metric\",\"runs\":[$(paste -sd, "$f")],\"median\":$m}"
    else
      printf '%12s' -
    fi
  done
  echo
done <"$data/metrics"
if [ -n "$json_file" ]; then
  printf '{"bench":"cluster-compare","date":"%s","repeat":%d,"iterations":"%s","failures":%d,"finalizeKills":%d,"results":[%s]}\n' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$repeat" "$iterations" "$failures" "$finalize_kills" "$json_results" >"$json_file"
  echo "wrote $json_file"
fi
[ "$finalize_kills" -eq 0 ] || echo "note: $finalize_kills run(s) were killed ${grace_s} s after printing their results (stuck in MPI_Finalize); their figures are kept"
[ "$failures" -eq 0 ]
