#!/usr/bin/env bash
# Runs one benchmark on tsmpi, Open MPI (TCP) and MPICH (TCP), R times each,
# and prints the median of each and the ratios tsmpi/Open MPI, tsmpi/MPICH and tsmpi/plain Node sockets.
# The ping-pong and allreduce metrics are per call: SIZE-byte is the mean (the timed loop's time / calls,
# what a program pays, so the headline ratios are ratios of means), SIZE-byte-median and SIZE-byte-p99
# the order statistics of the per-call times, SIZE-byte-cpu the CPU milliseconds per call summed over
# the processes (compare-extract.sh).
#
#   packages/bench/reference/compare.sh [--bench msgrate|pingpong|allreduce|collective|put --call CALL|io [--dir DIR]] [--repeat R] [--json FILE]
#                                       [--iterations N | --lengths N1,N2,...] [--warmup N] [--window N] [--size BYTES]
#                                       [--impls tsmpi,node,node-poll,openmpi,openmpi-nobind,mpich] [--ours-args 'ARGS'] [--timeout S]
#                                       [--np P (allreduce, collective)]
#
# Every implementation moves its messages over TCP between its processes on one machine,
# two processes (allreduce: four, or --np), each at its own defaults otherwise (core binding included),
# so that the figures compare protocol stacks and not shared-memory against sockets:
#   tsmpi    node_modules/.bin/mpiexec -n 2 packages/bench/src/BENCH.ts   (what `pnpm exec mpiexec` runs),
#            from the repository root; its transport is TCP between processes.
#   Open MPI mpirun.openmpi -n 2 --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo
#            (ob1 + the TCP BTL; `self` only for a process's messages to itself; no vader/sm);
#            --oversubscribe only lets 4 processes start on 2 cores. The row "openmpi-nobind" adds
#            --bind-to none (what earlier figures used; Open MPI binds to cores by default).
#   MPICH    mpirun.mpich -n 2 with MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self UCX_NET_DEVICES=lo.
#            Debian 12 ships MPICH 4.0.2 built as ch4:ucx (not ch4:ofi), so TCP means UCX's tcp
#            transport; NOLOCAL makes MPICH treat the peer as remote (no POSIX shm path) and
#            UCX_TLS keeps UCX off its own shared-memory transports (sysv/posix/cma).
#   node     packages/bench/reference/raw-node.ts --unix: plain Node sockets doing the same exchange over the
#            socket kind tsmpi's same-host ranks use (a Unix-domain socket), no MPI: the floor this runtime
#            allows (issue 15: ping-pong within 1.3x of it). Its frames are 32 bytes (a tsmpi header) plus
#            --size payload bytes for the ping-pong; its window is 12 (msgrate's default). For allreduce it
#            runs recursive doubling / Rabenseifner among --np processes (a power of two) with allreduce.ts's defaults
#            (2000 calls, 50 warm-up) unless --iterations/--warmup say otherwise, and waits in epoll; for
#            collective --call neighbor-alltoall (4 processes) the same neighbourhood exchange on a 2 x 2 grid;
#            for put the frames of put.ts's epochs (put-lock: a request and its answer, put-fence: the data and
#            a notice each way), with put.ts's defaults, read as tsmpi's transport reads (--recv onread: into one
#            reused buffer, in reads of up to 1 MiB; Node's 'data' reads 64 KiB at a time, 1.5-3x slower for 1 MiB).
#   node-poll (allreduce, neighbor-alltoall, put, pingpong) the same with --poll: each call (pingpong: the whole exchange)
#            waits as tsmpi's blocking calls do (polling the event loop, sched_yield between turns), the
#            floor for tsmpi's way of waiting.
# Runs are interleaved (tsmpi, Open MPI, MPICH, tsmpi, ...) so that drift in the machine's
# load spreads over all of them. --lengths runs every implementation at each number of timed
# iterations (interleaved too) and reports each metric per length ("msgrate@1000"), since a
# short run and a long one differ (a JIT warms up; issue 15). The C sources are compiled on every call into
# packages/bench/reference/build/ (gitignored).
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
build="$here/build"

bench=msgrate
repeat=5
json_file=
impls=tsmpi,node,node-poll,openmpi,openmpi-nobind,mpich
lengths=
ours_args=
run_timeout=300
np_given=
bench_args=()

usage() {
  sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  cat <<'EOF'

  --bench B        msgrate (default), pingpong, or allreduce (4 processes unless --np; sizes 8 B and 8 MiB),
                   or collective (4 processes unless --np) with --call allreduce|allreduce-init|
                   reduce-scatter|reduce-scatter-block|neighbor-alltoall (collective.ts / collective.c; plain Node
                   rows for neighbor-alltoall at 4 processes only),
                   or put (2 processes) with --call put-lock|put-flush|get-lock|put-fence [--compute S] (put.ts / put.c;
                   Open MPI with --mca osc pt2pt, its one-sided component over the TCP BTL),
                   or io (4 processes): collective write then read of a 3-D array through subarray views
                   (io.ts / io.c; default 256 MiB, --size to change) in --dir DIR (default a new directory
                   under /var/tmp, removed afterwards; give a directory on the file system to measure)
  --repeat R       runs per implementation (default 5); the table shows the median
  --json FILE      write all runs, medians and ratios to FILE as one JSON document
  --iterations N, --warmup N, --window N, --size BYTES
                   passed to every benchmark (see msgrate.ts --help / pingpong.ts --help)
  --lengths LIST   comma-separated timed iteration counts, e.g. 1000,10000,100000: every
                   implementation runs at each (instead of --iterations); metrics per length
  --impls LIST     comma-separated subset of tsmpi,node,node-poll,openmpi,openmpi-nobind,mpich (default: all
                   installed; node-poll, plain Node sockets that poll as tsmpi does, runs all but msgrate)
  --ours-args 'A'  extra mpiexec options for tsmpi, e.g. '--channels 1 --matching global'
  --timeout S      kill a run after S seconds (default 300)
  --np P           processes of an allreduce (default 4; e.g. 2 for issue 40's 2-process rows); plain
                   Node's allreduce (node, node-poll) runs a power of two of processes and is left out otherwise
EOF
}

die() { echo "compare.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --bench) bench=${2:?--bench needs a value}; shift 2 ;;
    --repeat) repeat=${2:?--repeat needs a value}; shift 2 ;;
    --json) json_file=${2:?--json needs a value}; shift 2 ;;
    --impls) impls=${2:?--impls needs a value}; shift 2 ;;
    --ours-args) ours_args=${2?--ours-args needs a value}; shift 2 ;;
    --timeout) run_timeout=${2:?--timeout needs a value}; shift 2 ;;
    --lengths) lengths=${2:?--lengths needs a value}; shift 2 ;;
    --np) np_given=${2:?--np needs a value}; shift 2 ;;
    --iterations|--warmup|--window|--size|--call|--compute|--dir) bench_args+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
done
case "$bench" in msgrate|pingpong|allreduce|collective|put|io) ;; *) die "--bench must be msgrate, pingpong, allreduce, collective, put or io (got '$bench')" ;; esac
case "$bench ${bench_args[*]} " in "collective "*"--call "*|"put "*"--call "*|msgrate*|pingpong*|allreduce*|io*) ;; *) die "--bench $bench needs --call CALL" ;; esac
case " ${bench_args[*]} " in *" --dir "*) [ "$bench" = io ] || die "--dir applies to --bench io only" ;; esac
# processes per run: the point-to-point benchmarks use a pair; allreduce uses 4 (issue 5's target)
np=2
{ [ "$bench" = allreduce ] || [ "$bench" = collective ] || [ "$bench" = io ]; } && np=4
if [ -n "$np_given" ]; then
  { [ "$bench" = allreduce ] || [ "$bench" = collective ]; } || die "--np applies to --bench allreduce and collective only (msgrate and pingpong run 2 processes)"
  [[ "$np_given" =~ ^[1-9][0-9]*$ ]] && [ "$np_given" -ge 2 ] || die "--np must be an integer >= 2 (got '$np_given')"
  np=$np_given
fi
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || die "--repeat must be a positive integer (got '$repeat')"
[[ "$run_timeout" =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive integer (got '$run_timeout')"
if [ -n "$lengths" ]; then
  [[ "$lengths" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "--lengths must be comma-separated positive integers (got '$lengths')"
  case " ${bench_args[*]} " in *" --iterations "*) die "give --iterations or --lengths, not both" ;; esac
fi
if [ -n "$json_file" ]; then
  case "$json_file" in /*) ;; *) json_file="$PWD/$json_file" ;; esac
  mkdir -p "$(dirname "$json_file")" || die "cannot create the directory of $json_file"
fi

want() { case ",$impls," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

install_hint='apt-get install -y openmpi-bin libopenmpi-dev mpich libmpich-dev'

# ---- build ------------------------------------------------------------------
# -Wno-stringop-overflow: GCC 12 misreads MPICH's MPI_STATUSES_IGNORE ((MPI_Status *)1)
# as a zero-size array passed to MPI_Waitall.
cflags=(-O2 -std=c11 -Wno-stringop-overflow)
ldflags=(-lm)
active=()
if want tsmpi; then
  if [ -x "$root/node_modules/.bin/mpiexec" ]; then
    active+=(tsmpi)
  else
    echo "compare.sh: $root/node_modules/.bin/mpiexec not found; run 'pnpm install' at the repository root" >&2
  fi
fi
build_ref() { # impl mpicc suffix
  local impl=$1 cc=$2 suffix=$3
  if ! command -v "$cc" >/dev/null 2>&1; then
    echo "compare.sh: $cc not found, skipping $impl. Install the reference MPIs with: $install_hint" >&2
    return
  fi
  mkdir -p "$build"
  if "$cc" "${cflags[@]}" -o "$build/${bench}_$suffix" "$here/$bench.c" "${ldflags[@]}"; then
    active+=("$impl")
  else
    echo "compare.sh: building $bench.c with $cc failed, skipping $impl" >&2
  fi
}
# Plain Node sockets: the same tsx that runs tsmpi's ranks. raw-node.ts's mode: the benchmark's name, for
# collective.ts the one call it has a floor for (neighbor-alltoall, 4 processes), none for io or a put with
# --compute. The polling variant exists for all but msgrate.
case "$bench" in
  collective) node_mode=none
    [[ " ${bench_args[*]} " == *" --call neighbor-alltoall "* ]] && [ "$np" = 4 ] && node_mode=neighbor-alltoall ;;
  put) node_mode=put
    # A target that computes without MPI (--compute), put-flush and get-lock are tsmpi's and the C references' cases only.
    [[ " ${bench_args[*]} " == *" --compute "* || " ${bench_args[*]} " == *" --call put-flush "* || " ${bench_args[*]} " == *" --call get-lock "* ]] && node_mode=none ;;
  io) node_mode=none ;;
  *) node_mode=$bench ;;
esac
if [ -x "$root/node_modules/.bin/tsx" ] && [ "$node_mode" != none ]; then
  if [ "$bench" = allreduce ] && (( np & (np - 1) )); then
    { want node || want node-poll; } && echo "compare.sh: plain Node's allreduce runs a power of two of processes only; leaving node and node-poll out at --np $np" >&2
  else
    want node && active+=(node)
    want node-poll && [ "$bench" != msgrate ] && active+=(node-poll)
  fi
fi
# raw-node.ts's collective defaults (1000 calls, 2000 warm-up) differ from allreduce.ts's and collective.ts's: pass theirs.
node_defaults=()
if [ "$node_mode" = allreduce ] || [ "$node_mode" = neighbor-alltoall ]; then
  case " ${bench_args[*]} " in *" --warmup "*) ;; *) node_defaults+=(--warmup 50) ;; esac
  case " ${bench_args[*]} " in *" --iterations "*) ;; *) [ -n "$lengths" ] || node_defaults+=(--iterations 2000) ;; esac
fi
want openmpi && build_ref openmpi mpicc.openmpi ompi
# The same binary, launched with --bind-to none.
if want openmpi-nobind; then
  if want openmpi && [[ " ${active[*]} " == *" openmpi "* ]]; then active+=(openmpi-nobind)
  elif ! want openmpi; then build_ref openmpi-nobind mpicc.openmpi ompi; fi
fi
want mpich && build_ref mpich mpicc.mpich mpich
[ ${#active[@]} -gt 0 ] || die "nothing to run"

# ---- run --------------------------------------------------------------------
run_one() { # impl [extra benchmark args...] -> benchmark stdout on stdout, its stderr on fd 2
  local impl=$1
  shift
  case "$impl" in
    tsmpi)
      # shellcheck disable=SC2086 # ours_args is a list of mpiexec options
      (cd "$root" && timeout "$run_timeout" node_modules/.bin/mpiexec -n "$np" $ours_args \
        "packages/bench/src/$bench.ts" "${bench_args[@]}" "$@") ;;
    node|node-poll)
      local raw_args=()
      [ "$impl" = node-poll ] && raw_args=(--poll)
      [ "$bench" = allreduce ] && raw_args+=(--np "$np")
      [ "$bench" = put ] && raw_args+=(--recv onread)
      (cd "$root" && timeout "$run_timeout" node_modules/.bin/tsx packages/bench/reference/raw-node.ts "$node_mode" --unix "${raw_args[@]}" \
        "${bench_args[@]}" "$@" "${node_defaults[@]}") ;;
    openmpi|openmpi-nobind)
      # One-sided: on one host Open MPI picks osc/sm (shared memory) whatever the BTLs; pt2pt goes over TCP.
      local bind=() osc=()
      [ "$bench" = put ] && osc=(--mca osc pt2pt)
      [ "$impl" = openmpi-nobind ] && bind=(--bind-to none)
      timeout "$run_timeout" mpirun.openmpi --allow-run-as-root --oversubscribe "${bind[@]}" -n "$np" \
        --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo "${osc[@]}" \
        "$build/${bench}_ompi" "${bench_args[@]}" "$@" ;;
    mpich)
      timeout "$run_timeout" mpirun.mpich -n "$np" \
        -genv MPIR_CVAR_NOLOCAL 1 -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES lo \
        "$build/${bench}_mpich" "${bench_args[@]}" "$@" ;;
  esac
}

# A run's metrics ("msgrate", "8-byte", "8-byte-cpu", ...) from its result lines: compare-extract.sh.
extract() { "$here/compare-extract.sh"; }

data=$(mktemp -d)
io_dir=
trap 'rm -rf "$data" ${io_dir:+"$io_dir"}' EXIT
# io: every implementation writes its file in one directory of a disk (/var/tmp: kept across reboots, so
# not a tmpfs as /tmp may be); a run killed by --timeout leaves its file there, and the directory goes.
if [ "$bench" = io ] && [[ " ${bench_args[*]} " != *" --dir "* ]]; then
  io_dir=$(mktemp -d /var/tmp/tsmpi-io-compare.XXXXXX) || die "cannot create a directory under /var/tmp"
  bench_args+=(--dir "$io_dir")
fi
: >"$data/metrics"
failures=0
echo "compare.sh: $bench, ${#active[@]} implementation(s) (${active[*]}), $repeat run(s) each, args: ${bench_args[*]:-(defaults)}${lengths:+, lengths $lengths}"
IFS=, read -r -a length_list <<<"${lengths:-0}"
for ((r = 1; r <= repeat; r++)); do
  for len in "${length_list[@]}"; do
    len_args=()
    suffix=
    if [ "$len" != 0 ]; then len_args=(--iterations "$len"); suffix="@$len"; fi
    for impl in "${active[@]}"; do
      out="$data/out" err="$data/err"
      run_one "$impl" "${len_args[@]}" >"$out" 2>"$err"
      status=$?
      lines=$(extract <"$out")
      if [ $status -ne 0 ] || [ -z "$lines" ]; then
        failures=$((failures + 1))
        echo "  run $r $impl${suffix}: FAILED (exit $status)" >&2
        { tail -n 5 "$err"; tail -n 5 "$out"; } | sed 's/^/    /' >&2
        continue
      fi
      while read -r metric value; do
        metric="$metric$suffix"
        grep -qx "$metric" "$data/metrics" || echo "$metric" >>"$data/metrics"
        echo "$value" >>"$data/$impl.$metric"
      done <<<"$lines"
      echo "  run $r $impl${suffix}: $(echo "$lines" | tr '\n' ' ')"
    done
  done
done

median() { # file of numbers -> median (mean of the two middle ones when even)
  sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b }'; }

label() { case "$1" in tsmpi) echo tsmpi ;; node) echo "Node raw" ;; node-poll) echo "Node poll" ;; openmpi) echo "Open MPI" ;; openmpi-nobind) echo "OMPI nobind" ;; mpich) echo MPICH ;; esac; }
if [ "$bench" = msgrate ]; then
  unit="M messages/s, higher is better"
elif [ "$bench" = allreduce ] || [ "$bench" = collective ] || [ "$bench" = put ] || [ "$bench" = io ]; then
  unit="microseconds per call on $np processes, SIZE-byte rows the mean (-median, -p99: of the per-call times; -cpu: CPU milliseconds per call summed over the processes), lower is better; a ratio above 1 means tsmpi is slower"
else
  unit="round-trip microseconds, SIZE-byte rows the mean (-median, -p99: of the round trips; -cpu: CPU milliseconds per round trip summed over both processes), lower is better; a ratio above 1 means tsmpi is slower"
fi

# ---- table ------------------------------------------------------------------
echo
echo "median of $repeat run(s), $bench ($unit)"
printf '%-22s' metric
for impl in tsmpi node node-poll openmpi openmpi-nobind mpich; do printf '%12s' "$(label $impl)"; done
printf '%16s%14s%13s%17s\n' "tsmpi/OpenMPI" "tsmpi/MPICH" "tsmpi/Node" "tsmpi/NodePoll"
json_results=
json_ratios=
while read -r metric; do
  declare -A med=()
  printf '%-22s' "$metric"
  for impl in tsmpi node node-poll openmpi openmpi-nobind mpich; do
    f="$data/$impl.$metric"
    if [ -s "$f" ]; then
      med[$impl]=$(median "$f")
      runs=$(paste -sd, "$f")
      json_results+="${json_results:+,}{\"impl\":\"$impl\",\"metric\":\"$metric\",\"runs\":[$runs],\"median\":${med[$impl]}}"
    else
      med[$impl]=nan
    fi
    printf '%12s' "$([ "${med[$impl]}" = nan ] && echo - || echo "${med[$impl]}")"
  done
  r_ompi=$(ratio "${med[tsmpi]}" "${med[openmpi]}")
  r_mpich=$(ratio "${med[tsmpi]}" "${med[mpich]}")
  r_node=$(ratio "${med[tsmpi]}" "${med[node]}")
  r_node_poll=$(ratio "${med[tsmpi]}" "${med[node-poll]}")
  printf '%16s%14s%13s%17s\n' "$r_ompi" "$r_mpich" "$r_node" "$r_node_poll"
  [ "$r_ompi" = n/a ] || json_ratios+="${json_ratios:+,}{\"metric\":\"$metric\",\"vs\":\"openmpi\",\"ratio\":$r_ompi}"
  [ "$r_node" = n/a ] || json_ratios+="${json_ratios:+,}{\"metric\":\"$metric\",\"vs\":\"node\",\"ratio\":$r_node}"
  [ "$r_node_poll" = n/a ] || json_ratios+="${json_ratios:+,}{\"metric\":\"$metric\",\"vs\":\"node-poll\",\"ratio\":$r_node_poll}"
  [ "$r_mpich" = n/a ] || json_ratios+="${json_ratios:+,}{\"metric\":\"$metric\",\"vs\":\"mpich\",\"ratio\":$r_mpich}"
  unset med
done <"$data/metrics"
[ -s "$data/metrics" ] || echo "(no successful run)"

if [ -n "$json_file" ]; then
  args_json=$(printf '%s\n' "${bench_args[@]}" | awk 'NF { gsub(/["\\]/, "\\\\&"); printf "%s\"%s\"", (n++ ? "," : ""), $0 }')
  ours_json=$(printf '%s' "$ours_args" | sed 's/["\\]/\\&/g')
  printf '{"bench":"%s","processes":%d,"date":"%s","host":"%s","cores":%d,"loadavg":"%s","repeat":%d,"args":[%s],"lengths":[%s],"oursArgs":"%s","failures":%d,"unit":"%s","results":[%s],"ratios":[%s]}\n' \
    "$bench" "$np" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(hostname)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$repeat" "$args_json" "$lengths" "$ours_json" "$failures" \
    "$unit" "$json_results" "$json_ratios" >"$json_file"
  echo "wrote $json_file"
fi
if ! command -v mpirun.openmpi >/dev/null 2>&1; then
  echo "note: Open MPI is not installed; for the reference figures run: $install_hint"
fi
[ "$failures" -eq 0 ]
