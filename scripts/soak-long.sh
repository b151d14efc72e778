#!/usr/bin/env bash
# Long soak of issue 17 (docs/RELIABILITY.md records the figures): runs
# packages/core/test/programs/soak.ts through mpiexec and keeps its output.
# Usage: scripts/soak-long.sh [SECONDS=3600] [SEED=random] [NP=4] [extra mpiexec flags...]
# e.g.   scripts/soak-long.sh 3600 12345 4 --progress inline
# Exit status 0 only when the soak printed "soak OK" (zero lost, duplicated,
# corrupted and misordered messages, zero wrong collective results).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS="${1:-3600}"
SEED="${2:-$(( (RANDOM << 15) | RANDOM ))}"
NP="${3:-4}"
shift $(( $# < 3 ? $# : 3 ))
LOG="${TSMPI_SOAK_LOG:-${TMPDIR:-/tmp}/tsmpi-soak-$(date -u +%Y%m%dT%H%M%SZ)-seed$SEED.log}"
echo "soak-long: $(date -u +%FT%TZ) node $(node --version) $(nproc) cpus; $SECS s, seed $SEED, $NP ranks, flags: $*; log $LOG"
# Generous kill: a lost message is declared after 120 s, and a loaded machine is slow.
set +e
timeout --signal=KILL $(( SECS + 600 )) node_modules/.bin/mpiexec -n "$NP" "$@" packages/core/test/programs/soak.ts "$SECS" "$SEED" 2>&1 | tee "$LOG"
code=${PIPESTATUS[0]}
set -e
if [ "$code" -eq 0 ] && grep -q '^soak OK' "$LOG"; then
  echo "soak-long: PASS (seed $SEED)"
else
  echo "soak-long: FAIL (exit $code, seed $SEED): see $LOG"
  exit 1
fi
