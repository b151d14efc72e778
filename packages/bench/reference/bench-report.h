/*
 * The result line and JSON record of a benchmark timed per call (allreduce.c, collective.c,
 * put.c), the C side of ../src/report.ts's formatCallLine: rank 0 prints
 *   NAME: SIZE-byte mean M us, B MB/s (median, p99, min; cpu C ms per call over all ranks; N iterations, P processes, LIBRARY[FLAVOUR])
 * and appends one JSON line to --json's file. Header-only, as bench-args.h and bench-stats.h.
 */
#ifndef TSMPI_BENCH_REPORT_H
#define TSMPI_BENCH_REPORT_H

#include "bench-args.h"
#include "bench-stats.h"

/* Sizes above this are bandwidth-bound and run fewer calls (as ../src/allreduce.ts): a timed loop of
 * iterations * BENCH_SCALE_BYTES / size calls, at least 10. */
#define BENCH_SCALE_BYTES (64L * 1024L)

static inline long bench_calls_for(long size_bytes, long iterations) {
    if (size_bytes <= BENCH_SCALE_BYTES) return iterations;
    long c = (long)((double)iterations * (double)BENCH_SCALE_BYTES / (double)size_bytes + 0.5);
    return c < 10 ? 10 : c;
}

/* A loop of `calls` timed calls of `bytes` each: its per-call samples (seconds; sorted in place), its wall-clock
 * time and the CPU milliseconds per call summed over the ranks. `flavour` follows the library's name ("" for none);
 * `extra_json` is more JSON fields ending in a comma ("" for none). */
struct call_report {
    const char *name, *lib, *impl, *flavour, *extra_json, *json_file;
    long bytes, calls, warmup;
    int processes;
    double loop_seconds, cpu_ms_all;
};

static void bench_report_call(const struct call_report *r, double *samples) {
    struct call_summary s = bench_summarize_calls(samples, r->calls, r->loop_seconds);
    double bw = s.mean > 0 ? (double)r->bytes / s.mean : 0;
    printf("%s: %ld-byte mean %.2f us, %.1f MB/s (median %.2f, p99 %.2f, min %.2f; cpu %.3f ms per call over all ranks; "
           "%ld iterations, %d processes, %s%s)\n",
           r->name, r->bytes, s.mean, bw, s.median, s.p99, s.min, r->cpu_ms_all, r->calls, r->processes, r->lib, r->flavour);
    fflush(stdout);
    if (r->json_file == NULL) return;
    FILE *out = bench_json_begin(r->json_file, r->impl, r->lib, r->name);
    if (out == NULL) return;
    fprintf(out,
            "\"processes\":%d,\"iterations\":%ld,\"warmup\":%ld,\"sizeBytes\":%ld,%s\"meanMicros\":%.3f,\"medianMicros\":%.3f,"
            "\"p99Micros\":%.3f,\"minMicros\":%.3f,\"bandwidthMBs\":%.3f,\"cpuMillisPerCall\":%.4f}\n",
            r->processes, r->calls, r->warmup, r->bytes, r->extra_json, s.mean, s.median, s.p99, s.min, bw, r->cpu_ms_all);
    fclose(out);
}

#endif
