/*
 * Ping-pong latency benchmark: the C reference for ../src/pingpong.ts (same
 * pattern, flags and output line).
 *
 * For each size (default 0 and 8 bytes) rank 0 sends SIZE bytes to rank 1 with
 * MPI_Send and waits for them back with MPI_Recv; rank 1 echoes. WARMUP (100)
 * untimed round trips, MPI_Barrier, then ITERATIONS (10,000) round trips, the
 * loop timed as a whole and each round trip on its own. Rank 0 prints the mean
 * round trip in microseconds (the loop's time / ITERATIONS), the median, p99
 * and min round trip (bench-stats.h, as ../src/stats.ts), and the CPU time
 * (user + system) per round trip summed over both ranks.
 *
 *   mpicc -O2 -o build/pingpong_ompi pingpong.c
 *   mpirun -n 2 build/pingpong_ompi [--iterations N] [--warmup N] [--size BYTES[,BYTES]] [--json FILE]
 */
#include <mpi.h>
#include <time.h>

#include "bench-args.h"
#include "bench-stats.h"

static const char *USAGE =
    "usage: mpirun -n 2 pingpong [flags]\n"
    "\n"
    "Ping-pong latency: rank 0 sends SIZE bytes to rank 1 and waits for them back.\n"
    "Prints the mean round trip in microseconds for each size (then the median, p99\n"
    "and min round trip, and the CPU time per round trip summed over both processes).\n"
    "\n"
    "  --iterations N   timed round trips per size  (default 10000)\n"
    "  --warmup N       untimed round trips per size (default 100)\n"
    "  --size BYTES     message size; repeat or comma-separate for several (default 0,8)\n"
    "  --json FILE      append one JSON record (one line) per size to FILE\n"
    "  -h, --help       this text\n";

static void round_trip(int initiator, int peer, char *sendbuf, char *recvbuf, long size) {
    if (initiator) {
        MPI_Send(sendbuf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(recvbuf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(recvbuf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sendbuf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    struct bench_flags f = { .iterations = 10000, .warmup = 100, .window = 1, .sizes = { 0, 8 }, .nsizes = 2 };
    int early = bench_flags_or_exit(argc, argv, &f, "pingpong", USAGE, rank);
    if (early >= 0) return early;
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "pingpong: needs exactly 2 processes (got %d); run with mpirun -n 2\n", size);
        MPI_Finalize();
        return 2;
    }

    char lib[128];
    const char *impl = "other";
    bench_library(lib, sizeof lib, &impl);
    const int peer = 1 - rank;
    const int initiator = rank == 0;
    double *samples = malloc(sizeof(double) * (size_t)f.iterations);
    if (samples == NULL) MPI_Abort(MPI_COMM_WORLD, 1);

    for (int s = 0; s < f.nsizes; s++) {
        const long msg = f.sizes[s];
        char *sendbuf = calloc((size_t)msg + 1, 1);
        char *recvbuf = malloc((size_t)msg + 1);
        if (sendbuf == NULL || recvbuf == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
        for (long it = 0; it < f.warmup; it++) round_trip(initiator, peer, sendbuf, recvbuf, msg);
        MPI_Barrier(MPI_COMM_WORLD);
        double cpu_before = bench_cpu_seconds();
        double loop_start = MPI_Wtime();
        for (long it = 0; it < f.iterations; it++) {
            double start = MPI_Wtime();
            round_trip(initiator, peer, sendbuf, recvbuf, msg);
            samples[it] = MPI_Wtime() - start;
        }
        double loop_seconds = MPI_Wtime() - loop_start;
        double cpu_ms = (bench_cpu_seconds() - cpu_before) * 1e3 / (double)f.iterations, cpu_ms_all = 0;
        MPI_Reduce(&cpu_ms, &cpu_ms_all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (initiator) {
            struct call_summary s = bench_summarize_calls(samples, f.iterations, loop_seconds);
            printf("pingpong: %ld-byte round trip mean %.2f us (median %.2f, p99 %.2f, min %.2f; cpu %.3f ms per call over all ranks; "
                   "%ld iterations, %d processes, %s)\n",
                   msg, s.mean, s.median, s.p99, s.min, cpu_ms_all, f.iterations, size, lib);
            fflush(stdout);
            if (f.json_file != NULL) {
                FILE *out = bench_json_begin(f.json_file, impl, lib, "pingpong");
                if (out != NULL) {
                    fprintf(out,
                            "\"processes\":%d,"
                            "\"iterations\":%ld,\"warmup\":%ld,\"sizeBytes\":%ld,\"meanMicros\":%.3f,\"medianMicros\":%.3f,"
                            "\"p99Micros\":%.3f,\"minMicros\":%.3f,\"cpuMillisPerCall\":%.4f}\n",
                            size, f.iterations, f.warmup, msg, s.mean, s.median, s.p99, s.min, cpu_ms_all);
                    fclose(out);
                }
            }
        }
        free(recvbuf);
        free(sendbuf);
    }
    free(samples);
    MPI_Finalize();
    return 0;
}
