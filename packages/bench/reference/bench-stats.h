/*
 * Statistics shared by the C references, mirroring ../src/stats.ts: a timed
 * loop's mean per call from its wall-clock time (the figure compare.sh takes
 * its ratios on), the median, p99 and minimum of the per-call samples
 * (numpy's linear-interpolation quantile), and the process CPU time that the
 * benchmarks sum over the ranks. Header-only so each benchmark builds from one
 * `mpicc file.c` command.
 */
#ifndef TSMPI_BENCH_STATS_H
#define TSMPI_BENCH_STATS_H

#include <stdlib.h>
#include <sys/resource.h>

/* What a timed loop of calls cost, in microseconds per call. */
struct call_summary {
    double mean;
    double median;
    double p99;
    double min;
};

static int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* q-quantile of sorted[0..n), linear interpolation between closest ranks. */
static double bench_quantile(const double *sorted, long n, double q) {
    double pos = (double)(n - 1) * q;
    long lo = (long)pos;
    long hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - (double)lo);
}

/* Summarizes n > 0 per-call samples (seconds; sorted in place) of a loop that took
 * loop_seconds of wall-clock time. */
static struct call_summary bench_summarize_calls(double *samples, long n, double loop_seconds) {
    qsort(samples, (size_t)n, sizeof(double), bench_cmp_double);
    struct call_summary s;
    s.mean = loop_seconds / (double)n * 1e6;
    s.median = bench_quantile(samples, n, 0.5) * 1e6;
    s.p99 = bench_quantile(samples, n, 0.99) * 1e6;
    s.min = samples[0] * 1e6;
    return s;
}

/* Prints "calls A-B mean M us (median, p99 P, max X)" for samples[from..to) (seconds; not modified): one block
 * of collective.c's --blocks line (../src/stats.ts blockSummary). */
static void bench_print_block(const double *samples, long from, long to) {
    long n = to - from;
    double *sorted = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1)), sum = 0;
    if (sorted == NULL || n <= 0) { free(sorted); return; }
    for (long i = 0; i < n; i++) sorted[i] = samples[from + i], sum += sorted[i];
    qsort(sorted, (size_t)n, sizeof(double), bench_cmp_double);
    printf("calls %ld-%ld mean %.2f us (median %.2f, p99 %.2f, max %.2f)", from + 1, to, sum / (double)n * 1e6,
           bench_quantile(sorted, n, 0.5) * 1e6, bench_quantile(sorted, n, 0.99) * 1e6, sorted[n - 1] * 1e6);
    free(sorted);
}

/* User + system time of this process (all its threads), in seconds: what process.cpuUsage() gives a tsmpi rank. */
static double bench_cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

#endif
