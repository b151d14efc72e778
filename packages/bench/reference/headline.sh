#!/usr/bin/env bash
# Issue 15's headline comparisons, repeated in rounds: each round runs compare.sh once for the
# neighbor rate (1,000 and 10,000 iterations), the 8-byte allreduce (1,000 and 10,000 calls, 4
# processes), the 0-byte ping-pong (1,000 iterations, against plain Node sockets that sleep in epoll
# and ones that poll as tsmpi waits) and the 8 MiB allreduce, each implementation at its defaults,
# so every comparison shares its round's minutes; then headline-table.ts prints each target's
# medians over the rounds and in how many rounds it held.
#
#   packages/bench/reference/headline.sh [--rounds R] [--out DIR]
#
# Writes DIR/STEP-ROUND.json (compare.sh --json), DIR/loadavg.txt and DIR/table.md; DIR defaults
# to a new directory under the system's temporary directory. About 20 seconds a round on an idle
# 2-core machine. Run it on a quiet machine, and again on another day before relying on a ratio:
# `npx tsx packages/bench/src/headline-table.ts DIR1 DIR2` says which targets held on both runs.
set -u -o pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
rounds=5
out=
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=${2:?--rounds needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    -h|--help) sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "headline.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$rounds" in ''|*[!0-9]*|0) echo "headline.sh: --rounds must be a positive integer, got '$rounds'" >&2; exit 2 ;; esac
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/tsmpi-headline.XXXXXX")
mkdir -p "$out" || { echo "headline.sh: cannot create $out" >&2; exit 2; }
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

steps=(msgrate allreduce8 pingpong allreduce8m)
step_args() {
  case "$1" in
    msgrate) echo "--bench msgrate --lengths 1000,10000 --impls tsmpi,node,openmpi,mpich" ;;
    allreduce8) echo "--bench allreduce --size 8 --lengths 1000,10000 --impls tsmpi,openmpi" ;;
    pingpong) echo "--bench pingpong --lengths 1000 --impls tsmpi,node,node-poll,openmpi" ;;
    allreduce8m) echo "--bench allreduce --size 8388608 --iterations 30 --warmup 5 --impls tsmpi,openmpi" ;;
  esac
}
status=0
for r in $(seq 1 "$rounds"); do
  for i in "${!steps[@]}"; do
    step=${steps[$i]}
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    echo "round $r of $rounds, step $((i + 1)) of ${#steps[@]} ($step), load average $load" >&2
    echo "$(date -u +%H:%M:%S) round $r $step $load" >>"$out/loadavg.txt"
    # shellcheck disable=SC2046 # step_args is a fixed word list
    "$here/compare.sh" $(step_args "$step") --repeat 1 --json "$out/$step-$r.json" >"$out/$step-$r.log" 2>&1 \
      || { echo "headline.sh: $step failed in round $r (see $out/$step-$r.log)" >&2; status=1; }
  done
done
(cd "$root" && node_modules/.bin/tsx packages/bench/src/headline-table.ts "$out") | tee "$out/table.md" || status=1
echo "wrote $out" >&2
exit $status
