/*
 * Neighbor message-rate benchmark, single-threaded two-process form: the C
 * reference for ../src/msgrate.ts (same pattern, flags and output line).
 *
 * Source: Dózsa et al., "Enabling Concurrent Multithreaded MPI Communication
 * on Multicore Petascale Systems" (EuroMPI 2010), section 4. Ranks 0 and 1 are
 * peers; each iteration posts WINDOW (12) MPI_Irecv and WINDOW MPI_Isend of
 * SIZE (0) bytes to/from the peer, then MPI_Waitall. WARMUP (10) untimed
 * iterations, MPI_Barrier, then ITERATIONS (10,000) timed ones. Rank 0 prints
 * WINDOW x ITERATIONS / elapsed seconds.
 *
 *   mpicc -O2 -o build/msgrate_ompi msgrate.c
 *   mpirun -n 2 build/msgrate_ompi [--iterations N] [--warmup N] [--window N] [--size BYTES] [--json FILE]
 */
#include <mpi.h>
#include <time.h>

#include "bench-args.h"

static const char *USAGE =
    "usage: mpirun -n 2 msgrate [flags]\n"
    "\n"
    "Neighbor message-rate benchmark (Dozsa et al. 2010, section 4): ranks 0 and 1\n"
    "each post WINDOW Irecv and WINDOW Isend per iteration, then waitall.\n"
    "Rank 0 prints WINDOW x ITERATIONS / elapsed seconds.\n"
    "\n"
    "  --iterations N   timed iterations            (default 10000)\n"
    "  --warmup N       untimed warm-up iterations  (default 10)\n"
    "  --window N       messages each way per iteration (default 12)\n"
    "  --size BYTES     message size in bytes       (default 0)\n"
    "  --json FILE      append a JSON record (one line) to FILE\n"
    "  -h, --help       this text\n";

static void exchange_window(int peer, long window, char *recvbuf, long size, char *sendbuf, MPI_Request *reqs) {
    for (long i = 0; i < window; i++)
        MPI_Irecv(recvbuf + i * size, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &reqs[i]);
    for (long i = 0; i < window; i++)
        MPI_Isend(sendbuf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &reqs[window + i]);
    MPI_Waitall((int)(2 * window), reqs, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    struct bench_flags f = { .iterations = 10000, .warmup = 10, .window = 12, .sizes = { 0 }, .nsizes = 1 };
    int early = bench_flags_or_exit(argc, argv, &f, "msgrate", USAGE, rank);
    if (early >= 0) return early;
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "msgrate: needs exactly 2 processes (got %d); run with mpirun -n 2\n", size);
        MPI_Finalize();
        return 2;
    }

    const long msg = f.sizes[0];
    const int peer = 1 - rank;
    char *recvbuf = malloc((size_t)(f.window * msg) + 1); /* distinct receive buffers */
    char *sendbuf = calloc((size_t)msg + 1, 1);           /* shared by all sends */
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)(2 * f.window));
    if (recvbuf == NULL || sendbuf == NULL || reqs == NULL) MPI_Abort(MPI_COMM_WORLD, 1);

    for (long it = 0; it < f.warmup; it++) exchange_window(peer, f.window, recvbuf, msg, sendbuf, reqs);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (long it = 0; it < f.iterations; it++) exchange_window(peer, f.window, recvbuf, msg, sendbuf, reqs);
    double elapsed = MPI_Wtime() - start;

    if (rank == 0) {
        char lib[128];
        const char *impl = "other";
        bench_library(lib, sizeof lib, &impl);
        double sent = (double)f.window * (double)f.iterations;
        double rate = sent / elapsed;
        printf("msgrate: %.3f M messages/s (%ld x %ld iterations, %ld-byte, %d processes, %s)\n",
               rate / 1e6, f.window, f.iterations, msg, size, lib);
        fflush(stdout);
        if (f.json_file != NULL) {
            FILE *out = bench_json_begin(f.json_file, impl, lib, "msgrate");
            if (out != NULL) {
                fprintf(out,
                        ""
                        "\"layout\":\"single\",\"processes\":%d,\"threads\":1,\"iterations\":%ld,\"warmup\":%ld,"
                        "\"window\":%ld,\"sizeBytes\":%ld,\"messagesSent\":%.0f,\"elapsedSeconds\":%.9f,"
                        "\"messagesPerSecond\":%.3f}\n",
                        size, f.iterations, f.warmup, f.window, msg, sent, elapsed, rate);
                fclose(out);
            }
        }
    }
    free(reqs);
    free(sendbuf);
    free(recvbuf);
    MPI_Finalize();
    return 0;
}
