#!/usr/bin/env bash
# Reads one benchmark run's standard output and prints its metrics, one "METRIC VALUE" a line:
# the parser of compare.sh, kept apart so that packages/bench/src/compare-extract.test.ts can feed it
# the result lines of every implementation.
#
# The latency and collective lines give the mean per call first (the loop's time / calls: what a
# program pays, and the figure compare.sh's ratios are taken on), then the median, p99 and min of the
# per-call times and, where measured, the CPU time per call summed over all processes.
# The result lines of ../src/report.ts, raw-node.ts and the C references:
#   msgrate: 0.412 M messages/s (...)                         -> "msgrate 0.412"
#   raw-node msgrate: 0.480 M messages/s (...)                -> "msgrate 0.480"
#   pingpong: 8-byte round trip mean 50.10 us (median 48.20, p99 90.30, min 41.10; cpu 0.061 ms per call over all ranks; ...)
#                                                             -> "8-byte 50.10", "8-byte-median 48.20", "8-byte-p99 90.30", "8-byte-cpu 0.061"
#   raw-node pingpong: round trip mean 9.50 us (median 9.10, p99 20.00, min 8.00; ..., 0-byte payload, ...)
#                                                             -> "0-byte 9.50", "0-byte-median 9.10", "0-byte-p99 20.00"
#   allreduce: 8-byte mean 60.10 us, 0.1 MB/s (median 55.00, p99 90.00, min 50.00; cpu 0.250 ms per call over all ranks; ...)
#   raw-node allreduce: 8-byte mean 70.00 us (median ..., p99 ..., min ...; cpu ... ms per call over all ranks; ...)
#                                                             -> "8-byte 60.10", "8-byte-median 55.00", "8-byte-p99 90.00", "8-byte-cpu 0.250"
#   reduce-scatter: 8388608-byte mean ... (and allreduce-init, neighbor-alltoall: collective.ts/.c; put-lock, put-flush, get-lock, put-fence: put.ts/.c) the same way
#   io-write: 268435456-byte mean ... (and io-read: io.ts/.c, two lines of one size in a run, so the name stays)
#                                                             -> "io-write-268435456-byte ...", "io-write-268435456-byte-median ...", ...
set -u
text=$(cat)
# "SIZE-byte MEAN(ANYTHING)" from each latency/collective line, with raw-node's payload size moved to the front.
lines=$(sed -n -e 's/^raw-node pingpong: round trip mean \([0-9.][0-9.]*\) us (\(.*\), \([0-9][0-9]*\)-byte payload.*/\3-byte \1 \2/p' \
               -e 's/^pingpong: \([0-9][0-9]*-byte\) round trip mean \([0-9.][0-9.]*\) us (\(.*\)/\1 \2 \3/p' \
               -e 's/^\(raw-node \)\{0,1\}\(allreduce\|allreduce-init\|reduce-scatter\|reduce-scatter-block\|neighbor-alltoall\|put-lock\|put-flush\|get-lock\|put-fence\): \([0-9][0-9]*-byte\) mean \([0-9.][0-9.]*\) us[^(]*(\(.*\)/\3 \4 \5/p' \
               -e 's/^\(io-write\|io-read\): \([0-9][0-9]*-byte\) mean \([0-9.][0-9.]*\) us[^(]*(\(.*\)/\1-\2 \3 \4/p' <<<"$text")
sed -n -e 's/^msgrate: \([0-9.][0-9.]*\) M messages\/s.*/msgrate \1/p' \
       -e 's/^raw-node msgrate: \([0-9.][0-9.]*\) M messages\/s.*/msgrate \1/p' <<<"$text"
[ -n "$lines" ] || exit 0
sed -n 's/^\([^ ]*\) \([0-9.]*\) .*/\1 \2/p' <<<"$lines"
sed -n 's/^\([^ ]*\) [0-9.]* .*median \([0-9.][0-9.]*\).*/\1-median \2/p' <<<"$lines"
sed -n 's/^\([^ ]*\) [0-9.]* .*p99 \([0-9.][0-9.]*\).*/\1-p99 \2/p' <<<"$lines"
sed -n 's/^\([^ ]*\) [0-9.]* .*cpu \([0-9.][0-9.]*\) ms per call.*/\1-cpu \2/p' <<<"$lines"
