/*
 * Allreduce benchmark: the C reference for ../src/allreduce.ts (same pattern,
 * flags and output line).
 *
 * For each size (default 8 bytes and 8 MiB) every rank runs MPI_Barrier, WARMUP
 * (50) untimed MPI_Allreduce calls of MPI_DOUBLE with MPI_SUM, MPI_Barrier, then
 * the timed calls, the loop timed as a whole and each call on its own on rank 0.
 * Sizes above 64 KiB run ITERATIONS * 64 KiB / SIZE calls (at least 10) and at
 * least 2 warm-up calls. Rank 0 prints the mean time per call in microseconds
 * (the loop's time / calls), the bandwidth size / mean in MB/s, the median, p99
 * and min per-call times (bench-stats.h, as ../src/stats.ts), and the CPU time
 * (user + system, all threads) per call summed over all ranks.
 *
 *   mpicc -O2 -o build/allreduce_ompi allreduce.c
 *   mpirun -n 4 build/allreduce_ompi [--iterations N] [--warmup N] [--size BYTES[,BYTES]] [--json FILE]
 */
#include <mpi.h>
#include <time.h>

#include "bench-report.h"

static const char *USAGE =
    "usage: mpirun -n P allreduce [flags]\n"
    "\n"
    "Allreduce latency and bandwidth: every rank reduces SIZE bytes of FLOAT64 with SUM.\n"
    "Prints the mean time per call in microseconds, the bandwidth, the median, p99 and\n"
    "min per-call times and the CPU time per call (summed over all ranks) for each size.\n"
    "\n"
    "  --iterations N   timed calls for small sizes (default 2000; sizes above 64 KiB run\n"
    "                   N * 64 KiB / SIZE calls, at least 10)\n"
    "  --warmup N       untimed calls per size (default 50; sizes above 64 KiB: at least 2)\n"
    "  --size BYTES     message size, a multiple of 8; repeat or comma-separate (default 8,8388608)\n"
    "  --json FILE      append one JSON record (one line) per size to FILE\n"
    "  -h, --help       this text\n";

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    struct bench_flags f = { .iterations = 2000, .warmup = 50, .window = 1, .sizes = { 8, 8L * 1024L * 1024L }, .nsizes = 2 };
    int early = bench_flags_or_exit(argc, argv, &f, "allreduce", USAGE, rank);
    if (early >= 0) return early;
    for (int s = 0; s < f.nsizes; s++) {
        if (f.sizes[s] % 8 != 0) {
            if (rank == 0) fprintf(stderr, "allreduce: --size must be a multiple of 8 (FLOAT64 elements)\n\n%s", USAGE);
            MPI_Finalize();
            return 2;
        }
    }

    char lib[128];
    const char *impl = "other";
    bench_library(lib, sizeof lib, &impl);

    for (int s = 0; s < f.nsizes; s++) {
        const long bytes = f.sizes[s];
        const long n = bytes / 8;
        const long calls = bench_calls_for(bytes, f.iterations);
        long warm = f.warmup;
        if (bytes > BENCH_SCALE_BYTES) warm = warm < calls ? warm : calls, warm = warm < 2 ? 2 : warm;
        double *sendbuf = malloc(sizeof(double) * (size_t)(n + 1));
        double *recvbuf = malloc(sizeof(double) * (size_t)(n + 1));
        double *samples = malloc(sizeof(double) * (size_t)calls);
        if (sendbuf == NULL || recvbuf == NULL || samples == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
        for (long i = 0; i < n; i++) sendbuf[i] = rank + 1;
        MPI_Barrier(MPI_COMM_WORLD); /* as ../src/allreduce.ts does, where it matters to V8 */
        for (long it = 0; it < warm; it++) MPI_Allreduce(sendbuf, recvbuf, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double cpu_before = bench_cpu_seconds();
        double loop_start = MPI_Wtime();
        for (long it = 0; it < calls; it++) {
            double start = MPI_Wtime();
            MPI_Allreduce(sendbuf, recvbuf, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            samples[it] = MPI_Wtime() - start;
        }
        double loop_seconds = MPI_Wtime() - loop_start;
        double cpu_ms = (bench_cpu_seconds() - cpu_before) * 1e3 / (double)calls, cpu_ms_all = 0;
        MPI_Reduce(&cpu_ms, &cpu_ms_all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            struct call_report r = { .name = "allreduce", .lib = lib, .impl = impl, .flavour = "", .extra_json = "", .json_file = f.json_file,
                                     .bytes = bytes, .calls = calls, .warmup = warm, .processes = size, .loop_seconds = loop_seconds, .cpu_ms_all = cpu_ms_all };
            bench_report_call(&r, samples);
        }
        free(samples);
        free(recvbuf);
        free(sendbuf);
    }
    MPI_Finalize();
    return 0;
}
