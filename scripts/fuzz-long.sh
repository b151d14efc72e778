#!/usr/bin/env bash
# Long fuzzing run of issue 17 (docs/RELIABILITY.md records the figures).
# Runs every fast-check target with TSMPI_FUZZ_RUNS inputs per property
# (default 1,000,000) and no test timeout; the socket-level handshake fuzzer
# takes TSMPI_FUZZ_SOCKET_RUNS batches instead (default 2,000: each batch opens
# real connections, and truncated handshakes wait for the 300 ms timeout).
# Every target runs with one seed, TSMPI_FUZZ_SEED or a random one, printed
# first (docs/RELIABILITY.md records it with the figures). A failure prints
# fast-check's seed and path; replay one with
#   TSMPI_FUZZ_SEED=<seed> TSMPI_FUZZ_RUNS=<runs> npx vitest run <file>
# The frame parser's every-split-point property runs RUNS/1000 streams, each
# parsed once per split point (up to ~1500 inputs per stream); the handshake's
# runs RUNS/100 HELLOs, each split at every point (81 to 105 machines).
# Usage: scripts/fuzz-long.sh [RUNS] [SOCKET_RUNS] [FILES...]  (FILES: only these targets)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-${TSMPI_FUZZ_RUNS:-1000000}}"
SOCKET_RUNS="${2:-${TSMPI_FUZZ_SOCKET_RUNS:-2000}}"
# fast-check takes a 32-bit seed.
export TSMPI_FUZZ_SEED="${TSMPI_FUZZ_SEED:-$(( $(od -An -N4 -tu4 /dev/urandom | tr -d ' ') % 2147483647 ))}"
PURE=(
  packages/transport-tcp/src/frame-parser.fuzz.test.ts
  packages/transport-tcp/src/inbound-handshake.fuzz.test.ts
  packages/core/test/pmi-protocol.fuzz.unit.test.ts
  packages/launcher/test/options.fuzz.unit.test.ts
)
SOCKET=packages/transport-tcp/test/handshake.fuzz.it.test.ts
if [ $# -gt 2 ]; then shift 2; ONLY=("$@"); else ONLY=("${PURE[@]}" "$SOCKET"); fi
echo "fuzz-long: $(date -u +%FT%TZ) node $(node --version) $(nproc) cpus; $RUNS runs per property, $SOCKET_RUNS socket batches, seed $TSMPI_FUZZ_SEED"
status=0
run() { # file runs
  local start=$SECONDS
  if TSMPI_FUZZ_RUNS="$2" node_modules/.bin/vitest run "$1" --testTimeout=0 --hookTimeout=0 --reporter=verbose; then
    echo "fuzz-long: PASS $1 ($2 runs per property, seed $TSMPI_FUZZ_SEED, $((SECONDS - start)) s)"
  else
    echo "fuzz-long: FAIL $1 ($2 runs per property, seed $TSMPI_FUZZ_SEED, $((SECONDS - start)) s): see fast-check's seed and path above"
    status=1
  fi
}
for f in "${ONLY[@]}"; do
  if [ "$f" = "$SOCKET" ]; then run "$f" "$SOCKET_RUNS"; else run "$f" "$RUNS"; fi
done
exit $status
