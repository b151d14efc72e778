/*
 * One collective, timed per call: the C reference for ../src/collective.ts (same calls, flags
 * and output line).
 *
 * --call allreduce | allreduce-init | reduce-scatter | reduce-scatter-block | neighbor-alltoall, as collective.ts:
 * MPI_Allreduce; MPI_Allreduce_init + MPI_Start + MPI_Wait (MPI 4.0; Open MPI 4.1 has it as
 * MPIX_Allreduce_init, MPICH 4.0 as MPI_Allreduce_init); MPI_Reduce_scatter with equal counts
 * (SIZE bytes in all); MPI_Neighbor_alltoall of SIZE bytes to each neighbor on a periodic
 * P/2 x 2 Cartesian communicator. Barrier, WARMUP untimed calls, barrier, timed calls; rank 0
 * prints the mean per call (the loop's time / calls), SIZE / mean in MB/s, the median, p99 and
 * min per-call times and the CPU per call summed over all ranks; --blocks N also prints rank 0's
 * per-call mean, median, p99 and max over the first N timed calls and over the rest.
 *
 *   mpicc -O2 -o build/collective_ompi collective.c
 *   mpirun -n 4 build/collective_ompi --call reduce-scatter --size 8388608
 */
#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI && MPI_VERSION < 4
#include <mpi-ext.h>
#define ALLREDUCE_INIT MPIX_Allreduce_init
#else
#define ALLREDUCE_INIT MPI_Allreduce_init
#endif
#include <time.h>

#include "bench-report.h"

static const char *USAGE =
    "usage: mpirun -n P collective --call CALL [flags]\n"
    "\n"
    "One collective timed per call. CALL: allreduce, allreduce-init (persistent), reduce-scatter\n"
    "(equal counts), reduce-scatter-block, neighbor-alltoall (periodic P/2 x 2 Cartesian\n"
    "communicator, P even >= 4).\n"
    "\n"
    "  --call CALL      the collective (required)\n"
    "  --iterations N   timed calls for small sizes (default 2000; sizes above 64 KiB run\n"
    "                   N * 64 KiB / SIZE calls, at least 10)\n"
    "  --warmup N       untimed calls (default 50; sizes above 64 KiB: at least 2)\n"
    "  --size BYTES     bytes per call (reduce-scatter(-block): in all; neighbor-alltoall: to each\n"
    "                   neighbor), a multiple of 8 (default 8)\n"
    "  --blocks N       also print the per-call mean, median, p99 and max of the first N timed\n"
    "                   calls and of the rest (rank 0's calls)\n"
    "  --json FILE      append one JSON record (one line) to FILE\n"
    "  -h, --help       this text\n";

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const char *call = bench_take_flag(&argc, argv, "call");
    const char *blocks_flag = bench_take_flag(&argc, argv, "blocks");
    const long first_block = blocks_flag == NULL ? 0 : atol(blocks_flag);
    struct bench_flags f = { .iterations = 2000, .warmup = 50, .window = 1, .sizes = { 8 }, .nsizes = 1 };
    int early = bench_flags_or_exit(argc, argv, &f, "collective", USAGE, rank);
    if (early >= 0) return early;
    int kind = call == NULL ? -1 : strcmp(call, "allreduce") == 0 ? 0 : strcmp(call, "allreduce-init") == 0 ? 1
             : strcmp(call, "reduce-scatter") == 0 ? 2 : strcmp(call, "neighbor-alltoall") == 0 ? 3
             : strcmp(call, "reduce-scatter-block") == 0 ? 4 : -1;
    const long bytes = f.sizes[0];
    const char *bad = kind < 0 ? "--call must be one of allreduce, allreduce-init, reduce-scatter, reduce-scatter-block, neighbor-alltoall"
                    : bytes % 8 != 0 ? "--size must be a multiple of 8 (FLOAT64 elements)"
                    : (kind == 2 || kind == 4) && bytes % (8L * size) != 0 ? "--size must be a multiple of 8 * P for reduce-scatter"
                    : kind == 3 && (size < 4 || size % 2 != 0) ? "neighbor-alltoall needs an even number of processes, at least 4"
                    : NULL;
    if (bad != NULL) {
        if (rank == 0) fprintf(stderr, "collective: %s\n\n%s", bad, USAGE);
        MPI_Finalize();
        return 2;
    }
    char lib[128];
    const char *impl = "other";
    bench_library(lib, sizeof lib, &impl);

    const long n = bytes / 8;
    const long calls = bench_calls_for(bytes, f.iterations);
    long warm = f.warmup;
    if (bytes > BENCH_SCALE_BYTES) warm = warm < calls ? warm : calls, warm = warm < 2 ? 2 : warm;
    const long sendn = kind == 3 ? 4 * n : n, recvn = kind == 3 ? 4 * n : kind == 2 || kind == 4 ? n / size : n;
    double *sendbuf = malloc(sizeof(double) * (size_t)(sendn + 1));
    double *recvbuf = malloc(sizeof(double) * (size_t)(recvn + 1));
    double *samples = malloc(sizeof(double) * (size_t)calls);
    int *counts = malloc(sizeof(int) * (size_t)size);
    if (sendbuf == NULL || recvbuf == NULL || samples == NULL || counts == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
    for (long i = 0; i < sendn; i++) sendbuf[i] = rank + 1;
    for (int r = 0; r < size; r++) counts[r] = (int)(n / size);
    MPI_Comm cart = MPI_COMM_NULL;
    MPI_Request persistent = MPI_REQUEST_NULL;
    if (kind == 3) {
        int dims[2] = { size / 2, 2 }, periods[2] = { 1, 1 };
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    }
    if (kind == 1) ALLREDUCE_INIT(sendbuf, recvbuf, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &persistent);
#define ONE_CALL()                                                                                           \
    do {                                                                                                     \
        if (kind == 0) MPI_Allreduce(sendbuf, recvbuf, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);         \
        else if (kind == 1) { MPI_Start(&persistent); MPI_Wait(&persistent, MPI_STATUS_IGNORE); }             \
        else if (kind == 2) MPI_Reduce_scatter(sendbuf, recvbuf, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); \
        else if (kind == 4) MPI_Reduce_scatter_block(sendbuf, recvbuf, (int)(n / size), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); \
        else MPI_Neighbor_alltoall(sendbuf, (int)n, MPI_DOUBLE, recvbuf, (int)n, MPI_DOUBLE, cart);           \
    } while (0)
    MPI_Barrier(MPI_COMM_WORLD);
    for (long it = 0; it < warm; it++) ONE_CALL();
    MPI_Barrier(MPI_COMM_WORLD);
    double cpu_before = bench_cpu_seconds();
    double loop_start = MPI_Wtime();
    for (long it = 0; it < calls; it++) {
        double start = MPI_Wtime();
        ONE_CALL();
        samples[it] = MPI_Wtime() - start;
    }
    double loop_seconds = MPI_Wtime() - loop_start;
    double cpu_ms = (bench_cpu_seconds() - cpu_before) * 1e3 / (double)calls, cpu_ms_all = 0;
    MPI_Reduce(&cpu_ms, &cpu_ms_all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && first_block > 0 && first_block < calls) {
        /* Before bench_report_call, which sorts the samples. */
        printf("blocks: ");
        bench_print_block(samples, 0, first_block);
        printf("; ");
        bench_print_block(samples, first_block, calls);
        printf("\n");
    }
    if (rank == 0) {
        struct call_report r = { .name = call, .lib = lib, .impl = impl, .flavour = "", .extra_json = "", .json_file = f.json_file,
                                 .bytes = bytes, .calls = calls, .warmup = warm, .processes = size, .loop_seconds = loop_seconds, .cpu_ms_all = cpu_ms_all };
        bench_report_call(&r, samples);
    }
    if (persistent != MPI_REQUEST_NULL) MPI_Request_free(&persistent);
    if (cart != MPI_COMM_NULL) MPI_Comm_free(&cart);
    free(counts);
    free(samples);
    free(recvbuf);
    free(sendbuf);
    MPI_Finalize();
    return 0;
}
