#!/usr/bin/env bash
# Reads one benchmark run's standard output and prints its metrics, one "METRIC VALUE" a line:
# the parser of compare.sh, kept apart so that packages/bench/src/compare-extract.test.ts can feed it
# the result lines of every implementation.
#
# The result lines of ../src/report.ts, raw-node.ts and the C references:
#   msgrate: 0.412 M messages/s (...)                         -> "msgrate 0.412"
#   raw-node msgrate: 0.480 M messages/s (...)                -> "msgrate 0.480"
#   pingpong: 8-byte round trip median 48.20 us (...)         -> "8-byte 48.20"
#   raw-node pingpong: round trip median 9.10 us (..., 0-byte payload, ...)   -> "0-byte 9.10"
#   allreduce: 8-byte median 60.10 us, 0.1 MB/s (...)         -> "8-byte 60.10" (microseconds per call)
#   raw-node allreduce: 8-byte median 70.00 us (...)          -> "8-byte 70.00"
#   either allreduce line's "cpu 0.250 ms per call over all ranks" -> "8-byte-cpu 0.250" (CPU ms per call, all processes)
set -u
text=$(cat)
sed -n -e 's/^msgrate: \([0-9.][0-9.]*\) M messages\/s.*/msgrate \1/p' \
       -e 's/^raw-node msgrate: \([0-9.][0-9.]*\) M messages\/s.*/msgrate \1/p' \
       -e 's/^raw-node pingpong: round trip median \([0-9.][0-9.]*\) us (.*, \([0-9][0-9]*\)-byte payload.*/\2-byte \1/p' \
       -e 's/^pingpong: \([0-9][0-9]*-byte\) round trip median \([0-9.][0-9.]*\) us.*/\1 \2/p' \
       -e 's/^\(raw-node \)\{0,1\}allreduce: \([0-9][0-9]*-byte\) median \([0-9.][0-9.]*\) us.*/\2 \3/p' <<<"$text"
sed -n -e 's/^\(raw-node \)\{0,1\}allreduce: \([0-9][0-9]*-byte\) median .* cpu \([0-9.][0-9.]*\) ms per call.*/\2-cpu \3/p' <<<"$text"
