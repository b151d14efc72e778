/*
 * One-sided Put between 2 processes, timed per epoch: the C reference for ../src/put.ts (same
 * calls, flags and output line).
 *
 * --call put-lock: rank 0 runs MPI_Win_lock(EXCLUSIVE, 1), MPI_Put of SIZE bytes (default 8),
 * MPI_Win_unlock(1) per call (--call put-flush: MPI_Win_flush(1, win) between the Put and the
 * unlock; --call get-lock: MPI_Get of SIZE bytes instead of the Put); rank 1 waits in
 * MPI_Barrier, or with --compute S computes S seconds without calling MPI while rank 0 runs its
 * timed calls. --call put-fence: rank 0 Puts SIZE bytes (default 1 MiB), then both ranks
 * MPI_Win_fence, per call. The window is MPI_Win_allocate'd. Rank 0 prints the mean
 * per call (the loop's time / calls), SIZE / mean in MB/s, the median, p99 and min per-call
 * times and the CPU per call summed over both ranks.
 *
 *   mpicc -O2 -o build/put_ompi put.c
 *   mpirun -n 2 build/put_ompi --call put-lock --compute 2
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#include <math.h>
#include <mpi.h>
#include <time.h>

#include "bench-report.h"

static const char *USAGE =
    "usage: mpirun -n 2 put --call put-lock|put-flush|get-lock|put-fence [flags]\n"
    "\n"
    "One-sided Put, timed per epoch: put-lock (lock, Put, unlock: passive target), put-flush\n"
    "(lock, Put, flush, unlock), get-lock (lock, Get, unlock), put-fence (Put, then fence).\n"
    "\n"
    "  --call CALL      put-lock, put-flush, get-lock or put-fence (required)\n"
    "  --compute S      put-lock, put-flush, get-lock: the target computes S seconds without calling MPI (default 0)\n"
    "  --iterations N   timed calls (default 1000)\n"
    "  --warmup N       untimed calls (default 50)\n"
    "  --size BYTES     bytes per Put or Get (default 8, 1048576 for put-fence)\n"
    "  --json FILE      append one JSON record (one line) to FILE\n"
    "  -h, --help       this text\n";

/* Busy work that never calls MPI, for `seconds`. */
static double compute(double seconds) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile double x = 0;
    do {
        for (int i = 0; i < 10000; i++) x += sqrt((double)i);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 < seconds);
    return x;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *call = bench_take_flag(&argc, argv, "call");
    const char *compute_arg = bench_take_flag(&argc, argv, "compute");
    double compute_seconds = compute_arg == NULL ? 0 : atof(compute_arg);
    int fence = call != NULL && strcmp(call, "put-fence") == 0;
    int flush = call != NULL && strcmp(call, "put-flush") == 0;
    int get = call != NULL && strcmp(call, "get-lock") == 0;
    struct bench_flags f = { .iterations = 1000, .warmup = 50, .window = 1, .sizes = { fence ? 1048576 : 8 }, .nsizes = 1 };
    int early = bench_flags_or_exit(argc, argv, &f, "put", USAGE, rank);
    if (early >= 0) return early;
    const char *bad = call == NULL || (!fence && !flush && !get && strcmp(call, "put-lock") != 0) ? "--call must be put-lock, put-flush, get-lock or put-fence"
                    : size != 2 ? "runs on 2 processes" : compute_seconds < 0 ? "--compute must be >= 0" : NULL;
    if (bad != NULL) {
        if (rank == 0) fprintf(stderr, "put: %s\n\n%s", bad, USAGE);
        MPI_Finalize();
        return 2;
    }
    char lib[128];
    const char *impl = "other";
    bench_library(lib, sizeof lib, &impl);
    const long bytes = f.sizes[0], calls = f.iterations, warm = f.warmup;
    unsigned char *origin = malloc((size_t)bytes), *fetched = calloc((size_t)bytes, 1), *base = NULL;
    double *samples = malloc(sizeof(double) * (size_t)calls);
    if (origin == NULL || fetched == NULL || samples == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
    memset(origin, 7, (size_t)bytes);
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    if (get && rank == 1) memset(base, 9, (size_t)bytes);
#define ONE_CALL()                                                                   \
    do {                                                                             \
        if (fence) {                                                                 \
            if (rank == 0) MPI_Put(origin, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win); \
            MPI_Win_fence(0, win);                                                   \
        } else {                                                                     \
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);                             \
            if (get) MPI_Get(fetched, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win); \
            else MPI_Put(origin, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win); \
            if (flush) MPI_Win_flush(1, win);                                        \
            MPI_Win_unlock(1, win);                                                  \
        }                                                                            \
    } while (0)
    double loop_seconds = 0;
    MPI_Win_fence(0, win);
    /* The warm-up ends before the target starts computing (as put.ts). */
    if (fence || rank == 0)
        for (long it = 0; it < warm; it++) ONE_CALL();
    MPI_Barrier(MPI_COMM_WORLD);
    double cpu_before = bench_cpu_seconds();
    if (fence || rank == 0) {
        double loop_start = MPI_Wtime();
        for (long it = 0; it < calls; it++) {
            double start = MPI_Wtime();
            ONE_CALL();
            samples[it] = MPI_Wtime() - start;
        }
        loop_seconds = MPI_Wtime() - loop_start;
    } else if (compute_seconds > 0) {
        compute(compute_seconds);
    }
    double cpu_ms = (bench_cpu_seconds() - cpu_before) * 1e3 / (double)calls, cpu_ms_all = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (get ? rank == 0 && fetched[bytes - 1] != 9 : rank == 1 && base[bytes - 1] != 7) {
        fprintf(stderr, get ? "put: the Get did not bring the target window's bytes\n" : "put: the target window does not hold the origin's bytes\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Reduce(&cpu_ms, &cpu_ms_all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        char flavour[64] = "", extra[64] = "";
        if (!fence) snprintf(flavour, sizeof flavour, ", target computes %g s", compute_seconds);
        snprintf(extra, sizeof extra, "\"computeSeconds\":%.3f,", compute_seconds);
        struct call_report r = { .name = call, .lib = lib, .impl = impl, .flavour = flavour, .extra_json = extra, .json_file = f.json_file,
                                 .bytes = bytes, .calls = calls, .warmup = warm, .processes = 2, .loop_seconds = loop_seconds, .cpu_ms_all = cpu_ms_all };
        bench_report_call(&r, samples);
    }
    MPI_Win_free(&win);
    free(samples);
    free(origin);
    free(fetched);
    MPI_Finalize();
    return 0;
}
