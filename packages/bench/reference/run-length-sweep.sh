#!/usr/bin/env bash
# The run-length comparison of issue 15 (docs/notebook/performance-2026-11.md 4.11): compare.sh for
# the neighbor message rate, the ping-pong and the 8-byte allreduce (2 processes, after 100 warm-up
# calls) at 1,000 / 10,000 / 100,000 timed iterations, every implementation at its defaults (plus
# Open MPI --bind-to none), runs interleaved, then one chart per benchmark (rate or time against
# iterations). The neighbor rate and the ping-pong also run plain Node sockets over a Unix-domain
# socket (compare.sh's `node` row, raw-node.ts --unix) in the same rounds, and the table's
# tsmpi/Node column is the ratio to that floor at each length (issue 15: ping-pong within 1.3x of it).
#
#   packages/bench/reference/run-length-sweep.sh [--repeat R] [--out DIR] [--benches msgrate,pingpong,allreduce]
#
# Writes DIR/run-length-NAME.json (compare.sh --json) and DIR/run-length-NAME.svg (NAME: msgrate, pingpong,
# allreduce-np2); DIR defaults to docs/figures. About 4-6 minutes on an idle 2-core machine with --repeat 3.
set -u -o pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
repeat=3
out="$root/docs/figures"
benches=msgrate,pingpong,allreduce
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=${2:?--repeat needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --benches) benches=${2:?--benches needs a value}; shift 2 ;;
    -h|--help) sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-length-sweep.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out" || { echo "run-length-sweep.sh: cannot create $out" >&2; exit 2; }
status=0
IFS=, read -r -a list <<<"$benches"
for bench in "${list[@]}"; do
  extra=()
  metric=msgrate
  name=$bench
  case "$bench" in
    msgrate) ;;
    pingpong) extra=(--size 8); metric=8-byte ;;
    # 2 processes (a core each) after 100 warm-up calls, as docs/PERFORMANCE.md's chart: on 4 processes
    # over 2 cores MPICH's polling makes each 100,000-call run take minutes.
    allreduce) extra=(--np 2 --size 8 --warmup 100); metric=8-byte; name=allreduce-np2 ;;
    *) echo "run-length-sweep.sh: unknown benchmark '$bench'" >&2; exit 2 ;;
  esac
  "$here/compare.sh" --bench "$bench" --repeat "$repeat" --lengths 1000,10000,100000 "${extra[@]}" \
    --json "$out/run-length-$name.json" || status=1
  (cd "$root" && node_modules/.bin/tsx packages/bench/src/compare-chart.ts "$out/run-length-$name.json" "$out/run-length-$name.svg" --metric "$metric") || status=1
done
exit $status
